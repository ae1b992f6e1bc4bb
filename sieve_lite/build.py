"""The one indexing path: ``Document`` objects -> a collection file.

The build writes to a temporary file beside the output and renames it into place only when
everything succeeded, so an interrupted or failed build never leaves a half-built collection at
the output path and an existing file there stays intact.

Pipeline (``python bench/build.py`` measures it, step by step):

1. The main process reads the source iterator, checks ids and numbers the documents.
2. Batches of documents are *prepared*: every field value normalised under the BQL word rule
   (``words.index_text``), long section texts packed (``store.packing.pack``), the document
   serialised for the content hash. This is the Python-heavy half of the work; for big lexical
   builds it runs in a pool of 2 forked worker processes while the main process inserts, and
   inline for small builds (under 256 K characters), for embedded builds (the model already
   uses every core) and where fork is not safe (not Linux, or torch loaded).
3. The main process inserts each prepared batch with ``executemany`` in one transaction. FTS5
   keeps its pending index in memory (``hashsize``, 64 MB) so that a build of up to a few
   million words writes one segment and needs no merging.
4. At the end: FTS5 ``optimize`` (one b-tree per table), collection metadata, ``VACUUM``.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import store
from .documents import INTRO, Document
from .errors import BuildError, DocumentError
from .store.layout import MAX_VALUES, value_rowid
from .store.packing import pack
from .store.passages import (
    BatchPostings,
    PostingsWriter,
    batch_postings,
    passage_words,
    write_passages,
)
from .words import index_text

BATCH_DOCS = 256          # documents per prepared batch
BATCH_CHARS = 1 << 20     # ... or this many characters of text, whichever comes first
POOL_AFTER_CHARS = 256 << 10  # start worker processes once this much text has been seen
DEFAULT_WORKERS = 2
FTS_HASHSIZE = 64 << 20   # bytes of pending FTS5 index kept in memory before a segment flush
FTS_TABLES = ("fts_title", "fts_section", "fts_body", "fts_infobox", "fts_author", "fts_doc")


@dataclass
class BuildReport:
    path: str
    documents: int = 0
    sections: int = 0
    skipped: list[str] = field(default_factory=list)  # one line per bad document
    words: int = 0
    seconds: float = 0.0
    embedded: bool = False
    # Wall-clock seconds per step (read by bench/build.py): read (source iterator, in the main
    # process), prepare (inline only), insert, wait (for workers), embed, optimize, vacuum.
    timings: dict[str, float] = field(default_factory=dict)
    workers: int = 0  # worker processes used for preparation (0 = inline)


def _progress(total_hint: int | None, quiet: bool):
    """A rich progress bar on stderr, or None when stderr is not a terminal or --quiet."""
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True)


def temp_path_for(out: Path) -> Path:
    return out.with_name(f".{out.name}.building-{os.getpid()}")


def _remove_stale_temps(out: Path) -> None:
    """Remove temp files of earlier builds of ``out`` whose process is gone (a SIGKILLed build
    cannot clean up after itself)."""
    prefix = f".{out.name}.building-"
    for name in os.listdir(out.parent):
        pid = name[len(prefix):]
        if not name.startswith(prefix) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        stale = out.parent / name
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            stale.unlink(missing_ok=True)
        except (PermissionError, OSError):
            pass  # alive (or not ours to judge): leave it


def build_collection(
    documents: Iterable[Document | DocumentError],
    out: str | os.PathLike[str],
    *,
    embed: bool = True,
    embed_model: str | None = None,
    strict: bool = False,
    quiet: bool = True,
    on_skip: Callable[[DocumentError], None] | None = None,
    source_label: str = "",
    workers: int | None = None,
) -> BuildReport:
    """Index ``documents`` into a new collection at ``out`` (atomically replaced).

    Bad documents (``DocumentError`` items, or repeated ids) are reported through ``on_skip``
    and skipped; with ``strict`` the first one stops the build and nothing is written.
    ``workers``: processes that prepare (normalise, pack) documents for big lexical builds;
    None = 2 (none on a 1-core machine), 0 = prepare in this process. Workers are used on Linux
    only (see ``_can_fork``); ``report.workers`` says how many ran.
    """
    out_path = Path(out)
    if out_path.exists() and out_path.is_dir():
        raise BuildError(f"output {out_path} is a directory; give a file name like out.db")
    if not out_path.parent.exists():
        raise BuildError(f"output folder {out_path.parent} does not exist")
    tmp = temp_path_for(out_path)
    _remove_stale_temps(out_path)
    for stale in (tmp, Path(str(tmp) + "-journal"), Path(str(tmp) + "-wal")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    report = BuildReport(str(out_path))
    embedder = None
    if embed:
        from .embed import get_embedder

        t0 = time.perf_counter()
        embedder = get_embedder(embed_model)
        report.timings["load_model"] = time.perf_counter() - t0
    if workers is None:
        workers = min(DEFAULT_WORKERS, os.cpu_count() or 1)
        if workers < 2:
            workers = 0  # one core: a worker would only compete with the inserts
    if embedder is not None or not _can_fork():
        workers = 0  # the model's own threads already use every core; or see _can_fork
    try:
        conn = store.connect(tmp, readonly=False, create=True, need_vec=embedder is not None)
        try:
            conn.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                         "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -200000")
            store.create(conn, embedder.dim if embedder else None)
            _tune_fts(conn)
            _index(conn, documents, report, strict, quiet, on_skip, embedder, workers)
            if report.documents == 0:
                raise BuildError("no documents were indexed" + (
                    f" ({len(report.skipped)} skipped as bad)" if report.skipped else "")
                    + "; check the source path and --format")
            _finish(conn, report, embedder, source_label)
        finally:
            conn.close()
        os.replace(tmp, out_path)
    except BaseException:
        # Ctrl-C, a strict stop or our own bug: never leave a partial file behind.
        tmp.unlink(missing_ok=True)
        raise
    report.seconds = time.perf_counter() - started
    report.embedded = embedder is not None
    return report


def _tune_fts(conn) -> None:
    """Keep the pending FTS5 index in memory (one segment per table for most builds)."""
    import apsw

    for table in FTS_TABLES:
        try:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', {FTS_HASHSIZE})")
        except apsw.SQLError:
            return  # an SQLite without the option: the defaults work, only slower


# ------------------------------------------------------------------------------- preparation
# A document travels to a worker as a plain tuple (cheaper to pickle than dataclasses):
#   (rowid, id, title, sections ((heading, text), ...), infobox ((k, v), ...), authors,
#    date, url, public meta dict)
Raw = tuple  # see above


def prepare(batch: list[Raw]) -> tuple[list[tuple], BatchPostings]:
    """Normalise, pack and serialise a batch of documents (runs in a worker or inline), and
    count the words of their passages (``store.passages``).

    Returns per document ``(title_idx, n_words, sections, infobox_idx, author_idx, digest,
    meta_json, passage_shape, passage_lengths)`` where ``sections`` is
    ``[(packed_text, body_idx, heading_idx), ...]``, and the batch's passage postings.
    """
    out = []
    cut = []
    for _rowid, doc_id, title, sections, infobox, authors, date, url, meta in batch:
        title_idx = index_text(title)
        n_words = title_idx.count(" ") + 1 if title_idx else 0
        secs = []
        for heading, text in sections:
            body = index_text(text)
            if body:
                n_words += body.count(" ") + 1
            # '(intro)' is a label, not a heading: it is never indexed (BQL.md section 2).
            secs.append((pack(text), body, "" if heading == INTRO else index_text(heading)))
        # An infobox entry is read as 'key: value' (BQL.md section 1).
        ib = [index_text(f"{k}: {v}") for k, v in infobox]
        au = [index_text(a) for a in authors]
        # The content hash covers every public field, in a fixed JSON framing; each document
        # is hashed here and the main process hashes the digests in document order.
        meta_json = json.dumps(meta, ensure_ascii=False) if meta else None
        framed = json.dumps([doc_id, title, sections, infobox, authors, date, url],
                            ensure_ascii=False)
        digest = hashlib.sha256(f"{framed}\n{meta_json or ''}".encode()).digest()
        shape, passages = passage_words(title_idx, [(h, b) for _p, b, h in secs], ib, au)
        cut.append(passages)
        out.append((title_idx, n_words, secs, ib, au, digest, meta_json, shape,
                    [len(p) for p in passages]))
    return out, batch_postings(cut)


def _worker_init(parent: int) -> None:
    """Leave Ctrl-C to the building process (it terminates the pool), and exit when that
    process dies (even by SIGKILL): a worker blocked on its task queue would wait forever."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _can_fork() -> bool:
    """Worker processes are started with fork only: milliseconds to start, and no re-import of
    the caller's ``__main__`` (spawn and forkserver would run an unguarded calling script
    again). Fork is safe on Linux unless torch is loaded (its thread pools do not survive a
    fork); elsewhere, and then, documents are prepared inline."""
    return sys.platform == "linux" and "torch" not in sys.modules \
        and "fork" in multiprocessing.get_all_start_methods()


