"""The one indexing path: ``Document`` objects -> a collection file.

The build writes to a temporary file beside the output and renames it into place only when
everything succeeded, so an interrupted or failed build never leaves a half-built collection at
the output path and an existing file there stays intact.

Pipeline (``python bench/build.py`` measures it, step by step):

1. The main process reads the source iterator, checks ids and numbers the documents. The first
   batches wait until a zstd dictionary for section texts is trained on their first 8 MB of
   long texts (``store.packing``; none for small collections, which keep zlib).
2. Batches of documents are *prepared*: every field value normalised under the BQL word rule
   (``words.index_text``), long section texts packed (``store.packing.pack``), the document
   serialised for the content hash, its passages' words counted (the postings). This is the
   Python-heavy half of the work; for big lexical builds it runs in a pool of 2 forked worker
   processes while the main process inserts, and inline for small builds (under 256 K
   characters), for embedded builds (the model already uses every core) and where fork is not
   safe (not Linux, or torch loaded).
3. The main process inserts each prepared batch's plain rows with ``executemany`` in one
   transaction, and (with the worker pool) sends each FTS5 table's rows to a process that
   builds that table alone in a file of its own (``FtsWriters``), adopted at the end by a
   verbatim copy of its shadow tables. FTS5 keeps its pending index in memory (``hashsize``,
   64 MB) and merges 16 segments at a time (``automerge``) while building.
4. Passage postings are collected in sorted runs spilled to disk and merged at the end
   (``store.passages.PostingsWriter``): memory does not grow with the collection.
5. At the end: FTS5 ``optimize`` (one b-tree per table), collection metadata, ``VACUUM INTO``
   a second temporary file, renamed into place.

``BuildReport.rss`` has the peak RSS by the end of each step.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import store
from .documents import INTRO, Document
from .errors import BuildError, DocumentError
from .meter import Meter
from .outfile import check_output, remove_stale_temps, temp_path
from .processes import can_fork, fork_pool, worker_init
from .store import writes
from .store.content import ContentHash, document_digest
from .store.layout import MAX_VALUES
from .store.packing import (
    MAX_SECTION_BYTES,
    MIN_PACK,
    SAMPLE_BYTES,
    SMALL_BYTES,
    SMALL_LEVEL,
    ZSTD_LEVEL,
    pack,
    store_dictionary,
    train_dictionary,
    use_dictionary,
)
from .store.passages import (
    BatchPostings,
    PostingsWriter,
    batch_postings,
    passage_words,
    write_passages,
)
from .store.resume import VectorCache, cache_path, text_key
from .store.writes import DocumentRows, document_rows, insert_rows
from .words import index_text

BATCH_DOCS = 256          # documents per prepared batch
BATCH_CHARS = 1 << 20     # ... or this many characters of text, whichever comes first
POOL_AFTER_CHARS = 256 << 10  # start worker processes once this much text has been seen
DEFAULT_WORKERS = 2
EMBED_BATCH = 64  # documents embedded per call (a sharded build makes the same batches)
# How the indexed text was made (meta 'tokenizer'): in-place updates recompute indexed values
# (FTS5 deletes need them exactly), so they refuse a collection built with another rule.
TOKENIZER = ("sieve-words-v1 (NFKD, drop combining marks, casefold, runs of letters and digits, "
             "joined by spaces) + fts5 ascii (splits on those spaces only)")
SKIPS_KEPT = 5            # bad documents whose message a report keeps (all are counted)
EARLY_STOP = 100          # ... and when this many fail before any succeeds, the build stops


@dataclass
class BuildReport:
    path: str
    documents: int = 0
    sections: int = 0
    skipped: list[str] = field(default_factory=list)  # the first SKIPS_KEPT bad documents
    skipped_count: int = 0  # all of them
    words: int = 0
    seconds: float = 0.0
    embedded: bool = False
    # Wall-clock seconds per step (read by bench/build.py): read (source iterator, in the main
    # process), prepare (inline only), insert, wait (for workers), embed, optimize, vacuum.
    timings: dict[str, float] = field(default_factory=dict)
    workers: int = 0  # worker processes used for preparation (0 = inline)
    # Peak resident memory (MB) of the building process by the end of each step (a step that
    # raised it is where the peak happened), and the largest worker's ("workers").
    rss: dict[str, float] = field(default_factory=dict)
    fts_workers: int = 0  # processes that built the FTS5 tables (0 = this one)
    resumed_vectors: int = 0  # vectors an interrupted build had left (store/resume.py)
    reused_vectors: int = 0   # ... and how many of them this build used


def peak_rss_mb() -> tuple[float, float]:
    """(this process's peak RSS, the largest finished child's) in MB; zeros off Unix."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not Unix
        return 0.0, 0.0
    kb = 1024 if sys.platform != "darwin" else 1 << 20  # ru_maxrss: KB on Linux, B on macOS
    return (_own_peak_kb() / 1024 or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / kb,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / kb)


