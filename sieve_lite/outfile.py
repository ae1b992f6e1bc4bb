"""Writing a collection file safely: what may be replaced, and the temporary file beside it.

A build or a download writes ``.NAME.db.<what>-PID`` next to the output and renames it into
place only when it is complete and checked, so the output is either the old file or the new
one, never half of either. ``check_output`` refuses outputs that would lose data: a folder, an
input of the same run, an existing file that is not a sieve-lite collection, and an existing
collection unless replacing it was asked for (``--force``).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

from .errors import OutputError
from .store.schema import APPLICATION_ID

_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_collection_file(path: Path) -> bool:
    """True when ``path`` is an SQLite file carrying sieve-lite's application id (any schema
    version); read from the file header, without opening it as a database."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError:
        return False
    return len(head) == 100 and head[:16] == _SQLITE_MAGIC and \
        int.from_bytes(head[68:72], "big") == APPLICATION_ID


def check_output(out: Path, *, force: bool, inputs: Iterable[Path] = ()) -> None:
    """Refuse to write ``out`` when that would destroy something (see the module docstring)."""
    if out.is_dir():
        raise OutputError(f"output {out} is a folder; give a file name like out.db")
    if not out.parent.exists():
        raise OutputError(f"output folder {out.parent} does not exist")
    target = out.resolve()
    for src in inputs:
        if Path(src).exists() and Path(src).resolve() == target:
            raise OutputError(f"output {out} is also an input; write the collection to another "
                              "file")
    if out.exists():
        if not is_collection_file(out):
            raise OutputError(f"{out} exists and is not a sieve-lite collection; choose another "
                              "output name (nothing was written)")
        if not force:
            raise OutputError(f"{out} is already a collection; pass --force to replace it")


def temp_path(out: Path, what: str) -> Path:
    """This process's temporary file for ``out`` (``what``: building, download, ...)."""
    return out.with_name(f".{out.name}.{what}-{os.getpid()}")


def remove_stale_temps(out: Path, what: str) -> list[Path]:
    """Remove temporary files of earlier runs for ``out`` whose process is gone (a killed run
    cannot clean up after itself); returns what was removed."""
    prefix = f".{out.name}.{what}-"
    removed = []
    for name in os.listdir(out.parent):
        pid = name[len(prefix):]
        if not name.startswith(prefix) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        stale = out.parent / name
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            for extra in ("", "-journal", "-wal", "-shm", "-vacuum"):
                Path(f"{stale}{extra}").unlink(missing_ok=True)
            for part in out.parent.glob(f"{glob.escape(name)}-fts-*"):  # a parallel build's
                part.unlink(missing_ok=True)
            removed.append(stale)
        except (PermissionError, OSError):
            pass  # alive (or not ours to judge): leave it
    return removed
