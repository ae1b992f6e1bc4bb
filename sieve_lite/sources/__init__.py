"""Builders: every source kind is converted into ``Document`` objects (DOCUMENTS.md shape).

``iter_documents(paths, fmt)`` yields ``Document`` or ``DocumentError`` (whose ``where`` is
``file:line`` for JSON Lines and JSON arrays, ``file`` or ``file:line`` otherwise) so that one
indexing path (``sieve_lite.build``) handles every source. Each builder module documents its
mapping: ``jsonl``, ``markdown``, ``html``, ``rst``, ``text``, ``qa`` (2Wiki, HotpotQA,
MuSiQue passages), ``wikipedia`` (Wikimedia Enterprise structured contents), ``pdf``,
``docx``, ``epub``.

Format detection (``fmt="auto"``):

* a folder is walked recursively in sorted path order (hidden files and folders skipped) and
  each file is read by its extension: ``.jsonl``/``.ndjson``, ``.json``, ``.md``/``.markdown``,
  ``.html``/``.htm``, ``.rst``, ``.txt``, ``.pdf``, ``.docx``, ``.epub``; a file with another
  extension (or none) is read when its first bytes say it is a PDF (``%PDF-``), an EPUB (a zip
  whose first entry is ``mimetype`` = ``application/epub+zip``) or a DOCX (a zip holding
  ``word/document.xml``); other files are ignored;
* a ``.jsonl`` file whose first record has ``title`` and ``text`` but no ``id`` is a QA
  passage file (HotpotQA's shape), otherwise DOCUMENTS.md JSON Lines;
* a ``.json`` file is read by shape: an array of ``{title, text}`` passages (2Wiki, MuSiQue),
  an array of (or one) DOCUMENTS.md object(s), or a Wikimedia structured article; a
  questions file (records with ``question``) is reported and skipped.

A forced format (``--format``) reads a single file as that format whatever its extension, and
takes from a folder the files with that format's extensions (for ``2wiki``/``hotpotqa``/
``musique``, the folder's ``corpus.json``/``corpus.jsonl`` when there is one).

PDF, DOCX and EPUB files are parsed in worker processes (``read_sources(..., workers=N)``;
one file per task, results kept in path order) when there are several and the process can
fork safely (the same rule as the build's workers); ``Sources.stats`` counts files, pages,
documents and skips per format as they are read, for progress and the build's summary.

Ids of files read from a folder are their path relative to that folder without the extension
(``text/intro`` for ``docs/text/intro.md``), ``/``-separated; a file given by itself has its
stem as id.
"""

from __future__ import annotations

import json
import os
import time
import zipfile
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..documents import Document
from ..errors import BuildError, DocumentError
from ..meter import Meter
from ..processes import can_fork, fork_pool

FORMATS = ("auto", "jsonl", "markdown", "html", "rst", "text", "2wiki", "hotpotqa", "musique",
           "wikipedia", "pdf", "docx", "epub")
HEAVY = ("pdf", "docx", "epub")  # parsed in worker processes when there are several files
QA_FORMATS = ("2wiki", "hotpotqa", "musique")

EXTENSIONS: dict[str, tuple[str, ...]] = {
    "jsonl": (".jsonl", ".ndjson"),
    "markdown": (".md", ".markdown", ".mdown", ".mkd"),
    "html": (".html", ".htm", ".xhtml"),
    "rst": (".rst", ".rest"),
    "text": (".txt", ".text"),
    "wikipedia": (".json",),
    "2wiki": (".json", ".jsonl"),
    "hotpotqa": (".json", ".jsonl"),
    "musique": (".json", ".jsonl"),
    "pdf": (".pdf",),
    "docx": (".docx",),
    "epub": (".epub",),
}
_AUTO_EXT = {ext: fmt for fmt in ("markdown", "html", "rst", "text", "pdf", "docx", "epub")
             for ext in EXTENSIONS[fmt]}