def _pool(n: int):
    ctx = multiprocessing.get_context("fork")
    return ctx.Pool(n, initializer=_worker_init, initargs=(os.getpid(),))


# ------------------------------------------------------------------------------------ index
def _index(conn, documents, report: BuildReport, strict: bool, quiet: bool,
           on_skip, embedder, workers: int) -> None:
    seen: dict[str, str] = {}  # id -> where it was first seen
    hasher = hashlib.sha256()
    progress = _progress(None, quiet)
    task = None
    if progress:
        progress.start()
        task = progress.add_task("indexing", total=None)
    stats = {"heading": 0, "infobox": 0, "author": 0, "date": 0, "words": 0}
    timings = report.timings
    for key in ("read", "prepare", "insert", "wait", "embed"):
        timings.setdefault(key, 0.0)
    pool = None
    inflight: deque = deque()
    batch: list[Raw] = []
    batch_chars = 0
    total_chars = 0
    pending_vec: list[tuple[int, str]] = []
    writer = PostingsWriter()

    def skip(err: DocumentError) -> None:
        if strict:
            raise BuildError(f"{err} (stopped: --strict; nothing was written)")
        report.skipped.append(str(err))
        if on_skip:
            on_skip(err)

    def flush_vectors() -> None:
        if not pending_vec:
            return
        t0 = time.perf_counter()
        vecs = embedder.encode([t for _, t in pending_vec])
        conn.executemany("INSERT INTO doc_vectors(rowid, embedding) VALUES (?, ?)",
                         [(r, v.tobytes()) for (r, _), v in zip(pending_vec, vecs, strict=True)])
        pending_vec.clear()
        timings["embed"] += time.perf_counter() - t0

    def write(raw: list[Raw], prepared: tuple[list[tuple], BatchPostings]) -> None:
        t0 = time.perf_counter()
        docs, postings = prepared
        _insert(conn, raw, docs, stats, hasher, postings, writer)
        timings["insert"] += time.perf_counter() - t0
        if progress:
            progress.update(task, completed=report.documents)

    def drain(limit: int) -> None:
        while len(inflight) > limit:
            raw, result = inflight.popleft()
            t0 = time.perf_counter()
            prepared = result.get()
            timings["wait"] += time.perf_counter() - t0
            write(raw, prepared)

    def submit() -> None:
        nonlocal batch, batch_chars, pool
        if not batch:
            return
        if pool is None and workers and total_chars >= POOL_AFTER_CHARS:
            pool = _pool(workers)
            report.workers = workers
        if pool is not None:
            inflight.append((batch, pool.apply_async(prepare, (batch,))))
            drain(2 * workers + 2)
        else:
            t0 = time.perf_counter()
            prepared = prepare(batch)
            timings["prepare"] += time.perf_counter() - t0
            write(batch, prepared)
        batch, batch_chars = [], 0

    rowid = 0
    conn.execute("BEGIN")
    try:
        it = iter(documents)
        while True:
            t0 = time.perf_counter()
            item = next(it, None)
            timings["read"] += time.perf_counter() - t0
            if item is None:
                break
            if isinstance(item, DocumentError):
                skip(item)
                continue
            doc = item
            meta = doc.meta if isinstance(doc.meta, dict) else {}
            where = meta.get("_where", "")
            if doc.id in seen:
                first = f" (first at {seen[doc.id]})" if seen[doc.id] else ""
                skip(DocumentError(f"repeats id {doc.id!r}{first}; ids must be unique", where))
                continue
            if len(doc.sections) >= MAX_VALUES or len(doc.infobox) >= MAX_VALUES \
                    or len(doc.authors) >= MAX_VALUES:
                skip(DocumentError(f"document {doc.id!r} has over {MAX_VALUES - 1} sections, "
                                   "infobox entries or authors", where))
                continue
            rowid += 1
            seen[doc.id] = where
            # '_where' is the builders' tag (file:line), not the document's own metadata.
            public_meta = {k: v for k, v in meta.items() if k != "_where"} if meta else {}
            sections = tuple((s.heading, s.text) for s in doc.sections)
            batch.append((rowid, doc.id, doc.title, sections, doc.infobox, doc.authors,
                          doc.date, doc.url, public_meta))
            chars = len(doc.title) + sum(len(t) for _, t in sections)
            batch_chars += chars
            total_chars += chars
            report.documents += 1
            report.sections += len(sections)
            if embedder is not None:
                from .embed import document_text

                pending_vec.append((rowid, document_text(doc.title, [t for _, t in sections])))
                if len(pending_vec) >= 64:
                    flush_vectors()
            if len(batch) >= BATCH_DOCS or batch_chars >= BATCH_CHARS:
                submit()
        submit()
        drain(0)
        if embedder is not None:
            flush_vectors()
        t0 = time.perf_counter()
        writer.write(conn)
        timings["postings"] = time.perf_counter() - t0
        conn.execute("COMMIT")
    except BaseException:
        if pool is not None:
            pool.terminate()
            pool = None
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
        raise
    finally:
        if pool is not None:
            pool.close()
            pool.join()
        if progress:
            progress.stop()
    report.words = stats["words"]
    conn.execute("BEGIN")
    meta = {
        "content_hash": hasher.hexdigest(),
        "has_section": str(int(stats["heading"] > 0)),
        "has_infobox": str(int(stats["infobox"] > 0)),
        "has_author": str(int(stats["author"] > 0)),
        "has_date": str(int(stats["date"] > 0)),
    }
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(meta.items()))
    conn.execute("COMMIT")


