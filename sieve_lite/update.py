"""In-place updates: ``add`` documents (upsert by id) and ``remove`` them, each in one
transaction, leaving exactly the collection a fresh build of the same documents would be.

What "exactly" covers, and how:

* rows and FTS entries: a document's rows come from ``store.writes.document_rows``, the same
  function a build uses; taking a stored document out re-makes its rows from what is stored
  and gives them to FTS5's ``'delete'`` command (the FTS tables are contentless);
* passage-level BM25 statistics: ``store.passages.add_document``/``remove_document`` keep the
  postings, df, N and avgdl exact; document-level BM25 (``bm25-doc``) reads FTS5's own vocab
  tables and the stored lengths, and meta ``avg_words`` is recomputed;
* vectors: new documents are embedded with the collection's own model; moved ones keep theirs;
* document rowids stay 1..N with no gaps (what the open-time checks demand): removing a
  document moves the last one into its place; passage numbers of removed documents are left
  unused until they outnumber the live ones by half, when they are renumbered;
* meta: counts, ``has_*`` fields, the content hash (a set hash: ``store/content.py``) and
  ``update_time``; ``max_section_bytes`` only grows (it stays a bound).

Readers are never refused: the writer prepares everything (parsing, indexing, embedding) before
it takes the write lock, writes in one transaction whose pages stay in memory until the commit
(``cache_spill`` off), and readers, which open the file read-only with a 5 s busy timeout, wait
the few milliseconds of the commit. An open ``Collection`` notices the change
(``PRAGMA data_version``) and reloads what it caches before its next search.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from . import store
from .build import TOKENIZER, admit, prepare, prepared_rows, record_skip
from .documents import Document
from .errors import BuildError, CollectionError, DocumentError, EnvironmentProblem, SieveError
from .store import passages as ps
from .store import writes
from .store.content import ContentHash
from .store.packing import load_dictionary

WRITE_BUDGET = 3600.0  # seconds one statement of an update may run
WRITER_BUSY_MS = 120_000  # how long the writer waits for readers to let it commit
BATCH = 256
# Renumber passages when unused numbers exceed half the live ones (plus slack): the open-time
# check refuses a file whose numbers outgrow live + 65536 (store/integrity.py).
COMPACT_SLACK = 1024


@dataclass
class UpdateReport:
    path: str
    added: int = 0      # documents with new ids
    replaced: int = 0   # documents whose id was there: replaced
    removed: int = 0
    moved: int = 0      # documents renumbered to keep rowids dense
    skipped: list[str] = field(default_factory=list)  # the first SKIPS_KEPT bad documents
    skipped_count: int = 0
    documents: int = 0  # in the collection afterwards
    content_hash: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("path", "added", "replaced", "removed", "moved",
                                               "skipped", "skipped_count", "documents",
                                               "content_hash", "seconds")}


@dataclass
class _Prepared:
    """One document ready to write: its ``Raw`` tuple (rowid 0 until placed), ``prepare``'s
    output, its passages, and its vector (bytes) when the collection has vectors."""

    raw: tuple
    prepared: tuple
    passages: list[list[str]]
    vector: bytes | None = None

    def at(self, rowid: int) -> tuple:
        return (rowid, *self.raw[1:])


# ------------------------------------------------------------------------------- opening
def _open(path: Path) -> tuple[apsw.Connection, store.Meta]:
    """A write connection to a collection that passes every open-time check, with settings
    for one long transaction that must not block readers before its commit."""
    conn = store.connect(path, readonly=False, budget=WRITE_BUDGET)
    try:
        meta, _dim = store.check_collection(conn, str(path))
        if not meta.content_state:
            raise CollectionError(f"{path} was built before in-place updates existed (it has "
                                  "no content_state); rebuild it once with 'sieve-lite build'")
        if meta.tokenizer != TOKENIZER:
            raise CollectionError(f"{path} was indexed with another word rule "
                                  f"({meta.tokenizer[:40]!r}...); rebuild it to update it")
        store.set_unpack_limit(conn, meta.max_section_bytes)
        conn.setbusytimeout(WRITER_BUSY_MS)
        writes.tune_for_update(conn)
    except BaseException:
        conn.close()
        raise
    return conn, meta


# --------------------------------------------------------------------------- documents
def _prepare_all(docs: list[Document], embed_model: str | None, dim: int, dict_id: int = 0
                 ) -> list[_Prepared]:
    from .build import raw_tuple

    raws = [raw_tuple(0, d) for d in docs]
    out: list[_Prepared] = []
    for i in range(0, len(raws), BATCH):
        batch = raws[i:i + BATCH]
        prepared, _postings = prepare(batch, dict_id)  # packed as the build packed
        for raw, p in zip(batch, prepared, strict=True):
            _title, _n, psecs, ib, au = p[0], p[1], p[2], p[3], p[4]
            _shape, words = ps.passage_words(p[0], [(h, b) for _p, b, h in psecs], ib, au)
            out.append(_Prepared(raw, p, words))
    if embed_model:
        from .embed import document_text, get_embedder

        embedder = get_embedder(embed_model)
        if embedder.dim != dim:
            raise EnvironmentProblem(f"the model {embed_model!r} here makes vectors of "
                                     f"dimension {embedder.dim}, the collection has {dim}")
        for i in range(0, len(out), 64):
            chunk = out[i:i + 64]
            vecs = embedder.encode([document_text(d.raw[2], [t for _, t in d.raw[3]])
                                    for d in chunk])
            for d, v in zip(chunk, vecs, strict=True):
                d.vector = np.asarray(v, dtype=np.float32).tobytes()
    return out


def _stored(conn: apsw.Connection, rowid: int, limit: int, with_vector: bool) -> _Prepared:
    """A stored document re-made as it was prepared when written (its rows, passages and
    digest come out the same: the values to take out)."""
    *fields, meta_json = store.reads.stored_fields(conn, rowid, limit)
    pages = tuple((pos, first, last)
                  for pos, (first, last) in sorted(store.pages.of_document(conn, rowid).items()))
    raw = (rowid, *fields, json.loads(meta_json) if meta_json else {}, pages)
    prepared, _postings = prepare([raw])
    p = prepared[0]
    _shape, words = ps.passage_words(p[0], [(h, b) for _p, b, h in p[2]], p[3], p[4])
    return _Prepared(raw, p, words, writes.vector(conn, rowid) if with_vector else None)


def _put(conn: apsw.Connection, d: _Prepared, rowid: int) -> None:
    raw = d.at(rowid)
    writes.insert_rows(conn, [prepared_rows(raw, d.prepared)])
    ps.add_document(conn, rowid, d.prepared[7], d.passages)
    if d.vector is not None:
        writes.insert_vectors(conn, [(rowid, d.vector)])


def _take_out(conn: apsw.Connection, d: _Prepared, rowid: int) -> None:
    writes.delete_rows(conn, prepared_rows(d.at(rowid), d.prepared))
    ps.remove_document(conn, rowid, d.passages)
    if d.vector is not None:
        writes.delete_vector(conn, rowid)


def _finish(conn: apsw.Connection, meta: store.Meta, hasher: ContentHash,
            biggest: int) -> int:
    """Meta after an update (inside its transaction); returns the document count."""
    n, sections, words, top = writes.document_totals(conn)
    if n == 0:
        raise BuildError("the update would leave the collection empty; a collection needs at "
                         "least one document")
    if top != n:  # our own invariant; a failure here is a bug, and rolls the update back
        raise RuntimeError(f"rowids 1..{top} for {n} documents after an update")
    writes.compact_passage_numbers(conn, COMPACT_SLACK)
    flags = writes.field_flags(conn)
    writes.write_meta(conn, [
        ("documents", str(n)), ("sections", str(sections)),
        ("avg_words", repr(words / n)),
        ("max_section_bytes", str(max(meta.max_section_bytes, biggest))),
        ("content_hash", hasher.hexdigest()), ("content_state", hasher.state_hex()),
        ("update_time", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
        *((k, "1" if v else "0") for k, v in flags.items())])
    return n


@contextlib.contextmanager
def _transaction(conn: apsw.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock: readers go on reading) ... COMMIT, or ROLLBACK on any
    error, Ctrl-C included: the file is then as it was."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# ----------------------------------------------------------------------------------- add
def add_documents(path: str | os.PathLike[str], documents: Iterable[Document | DocumentError],
                  *, strict: bool = False,
                  on_skip: Callable[[DocumentError], None] | None = None) -> UpdateReport:
    """Add ``documents`` to the collection at ``path``; a document whose id is there replaces
    it. Bad documents are skipped and reported as in a build (``strict``: the first one stops
    the update before anything is written). One transaction: all or nothing."""
    started = time.perf_counter()
    p = Path(path)
    report = UpdateReport(str(p))
    conn, meta = _open(p)
    try:
        seen: dict[str, str] = {}
        good: list[Document] = []
        biggest = 0
        for item in documents:
            bad = item if isinstance(item, DocumentError) else None
            if bad is None:
                bad, size = admit(item, seen, biggest)
            if bad is not None:
                if strict:
                    raise BuildError(f"{bad} (stopped: --strict; nothing was changed)")
                record_skip(report, bad)
                if on_skip:
                    on_skip(bad)
                continue
            biggest = max(biggest, size)
            good.append(item)
        if not good:
            raise BuildError("no documents to add" + (
                f" ({report.skipped_count} skipped as bad)" if report.skipped_count else ""))
        ready = _prepare_all(good, meta.embed_model if meta.embed_dim else None,
                             meta.embed_dim, load_dictionary(conn))
        hasher = ContentHash(meta.content_state)
        with _transaction(conn):
            n = writes.document_totals(conn)[0]
            for d in ready:
                rowid = writes.document_rowid(conn, d.raw[1])
                if rowid is None:
                    n += 1
                    rowid = n
                    report.added += 1
                else:
                    old = _stored(conn, rowid, meta.max_section_bytes, bool(meta.embed_dim))
                    _take_out(conn, old, rowid)
                    hasher.remove(old.prepared[5])
                    report.replaced += 1
                _put(conn, d, rowid)
                hasher.add(d.prepared[5])
            report.documents = _finish(conn, meta, hasher, biggest)
    except apsw.Error as e:
        raise SieveError(f"the update of {p} failed and was rolled back ({e})") from None
    finally:
        conn.close()
    report.content_hash = hasher.hexdigest()
    report.seconds = time.perf_counter() - started
    return report


# -------------------------------------------------------------------------------- remove
def remove_documents(path: str | os.PathLike[str], ids: Iterable[str]) -> UpdateReport:
    """Remove the documents with these ids from the collection at ``path``, in one
    transaction; an id the collection does not have refuses the whole removal."""
    started = time.perf_counter()
    p = Path(path)
    wanted = list(dict.fromkeys(ids))
    report = UpdateReport(str(p))
    if not wanted:
        raise BuildError("no ids to remove")
    conn, meta = _open(p)
    vec = bool(meta.embed_dim)
    limit = meta.max_section_bytes
    try:
        hasher = ContentHash(meta.content_state)
        with _transaction(conn):
            missing = [i for i in wanted if writes.document_rowid(conn, i) is None]
            if missing:
                shown = ", ".join(repr(i) for i in missing[:5])
                more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
                raise SieveError(f"{p} has no document {shown}{more}; nothing was removed")
            n = writes.document_totals(conn)[0]
            if len(wanted) >= n:
                raise BuildError("removing every document would leave the collection empty; "
                                 "delete the file instead")
            for doc_id in wanted:
                rowid = writes.document_rowid(conn, doc_id)
                gone = _stored(conn, rowid, limit, vec)
                _take_out(conn, gone, rowid)
                hasher.remove(gone.prepared[5])
                report.removed += 1
                if rowid != n:  # keep rowids 1..N: the last document takes the free place
                    last = _stored(conn, n, limit, vec)
                    _take_out(conn, last, n)
                    _put(conn, last, rowid)
                    report.moved += 1
                n -= 1
            report.documents = _finish(conn, meta, hasher, 0)
    except apsw.Error as e:
        raise SieveError(f"the update of {p} failed and was rolled back ({e})") from None
    finally:
        conn.close()
    report.content_hash = hasher.hexdigest()
    report.seconds = time.perf_counter() - started
    return report