# Read by shape under auto: JSON Lines documents or passages; JSON documents, passages, article.
_AUTO_EXT.update({".jsonl": "jsonl?", ".ndjson": "jsonl?", ".json": "json?"})

Item = Document | DocumentError


def iter_documents(paths: list[Path], fmt: str = "auto", meter: Meter | None = None
                   ) -> Iterator[Item]:
    """Documents from every source path (files or folders) in the given format; ``meter``
    (optional) follows the reading for a progress bar."""
    return iter(read_sources(paths, fmt, meter=meter))


def read_sources(paths: list[Path], fmt: str = "auto", workers: int | None = None,
                 meter: Meter | None = None) -> Sources:
    """Like ``iter_documents``, as an iterable that also counts what it read (``.stats``).

    ``workers``: processes that parse PDF, DOCX and EPUB files; None = 2 (none on one core),
    0 = parse in this process. ``meter``: bytes read of the sources' total, for an ETA."""
    if fmt not in FORMATS:
        raise BuildError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return Sources([Path(p) for p in paths], fmt, workers, meter)


@dataclass
class SourceStats:
    """What the sources gave so far, per format (``pdf``, ``markdown``, ``jsonl``, ...)."""

    files_total: int = 0       # files to read (known once the folders are walked)
    files_done: int = 0
    pages: int = 0             # PDF pages read
    documents: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)  # e.g. 'x.pdf: 2 pages have no text'
    workers: int = 0           # processes that parsed PDF/DOCX/EPUB files (0: this one)
    started: float = field(default_factory=time.perf_counter)

    def summary(self) -> str:
        """``12 pdf, 3 docx (2 pdf skipped)``: documents read per format, and skips."""
        read = ", ".join(f"{n} {k}" for k, n in sorted(self.documents.items()))
        skips = ", ".join(f"{n} {k}" for k, n in sorted(self.skipped.items()))
        return (read or "nothing") + (f" ({skips} skipped)" if skips else "")


class Sources:
    """The documents of some source paths, in path order; iterate once."""

    def __init__(self, paths: list[Path], fmt: str, workers: int | None,
                 meter: Meter | None = None) -> None:
        self.paths, self.fmt = paths, fmt
        self.workers = workers
        self.stats = SourceStats()
        self.meter = meter if meter is not None else Meter()

    def __iter__(self) -> Iterator[Item]:
        tasks = list(_plan(self.paths, self.fmt))  # every file listed before the first read
        self.stats.files_total = len(tasks)
        self.meter.files = len(tasks)
        self.meter.total = sum(_size(path) for path, _, _ in tasks)
        heavy = sum(1 for _, kind, _ in tasks if kind in HEAVY)
        workers = self.workers
        if workers is None:
            workers = 2 if (os.cpu_count() or 1) > 1 else 0
        pool = fork_pool(workers) if workers and heavy >= 2 and can_fork() else None
        self.stats.workers = workers if pool is not None else 0
        window = 4 * workers
        pending: deque = deque()
        try:
            for task in tasks:
                kind = task[1]
                if pool is not None and kind in HEAVY:
                    pending.append((kind, (task[0], pool.apply_async(_read_heavy, task))))
                else:
                    pending.append((kind, task))  # read when its turn comes
                # Emit in order; keep up to `window` files parsing in the workers.
                while pending and (not _parsing(pending[0][1]) or len(pending) > window):
                    yield from self._emit(*pending.popleft())
            while pending:
                yield from self._emit(*pending.popleft())
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()

    def _emit(self, kind: str, job) -> Iterator[Item]:
        path = job[0]
        if _parsing(job):
            items = [_from_wire(x) for x in job[1].get()]
        elif kind in HEAVY:
            items = [_from_wire(x) for x in _read_heavy(*job)]
        else:
            items = read_file(*job, self.meter)  # advances the meter as it reads
        label = kind.rstrip("?")
        for item in items:
            if isinstance(item, Document):
                self.stats.documents[label] += 1
                pages = item.meta.get("pages") if kind == "pdf" else None
                if isinstance(pages, int):
                    self.stats.pages += pages
                blank = item.meta.get("pages_without_text") if kind == "pdf" else None
                if blank:
                    self.stats.notes.append(
                        f"{item.meta.get('_where', item.id)}: {len(blank)} page"
                        f"{'s have' if len(blank) > 1 else ' has'} no text (scanned?): "
                        + ", ".join(map(str, blank)))
            else:
                self.stats.skipped[label] += 1
            yield item
        if kind in HEAVY:
            self.meter.done += _size(path)
        self.stats.files_done += 1