def _insert(conn, raw: list[Raw], prepared: list[tuple], stats: dict[str, int],
            hasher: Any, postings: BatchPostings, writer: PostingsWriter) -> None:
    """Insert one prepared batch (rowids were given in the main process, in source order)."""
    from .documents import date_span

    docs, titles, secs, bodies, heads, ibs, ib_fts, aus, au_fts, doc_rows = (
        [] for _ in range(10))
    passage_rows = []
    first = writer.add(postings)
    for (rowid, doc_id, title, sections, infobox, authors, date, url, _meta), \
            (title_idx, n_words, psecs, ib_idx, au_idx, digest, meta_json, shape, plens) \
            in zip(raw, prepared, strict=True):
        passage_rows.append((rowid, first, shape, plens))
        first += len(plens)
        base = value_rowid(rowid, 0)
        span = date_span(date) if date else None
        if span:
            stats["date"] += 1
        docs.append((rowid, doc_id, title, date, span[0] if span else None,
                     span[1] if span else None, url, meta_json, n_words))
        if title_idx:
            titles.append((base, title_idx))
        pairs = zip(sections, psecs, strict=True)
        for pos, ((heading, _text), (packed, body, head)) in enumerate(pairs):
            r = base | pos
            secs.append((r, rowid, pos, heading, packed))
            if body:
                bodies.append((r, body))
            if heading != INTRO:
                stats["heading"] += 1
                if head:
                    heads.append((r, head))
        if infobox:
            stats["infobox"] += 1
            for i, ((k, v), idx) in enumerate(zip(infobox, ib_idx, strict=True)):
                ibs.append((base | i, rowid, i, k, v))
                if idx:
                    ib_fts.append((base | i, idx))
        if authors:
            stats["author"] += 1
            for i, (a, idx) in enumerate(zip(authors, au_idx, strict=True)):
                aus.append((base | i, rowid, i, a))
                if idx:
                    au_fts.append((base | i, idx))
        stats["words"] += n_words
        hasher.update(digest)
        # The document-level row of fts_doc: every value of a field joined (no positions are
        # kept there, so joining cannot create a phrase across two values).
        doc_rows.append((rowid, title_idx, " ".join(h for _p, _b, h in psecs if h),
                         " ".join(b for _p, b, _h in psecs if b), " ".join(i for i in ib_idx if i),
                         " ".join(a for a in au_idx if a)))
    conn.executemany(
        "INSERT INTO documents(rowid, id, title, date, date_lo, date_hi, url, meta, n_words) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", docs)
    conn.executemany("INSERT INTO fts_title(rowid, v) VALUES (?, ?)", titles)
    conn.executemany("INSERT INTO sections(rowid, doc, pos, heading, text) VALUES (?, ?, ?, ?, ?)",
                     secs)
    conn.executemany("INSERT INTO fts_body(rowid, v) VALUES (?, ?)", bodies)
    if heads:
        conn.executemany("INSERT INTO fts_section(rowid, v) VALUES (?, ?)", heads)
    if ibs:
        conn.executemany("INSERT INTO infobox(rowid, doc, pos, key, value) VALUES (?, ?, ?, ?, ?)",
                         ibs)
        conn.executemany("INSERT INTO fts_infobox(rowid, v) VALUES (?, ?)", ib_fts)
    if aus:
        conn.executemany("INSERT INTO authors(rowid, doc, pos, name) VALUES (?, ?, ?, ?)", aus)
        conn.executemany("INSERT INTO fts_author(rowid, v) VALUES (?, ?)", au_fts)
    conn.executemany("INSERT INTO fts_doc(rowid, title, section, body, infobox, author) "
                     "VALUES (?, ?, ?, ?, ?, ?)", doc_rows)
    write_passages(conn, passage_rows)


def _finish(conn, report: BuildReport, embedder, source_label: str) -> None:
    from . import __version__

    n, total_words = conn.execute("SELECT count(*), total(n_words) FROM documents").fetchone()
    t0 = time.perf_counter()
    conn.execute("BEGIN")
    for table in FTS_TABLES:
        # Merge all b-tree segments into one: smaller file, faster queries (a no-op when the
        # in-memory hash held the whole build).
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    meta = {
        "schema_version": str(store.SCHEMA_VERSION),
        "tokenizer": "sieve-words-v1 (NFKD, drop combining marks, casefold, runs of letters "
                     "and digits, joined by spaces) + fts5 ascii (splits on those spaces only)",
        "embed_model": embedder.model_id if embedder else "",
        "embed_dim": str(embedder.dim) if embedder else "0",
        "documents": str(n),
        "sections": str(report.sections),
        "avg_words": repr(total_words / n if n else 0.0),
        "build_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sieve_lite_version": __version__,
        "source": source_label,
    }
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(meta.items()))
    conn.execute("COMMIT")
    report.timings["optimize"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    conn.execute("VACUUM")
    report.timings["vacuum"] = time.perf_counter() - t0
