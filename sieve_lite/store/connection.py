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
import time
from pathlib import Path
from typing import Any

import apsw

from ..errors import CollectionError, DamagedCollection, EnvironmentProblem
from .packing import MAX_SECTION_BYTES, unpack

MIN_SQLITE = (3, 45, 0)
STATEMENT_BUDGET = 10.0  # seconds one statement may run on a read-only connection
_PROGRESS_STEPS = 20_000  # virtual-machine steps between two looks at the clock
# No value a build writes is longer than a section text (a zlib blob is shorter than its text);
# SQLite refuses to read a longer one, so a crafted giant value cannot fill memory.
MAX_VALUE_BYTES = MAX_SECTION_BYTES + (1 << 20)


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


def load_vec(conn: apsw.Connection) -> str | None:
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
    vec = load_vec(conn)
    if need_vec and vec is None:
        raise EnvironmentProblem("sqlite-vec is not installed; 'pip install sqlite-vec' "
                                 "(or build with --no-embed)")
    return {"sqlite": version, "fts5": "yes", "sqlite_vec": vec or "absent"}


class _Budget:
    """A time budget per statement: the exec tracer notes when each statement starts, the
    progress handler stops one that runs longer (a crafted file can make a query loop for
    ever; a damaged index can make one crawl)."""

    def __init__(self, path: Path, seconds: float) -> None:
        self.path = path
        self.seconds = seconds
        self.started = time.monotonic()

    def start(self, _cursor: Any, _sql: str, _bindings: Any) -> bool:
        self.started = time.monotonic()
        return True  # go on with the statement

    def check(self) -> bool:
        if time.monotonic() - self.started > self.seconds:
            raise DamagedCollection(
                f"a query on {self.path} ran over its {self.seconds:g} s budget and was "
                "stopped; the collection may be damaged ('sieve-lite verify' checks it)")
        return False


def _defend(conn: apsw.Connection, path: Path, budget: float, readonly: bool) -> None:
    """Settings for a file someone else may have made: nothing in its schema runs as trusted
    code, views and triggers are off, nothing can be attached, no value over
    ``MAX_VALUE_BYTES`` is read, every statement has a time budget, and (``readonly``)
    nothing can be written."""
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_VIEW, 0)
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    conn.limit(apsw.SQLITE_LIMIT_ATTACHED, 0)
    conn.limit(apsw.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    if readonly:
        conn.execute("PRAGMA query_only = 1")
    clock = _Budget(path, budget)
    conn.exec_trace = clock.start
    conn.set_progress_handler(clock.check, _PROGRESS_STEPS)


def connect(path: str | os.PathLike[str], *, readonly: bool = True, create: bool = False,
            need_vec: bool = False, budget: float = STATEMENT_BUDGET) -> apsw.Connection:
    """Open ``path`` with sqlite-vec loaded and ``unpack`` registered.

    Read-only unless asked: a search never writes. A connection to an existing file is also
    defensive (``_defend``): ``budget`` is the time in seconds any one statement may run. (A
    new file, ``create``, is our own build's.)
    """
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
    conn = None
    try:
        conn = apsw.Connection(str(p), flags=flags)
        conn.setbusytimeout(5000)
        conn.create_scalar_function("unpack", unpack, 1, deterministic=True)
        check_runtime(conn, need_vec)
        if not create:
            _defend(conn, p, budget, readonly)
        # Touch the schema: a non-database file fails here, not later in a query.
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except apsw.NotADBError:
        _close(conn)
        raise CollectionError(f"{p} is not a SQLite file; build a collection with "
                              "'sieve-lite build'") from None
    except apsw.CorruptError as e:
        _close(conn)
        raise DamagedCollection(f"{p} is corrupt ({e}); rebuild it or get a fresh "
                                "copy") from None
    except apsw.CantOpenError:
        _close(conn)
        raise CollectionError(f"cannot open {p}; check that it exists and is readable") from None
    except BaseException:
        _close(conn)
        raise
    return conn


def set_unpack_limit(conn: apsw.Connection, limit: int) -> int:
    """Re-register SQL ``unpack(x)`` to refuse texts longer than ``limit`` bytes (the longest
    section the collection was built with), and register the collection's section text
    dictionary in this process (``packing.load_dictionary``); returns its id (0: none)."""
    from .packing import load_dictionary

    dict_id = load_dictionary(conn)
    conn.create_scalar_function("unpack", lambda v: unpack(v, limit), 1, deterministic=True)
    return dict_id


def _close(conn: apsw.Connection | None) -> None:
    if conn is not None:
        conn.close()
