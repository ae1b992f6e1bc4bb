"""Builders: every source kind is converted into ``Document`` objects (DOCUMENTS.md shape).

``iter_documents(paths, fmt)`` yields ``Document`` or ``DocumentError`` (whose ``where`` is
``file:line`` for JSON Lines and JSON arrays, ``file`` or ``file:line`` otherwise) so that one
indexing path (``sieve_lite.build``) handles every source. Each builder module documents its
mapping: ``jsonl``, ``markdown``, ``html``, ``rst``, ``text``, ``qa`` (2Wiki, HotpotQA,
MuSiQue passages), ``wikipedia`` (Wikimedia Enterprise structured contents).

Format detection (``fmt="auto"``):

* a folder is walked recursively in sorted path order (hidden files and folders skipped) and
  each file is read by its extension: ``.jsonl``/``.ndjson``, ``.json``, ``.md``/``.markdown``,
  ``.html``/``.htm``, ``.rst``, ``.txt``; files with other extensions are ignored;
* a ``.jsonl`` file whose first record has ``title`` and ``text`` but no ``id`` is a QA
  passage file (HotpotQA's shape), otherwise DOCUMENTS.md JSON Lines;
* a ``.json`` file is read by shape: an array of ``{title, text}`` passages (2Wiki, MuSiQue),
  an array of (or one) DOCUMENTS.md object(s), or a Wikimedia structured article; a
  questions file (records with ``question``) is reported and skipped.

A forced format (``--format``) reads a single file as that format whatever its extension, and
takes from a folder the files with that format's extensions (for ``2wiki``/``hotpotqa``/
``musique``, the folder's ``corpus.json``/``corpus.jsonl`` when there is one).

Ids of files read from a folder are their path relative to that folder without the extension
(``text/intro`` for ``docs/text/intro.md``), ``/``-separated; a file given by itself has its
stem as id.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from ..documents import Document
from ..errors import BuildError, DocumentError

FORMATS = ("auto", "jsonl", "markdown", "html", "rst", "text", "2wiki", "hotpotqa", "musique",
           "wikipedia")
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
}
_AUTO_EXT = {ext: fmt for fmt in ("markdown", "html", "rst", "text") for ext in EXTENSIONS[fmt]}
# Read by shape under auto: JSON Lines documents or passages; JSON documents, passages, article.
_AUTO_EXT.update({".jsonl": "jsonl?", ".ndjson": "jsonl?", ".json": "json?"})

Item = Document | DocumentError


class Meter:
    """How far the reading of the sources is, in bytes, for a progress bar with an ETA.

    ``iter_documents`` lists every file before reading the first (a folder is walked up
    front) and sets ``total`` to the sum of their sizes; ``done`` grows as they are read, line
    by line for JSON Lines and file by file for the rest. ``files`` counts the files listed.
    """

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.files = 0


def iter_documents(paths: list[Path], fmt: str = "auto", meter: Meter | None = None
                   ) -> Iterator[Item]:
    """Documents from every source path (files or folders) in the given format; ``meter``
    (optional) follows the reading for a progress bar."""
    if fmt not in FORMATS:
        raise BuildError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    plan = [item for path in paths for item in _plan(Path(path), fmt)]
    meter = meter if meter is not None else Meter()
    meter.files = len(plan)
    meter.total = sum(_size(path) for path, _, _ in plan)
    for path, kind, doc_id in plan:
        yield from read_file(path, kind, doc_id, meter)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the reader reports why it cannot read it


def _plan(path: Path, fmt: str) -> list[tuple[Path, str, str]]:
    """The files a source path stands for, as (file, format to read it as, document id)."""
    if not path.exists():
        raise BuildError(f"source {path} does not exist")
    if path.is_dir():
        return _folder(path, fmt)
    kind = fmt if fmt != "auto" else _AUTO_EXT.get(path.suffix.lower())
    if kind is None:
        known = " ".join(sorted(_AUTO_EXT))
        raise BuildError(f"cannot tell the format of {path} from its extension "
                         f"(known: {known}); pass --format")
    return [(path, kind, path.stem)]


def _walk(root: Path) -> list[Path]:
    files: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files.extend(Path(folder) / n for n in names if not n.startswith("."))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _folder(root: Path, fmt: str) -> list[tuple[Path, str, str]]:
    if fmt in QA_FORMATS:
        from .qa import corpus_file

        corpus = corpus_file(root)
        if corpus is not None:
            return [(corpus, fmt, corpus.stem)]
    found = []
    for path in _walk(root):
        ext = path.suffix.lower()
        if fmt == "auto":
            kind = _AUTO_EXT.get(ext)
        else:
            kind = fmt if ext in EXTENSIONS[fmt] else None
        if kind is not None:
            found.append((path, kind, path.relative_to(root).with_suffix("").as_posix()))
    if not found:
        what = "known" if fmt == "auto" else fmt
        raise BuildError(f"no {what} files in {root} (extensions: "
                         + " ".join(sorted(_AUTO_EXT) if fmt == "auto" else EXTENSIONS[fmt])
                         + ")")
    return found


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

    return {"markdown": markdown, "html": html, "rst": rst, "text": text,
            "wikipedia": wikipedia}


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
