"""Builders: every source kind is converted into ``Document`` objects (DOCUMENTS.md shape).

``iter_documents(paths, fmt)`` yields ``Document`` or ``DocumentError`` (with file and line)
so that one indexing path (``sieve_lite.build``) handles every source.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..documents import Document
from ..errors import BuildError, DocumentError


def iter_documents(paths: list[Path], fmt: str = "auto") -> Iterator[Document | DocumentError]:
    """Documents from every source path (files or folders) in the given format."""
    from .jsonl import read_jsonl

    for path in paths:
        if not path.exists():
            raise BuildError(f"source {path} does not exist")
        kind = fmt if fmt != "auto" else ("jsonl" if path.suffix in (".jsonl", ".ndjson") else "")
        if kind == "jsonl":
            yield from read_jsonl(path)
        else:
            raise BuildError(f"cannot tell the format of {path}; pass --format")