def _own_peak_kb() -> float:
    """This process image's peak RSS (Linux ``VmHWM``), 0 where unknown. Not ``ru_maxrss``:
    Linux carries it across ``exec``, so a build started by a large process (a test runner
    holding models) would report that process's size as its own."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def _mark(report: BuildReport, step: str) -> None:
    me, children = peak_rss_mb()
    report.rss[step] = round(me, 1)
    if children:
        report.rss["workers"] = round(children, 1)


def _progress(meter: Meter | None, quiet: bool):
    """A rich progress bar on stderr, or None when stderr is not a terminal or --quiet. With a
    ``meter`` (the sources' size, known up front) it shows the share read and the time left."""
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn("{task.description}"), BarColumn()]
    if meter is not None:  # (its total is known once the sources are listed)
        columns += [TaskProgressColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    columns.append(TimeElapsedColumn())
    return Progress(*columns, console=Console(stderr=True), transient=True)


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
    fts_workers: bool | None = None,
    meter: Meter | None = None,
    force: bool = False,
    inputs: Iterable[str | os.PathLike[str]] = (),
    manifest: Mapping[str, str] | None = None,
    embedder: Any = None,
) -> BuildReport:
    """Index ``documents`` into a new collection at ``out`` (atomically replaced).

    Bad documents (``DocumentError`` items, or repeated ids) are reported through ``on_skip``
    and skipped; with ``strict`` the first one stops the build and nothing is written.
    ``workers``: processes that prepare (normalise, pack) documents for big lexical builds;
    None = 2 (none on a 1-core machine), 0 = prepare in this process. Workers are used on Linux
    only (see ``processes.can_fork``); ``report.workers`` says how many ran.
    ``fts_workers``: build each FTS5 table in a process and file of its own, adopted into the
    collection at the end (``FtsWriters``); None = whenever worker processes prepare.
    ``meter``: the ``meter.Meter`` of ``documents``, for a progress bar with a total and an
    ETA. Only the first ``SKIPS_KEPT`` bad documents are kept in the report (all are counted);
    when the first ``EARLY_STOP`` records all fail the build stops, as the source is most
    likely in another format than the one it is read as.
    The output must not be one of ``inputs`` nor an existing file that is not a collection;
    an existing collection is replaced only with ``force`` (``outfile.check_output``).
    ``manifest``: name, description, version, license (the name defaults to the file's stem).
    ``embedder``: a ready ``embed.TextEmbedder`` to use instead of loading ``embed_model``
    (a sharded build hands each shard the vectors its main process made).
    """
    out_path = Path(out)
    check_output(out_path, force=force, inputs=[Path(i) for i in inputs])
    tmp = temp_path(out_path, "building")
    remove_stale_temps(out_path, "building")
    for stale in (tmp, Path(str(tmp) + "-journal"), Path(str(tmp) + "-wal")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    report = BuildReport(str(out_path))
    if embedder is not None:
        embed = False  # (ready: nothing to load)
    if embed:
        from .embed import get_embedder

        t0 = time.perf_counter()
        embedder = get_embedder(embed_model)
        report.timings["load_model"] = time.perf_counter() - t0
        _mark(report, "load_model")
    if workers is None:
        workers = min(DEFAULT_WORKERS, os.cpu_count() or 1)
        if workers < 2:
            workers = 0  # one core: a worker would only compete with the inserts
    if embedder is not None or not can_fork():
        workers = 0  # the model's own threads already use every core; or see can_fork
    final = Path(f"{tmp}-vacuum")  # VACUUM INTO writes the finished copy here
    final.unlink(missing_ok=True)
    fts = FtsWriters(tmp, enabled=bool(workers) if fts_workers is None
                     else fts_workers and can_fork() and embedder is None)
    # An embedded build keeps its vectors until it succeeds, and reuses an interrupted one's.
    vector_cache = VectorCache(cache_path(out_path)) if embedder is not None else None
    if vector_cache is not None:
        report.resumed_vectors = vector_cache.count()
    try:
        conn = store.connect(tmp, readonly=False, create=True, need_vec=embedder is not None)
        try:
            writes.tune_for_build(conn)
            store.create(conn, embedder.dim if embedder else None)
            writes.tune_fts(conn)
            _index(conn, documents, report, strict, quiet, on_skip, embedder, workers, meter,
                   str(out_path.parent), fts, vector_cache)
            if fts.started:
                # A fresh connection: the first one created the FTS tables and FTS5 caches
                # an index's structure per connection.
                conn.close()
                conn = store.connect(tmp, readonly=False, create=True,
                                     need_vec=embedder is not None)
                writes.tune_for_build(conn)
                t0 = time.perf_counter()
                fts.adopt(conn)
                report.timings["adopt"] = time.perf_counter() - t0
                report.fts_workers = len(fts.procs)
            if report.documents == 0:
                raise BuildError("no documents were indexed" + (
                    f" ({report.skipped_count} skipped as bad)" if report.skipped_count else "")
                    + "; check the source path and --format")
            _finish(conn, report, embedder, source_label,
                    {"name": out_path.stem, **(manifest or {})}, final,
                    optimized=fts.started)
        finally:
            conn.close()
            fts.stop()
        os.replace(final, out_path)
        tmp.unlink(missing_ok=True)
    except BaseException:
        # Ctrl-C, a strict stop or our own bug: never leave a partial file behind (the
        # vectors made so far stay, for the next build: store/resume.py).
        tmp.unlink(missing_ok=True)
        final.unlink(missing_ok=True)
        if vector_cache is not None:
            vector_cache.close()
        raise
    if vector_cache is not None:
        report.reused_vectors = vector_cache.reused
        vector_cache.close(remove=True)
    report.seconds = time.perf_counter() - started
    report.embedded = embedder is not None
    return report


# ------------------------------------------------------------------------------- preparation
# A document travels to a worker as a plain tuple (cheaper to pickle than dataclasses):
#   (rowid, id, title, sections ((heading, text), ...), infobox ((k, v), ...), authors,
#    date, url, public meta dict, page ranges ((section pos, first, last), ...): () when none)
Raw = tuple  # see above


def prepare(batch: list[Raw], dict_id: int = 0, level: int = ZSTD_LEVEL
            ) -> tuple[list[tuple], BatchPostings]:
    """Normalise, pack and serialise a batch of documents (runs in a worker or inline), and
    count the words of their passages (``store.passages``).

    Returns per document ``(title_idx, n_words, sections, infobox_idx, author_idx, digest,
    meta_json, passage_shape, passage_lengths)`` where ``sections`` is
    ``[(packed_text, body_idx, heading_idx), ...]``, and the batch's passage postings.
    ``dict_id``: the registered zstd dictionary long texts are packed with (0: zlib), at
    ``level``.
    """
    out = []
    cut = []
    for _rowid, doc_id, title, sections, infobox, authors, date, url, meta, pages in batch:
        title_idx = index_text(title)
        n_words = title_idx.count(" ") + 1 if title_idx else 0
        secs = []
        for heading, text in sections:
            body = index_text(text)
            if body:
                n_words += body.count(" ") + 1
            # '(intro)' is a label, not a heading: it is never indexed (BQL.md section 2).
            secs.append((pack(text, dict_id, level), body,
                         "" if heading == INTRO else index_text(heading)))
        # An infobox entry is read as 'key: value' (BQL.md section 1).
        ib = [index_text(f"{k}: {v}") for k, v in infobox]
        au = [index_text(a) for a in authors]
        # The content hash covers every public field (store/content.py); each document is
        # hashed here and the main process adds the digests to the collection's hash.
        meta_json = json.dumps(meta, ensure_ascii=False) if meta else None
        digest = document_digest(doc_id, title, sections, infobox, authors, date, url,
                                 meta_json, pages)
        shape, passages = passage_words(title_idx, [(h, b) for _p, b, h in secs], ib, au)
        cut.append(passages)
        out.append((title_idx, n_words, secs, ib, au, digest, meta_json, shape,
                    [len(p) for p in passages]))
    return out, batch_postings(cut)


# ------------------------------------------------------------------------ parallel FTS5
class FtsWriters:
    """Every FTS5 table built by a process of its own, in a file of its own (the collection's
    temporary path + ``-fts-<table>``, made by ``store.create``: the same table definitions),
    then adopted whole by the collection (``writes.adopt_fts``: the shadow tables copied
    verbatim). The building process sends each writer its table's rows, batch by batch, in
    rowid order, through a pipe (a full pipe makes the sender wait: memory stays bounded);
    each writer inserts them with the build's FTS5 settings and optimizes its table, exactly
    what a single writer does, so the index is the same. A writer exits when the building
    process dies (``processes.worker_init``); its file is then removed by the next build
    (``outfile.remove_stale_temps``), and by ``stop`` on any error."""

    def __init__(self, tmp: Path, enabled: bool) -> None:
        self.tmp = tmp
        self.enabled = enabled
        self.decided = False
        self.started = False
        self.procs: dict[str, Any] = {}
        self.pipes: dict[str, Any] = {}
        self.replies: dict[str, Any] = {}

    def part(self, table: str) -> Path:
        return Path(f"{self.tmp}-fts-{table}")

    def start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        self.decided = self.started = True
        for table in writes.FTS_TABLES:
            path = self.part(table)
            path.unlink(missing_ok=True)
            rx, tx = ctx.Pipe(duplex=False)
            reply_rx, reply_tx = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_fts_writer, args=(str(path), table, rx, reply_tx,
                                                         os.getpid()), daemon=True)
            proc.start()
            rx.close()
            reply_tx.close()
            self.procs[table], self.pipes[table], self.replies[table] = proc, tx, reply_rx

    def send(self, rows: dict[str, list[tuple]]) -> None:
        for table, tx in self.pipes.items():
            try:
                tx.send(rows[table])
            except (BrokenPipeError, ConnectionResetError):
                self._failed(table)

    def close_input(self) -> None:
        for table, tx in self.pipes.items():
            try:
                tx.send(None)
            except (BrokenPipeError, ConnectionResetError):
                self._failed(table)
            tx.close()
        self.pipes = {}

    def wait(self) -> None:
        for table, rx in self.replies.items():
            try:
                msg = rx.recv()
            except EOFError:
                msg = "it exited without a word"
            if msg:
                raise BuildError(f"the process building {table} failed: {msg}")
        for proc in self.procs.values():
            proc.join()

    def _failed(self, table: str) -> None:
        try:
            msg = self.replies[table].recv() if self.replies[table].poll(5) else ""
        except EOFError:
            msg = ""
        raise BuildError(f"the process building {table} failed: {msg or 'it exited'}")

    def adopt(self, conn) -> None:
        """Copy every table into the collection at ``conn`` (one transaction)."""
        writes.adopt_fts(conn, {t: str(self.part(t)) for t in writes.FTS_TABLES})

    def stop(self) -> None:
        """End the writers (if still running) and remove their files."""
        for proc in self.procs.values():
            if proc.is_alive():
                proc.terminate()
            proc.join()
        for conn in (*self.pipes.values(), *self.replies.values()):
            conn.close()
        self.procs, self.pipes, self.replies = {}, {}, {}
        for table in writes.FTS_TABLES:
            for extra in ("", "-journal"):
                Path(f"{self.part(table)}{extra}").unlink(missing_ok=True)