def _parsing(job: tuple) -> bool:
    """Whether a pending job is (path, a worker's async result) rather than a task to read."""
    return len(job) == 2 and hasattr(job[1], "get")


def _read_heavy(path: Path, kind: str, doc_id: str) -> list:
    """Read one PDF/DOCX/EPUB file (in a worker): items in a picklable form."""
    return [_to_wire(x) for x in read_file(path, kind, doc_id)]


def _to_wire(item: Item) -> Any:
    if isinstance(item, DocumentError):
        return ("error", item.reason, item.where)
    return item


def _from_wire(x: Any) -> Item:
    if isinstance(x, tuple) and x and x[0] == "error":
        return DocumentError(x[1], x[2])
    return x


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the reader reports why it cannot read it


def _plan(paths: list[Path], fmt: str) -> Iterator[tuple[Path, str, str]]:
    """(path, kind, document id) of every file to read, in order."""
    for path in paths:
        if not path.exists():
            raise BuildError(f"source {path} does not exist")
        if path.is_dir():
            yield from _folder(path, fmt)
        else:
            kind = fmt if fmt != "auto" else (_AUTO_EXT.get(path.suffix.lower())
                                             or sniff(path))
            if kind is None:
                known = " ".join(sorted(_AUTO_EXT))
                raise BuildError(f"cannot tell the format of {path} from its extension "
                                 f"(known: {known}) or its first bytes; pass --format")
            yield path, kind, path.stem


def sniff(path: Path) -> str | None:
    """``pdf``, ``epub`` or ``docx`` from a file's first bytes and zip members, else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(1024)
    except OSError:
        return None
    if b"%PDF-" in head:
        return "pdf"
    if not head.startswith(b"PK\x03\x04"):
        return None
    if head[30:38] == b"mimetype" and b"application/epub+zip" in head[38:100]:
        return "epub"
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    if "word/document.xml" in names:
        return "docx"
    if "META-INF/container.xml" in names:
        return "epub"
    return None


def _walk(root: Path) -> list[Path]:
    files: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files.extend(Path(folder) / n for n in names if not n.startswith("."))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _folder(root: Path, fmt: str) -> Iterator[tuple[Path, str, str]]:
    if fmt in QA_FORMATS:
        from .qa import corpus_file

        corpus = corpus_file(root)
        if corpus is not None:
            yield corpus, fmt, corpus.stem
            return
    found = False
    for path in _walk(root):
        ext = path.suffix.lower()
        if fmt == "auto":
            kind = _AUTO_EXT.get(ext)
            if kind is None and ext not in _IGNORED:
                kind = sniff(path)
        else:
            kind = fmt if ext in EXTENSIONS[fmt] else None
        if kind is None:
            continue
        found = True
        yield path, kind, path.relative_to(root).with_suffix("").as_posix()
    if not found:
        what = "known" if fmt == "auto" else fmt
        raise BuildError(f"no {what} files in {root} (extensions: "
                         + " ".join(sorted(_AUTO_EXT) if fmt == "auto" else EXTENSIONS[fmt])
                         + ")")


# Extensions never sniffed: common files that are none of ours (saves opening them).
_IGNORED = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".css", ".js", ".py", ".yaml",
                      ".yml", ".toml", ".cfg", ".ini", ".csv", ".tsv", ".db", ".sqlite"})


def read_file(path: Path, kind: str, doc_id: str, meter: Meter | None = None
              ) -> Iterator[Item]:
    """Every document of one file read as ``kind`` (a format; ``jsonl?``/``json?``: by shape).
    ``meter.done`` grows by the file's size as it is read."""
    meter = meter if meter is not None else Meter()
    if kind == "jsonl?":
        shape = _jsonl_shape(path)
        if shape == "questions":
            yield DocumentError("a questions file, not documents (build the corpus "
                                "file next to it)", str(path))
            meter.done += _size(path)
        elif shape == "passages":
            from .qa import read_passages

            yield from read_passages(path, meter=meter)
        else:
            yield from read_file(path, "jsonl", doc_id, meter)
        return
    if kind == "jsonl":
        from .jsonl import read_jsonl

        yield from read_jsonl(path, meter)  # advances the meter line by line
        return
    if kind in QA_FORMATS:
        from .qa import read_passages

        yield from read_passages(path, kind, meter=meter)
        return
    if kind == "json?":
        yield from _json_by_shape(path, doc_id)
    else:
        yield _SINGLE[kind]()(path, doc_id)
    meter.done += _size(path)


