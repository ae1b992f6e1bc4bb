"""The rowid layout of field-value rows, and the tokens of ``fts_doc``, defined once.

Every field-value row (a title, a section, an infobox entry, an author) has the rowid
``doc_rowid << SHIFT | position``, so ``rowid >> SHIFT`` is its document without a join and a
document's values are one contiguous rowid range. Documents are numbered 1..N.

``SHIFT`` is 13 since schema v5 (20 before): an FTS5 doclist stores each rowid as a varint of
its gap to the previous one, and a gap of one document is then 2 bytes instead of 3 (at 100k
documents, ``fts_body`` went from 193 to 166 MB). A document may have 8,191 values of each
kind, more than the longest author lists of physics papers (about 5,000).
"""

from __future__ import annotations

SHIFT = 13
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

# ------------------------------------------------------------------------------- fts_doc
# fts_doc (schema v5) has one row per document and one column, ``detail=none``: only rowids
# are kept, which is all document-level Boolean needs, in 38 MB instead of the 94 MB of one
# ``detail=column`` column per field (100k documents). Without columns, a word's field is
# in the token: body words as they are, the other fields' words behind a tag that no BQL word
# can start with ('_' is not a letter or a digit; the table's tokenizer keeps it in tokens).
# So a body prefix ("t"*) can never reach a tagged token, and a tagged prefix ("_tfo"*) only
# reaches that field's words.
DOC_TAGS = {"title": "_t", "section": "_s", "body": "", "infobox": "_i", "author": "_a"}


def doc_tokens(field: str, text: str) -> str:
    """An indexed value (BQL words joined by single spaces) as ``fts_doc`` tokens of
    ``field``."""
    tag = DOC_TAGS[field]
    if not tag or not text:
        return text
    return tag + text.replace(" ", " " + tag)