def _fts_writer(path: str, table: str, rx, reply, parent: int) -> None:
    """One FTS5 table, built in the file ``path`` from the rows that arrive on ``rx``."""
    worker_init(parent)
    try:
        conn = store.connect(path, readonly=False, create=True)
        writes.tune_for_build(conn)
        conn.execute("PRAGMA cache_size = -32000")  # appends: a small cache does
        store.create(conn, None)
        writes.tune_fts(conn, [table])
        conn.execute("BEGIN")
        while (rows := rx.recv()) is not None:
            writes.insert_fts(conn, {table: rows})
        writes.optimize_fts(conn, [table])
        writes.reset_fts(conn)
        conn.execute("COMMIT")
        conn.close()
        reply.send("")
    except BaseException as e:  # to the building process, which stops the build
        reply.send(f"{type(e).__name__}: {e}")


# ------------------------------------------------------------------------------------ index
def _index(conn, documents, report: BuildReport, strict: bool, quiet: bool,
           on_skip, embedder, workers: int, meter: Meter | None, spill_dir: str,
           fts: FtsWriters, vector_cache: VectorCache | None = None) -> None:
    seen: dict[str, str] = {}  # id -> where it was first seen
    t_start = time.perf_counter()
    hasher = ContentHash()
    if meter is None:
        meter = getattr(documents, "meter", None)  # sources.Sources measures its bytes
    progress = _progress(meter, quiet)
    task = None
    if progress:
        progress.start()
        task = progress.add_task("indexing", total=None)

    source_stats = getattr(documents, "stats", None)  # sources.Sources counts files, pages

    def tick() -> None:
        if not progress:
            return
        done = f"indexing: {report.documents:,} documents"
        elapsed = time.perf_counter() - t_start
        if elapsed > 1:
            done += f" ({report.documents / elapsed:,.0f}/s)"
        if source_stats is not None and source_stats.files_total > 1:
            pages = f", {source_stats.pages:,} pages" if source_stats.pages else ""
            done += f" ({source_stats.files_done:,}/{source_stats.files_total:,} files{pages})"
        if meter is not None and meter.total:
            progress.update(task, completed=meter.done, total=meter.total, description=done)
        else:
            progress.update(task, completed=report.documents, description=done)

    stats = {"heading": 0, "infobox": 0, "author": 0, "date": 0, "words": 0}
    biggest = 0  # bytes of the longest section text: readers never unpack more (packing.py)
    timings = report.timings
    for key in ("read", "prepare", "insert", "wait", "embed"):
        timings.setdefault(key, 0.0)
    pool = None
    inflight: deque = deque()
    batch: list[Raw] = []
    batch_chars = 0
    total_chars = 0
    pending_vec: list[tuple[int, str]] = []
    writer = PostingsWriter(spill_dir)
    # The section text dictionary (store/packing.py) is trained on the first SAMPLE_BYTES of
    # long section texts; batches wait for it (at most 2 * SAMPLE_BYTES characters of them),
    # then go to preparation with it. Workers start after it exists (they inherit it).
    dict_id = 0
    training = True
    held: list[list[Raw]] = []
    sample: list[bytes] = []
    sample_bytes = 0
    sent_chars = 0

    def skip(err: DocumentError) -> None:
        if strict:
            raise BuildError(f"{err} (stopped: --strict; nothing was written)")
        record_skip(report, err)
        if report.documents == 0 and report.skipped_count >= EARLY_STOP:
            raise BuildError(f"the first {EARLY_STOP} records all failed, so the build stopped "
                             f"and wrote nothing (the first: {report.skipped[0]}); are the "
                             "sources in the format they are read as (--format)?")
        if on_skip:
            on_skip(err)

    def flush_vectors() -> None:
        if not pending_vec:
            return
        t0 = time.perf_counter()
        keys = [text_key(embedder.model_id, t) for _, t in pending_vec]
        have = vector_cache.get(keys) if vector_cache is not None else {}
        todo = [i for i, k in enumerate(keys) if k not in have]
        if todo:
            vecs = embedder.encode([pending_vec[i][1] for i in todo])
            new = [(keys[i], v.tobytes()) for i, v in zip(todo, vecs, strict=True)]
            have.update(new)
            if vector_cache is not None:
                vector_cache.put(new)  # kept for a resumed build (store/resume.py)
        writes.insert_vectors(conn, [(r, have[k])
                                     for (r, _), k in zip(pending_vec, keys, strict=True)])
        pending_vec.clear()
        timings["embed"] += time.perf_counter() - t0

    def write(raw: list[Raw], prepared: tuple[list[tuple], BatchPostings]) -> None:
        t0 = time.perf_counter()
        docs, postings = prepared
        _insert(conn, raw, docs, stats, hasher, postings, writer, fts)
        timings["insert"] += time.perf_counter() - t0
        tick()

    def drain(limit: int) -> None:
        while len(inflight) > limit:
            raw, result = inflight.popleft()
            t0 = time.perf_counter()
            prepared = result.get()
            timings["wait"] += time.perf_counter() - t0
            write(raw, prepared)

    def send(batch: list[Raw]) -> None:
        nonlocal pool, sent_chars
        if pool is None and workers and total_chars >= POOL_AFTER_CHARS:
            if fts.enabled and not fts.decided:
                fts.start()  # before any FTS row was written: whole tables only
            pool = fork_pool(workers)
            report.workers = workers
        fts.decided = True
        # The first SMALL_BYTES of text are packed harder: small collections (the shipped
        # demo) get the smaller file, big ones pay it once (packing.py).
        level = SMALL_LEVEL if sent_chars < SMALL_BYTES else ZSTD_LEVEL
        sent_chars += sum(len(t) for r in batch for _h, t in r[3])
        if pool is not None:
            inflight.append((batch, pool.apply_async(prepare, (batch, dict_id, level))))
            drain(2 * workers + 2)
        else:
            t0 = time.perf_counter()
            prepared = prepare(batch, dict_id, level)
            timings["prepare"] += time.perf_counter() - t0
            write(batch, prepared)

    def decide() -> None:
        """Train the dictionary on the sample (or do without), then send the held batches."""
        nonlocal training, dict_id, sample
        t0 = time.perf_counter()
        data = train_dictionary(sample)
        sample = []
        if data is not None:
            store_dictionary(conn, data)
            dict_id = use_dictionary(data)
        training = False
        timings["dictionary"] = time.perf_counter() - t0
        while held:
            send(held.pop(0))

    def submit() -> None:
        nonlocal batch, batch_chars
        if not batch:
            return
        if training:
            held.append(batch)
            if sample_bytes >= SAMPLE_BYTES or total_chars >= 2 * SAMPLE_BYTES:
                decide()
        else:
            send(batch)
        batch, batch_chars = [], 0

    rowid = 0
    conn.execute("BEGIN")
    try:
        it = iter(documents)
        while True:
            t0 = time.perf_counter()
            item = next(it, None)
            timings["read"] += time.perf_counter() - t0
            if source_stats is not None:
                tick()  # files and pages as they are read
            if item is None:
                break
            if isinstance(item, DocumentError):
                skip(item)
                continue
            doc = item
            bad, size = admit(doc, seen, biggest)
            if bad is not None:
                skip(bad)
                continue
            biggest = max(biggest, size)
            rowid += 1
            batch.append(raw_tuple(rowid, doc))
            sections = batch[-1][3]
            chars = len(doc.title) + sum(len(t) for _, t in sections)
            batch_chars += chars
            total_chars += chars
            if training and sample_bytes < SAMPLE_BYTES:
                for _h, text in sections:
                    if len(text) >= MIN_PACK:
                        sample.append(text.encode("utf-8", "surrogatepass"))
                        sample_bytes += len(sample[-1])
            report.documents += 1
            report.sections += len(sections)
            if embedder is not None:
                from .embed import document_text

                pending_vec.append((rowid, document_text(doc.title, [t for _, t in sections])))
                if len(pending_vec) >= EMBED_BATCH:
                    flush_vectors()
            if len(batch) >= BATCH_DOCS or batch_chars >= BATCH_CHARS:
                submit()
        submit()
        if training:
            decide()
        drain(0)
        if embedder is not None:
            flush_vectors()
        fts.close_input()  # the writers optimize their tables while the postings merge
        _mark(report, "index")
        t0 = time.perf_counter()
        writer.write(conn)
        timings["postings"] = time.perf_counter() - t0
        conn.execute("COMMIT")
        _mark(report, "postings")
        t0 = time.perf_counter()
        fts.wait()
        timings["fts_wait"] = time.perf_counter() - t0
    except BaseException:
        if pool is not None:
            pool.terminate()
            pool = None
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
        raise
    finally:
        writer.close()
        if pool is not None:
            pool.close()
            pool.join()
        if progress:
            progress.stop()
    report.words = stats["words"]
    conn.execute("BEGIN")
    meta = {
        "content_hash": hasher.hexdigest(),
        "content_state": hasher.state_hex(),
        "has_section": str(int(stats["heading"] > 0)),
        "has_infobox": str(int(stats["infobox"] > 0)),
        "has_author": str(int(stats["author"] > 0)),
        "has_date": str(int(stats["date"] > 0)),
        "max_section_bytes": str(biggest),
    }
    writes.write_meta(conn, meta.items())
    conn.execute("COMMIT")


