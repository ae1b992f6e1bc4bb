"""Schema creation, versioning and migrations of collection files.

Migrations are modules named ``mNNN_<what>.py`` in ``store/migrations``, applied in order;
``PRAGMA user_version`` holds the number of the last one applied. A file whose version differs
from ``SCHEMA_VERSION`` is refused with a message that says how to fix it.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import apsw

from ..errors import CollectionError
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


def create(conn: apsw.Connection, embed_dim: int | None) -> None:
    """Create the current schema in an empty database."""
    with conn:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for number, _name, mod in migrations():
            conn.execute(mod.SQL)
            conn.execute(f"PRAGMA user_version = {int(number)}")
        if embed_dim:
            conn.execute(migrations()[0][2].VEC_SQL.format(dim=int(embed_dim)))


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
    # A file of the right version must also hold every table the engine reads (a damaged file,
    # or one from a development build of the same version).
    have = {name for (name,) in conn.execute("SELECT name FROM sqlite_schema")}
    missing = [t for t in REQUIRED_TABLES if t not in have]
    if missing:
        raise CollectionError(f"{path} lacks the table(s) {', '.join(missing)} of schema "
                              f"version {SCHEMA_VERSION}; rebuild it with 'sieve-lite build'")


REQUIRED_TABLES = ("meta", "documents", "sections", "infobox", "authors", "fts_title",
                   "fts_section", "fts_body", "fts_infobox", "fts_author", "fts_doc",
                   "passages", "passage_postings")
