"""Connections to collection files.

We use **apsw** rather than the standard library's ``sqlite3``:

* it bundles a current SQLite (3.54 at the time of writing) with FTS5 on every platform, so it
  loads sqlite-vec on CPython builds whose ``sqlite3`` lacks ``enable_load_extension``
  (this machine's Python, macOS's system Python);
* it has wheels for Linux, macOS and Windows (``pysqlite3-binary`` is Linux only) and follows
  SQLite releases closely (``sqlean.py`` lagged at 3.50);
* it exposes SQLite directly (FTS5 auxiliary functions, exact error codes), which a search
  engine built on FTS5 needs more than DB-API compatibility.

Extension loading is switched on only for the moment sqlite-vec loads.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import apsw

from ..errors import CollectionError, DamagedCollection, EnvironmentProblem
from .packing import unpack

MIN_SQLITE = (3, 45, 0)


def _vec_extension() -> str | None:
    """The path of sqlite-vec's loadable extension (without its suffix, as SQLite wants it),
    or None when the package is missing. Found without importing the package when its file is
    where ``sqlite_vec.loadable_path()`` puts it: importing it imports numpy (~0.1 s), which
    ``fetch`` and ``info`` do not need."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None:
        return None
    for folder in spec.submodule_search_locations or ():
        if any(os.path.isfile(os.path.join(folder, "vec0" + ext))
               for ext in (".so", ".dylib", ".dll")):
            return os.path.normpath(os.path.join(folder, "vec0"))
    import sqlite_vec

    return str(sqlite_vec.loadable_path())


def _load_vec(conn: apsw.Connection) -> str | None:
    """Load sqlite-vec; return its version, or None when the package is missing."""
    extension = _vec_extension()
    if extension is None:
        return None
    conn.enable_load_extension(True)
    try:
        conn.load_extension(extension)
    except apsw.Error as e:
        raise EnvironmentProblem(f"sqlite-vec failed to load: {e}; reinstall it with "
                                 "'pip install sqlite-vec'") from None
    finally:
        conn.enable_load_extension(False)
    return conn.execute("SELECT vec_version()").fetchone()[0]


def check_runtime(conn: apsw.Connection, need_vec: bool) -> dict[str, str]:
    """Check SQLite, FTS5 and sqlite-vec; name what is missing."""
    version = apsw.sqlite_lib_version()
    if tuple(int(p) for p in version.split(".")[:3]) < MIN_SQLITE:
        raise EnvironmentProblem(f"SQLite {version} is too old; sieve-lite needs "
                                 f"{'.'.join(map(str, MIN_SQLITE))}+ (pip install -U apsw)")
    if not conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0]:
        raise EnvironmentProblem(f"SQLite {version} was built without FTS5; "
                                 "install apsw from PyPI, which has it")
    vec = _load_vec(conn)
    if need_vec and vec is None:
        raise EnvironmentProblem("sqlite-vec is not installed; 'pip install sqlite-vec' "
                                 "(or build with --no-embed)")
    return {"sqlite": version, "fts5": "yes", "sqlite_vec": vec or "absent"}


def connect(path: str | os.PathLike[str], *, readonly: bool = True, create: bool = False,
            need_vec: bool = False) -> apsw.Connection:
    """Open ``path`` with sqlite-vec loaded. Read-only unless asked: a search never writes."""
    p = Path(path)
    if not create:
        if not p.exists():
            raise CollectionError(f"no collection at {p}; build one with "
                                  f"'sieve-lite build SOURCE -o {p}'")
        if p.is_dir():
            raise CollectionError(f"{p} is a directory, not a collection file")
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    if create:
        flags |= apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_READWRITE
        flags &= ~apsw.SQLITE_OPEN_READONLY
    # URI so that read-only opens also set immutable-safe behaviour and never create -wal files.
    try:
        conn = apsw.Connection(str(p), flags=flags)
        conn.setbusytimeout(5000)
        conn.create_scalar_function("unpack", unpack, 1, deterministic=True)
        check_runtime(conn, need_vec)
        # Touch the schema: a non-database file fails here, not later in a query.
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except apsw.NotADBError:
        raise CollectionError(f"{p} is not a SQLite file; build a collection with "
                              "'sieve-lite build'") from None
    except apsw.CorruptError:
        raise DamagedCollection(f"{p} is corrupt; rebuild it with 'sieve-lite build'") from None
    except apsw.CantOpenError:
        raise CollectionError(f"cannot open {p}; check that it exists and is readable") from None
    return conn