def record_skip(report: Any, err: DocumentError) -> None:
    """Count a bad document in a build's or an update's report, keeping the first messages."""
    report.skipped_count += 1
    if len(report.skipped) < SKIPS_KEPT:
        report.skipped.append(str(err))


def admit(doc: Document, seen: dict[str, str], biggest: int
          ) -> tuple[DocumentError | None, int]:
    """Whether a valid document may join the collection: its id is new (``seen``: id -> where
    it was first seen, updated here), it has at most ``MAX_VALUES - 1`` values of each kind,
    no section over ``MAX_SECTION_BYTES``. Returns (the reason it may not, or None; the size
    of its longest section, or ``biggest`` when that is larger)."""
    meta = doc.meta if isinstance(doc.meta, dict) else {}
    where = meta.get("_where", "")
    if doc.id in seen:
        first = f" (first at {seen[doc.id]})" if seen[doc.id] else ""
        return DocumentError(f"repeats id {doc.id!r}{first}; ids must be unique", where), 0
    if len(doc.sections) >= MAX_VALUES or len(doc.infobox) >= MAX_VALUES \
            or len(doc.authors) >= MAX_VALUES:
        return DocumentError(f"document {doc.id!r} has over {MAX_VALUES - 1} sections, "
                             "infobox entries or authors", where), 0
    size = _largest_section(doc, biggest)
    if size > MAX_SECTION_BYTES:
        return DocumentError(f"document {doc.id!r} has a section of {size:,} bytes; a "
                             f"section may have at most {MAX_SECTION_BYTES:,}", where), 0
    seen[doc.id] = where
    return None, size


