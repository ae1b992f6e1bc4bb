"""Writing one document's rows, and taking them out again: the SQL a build and an in-place
update share.

``document_rows`` turns a document (its fields, and their indexed forms as ``build.prepare``
makes them) into the rows of every table it touches: ``documents``, ``sections``,
``infobox``, ``authors``, and one FTS row per indexed value plus its ``fts_doc`` row.
``insert_rows`` writes a batch of them (``executemany`` per table, as a build needs);
``delete_rows`` takes one document's rows out. The FTS tables are contentless, so a row can
only be deleted by giving FTS5 the very values it indexed (the ``'delete'`` command): the rows
to delete are made by the same ``document_rows`` from the stored document, which is why both
directions live here. (Passages and their postings: ``store.passages``; vectors: here.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..documents import INTRO
from .layout import doc_span, doc_tokens, value_rowid

FTS_VALUE_TABLES = ("fts_title", "fts_section", "fts_body", "fts_infobox", "fts_author")
FTS_TABLES = (*FTS_VALUE_TABLES, "fts_doc")
FTS_HASHSIZE = 64 << 20   # bytes of pending FTS5 index kept in memory before a segment flush
FTS_AUTOMERGE = 16        # segments of one level merged at once (FTS5's default: 4)
PAGE_SIZE = 8192          # schema v4 (m004): measured smaller than 4096 (collections/README.md)


@dataclass
class DocumentRows:
    """Every row of one document, ready for ``executemany``."""

    rowid: int
    document: tuple
    sections: list[tuple] = field(default_factory=list)
    infobox: list[tuple] = field(default_factory=list)
    authors: list[tuple] = field(default_factory=list)
    fts: dict[str, list[tuple[int, str]]] = field(
        default_factory=lambda: {t: [] for t in FTS_VALUE_TABLES})
    fts_doc: tuple = ()
    pages: list[tuple[int, int, int]] = field(default_factory=list)  # section_pages rows


def document_rows(rowid: int, doc_id: str, title: str, sections: Sequence[tuple[str, str]],
                  infobox: Sequence[tuple[str, str]], authors: Sequence[str],
                  date: str | None, date_span: tuple[int, int] | None, url: str | None,
                  meta_json: str | None, n_words: int, title_idx: str,
                  packed_sections: Sequence[tuple[Any, str, str]], infobox_idx: Sequence[str],
                  author_idx: Sequence[str],
                  pages: Sequence[tuple[int, int, int]] = ()) -> DocumentRows:
    """The rows of a document at ``rowid``; ``packed_sections`` are (stored text, indexed
    text, indexed heading) per section, the ``*_idx`` values the indexed forms, ``pages``
    (section pos, first page, last page) for the sections that have a page range."""
    base = value_rowid(rowid, 0)
    out = DocumentRows(rowid, (rowid, doc_id, title, date, date_span[0] if date_span else None,
                               date_span[1] if date_span else None, url, meta_json, n_words))
    if title_idx:
        out.fts["fts_title"].append((base, title_idx))
    for pos, ((heading, _text), (packed, body, head)) in enumerate(
            zip(sections, packed_sections, strict=True)):
        r = base | pos
        out.sections.append((r, rowid, pos, heading, packed))
        if body:
            out.fts["fts_body"].append((r, body))
        # '(intro)' is a label, not a heading: it is never indexed (BQL.md section 2).
        if heading != INTRO and head:
            out.fts["fts_section"].append((r, head))
    for i, ((k, v), idx) in enumerate(zip(infobox, infobox_idx, strict=True)):
        out.infobox.append((base | i, rowid, i, k, v))
        if idx:
            out.fts["fts_infobox"].append((base | i, idx))
    for i, (a, idx) in enumerate(zip(authors, author_idx, strict=True)):
        out.authors.append((base | i, rowid, i, a))
        if idx:
            out.fts["fts_author"].append((base | i, idx))
    out.pages = [(base | pos, first, last) for pos, first, last in pages]
    # The document-level row of fts_doc: every value of every field, its words tagged with
    # their field (layout.DOC_TAGS). No positions are kept there, so joining values cannot
    # make a phrase across two of them.
    parts = [doc_tokens("title", title_idx),
             doc_tokens("section", " ".join(h for _p, _b, h in packed_sections if h)),
             " ".join(b for _p, b, _h in packed_sections if b),
             doc_tokens("infobox", " ".join(i for i in infobox_idx if i)),
             doc_tokens("author", " ".join(a for a in author_idx if a))]
    out.fts_doc = (rowid, " ".join(p for p in parts if p))
    return out


def insert_rows(conn: apsw.Connection, batch: Iterable[DocumentRows],
                fts: bool = True) -> None:
    """Write the rows of a batch of documents (one ``executemany`` per table); ``fts=False``:
    all but the FTS rows (a parallel build sends those to ``fts_rows``' writers)."""
    batch = list(batch)
    conn.executemany(
        "INSERT INTO documents(rowid, id, title, date, date_lo, date_hi, url, meta, n_words) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [d.document for d in batch])
    conn.executemany("INSERT INTO sections(rowid, doc, pos, heading, text) "
                     "VALUES (?, ?, ?, ?, ?)", [r for d in batch for r in d.sections])
    conn.executemany("INSERT INTO infobox(rowid, doc, pos, key, value) VALUES (?, ?, ?, ?, ?)",
                     [r for d in batch for r in d.infobox])
    conn.executemany("INSERT INTO authors(rowid, doc, pos, name) VALUES (?, ?, ?, ?)",
                     [r for d in batch for r in d.authors])
    if fts:
        insert_fts(conn, fts_rows(batch))
    pages = [r for d in batch for r in d.pages]
    if pages:
        conn.executemany("INSERT INTO section_pages(rowid, first, last) VALUES (?, ?, ?)",
                         pages)


def fts_rows(batch: Iterable[DocumentRows]) -> dict[str, list[tuple]]:
    """The FTS rows of a batch of documents, per table (``FTS_TABLES``)."""
    batch = list(batch)
    out = {t: [r for d in batch for r in d.fts[t]] for t in FTS_VALUE_TABLES}
    out["fts_doc"] = [d.fts_doc for d in batch]
    return out


def insert_fts(conn: apsw.Connection, rows: dict[str, list[tuple]]) -> None:
    """Insert FTS rows (``fts_rows``, or some of its tables)."""
    for table, batch in rows.items():
        if not batch:
            continue
        if table == "fts_doc":
            conn.executemany("INSERT INTO fts_doc(rowid, v) VALUES (?, ?)", batch)
        elif table in FTS_VALUE_TABLES:  # names from the fixed tuple, never from data
            conn.executemany(f"INSERT INTO {table}(rowid, v) VALUES (?, ?)", batch)
        else:
            raise ValueError(f"not an FTS table: {table!r}")


# The shadow tables of a contentless FTS5 table: its whole index, verbatim.
FTS_SHADOWS = ("data", "idx", "docsize", "config")


def adopt_fts(conn: apsw.Connection, parts: Mapping[str, str]) -> None:
    """Make each FTS table of this (new) collection the one built in its file in ``parts``
    (table -> a file made by ``create``: the same columns, tokenizer and options): every row
    of its shadow tables is copied verbatim, rowids included, in one transaction. Whole tables
    only: two partial indexes of one table cannot be merged this way. ``conn`` must not have
    used the tables yet (FTS5 caches an index's structure per connection), and must not be in
    SQLite's defensive mode (it forbids writing shadow tables)."""
    aliases = {}
    try:
        for i, (table, path) in enumerate(parts.items()):
            if table not in FTS_TABLES:
                raise ValueError(f"not an FTS table: {table!r}")
            conn.execute(f"ATTACH DATABASE ? AS part{i}", (path,))
            aliases[table] = f"part{i}"
        with conn:
            for table, alias in aliases.items():
                for shadow in FTS_SHADOWS:
                    name = f"{table}_{shadow}"
                    conn.execute(f"DELETE FROM main.{name}")
                    conn.execute(f"INSERT INTO main.{name} SELECT * FROM {alias}.{name}")
    finally:
        for alias in aliases.values():
            conn.execute(f"DETACH DATABASE {alias}")


def fts_integrity(conn: apsw.Connection, tables: Iterable[str] = FTS_TABLES) -> None:
    """FTS5's own ``integrity-check`` of each table (raises ``apsw.CorruptError``)."""
    for table in tables:
        if table not in FTS_TABLES:
            raise ValueError(f"not an FTS table: {table!r}")
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 0)")


def delete_rows(conn: apsw.Connection, rows: DocumentRows) -> None:
    """Take out every row of one document (its stored rows, as ``document_rows`` makes them
    from the stored document): FTS entries with the ``'delete'`` command, then the rows."""
    for table in FTS_VALUE_TABLES:
        conn.executemany(f"INSERT INTO {table}({table}, rowid, v) VALUES ('delete', ?, ?)",
                         rows.fts[table])
    conn.execute("INSERT INTO fts_doc(fts_doc, rowid, v) VALUES ('delete', ?, ?)", rows.fts_doc)
    span = doc_span(rows.rowid)
    for table in ("sections", "infobox", "authors", "section_pages"):
        conn.execute(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ?", span)
    conn.execute("DELETE FROM documents WHERE rowid = ?", (rows.rowid,))


# ----------------------------------------------------------------------------------- vectors
def vector(conn: apsw.Connection, rowid: int) -> bytes | None:
    row = conn.execute("SELECT embedding FROM doc_vectors WHERE rowid = ?", (rowid,)).fetchone()
    return row[0] if row else None


def insert_vectors(conn: apsw.Connection, rows: Iterable[tuple[int, bytes]]) -> None:
    conn.executemany("INSERT INTO doc_vectors(rowid, embedding) VALUES (?, ?)", rows)


def delete_vector(conn: apsw.Connection, rowid: int) -> None:
    conn.execute("DELETE FROM doc_vectors WHERE rowid = ?", (rowid,))


# ------------------------------------------------------------------------- whole-file work
def tune_for_build(conn: apsw.Connection) -> None:
    """Settings for writing a new file that is renamed into place only when complete (no
    journal needed), with the pending FTS5 index kept in memory (``FTS_HASHSIZE``: one
    segment per table for most builds)."""
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}; PRAGMA journal_mode = OFF; "
                 "PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; "
                 "PRAGMA cache_size = -200000")


