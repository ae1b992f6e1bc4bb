"""m004: the FTS5 tables without per-row token counts (``columnsize=0``).

Nothing reads FTS5's ``%_docsize`` tables: BM25 lengths are sieve-lite's own (``documents``
and ``passages``), and no query calls FTS5's ``bm25()`` or column sizes. They cost about 4% of
a file. The tables are dropped and created again (empty: migrations run on a new file).
A row of a contentless table is still removed with FTS5's ``'delete'`` command and its indexed
text (``words.index_text`` of the stored value); ``contentless_delete=1`` is not an option
here, as SQLite refuses it together with ``columnsize=0``.

(``m003`` is the formats room's ``section_pages``.)
"""

_FTS = ("fts_title", "fts_section", "fts_body", "fts_infobox", "fts_author")

SQL = "".join(
    f"DROP TABLE {t}; CREATE VIRTUAL TABLE {t} USING fts5(v, content='', columnsize=0, "
    "tokenize='ascii');\n" for t in _FTS) + """
DROP TABLE fts_doc;
CREATE VIRTUAL TABLE fts_doc USING fts5(title, section, body, infobox, author, content='',
                                       detail=column, columnsize=0, tokenize='ascii');
"""
