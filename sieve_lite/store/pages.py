"""Section page ranges (table ``section_pages``, migration m003): reads. Rows are written
and deleted with the rest of a document's rows (``store.writes``)."""

from __future__ import annotations

from typing import Any

from .layout import POS_MASK, doc_span


def of_document(conn: Any, doc: int) -> dict[int, tuple[int, int]]:
    """Section position -> (first, last) page for one document (sections without pages are
    absent)."""
    return {rowid & POS_MASK: (first, last) for rowid, first, last in conn.execute(
        "SELECT rowid, first, last FROM section_pages WHERE rowid BETWEEN ? AND ?",
        doc_span(doc))}


def has_pages(conn: Any) -> bool:
    """Whether any section of the collection has a page range."""
    return conn.execute("SELECT 1 FROM section_pages LIMIT 1").fetchone() is not None