def raw_tuple(rowid: int, doc: Document) -> Raw:
    """The tuple a document travels as to ``prepare`` (see ``Raw``)."""
    meta = doc.meta if isinstance(doc.meta, dict) else {}
    # '_where' is the builders' tag (file:line), not the document's own metadata.
    public_meta = {k: v for k, v in meta.items() if k != "_where"} if meta else {}
    return (rowid, doc.id, doc.title, tuple((s.heading, s.text) for s in doc.sections),
            doc.infobox, doc.authors, doc.date, doc.url, public_meta,
            tuple((pos, *s.pages) for pos, s in enumerate(doc.sections) if s.pages))


def _largest_section(doc: Document, known: int) -> int:
    """The UTF-8 size of ``doc``'s longest section text, or ``known`` when none is longer.
    (A text of n characters has at most 4n bytes: most texts need no encoding to rule out.)"""
    biggest = known
    for s in doc.sections:
        if 4 * len(s.text) > biggest:
            biggest = max(biggest, len(s.text.encode("utf-8", "surrogatepass")))
    return biggest


def _insert(conn, raw: list[Raw], prepared: list[tuple], stats: dict[str, int],
            hasher: ContentHash, postings: BatchPostings, writer: PostingsWriter,
            fts: FtsWriters | None = None) -> None:
    """Insert one prepared batch (rowids were given in the main process, in source order)."""
    rows = []
    passage_rows = []
    first = writer.add(postings)
    for r, p in zip(raw, prepared, strict=True):
        rows.append(prepared_rows(r, p))
        rowid, _id, _title, sections, infobox, authors, date, _url, _meta, _pages = r
        shape, plens = p[7], p[8]
        passage_rows.append((rowid, first, shape, plens))
        first += len(plens)
        stats["date"] += rows[-1].document[4] is not None
        stats["heading"] += sum(h != INTRO for h, _ in sections)
        stats["infobox"] += bool(infobox)
        stats["author"] += bool(authors)
        stats["words"] += p[1]
        hasher.add(p[5])
    if fts is not None and fts.started:
        insert_rows(conn, rows, fts=False)
        fts.send(writes.fts_rows(rows))
    else:
        insert_rows(conn, rows)
    write_passages(conn, passage_rows)


