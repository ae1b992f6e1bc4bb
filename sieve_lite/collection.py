"""A collection file opened for reading: metadata, fields, search and fetch.

``sieve_lite.open(path)`` returns a ``Collection``. It never writes to the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from . import store
from .bql.ast import ALL_FIELDS_ORDER
from .errors import CollectionError


def default_collection() -> Path:
    """The shipped demo collection: ``collections/peps.db`` beside the package."""
    return Path(__file__).resolve().parent.parent / "collections" / "peps.db"


class Collection:
    """A read-only collection. Thread-unsafe (one apsw connection); open one per thread."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.conn = store.connect(self.path, readonly=True)
        try:
            store.check_version(self.conn, str(self.path))
            self.meta: dict[str, str] = dict(self.conn.execute("SELECT key, value FROM meta"))
        except CollectionError:
            self.conn.close()
            raise
        except Exception as e:  # a damaged file: one line, not a traceback
            self.conn.close()
            raise CollectionError(f"{self.path} cannot be read as a collection: {e}") from None
        self.fields: tuple[str, ...] = tuple(
            f for f in ALL_FIELDS_ORDER
            if f in ("title", "body", "tiab", "all") or self.meta.get(f"has_{f}") == "1")
        self.text_fields: tuple[str, ...] = tuple(
            f for f in self.fields if f not in ("date", "tiab", "all"))
        self.embed_model: str = self.meta.get("embed_model", "")
        self.embed_dim: int = int(self.meta.get("embed_dim", "0") or 0)
        self.documents: int = int(self.meta.get("documents", "0"))
        self.avg_words: float = float(self.meta.get("avg_words", "0") or 0)
        self._session: Any = None  # the last search listing (for fetch by rank)

    @property
    def has_vectors(self) -> bool:
        return self.embed_dim > 0

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- description -----------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        sections = self.conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        return {
            "path": str(self.path),
            "documents": self.documents,
            "sections": sections,
            "fields": list(self.fields),
            "schema_version": int(self.meta.get("schema_version", "0")),
            "tokenizer": self.meta.get("tokenizer", ""),
            "embed_model": self.embed_model or None,
            "embed_dim": self.embed_dim or None,
            "avg_words": round(self.avg_words, 1),
            "build_time": self.meta.get("build_time"),
            "content_hash": self.meta.get("content_hash"),
            "source": self.meta.get("source") or None,
            "size_bytes": self.path.stat().st_size,
        }

    # -- documents -------------------------------------------------------------------------
    def doc_rowid(self, doc_id: str) -> int | None:
        row = self.conn.execute("SELECT rowid FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return row[0] if row else None

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The whole document in DOCUMENTS.md shape, or None."""
        row = self.conn.execute(
            "SELECT rowid, id, title, date, url, meta FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        if not row:
            return None
        rowid, did, title, date, url, meta = row
        span = store.layout.doc_span(rowid)
        out: dict[str, Any] = {"id": did, "title": title, "sections": [
            {"heading": h, "text": t} for h, t in self.conn.execute(
                "SELECT heading, unpack(text) FROM sections WHERE rowid BETWEEN ? AND ? "
                "ORDER BY rowid", span)]}
        for pos, pages in store.pages.of_document(self.conn, rowid).items():
            out["sections"][pos]["pages"] = list(pages)
        ib = [[k, v] for k, v in self.conn.execute(
            "SELECT key, value FROM infobox WHERE rowid BETWEEN ? AND ? ORDER BY rowid", span)]
        if ib:
            out["infobox"] = ib
        au = [a for (a,) in self.conn.execute(
            "SELECT name FROM authors WHERE rowid BETWEEN ? AND ? ORDER BY rowid", span)]
        if au:
            out["author"] = au
        if date:
            out["date"] = date
        if url:
            out["url"] = url
        if meta:
            out["meta"] = json.loads(meta)
        return out

    # -- search and fetch (implemented in sieve_lite.search / sieve_lite.fetch) -------------
    def search(self, query: str, k: int = 5, ranker: str = "hybrid", strict: bool = False):
        """Run a BQL query; returns a ``sieve_lite.search.SearchResult``."""
        from .search import search

        return search(self, query, k=k, ranker=ranker, strict=strict)

    def fetch(self, doc: str | int, section: str | None = None):
        """Read one section of a document (by id, or by rank in the last search)."""
        from .fetch import fetch

        return fetch(self, doc, section)
