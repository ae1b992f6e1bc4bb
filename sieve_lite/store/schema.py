"""Schema creation, versioning and migrations of collection files.

Migrations are modules named ``mNNN_<what>.py`` in ``store/migrations``, applied in numeric
order (a gap in the numbering is allowed: two changes may be developed at once);
``PRAGMA user_version`` holds the number of the last one applied. A file whose version differs
from ``SCHEMA_VERSION`` is refused with a message that says how to fix it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from types import ModuleType

import apsw

from ..errors import CollectionError, DamagedCollection, EnvironmentProblem
from . import migrations as _migrations_pkg

APPLICATION_ID = 0x53495631  # 'SIV1': tells a sieve-lite collection from any other SQLite file


def migrations() -> list[tuple[int, str, ModuleType]]:
    """All migrations, ordered by number."""
    found = []
    for info in pkgutil.iter_modules(_migrations_pkg.__path__):
        if info.name.startswith("m") and info.name[1:4].isdigit():
            mod = importlib.import_module(f"{_migrations_pkg.__name__}.{info.name}")
            found.append((int(info.name[1:4]), info.name, mod))
    return sorted(found)


SCHEMA_VERSION = migrations()[-1][0]


def vec_sql(dim: int) -> str:
    """The statement that creates the vector table of a collection embedded with ``dim``."""
    return migrations()[0][2].VEC_SQL.format(dim=int(dim))


def create(conn: apsw.Connection, embed_dim: int | None) -> None:
    """Create the current schema in an empty database."""
    with conn:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for number, _name, mod in migrations():
            conn.execute(mod.SQL)
            conn.execute(f"PRAGMA user_version = {int(number)}")
        if embed_dim:
            conn.execute(vec_sql(embed_dim))


def check_version(conn: apsw.Connection, path: str) -> None:
    """Refuse a file that is not a sieve-lite collection of this schema version."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if app != APPLICATION_ID:
        raise CollectionError(f"{path} is an SQLite file but not a sieve-lite collection; "
                              "build one with 'sieve-lite build SOURCE -o FILE.db'")
    if version != SCHEMA_VERSION:
        newer = version > SCHEMA_VERSION
        raise CollectionError(
            f"{path} has collection schema version {version}, this sieve-lite reads version "
            f"{SCHEMA_VERSION}; " + ("upgrade sieve-lite" if newer else
                                     "rebuild it with 'sieve-lite build'"))


# ------------------------------------------------------------------------- the exact schema
SchemaRow = tuple[str, str, str, "str | None"]  # type, name, tbl_name, sql

_SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_schema"


@functools.lru_cache(maxsize=1)
def _vec_row_pattern() -> re.Pattern[str]:
    """The vector table's row, whose dimension is the one number a schema row may vary in."""
    probe = vec_sql(987654321)
    return re.compile(re.escape(probe).replace("987654321", "([1-9][0-9]{0,3})"))


@functools.lru_cache(maxsize=8)
def expected_schema(embed_dim: int) -> frozenset[SchemaRow]:
    """Every ``sqlite_schema`` row a build of this version makes (with vectors of ``embed_dim``,
    or none for 0): derived by creating the schema in memory, so migrations added later are
    covered without a list to keep in step."""
    from .connection import load_vec

    conn = apsw.Connection(":memory:")
    try:
        if embed_dim and load_vec(conn) is None:
            raise EnvironmentProblem("sqlite-vec is not installed, and this collection has "
                                     "embeddings; 'pip install sqlite-vec'")
        create(conn, embed_dim or None)
        return frozenset(conn.execute(_SCHEMA_SQL))
    finally:
        conn.close()


def check_schema(conn: apsw.Connection, path: str) -> int:
    """Refuse a file whose ``sqlite_schema`` is not exactly what a build makes: no view, no
    trigger, no extra or missing object, no table whose SQL was edited (a changed tokenizer,
    a view in place of ``meta``). Returns the dimension of the vector table (0: none)."""
    have: dict[str, SchemaRow] = {}
    for row in conn.execute(_SCHEMA_SQL):
        have[row[1]] = row
    dim = 0
    vec = have.get("doc_vectors")
    if vec is not None and vec[0] == "table" and isinstance(vec[3], str):
        m = _vec_row_pattern().fullmatch(vec[3])
        if m:
            dim = int(m.group(1))
    want = {row[1]: row for row in expected_schema(dim)}
    extra = sorted(set(have) - set(want))
    missing = sorted(set(want) - set(have))
    altered = sorted(n for n in set(have) & set(want) if have[n] != want[n])
    if not (extra or missing or altered):
        return dim
    def named(rows: dict[str, SchemaRow], n: str) -> str:
        kind = rows[n][0]
        if rows is have and n in want and want[n][0] != kind:
            return f"{kind} {n} (a {want[n][0]} in a build)"
        return f"{kind} {n}"

    parts = []
    for label, names, rows in (("unexpected", extra, have), ("altered", altered, have),
                               ("missing", missing, want)):
        if names:
            shown = ", ".join(named(rows, n) for n in names[:3])
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            parts.append(f"{label} {shown}{more}")
    raise DamagedCollection(
        f"{path} does not have the schema sieve-lite builds for version {SCHEMA_VERSION} "
        f"({'; '.join(parts)}); it was altered or damaged: rebuild it or get a fresh copy")
