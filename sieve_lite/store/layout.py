"""The rowid layout of field-value rows, defined once.

Every field-value row (a title, a section, an infobox entry, an author) has the rowid
``doc_rowid << SHIFT | position``, so ``rowid >> SHIFT`` is its document without a join and a
document's values are one contiguous rowid range. Documents are numbered 1..N.
"""

from __future__ import annotations

SHIFT = 20
MAX_VALUES = 1 << SHIFT          # field values of one kind a document may have
POS_MASK = MAX_VALUES - 1


def value_rowid(doc: int, pos: int) -> int:
    """The rowid of a document's ``pos``-th value of one kind."""
    return (doc << SHIFT) | pos


def doc_span(doc: int) -> tuple[int, int]:
    """The inclusive rowid range of a document's field values (for ``BETWEEN ? AND ?``)."""
    return doc << SHIFT, (doc << SHIFT) | POS_MASK


def doc_sql(column: str = "rowid") -> str:
    """SQL for the document rowid of a field-value rowid column (a trusted identifier)."""
    return f"({column} >> {SHIFT})"

# Tables whose rowids follow the layout (one row per field value) and tables with one row per
# document (rowid = document rowid). The open-time range check reads both lists.
VALUE_TABLES = ("sections", "infobox", "authors", "section_pages",
                "fts_title", "fts_section", "fts_body", "fts_infobox", "fts_author")
DOC_TABLES = ("documents", "fts_doc", "passages")