def tune_fts(conn: apsw.Connection, tables: Iterable[str] = FTS_TABLES) -> None:
    """Build settings of the FTS5 tables: a 64 MB pending index and automerge=16 (issue 21
    measured +37% inserts/s against the defaults). They are stored in each table's
    ``%_config``; ``reset_fts`` puts the defaults back before the file is finished."""
    for table in tables:
        if table not in FTS_TABLES:
            raise ValueError(f"not an FTS table: {table!r}")
        try:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', ?)",
                         (FTS_HASHSIZE,))
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)",
                         (FTS_AUTOMERGE,))
        except apsw.SQLError:
            return  # an SQLite without the option: the defaults work, only slower


def reset_fts(conn: apsw.Connection) -> None:
    """Put FTS5's default automerge back (in-place updates then merge as usual)."""
    for table in FTS_TABLES:
        try:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 4)")
        except apsw.SQLError:
            return


def tune_for_update(conn: apsw.Connection) -> None:
    """Settings for one long update transaction that must not block readers before its
    commit: dirty pages stay in memory (spilling them would take the exclusive lock early)."""
    conn.execute("PRAGMA cache_spill = OFF")
    conn.execute("PRAGMA cache_size = -262144")


def optimize_fts(conn: apsw.Connection, tables: Iterable[str] = FTS_TABLES) -> None:
    """Merge each FTS table's b-tree segments into one: smaller file, faster queries (a no-op
    when the in-memory hash held the whole build)."""
    for table in tables:
        if table not in FTS_TABLES:
            raise ValueError(f"not an FTS table: {table!r}")
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def vacuum(conn: apsw.Connection, into: str | None = None) -> None:
    """Rewrite the file without free pages; ``into``: write the copy to that new file instead
    (written once, and no temporary copy of the whole file in memory or in the temp dir)."""
    if into is None:
        conn.execute("VACUUM")
    else:
        conn.execute("VACUUM INTO ?", (into,))


