"""The SQL a result card runs: one document's row, headings, one section's text, infobox,
authors, and whether an FTS5 match holds in this document's rows of one field."""

from __future__ import annotations

from collections.abc import Iterator

import apsw

from .layout import doc_span, value_rowid
from .packing import unpack

FTS_TABLES = {"title": "fts_title", "section": "fts_section", "body": "fts_body",
              "infobox": "fts_infobox", "author": "fts_author"}


def document_row(conn: apsw.Connection, rowid: int) -> tuple[str, str, str | None, str | None]:
    """(id, title, date, url) of a document."""
    return conn.execute("SELECT id, title, date, url FROM documents WHERE rowid = ?",
                        (rowid,)).fetchone()


def headings(conn: apsw.Connection, rowid: int) -> list[str]:
    """Every section heading of a document, in order."""
    return [h for (h,) in conn.execute(
        "SELECT heading FROM sections WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
        doc_span(rowid))]


def section_text(conn: apsw.Connection, rowid: int, pos: int) -> str:
    """The original text of a document's section ``pos``."""
    row = conn.execute("SELECT text FROM sections WHERE rowid = ?",
                       (value_rowid(rowid, pos),)).fetchone()
    return unpack(row[0]) if row else ""


def section_texts(conn: apsw.Connection, rowid: int) -> Iterator[tuple[int, str]]:
    """(position, original text) of a document's sections, in order, read lazily."""
    lo, _ = doc_span(rowid)
    for r, t in conn.execute("SELECT rowid, text FROM sections WHERE rowid BETWEEN ? AND ? "
                             "ORDER BY rowid", doc_span(rowid)):
        yield r - lo, unpack(t)


def infobox(conn: apsw.Connection, rowid: int) -> list[tuple[str, str]]:
    """(key, value) infobox entries of a document, in order."""
    return list(conn.execute(
        "SELECT key, value FROM infobox WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
        doc_span(rowid)))


def authors(conn: apsw.Connection, rowid: int) -> list[str]:
    return [a for (a,) in conn.execute(
        "SELECT name FROM authors WHERE rowid BETWEEN ? AND ? ORDER BY rowid", doc_span(rowid))]


def field_matches(conn: apsw.Connection, field: str, match: str, rowid: int) -> bool:
    """Whether the FTS5 match string ``match`` holds in one of the document's ``field``
    values."""
    table = FTS_TABLES[field]  # a fixed name from our own table, never user text
    lo, hi = doc_span(rowid)
    return conn.execute(f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? "
                        "AND ? LIMIT 1", (match, lo, hi)).fetchone() is not None
