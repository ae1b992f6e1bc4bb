"""The vectors of an interrupted embedded build, kept so that the next build resumes.

Embedding is most of an embedded build's time (hours for 100 k documents on CPU), so a build
keeps every vector it makes in a small SQLite file beside its output,
``.<output>.embeddings``, committed batch by batch (a kill loses at most one batch). The key
is the SHA-256 of the model id and the exact text embedded, so a vector is reused only for
the same text and model, whatever changed in the sources meanwhile. A build that succeeds
removes the file; one that fails or is killed leaves it (the one file a failed build leaves,
on purpose), and the next build of the same output reuses it automatically.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import apsw


def cache_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.embeddings")


def text_key(model_id: str, text: str) -> bytes:
    return hashlib.sha256(f"{model_id}\0{text}".encode("utf-8", "surrogatepass")).digest()


class VectorCache:
    """``get`` the stored vectors of some keys, ``put`` new ones (committed at once)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = apsw.Connection(str(path))
        self.conn.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, "
                          "vec BLOB NOT NULL) WITHOUT ROWID")
        self.reused = 0

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]

    def get(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        found = {}
        for k in keys:
            row = self.conn.execute("SELECT vec FROM vectors WHERE key = ?", (k,)).fetchone()
            if row is not None and isinstance(row[0], bytes):
                found[k] = row[0]
        self.reused += len(found)
        return found

    def put(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)",
                                  items)

    def close(self, remove: bool = False) -> None:
        self.conn.close()
        if remove:
            for extra in ("", "-wal", "-shm", "-journal"):
                Path(f"{self.path}{extra}").unlink(missing_ok=True)
