"""The one indexing path: ``Document`` objects -> a collection file.

The build writes to a temporary file beside the output and renames it into place only when
everything succeeded, so an interrupted or failed build never leaves a half-built collection at
the output path and an existing file there stays intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import store
from .documents import INTRO, Document
from .errors import BuildError, DocumentError
from .store.packing import pack
from .words import index_text

SHIFT = 20  # rowid = doc_rowid << SHIFT | position (see store/migrations/m001_initial.py)
MAX_VALUES = 1 << SHIFT
BATCH = 500


@dataclass
class BuildReport:
    path: str
    documents: int = 0
    sections: int = 0
    skipped: list[str] = field(default_factory=list)  # one line per bad document
    words: int = 0
    seconds: float = 0.0
    embedded: bool = False


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
) -> BuildReport:
    """Index ``documents`` into a new collection at ``out`` (atomically replaced).

    Bad documents (``DocumentError`` items, or repeated ids) are reported through ``on_skip``
    and skipped; with ``strict`` the first one stops the build and nothing is written.
    """
    out_path = Path(out)
    if out_path.exists() and out_path.is_dir():
        raise BuildError(f"output {out_path} is a directory; give a file name like out.db")
    if not out_path.parent.exists():
        raise BuildError(f"output folder {out_path.parent} does not exist")
    tmp = temp_path_for(out_path)
    for stale in (tmp, Path(str(tmp) + "-journal"), Path(str(tmp) + "-wal")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    report = BuildReport(str(out_path))
    embedder = None
    if embed:
        from .embed import get_embedder

        embedder = get_embedder(embed_model)
    try:
        conn = store.connect(tmp, readonly=False, create=True, need_vec=embedder is not None)
        try:
            conn.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                         "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -200000")
            store.create(conn, embedder.dim if embedder else None)
            _index(conn, documents, report, strict, quiet, on_skip, embedder)
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


def _index(conn, documents, report: BuildReport, strict: bool, quiet: bool,
           on_skip, embedder) -> None:
    seen: dict[str, int] = {}
    hasher = hashlib.sha256()
    progress = _progress(None, quiet)
    task = None
    if progress:
        progress.start()
        task = progress.add_task("indexing", total=None)
    pending_vec: list[tuple[int, str]] = []
    stats = {"heading": 0, "infobox": 0, "author": 0, "date": 0, "words": 0}

    def skip(err: DocumentError) -> None:
        if strict:
            raise BuildError(f"{err} (stopped: --strict; nothing was written)")
        report.skipped.append(str(err))
        if on_skip:
            on_skip(err)

    def flush_vectors() -> None:
        if not pending_vec:
            return
        vecs = embedder.encode([t for _, t in pending_vec])
        conn.executemany("INSERT INTO doc_vectors(rowid, embedding) VALUES (?, ?)",
                         [(r, v.tobytes()) for (r, _), v in zip(pending_vec, vecs)])
        pending_vec.clear()

    rowid = 0
    conn.execute("BEGIN")
    try:
        for item in documents:
            if isinstance(item, DocumentError):
                skip(item)
                continue
            doc = item
            if doc.id in seen:
                skip(DocumentError(f"repeats id {doc.id!r} (first seen in document "
                                   f"{seen[doc.id]}); ids must be unique",
                                   doc.meta.get("_where", "") if isinstance(doc.meta, dict) else ""))
                continue
            if len(doc.sections) >= MAX_VALUES or len(doc.infobox) >= MAX_VALUES:
                skip(DocumentError(f"document {doc.id!r} has over {MAX_VALUES - 1} sections"))
                continue
            rowid += 1
            seen[doc.id] = rowid
            _insert(conn, rowid, doc, stats)
            hasher.update(json.dumps(_public(doc), sort_keys=True, ensure_ascii=False)
                          .encode("utf-8"))
            hasher.update(b"\n")
            report.documents += 1
            report.sections += len(doc.sections)
            if embedder is not None:
                from .embed import document_text

                pending_vec.append((rowid, document_text(doc.title, [s.text for s in doc.sections])))
                if len(pending_vec) >= 64:
                    flush_vectors()
            if progress and report.documents % 100 == 0:
                progress.update(task, completed=report.documents)
            if report.documents % BATCH == 0:
                conn.execute("COMMIT")
                conn.execute("BEGIN")
        if embedder is not None:
            flush_vectors()
        conn.execute("COMMIT")
    except BaseException:
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
        raise
    finally:
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


def _public(doc: Document) -> dict:
    d = doc.to_dict()
    if "meta" in d:
        d["meta"] = {k: v for k, v in d["meta"].items() if not k.startswith("_")} or None
        if d["meta"] is None:
            del d["meta"]
    return d


def _insert(conn, rowid: int, doc: Document, stats: dict[str, int]) -> None:
    base = rowid << SHIFT
    title_idx = index_text(doc.title)
    n_words = len(title_idx.split()) if title_idx else 0
    sec_rows = []
    body_rows = []
    head_rows = []
    for pos, s in enumerate(doc.sections):
        r = base | pos
        sec_rows.append((r, rowid, pos, s.heading, pack(s.text)))
        body = index_text(s.text)
        if body:
            body_rows.append((r, body))
            n_words += body.count(" ") + 1
        # '(intro)' is a label, not a heading: it is never indexed (BQL.md section 2).
        if s.heading != INTRO:
            head = index_text(s.heading)
            stats["heading"] += 1
            if head:
                head_rows.append((r, head))
    span = doc.date_span
    if span:
        stats["date"] += 1
    meta = {k: v for k, v in doc.meta.items() if not k.startswith("_")}
    conn.execute(
        "INSERT INTO documents(rowid, id, title, date, date_lo, date_hi, url, meta, n_words) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rowid, doc.id, doc.title, doc.date, span[0] if span else None,
         span[1] if span else None, doc.url,
         json.dumps(meta, ensure_ascii=False) if meta else None, n_words))
    if title_idx:
        conn.execute("INSERT INTO fts_title(rowid, v) VALUES (?, ?)", (base, title_idx))
    conn.executemany("INSERT INTO sections(rowid, doc, pos, heading, text) VALUES (?, ?, ?, ?, ?)",
                     sec_rows)
    if body_rows:
        conn.executemany("INSERT INTO fts_body(rowid, v) VALUES (?, ?)", body_rows)
    if head_rows:
        conn.executemany("INSERT INTO fts_section(rowid, v) VALUES (?, ?)", head_rows)
    if doc.infobox:
        stats["infobox"] += 1
        rows = [(base | i, rowid, i, k, v) for i, (k, v) in enumerate(doc.infobox)]
        conn.executemany("INSERT INTO infobox(rowid, doc, pos, key, value) VALUES (?, ?, ?, ?, ?)",
                         rows)
        # An infobox entry is read as 'key: value' (BQL.md section 1).
        fts = [(r[0], index_text(f"{r[3]}: {r[4]}")) for r in rows]
        conn.executemany("INSERT INTO fts_infobox(rowid, v) VALUES (?, ?)", [f for f in fts if f[1]])
    if doc.authors:
        stats["author"] += 1
        rows = [(base | i, rowid, i, a) for i, a in enumerate(doc.authors)]
        conn.executemany("INSERT INTO authors(rowid, doc, pos, name) VALUES (?, ?, ?, ?)", rows)
        fts = [(r[0], index_text(r[3])) for r in rows]
        conn.executemany("INSERT INTO fts_author(rowid, v) VALUES (?, ?)", [f for f in fts if f[1]])
    stats["words"] += n_words


def _finish(conn, report: BuildReport, embedder, source_label: str) -> None:
    from . import __version__

    n, total_words = conn.execute("SELECT count(*), total(n_words) FROM documents").fetchone()
    conn.execute("BEGIN")
    for table in ("fts_title", "fts_section", "fts_body", "fts_infobox", "fts_author"):
        # Merge all b-tree segments into one: smaller file, faster queries.
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    meta = {
        "schema_version": str(store.SCHEMA_VERSION),
        "tokenizer": "sieve-words-v1 (NFKD, drop combining marks, casefold, runs of letters "
                     "and digits) + fts5 unicode61 remove_diacritics 2",
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
    conn.execute("VACUUM")


def iter_with_errors(items: Iterable[Document | DocumentError]) -> Iterator[Document | DocumentError]:
    yield from items
