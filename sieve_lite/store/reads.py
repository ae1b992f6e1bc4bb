"""Reading one document's rows: the SQL of ``Collection.document`` and of fetch; and the few
summaries of a whole collection that the agent's manual and query builder read.

Every value is checked to have the type a build writes (``DamagedCollection`` otherwise), so
the layers above never meet a number where a heading should be. Section texts come back as
stored (text, or a zlib blob): the caller unpacks only the one it needs (``packing.unpack``).
"""

from __future__ import annotations

from typing import Any

import apsw

from ..errors import DamagedCollection
from .layout import doc_span


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise DamagedCollection(f"the collection is damaged: {what} is stored as "
                                f"{type(value).__name__}, not text")
    return value


def _opt_text(value: Any, what: str) -> str | None:
    return None if value is None else _text(value, what)


def document_row(conn: apsw.Connection, doc_id: str) -> tuple[int, str, str] | None:
    """(rowid, id, title) of the document with this exact id, or None."""
    row = conn.execute("SELECT rowid, id, title FROM documents WHERE id = ?",
                       (doc_id,)).fetchone()
    if row is None:
        return None
    return row[0], _text(row[1], "an id"), _text(row[2], "a title")


def document_row_by_rowid(conn: apsw.Connection, rowid: int) -> tuple[int, str, str]:
    """(rowid, id, title) of the document with this rowid."""
    doc_id, title = conn.execute("SELECT id, title FROM documents WHERE rowid = ?",
                                 (rowid,)).fetchone()
    return rowid, _text(doc_id, "an id"), _text(title, "a title")


def document_details(conn: apsw.Connection, rowid: int
                     ) -> tuple[str | None, str | None, str | None]:
    """(date, url, meta JSON) of a document."""
    date, url, meta = conn.execute("SELECT date, url, meta FROM documents WHERE rowid = ?",
                                   (rowid,)).fetchone()
    return _opt_text(date, "a date"), _opt_text(url, "a url"), _opt_text(meta, "a meta value")


def stored_fields(conn: apsw.Connection, rowid: int, limit: int) -> tuple:
    """Every field of a stored document as the build was given it: (id, title, ((heading,
    text), ...), ((key, value), ...), (author, ...), date, url, meta JSON); section texts
    unpacked (at most ``limit`` bytes each)."""
    from .packing import unpack

    _rowid, doc_id, title = document_row_by_rowid(conn, rowid)
    date, url, meta_json = document_details(conn, rowid)
    texts = tuple((h, unpack(t, limit)) for h, t in sections(conn, rowid))
    return (doc_id, title, texts, tuple(infobox(conn, rowid)), tuple(authors(conn, rowid)),
            date, url, meta_json)


def ids_ignoring_case(conn: apsw.Connection, doc_id: str, limit: int = 5) -> list[str]:
    """Ids equal to ``doc_id`` ignoring ASCII case (suggestions for a mistyped id)."""
    return [_text(i, "an id") for (i,) in conn.execute(
        "SELECT id FROM documents WHERE id = ? COLLATE NOCASE ORDER BY id LIMIT ?",
        (doc_id, limit))]


def sections(conn: apsw.Connection, rowid: int) -> list[tuple[str, str | bytes]]:
    """(heading, stored text) of every section of a document, in order (a rowid range: no
    index on ``doc`` is needed)."""
    out = []
    for heading, text in conn.execute(
            "SELECT heading, text FROM sections WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            doc_span(rowid)):
        if not isinstance(text, (str, bytes)):
            raise DamagedCollection("the collection is damaged: a section text is stored as "
                                    f"{type(text).__name__}")
        out.append((_text(heading, "a heading"), text))
    return out


def infobox(conn: apsw.Connection, rowid: int) -> list[tuple[str, str]]:
    return [(_text(k, "an infobox key"), _text(v, "an infobox value")) for k, v in conn.execute(
        "SELECT key, value FROM infobox WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
        doc_span(rowid))]


def authors(conn: apsw.Connection, rowid: int) -> list[str]:
    return [_text(a, "an author") for (a,) in conn.execute(
        "SELECT name FROM authors WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
        doc_span(rowid))]


# ------------------------------------------------------------------------------- the whole
def document_list(conn: apsw.Connection) -> list[tuple[int, str, str, str | None]]:
    """(rowid, id, title, date) of every document, in rowid order."""
    return [(rowid, _text(i, "an id"), _text(t, "a title"), _opt_text(d, "a date"))
            for rowid, i, t, d in conn.execute(
                "SELECT rowid, id, title, date FROM documents ORDER BY rowid")]


def first_section_text(conn: apsw.Connection, rowid: int) -> str | None:
    """The text of a document's first section, unpacked (None when it has no section)."""
    row = conn.execute("SELECT unpack(text) FROM sections WHERE rowid BETWEEN ? AND ? "
                       "ORDER BY rowid LIMIT 1", doc_span(rowid)).fetchone()
    return None if row is None else _text(row[0], "a section text")


def common_headings(conn: apsw.Connection, limit: int) -> list[str]:
    """The ``limit`` most frequent section headings other than ``(intro)`` (ties by heading)."""
    return [_text(h, "a heading") for h, _n in conn.execute(
        "SELECT heading, count(*) AS n FROM sections WHERE heading != '(intro)' "
        "GROUP BY heading ORDER BY n DESC, heading LIMIT ?", (limit,))]


def common_author(conn: apsw.Connection) -> str | None:
    """The author named on the most documents (ties by name), or None."""
    row = conn.execute("SELECT name, count(*) AS n FROM authors GROUP BY name "
                       "ORDER BY n DESC, name LIMIT 1").fetchone()
    return None if row is None else _text(row[0], "an author")


def common_infobox_entry(conn: apsw.Connection) -> tuple[str, str] | None:
    """The most frequent infobox (key, value) pair (ties by key, value), or None."""
    row = conn.execute("SELECT key, value, count(*) AS n FROM infobox GROUP BY key, value "
                       "ORDER BY n DESC, key, value LIMIT 1").fetchone()
    if row is None:
        return None
    return _text(row[0], "an infobox key"), _text(row[1], "an infobox value")


_VOCAB_ROWS = {"title": "vocab_title_row", "body": "vocab_body_row"}  # FTS5 'row' vocabularies


def term_rows(conn: apsw.Connection, field: str, term: str) -> int:
    """How many rows of ``field``'s FTS table (``title``: one per document; ``body``: one per
    section text) hold ``term``; 0 when none does."""
    row = conn.execute(f"SELECT doc FROM {_VOCAB_ROWS[field]} WHERE term = ?",
                       (term,)).fetchone()
    return int(row[0]) if row else 0


def section_count(conn: apsw.Connection) -> int:
    return conn.execute("SELECT count(*) FROM sections").fetchone()[0]


def data_version(conn: apsw.Connection) -> int:
    """SQLite's counter of commits by *other* connections (``PRAGMA data_version``)."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def take_read_lock(conn: apsw.Connection) -> None:
    """Inside ``BEGIN``: read something, so the transaction holds its read lock (and sees one
    state of the file) from here on."""
    conn.execute("SELECT count(*) FROM meta").fetchone()
