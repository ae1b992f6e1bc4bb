"""JSON Lines, the interchange format of DOCUMENTS.md (and JSON arrays of the same objects)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..documents import Document
from ..errors import DocumentError

_WS = " \t\r\n"


def _document(obj: Any, where: str) -> Document | DocumentError:
    """One validated document, remembering where it came from (build.py reports repeats with
    it and strips it), or the error that names the place."""
    try:
        doc = Document.from_dict(obj, where)
    except DocumentError as e:
        return e
    doc.meta["_where"] = where
    return doc


def jsonl_records(path: Path, meter: Any = None) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed object or DocumentError)`` for each non-blank line of a JSON
    Lines file. Each line is decoded on its own, so a line that is not valid UTF-8 (or not
    JSON) is reported with its own number and the lines after it are still read.
    ``meter.done`` (a ``meter.Meter``) grows by each line's bytes."""
    try:
        f = open(path, "rb")
    except OSError as e:
        yield 0, DocumentError(f"cannot read: {e.strerror or e}", str(path))
        return
    with f:
        for lineno, raw in enumerate(f, 1):
            if meter is not None:
                meter.done += len(raw)
            where = f"{path}:{lineno}"
            try:
                # a BOM is allowed on the first line only, as JSON Lines files from some tools
                # start with one
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as e:
                yield lineno, DocumentError(f"not valid UTF-8 ({e.reason} at byte {e.start} "
                                            "of the line)", where)
                continue
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as e:
                yield lineno, DocumentError(f"not valid JSON: {e.msg} at character {e.colno}",
                                            where)


def read_jsonl(path: Path, meter: Any = None) -> Iterator[Document | DocumentError]:
    """One document per line; a bad line is reported as ``file:line: reason`` and skipped."""
    for lineno, obj in jsonl_records(path, meter):
        yield obj if isinstance(obj, DocumentError) else _document(obj, f"{path}:{lineno}")


def iter_json_array(text: str, where: str) -> Iterator[tuple[int, Any]]:
    """The elements of a top-level JSON array with the line each starts on.

    Yields ``(line, object)``; a syntax error yields ``(line, DocumentError)`` and ends the
    iteration (the rest of an array cannot be re-synchronised reliably).
    """
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    line = 1 + text.count("\n", 0, pos)
    n = len(text)
    expect_value = True
    while True:
        start = pos
        while pos < n and text[pos] in _WS:
            pos += 1
        line += text.count("\n", start, pos)
        if pos >= n:
            yield line, DocumentError("not valid JSON: the array is not closed", f"{where}:{line}")
            return
        ch = text[pos]
        if ch == "]":
            return
        if not expect_value:
            if ch != ",":
                yield line, DocumentError("not valid JSON: expected ',' or ']' between array "
                                          "elements", f"{where}:{line}")
                return
            pos += 1
            expect_value = True
            continue
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            yield e.lineno, DocumentError(f"not valid JSON: {e.msg}", f"{where}:{e.lineno}")
            return
        yield line, obj
        line += text.count("\n", pos, end)
        pos = end
        expect_value = False


def read_json_documents(path: Path, text: str) -> Iterator[Document | DocumentError]:
    """A ``.json`` file holding one DOCUMENTS.md object or an array of them."""
    if text.lstrip().startswith("["):
        items: Iterator[tuple[int, Any]] = iter_json_array(text, str(path))
    else:
        try:
            items = iter([(1, json.loads(text))])
        except json.JSONDecodeError as e:
            yield DocumentError(f"not valid JSON: {e.msg}", f"{path}:{e.lineno}")
            return
    for line, obj in items:
        if isinstance(obj, DocumentError):
            yield obj
            continue
        yield _document(obj, f"{path}:{line}")
