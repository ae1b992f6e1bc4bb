"""The SQL a result card runs: one document's row, headings, one section's text, infobox,
authors, and whether an FTS5 match holds in this document's rows of one field."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import apsw

from .layout import POS_MASK, SHIFT, doc_span, value_rowid
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


def section_texts(conn: apsw.Connection, rowid: int, limit: int) -> Iterator[tuple[int, str]]:
    """(position, original text) of a document's sections, in order, read lazily; ``limit``:
    the collection's ``max_section_bytes`` (a packed text never unpacks to more)."""
    lo, _ = doc_span(rowid)
    for r, t in conn.execute("SELECT rowid, text FROM sections WHERE rowid BETWEEN ? AND ? "
                             "ORDER BY rowid", doc_span(rowid)):
        yield r - lo, unpack(t, limit)


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


def doc_fields(conn: apsw.Connection, matches: dict[str, str], rowid: int) -> set[str]:
    """The fields whose ``fts_doc`` MATCH string (field -> its words' tagged tokens, ORed)
    holds in document ``rowid``: one statement, one probe of each field's tokens."""
    if not matches:
        return set()
    fields = list(matches)
    probes = ", ".join("EXISTS (SELECT 1 FROM fts_doc WHERE fts_doc MATCH ? AND rowid = ?)"
                       for _ in fields)
    args = [a for f in fields for a in (matches[f], rowid)]
    row = conn.execute(f"SELECT {probes}", args).fetchone()
    return {f for f, hit in zip(fields, row, strict=True) if hit}


CardRows = tuple[tuple, list[str], list[tuple[str, str]], list[str], "str | None"]

_CARDS_SQL = (
    "WITH d(doc) AS (SELECT value FROM json_each(?1)) "
    "SELECT 0, rowid, id, title, date, url FROM documents WHERE rowid IN d UNION ALL "
    f"SELECT 1, s.rowid, s.heading, NULL, NULL, NULL FROM d CROSS JOIN sections AS s "
    f"ON s.rowid BETWEEN d.doc << {SHIFT} AND (d.doc << {SHIFT}) | {POS_MASK} UNION ALL "
    f"SELECT 2, i.rowid, i.key, i.value, NULL, NULL FROM d CROSS JOIN infobox AS i "
    f"ON i.rowid BETWEEN d.doc << {SHIFT} AND (d.doc << {SHIFT}) | {POS_MASK} UNION ALL "
    f"SELECT 3, a.rowid, a.name, NULL, NULL, NULL FROM d CROSS JOIN authors AS a "
    f"ON a.rowid BETWEEN d.doc << {SHIFT} AND (d.doc << {SHIFT}) | {POS_MASK} UNION ALL "
    "SELECT 4, rowid, text, NULL, NULL, NULL FROM sections WHERE rowid IN "
    "(SELECT value FROM json_each(?2))")


def _card_lists(rows: Iterable[tuple], docs: list[int], limit: int
                ) -> tuple[dict[int, tuple], dict[int, tuple[list, list, list]],
                           dict[int, str]] | None:
    """Group ``_CARDS_SQL``'s rows per document; None when a document's headings, infobox
    or authors came out of rowid order (a row below the previous one of its kind, or after
    another document's)."""
    heads: dict[int, tuple] = {}
    lists: dict[int, tuple[list, list, list]] = {d: ([], [], []) for d in docs}
    texts: dict[int, str] = {}
    last = [0, -1, -1, -1]  # per kind: the previous rowid
    done: set[tuple[int, int]] = set()  # (kind, doc) whose rows are over
    for kind, rowid, a, b, c, e in rows:
        if kind == 0:
            heads[rowid] = (a, b, c, e)
        elif kind == 4:
            texts[rowid] = unpack(a, limit)
        else:
            doc, prev = rowid >> SHIFT, last[kind]
            if doc != prev >> SHIFT:
                if (kind, doc) in done:
                    return None
                done.add((kind, prev >> SHIFT))
            elif rowid <= prev:
                return None
            last[kind] = rowid
            got = lists.get(doc)
            if got is not None:
                got[kind - 1].append(a if kind != 2 else (a, b))
    return heads, lists, texts


def cards_rows(conn: apsw.Connection, docs: list[int],
               sections: list[int | None], limit: int) -> list[CardRows]:
    """One query for what the cards of ``docs`` show: per document ((id, title, date, url),
    headings, infobox entries, authors), each list in document order, and the original text
    of its section at position ``sections[i]`` (None when not asked for or absent). The
    documents' rowids come as one bound JSON array. ``limit``: as for ``section_texts``."""
    import json

    want = [value_rowid(d, p) for d, p in zip(docs, sections, strict=True) if p is not None]
    args = (json.dumps([int(d) for d in docs]), json.dumps(want))
    # No ORDER BY (the sort costs more than the rest of the query): each CROSS JOIN walks one
    # document's rowid range upwards, which the loop below checks; should a row ever come out
    # of order, the query is run again sorted.
    got = _card_lists(conn.execute(_CARDS_SQL, args), docs, limit)
    if got is None:
        got = _card_lists(conn.execute(_CARDS_SQL + " ORDER BY 1, 2", args), docs, limit)
    assert got is not None  # sorted rows are always in order
    heads, lists, texts = got
    return [(heads[d], *lists[d], texts.get(value_rowid(d, p)) if p is not None else None)
            for d, p in zip(docs, sections, strict=True)]