def _single_readers() -> dict[str, Callable[[], Callable[[Path, str], Item]]]:
    # Imported lazily: a JSON Lines build never imports yaml or html.parser.
    def markdown() -> Callable[[Path, str], Item]:
        from .markdown import read_markdown
        return read_markdown

    def html() -> Callable[[Path, str], Item]:
        from .html import read_html
        return read_html

    def rst() -> Callable[[Path, str], Item]:
        from .rst import read_rst
        return read_rst

    def text() -> Callable[[Path, str], Item]:
        from .text import read_plain_text
        return read_plain_text

    def wikipedia() -> Callable[[Path, str], Item]:
        from .wikipedia import read_wikipedia
        return read_wikipedia

    def pdf() -> Callable[[Path, str], Item]:
        from .pdf import read_pdf
        return read_pdf

    def docx() -> Callable[[Path, str], Item]:
        from .docx import read_docx
        return read_docx

    def epub() -> Callable[[Path, str], Item]:
        from .epub import read_epub
        return read_epub

    return {"markdown": markdown, "html": html, "rst": rst, "text": text,
            "wikipedia": wikipedia, "pdf": pdf, "docx": docx, "epub": epub}


_SINGLE = _single_readers()


def _jsonl_shape(path: Path) -> str:
    """``passages`` (first record: title + text, no id), ``questions`` or ``documents``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    first = json.loads(line)
                    break
            else:
                return "documents"
    except (OSError, json.JSONDecodeError):
        return "documents"  # the JSON Lines reader reports the problem with its line number
    if not isinstance(first, dict):
        return "documents"
    if "question" in first and "sections" not in first and "text" not in first:
        return "questions"
    if "id" not in first and "sections" not in first and isinstance(first.get("title"), str) \
            and isinstance(first.get("text"), str):
        return "passages"
    return "documents"


def _json_by_shape(path: Path, doc_id: str) -> Iterator[Item]:
    from ._common import read_text
    from .jsonl import iter_json_array, read_json_documents

    text = read_text(path)
    if isinstance(text, DocumentError):
        yield text
        return
    head = text.lstrip()[:1]
    if head == "[":
        first = next(iter_json_array(text, str(path)), None)
        sample = first[1] if first else None
        if isinstance(sample, dict) and "question" in sample:
            yield DocumentError("a questions file, not documents (build the corpus "
                                "file next to it)", str(path))
        elif isinstance(sample, dict) and "id" not in sample and "title" in sample \
                and "text" in sample:
            from .qa import read_passages

            yield from read_passages(path)
        else:
            yield from read_json_documents(path, text)
        return
    if head == "{":
        from .wikipedia import is_structured_article, read_wikipedia

        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            yield DocumentError(f"not valid JSON: {e.msg}", f"{path}:{e.lineno}")
            return
        if is_structured_article(obj):
            yield read_wikipedia(path, doc_id, text)
        else:
            yield from read_json_documents(path, text)
        return
    yield DocumentError("a .json file must hold an object or an array", str(path))