def prepared_rows(raw: Raw, prepared: tuple) -> DocumentRows:
    """The table rows of one document from its ``Raw`` tuple and its ``prepare`` output."""
    from .documents import date_span

    rowid, doc_id, title, sections, infobox, authors, date, url, _meta, pages = raw
    title_idx, n_words, psecs, ib_idx, au_idx, _digest, meta_json = prepared[:7]
    return document_rows(rowid, doc_id, title, sections, infobox, authors, date,
                         date_span(date) if date else None, url, meta_json, n_words,
                         title_idx, psecs, ib_idx, au_idx, pages)


def _finish(conn, report: BuildReport, embedder, source_label: str,
            manifest: Mapping[str, str], final: Path, optimized: bool = False) -> None:
    from .version import __version__

    n, _sections, total_words, _top = writes.document_totals(conn)
    t0 = time.perf_counter()
    conn.execute("BEGIN")
    if not optimized:  # (FtsWriters optimize their own tables)
        writes.optimize_fts(conn)
        writes.reset_fts(conn)
    meta = {
        "schema_version": str(store.SCHEMA_VERSION),
        "tokenizer": TOKENIZER,
        "embed_model": embedder.model_id if embedder else "",
        "embed_dim": str(embedder.dim) if embedder else "0",
        "documents": str(n),
        "sections": str(report.sections),
        "avg_words": repr(total_words / n if n else 0.0),
        "build_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sieve_lite_version": __version__,
        "source": source_label,
        **{k: str(manifest.get(k) or "") for k in ("name", "description", "version", "license")},
    }
    writes.write_meta(conn, meta.items())
    conn.execute("COMMIT")
    report.timings["optimize"] = time.perf_counter() - t0
    _mark(report, "optimize")
    t0 = time.perf_counter()
    writes.vacuum(conn, into=str(final))
    report.timings["vacuum"] = time.perf_counter() - t0
    _mark(report, "vacuum")
