"""Plain text files -> documents.

A ``.txt`` file is one document: its title is its first non-empty line (cut at 200
characters), or the file stem when the file has none; its whole text, blank lines trimmed at
both ends, is the single section ``(intro)`` (the title line stays in the text: it is part of
what the file says).
"""

from __future__ import annotations

from pathlib import Path

from ..documents import INTRO, Document
from ..errors import DocumentError
from ._common import make_document, read_text, tidy

TITLE_CHARS = 200


def read_plain_text(path: Path, doc_id: str) -> Document | DocumentError:
    text = read_text(path)
    if isinstance(text, DocumentError):
        return text
    body = tidy(text.split("\n"))
    if not body:
        return DocumentError("empty file; nothing to index", str(path))
    first = " ".join(body.split("\n", 1)[0].split())
    if len(first) > TITLE_CHARS:
        first = first[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"
    return make_document({"id": doc_id, "title": first or path.stem,
                          "sections": [{"heading": INTRO, "text": body}]}, str(path))
