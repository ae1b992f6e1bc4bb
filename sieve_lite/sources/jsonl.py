"""JSON Lines, the interchange format of DOCUMENTS.md."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..documents import Document
from ..errors import DocumentError


def read_jsonl(path: Path) -> Iterator[Document | DocumentError]:
    with open(path, encoding="utf-8", errors="strict", newline="") as f:
        lineno = 0
        while True:
            try:
                line = f.readline()
            except UnicodeDecodeError as e:
                yield DocumentError(f"not valid UTF-8 ({e.reason})", f"{path}:{lineno + 1}")
                return
            if not line:
                return
            lineno += 1
            where = f"{path}:{lineno}"
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                yield DocumentError(f"not valid JSON: {e.msg} at character {e.colno}", where)
                continue
            try:
                doc = Document.from_dict(obj, where)
            except DocumentError as e:
                yield e
                continue
            doc.meta["_where"] = where
            yield doc