def compact_passage_numbers(conn: apsw.Connection, slack: int) -> bool:
    """Renumber passages 0.. in document order when the unused numbers (of removed documents)
    exceed half the live ones plus ``slack``, rewriting every postings list; True when it
    did. (The open-time check refuses numbers beyond twice the live count plus 65536.)"""
    import numpy as np

    from . import passages as ps

    rows = conn.execute("SELECT doc, first, length(lens) / 4 FROM passages ORDER BY doc"
                        ).fetchall()
    live = sum(c for _, _, c in rows)
    top = max((f + c for _, f, c in rows), default=0)
    if top - live <= live // 2 + slack:
        return False
    new_of = np.full(top, -1, dtype=np.int64)
    nxt = 0
    updates = []
    for doc, first, count in rows:
        new_of[first:first + count] = np.arange(nxt, nxt + count)
        updates.append((nxt, doc))
        nxt += count
    conn.executemany("UPDATE passages SET first = ? WHERE doc = ?", updates)
    for term, df, data in list(ps.postings_rows(conn)):
        ids, tfs = ps.decode_within(data, top, term)
        new = new_of[ids]
        order = np.argsort(new, kind="stable")
        ps.write_postings(conn, term, df, ps.encode(new[order], tfs[order].astype(np.int64)))
    return True


# -------------------------------------------------------------------------------------- meta
def write_meta(conn: apsw.Connection, items: Iterable[tuple[str, str]]) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", items)


def document_totals(conn: apsw.Connection) -> tuple[int, int, float, int]:
    """(documents, sections, total words, largest rowid) as stored."""
    n, words, top = conn.execute(
        "SELECT count(*), total(n_words), coalesce(max(rowid), 0) FROM documents").fetchone()
    sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    return n, sections, words, top


def field_flags(conn: apsw.Connection) -> dict[str, bool]:
    """Which optional fields some document has (meta ``has_*``), read from the rows."""
    def some(sql: str, *params: Any) -> bool:
        return conn.execute(f"SELECT EXISTS({sql})", params).fetchone()[0] == 1

    return {"has_section": some("SELECT 1 FROM sections WHERE heading != ?", INTRO),
            "has_infobox": some("SELECT 1 FROM infobox"),
            "has_author": some("SELECT 1 FROM authors"),
            "has_date": some("SELECT 1 FROM documents WHERE date_lo IS NOT NULL")}


def document_rowid(conn: apsw.Connection, doc_id: str) -> int | None:
    row = conn.execute("SELECT rowid FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return row[0] if row else None
