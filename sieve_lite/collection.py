"""A collection file opened for reading: metadata, fields, search and fetch.

``sieve_lite.open(path)`` returns a ``Collection``. It never writes to the file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from . import store
from .bql.ast import ALL_FIELDS_ORDER
from .errors import CollectionError, DamagedCollection
from .store import reads
from .store.packing import unpack


def default_collection() -> Path:
    """The shipped demo collection: ``collections/peps.db`` beside the package."""
    return Path(__file__).resolve().parent.parent / "collections" / "peps.db"


class Collection:
    """A read-only collection. Thread-unsafe (one apsw connection); open one per thread.

    Opening checks the file defensively (``store.connect``), then that it is exactly what a
    build makes: its schema row by row, its metadata typed and in range (``self.meta``), its
    rowids within the document count. A file that fails is refused with ``CollectionError``
    (``DamagedCollection``, exit code 3, when it claims to be a collection of this version).
    """

    def __init__(self, path: str | os.PathLike[str],
                 budget: float = store.connection.STATEMENT_BUDGET) -> None:
        self.path = Path(path)
        self.conn = store.connect(self.path, readonly=True, budget=budget)
        self.generation = 0  # bumped when another process changed the file (see snapshot)
        try:
            self._load()
        except CollectionError:
            self.conn.close()
            raise
        except apsw.Error as e:  # a damaged file: one line, not a traceback
            self.conn.close()
            raise DamagedCollection(f"{self.path} cannot be read as a collection "
                                    f"({type(e).__name__}: {e}); rebuild it or get a fresh "
                                    "copy") from None
        except BaseException:
            self.conn.close()
            raise
        self._session: Any = None  # the last search listing (for fetch by rank)

    def _load(self) -> None:
        """Read and check what the metadata says (on open, and after another process changed
        the file: ``sieve-lite add``/``remove`` update collections in place)."""
        self._data_version = reads.data_version(self.conn)
        m, _dim = store.check_collection(self.conn, str(self.path))
        self.meta: store.Meta = m
        store.set_unpack_limit(self.conn, m.max_section_bytes)
        has = {"section": m.has_section, "infobox": m.has_infobox, "author": m.has_author,
               "date": m.has_date}
        self.fields: tuple[str, ...] = tuple(
            f for f in ALL_FIELDS_ORDER if f in ("title", "body", "tiab", "all") or has.get(f))
        self.text_fields: tuple[str, ...] = tuple(
            f for f in self.fields if f not in ("date", "tiab", "all"))
        self.embed_model: str = m.embed_model
        self.embed_dim: int = m.embed_dim
        self.documents: int = m.documents
        self.avg_words: float = m.avg_words

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Run a group of reads on one state of the file (a read transaction: an update in
        another process commits before or after it, never in the middle); when the file
        changed since the last look, reload the metadata and bump ``generation`` first, so
        that everything cached per open collection is read again."""
        if not self.conn.getautocommit():  # already inside one
            yield
            return
        self.conn.execute("BEGIN")
        try:
            reads.take_read_lock(self.conn)
            if reads.data_version(self.conn) != self._data_version:
                try:
                    self._load()
                except apsw.Error as e:
                    raise DamagedCollection(f"{self.path} changed and cannot be read again "
                                            f"({e})") from None
                self.generation += 1
            yield
        finally:
            if not self.conn.getautocommit():  # (an error may have ended it already)
                self.conn.execute("COMMIT")

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
        with self.snapshot():
            m = self.meta
            sections = reads.section_count(self.conn)
        return {
            "path": str(self.path),
            "documents": self.documents,
            "sections": sections,
            "fields": list(self.fields),
            "schema_version": m.schema_version,
            "tokenizer": m.tokenizer,
            "embed_model": self.embed_model or None,
            "embed_dim": self.embed_dim or None,
            "avg_words": round(self.avg_words, 1),
            "build_time": m.build_time,
            "content_hash": m.content_hash,
            **m.manifest(),
            "size_bytes": self.path.stat().st_size,
        }

    # -- documents -------------------------------------------------------------------------
    def doc_rowid(self, doc_id: str) -> int | None:
        row = reads.document_row(self.conn, doc_id)
        return row[0] if row else None

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """The whole document in DOCUMENTS.md shape, or None."""
        with self.snapshot():
            return self._document(doc_id)

    def _document(self, doc_id: str) -> dict[str, Any] | None:
        row = reads.document_row(self.conn, doc_id)
        if row is None:
            return None
        rowid, did, title = row
        limit = self.meta.max_section_bytes
        out: dict[str, Any] = {"id": did, "title": title, "sections": [
            {"heading": h, "text": unpack(t, limit)} for h, t in reads.sections(self.conn, rowid)]}
        for pos, pages in store.pages.of_document(self.conn, rowid).items():
            out["sections"][pos]["pages"] = list(pages)
        ib = [[k, v] for k, v in reads.infobox(self.conn, rowid)]
        if ib:
            out["infobox"] = ib
        au = reads.authors(self.conn, rowid)
        if au:
            out["author"] = au
        date, url, meta = reads.document_details(self.conn, rowid)
        if date:
            out["date"] = date
        if url:
            out["url"] = url
        if meta:
            try:
                out["meta"] = json.loads(meta)
            except ValueError:
                raise DamagedCollection(f"{self.path} is damaged: the meta of {did!r} is not "
                                        "JSON") from None
        return out

    # -- search and fetch (implemented in sieve_lite.search / sieve_lite.fetch) -------------
    def search(self, query: str, k: int = 5, ranker: str = "hybrid", strict: bool = False,
               embed: Any = None):
        """Run a BQL query; returns a ``sieve_lite.search.SearchResult``. ``embed`` (text ->
        vector) replaces the collection's query embedder (servers batch and lock it)."""
        from .search import search

        with self.snapshot():
            return search(self, query, k=k, ranker=ranker, strict=strict, embed=embed)

    def fetch(self, doc: str | int, section: str | None = None):
        """Read one section of a document (by id, or by rank in the last search)."""
        from .fetch import fetch

        with self.snapshot():
            return fetch(self, doc, section)
