"""m002: passage-level BM25 statistics (BQL.md section 9: ``bm25`` scores passages).

A document's passages, in order: each section (its text read with the document's title and the
section's heading), then the infobox when it has one (title, keys and values), then the author
list when it has one (title and names). A document with none of these has one passage, its
title. Passages are numbered globally (0, 1, 2, ... in document order at build time; numbers
of removed documents are never reused), so that per-passage arrays can be indexed directly.

* ``passages``: one row per document: its first passage number, how many of its passages are
  sections, whether an infobox and an author-list passage follow, and every passage's length
  in words (BM25's dl) as packed little-endian uint32. N and avgdl are derived from this
  table when a collection is opened, so they are exact after any add or remove.
* ``passage_postings``: one row per indexed word: ``df`` (passages holding it) and ``data``,
  its postings (passage numbers ascending, term frequency in each), packed by
  ``store.passages.encode``. Ranking reads one row per query word (a range of rows for a
  prefix) and does the arithmetic in numpy: no per-row Python, no per-row SQL.
"""

SQL = """
CREATE TABLE passages (
    doc       INTEGER PRIMARY KEY,         -- the document's rowid
    first     INTEGER NOT NULL,            -- global number of its first passage
    sections  INTEGER NOT NULL,            -- passages first .. first+sections-1: its sections
    infobox   INTEGER NOT NULL,            -- 1: the next passage is its infobox
    author    INTEGER NOT NULL,            -- 1: the next passage is its author list
    lens      BLOB NOT NULL                -- uint32 LE: words in each passage, in order
);

CREATE TABLE passage_postings (
    term      TEXT PRIMARY KEY,            -- a BQL word (sieve_lite.words)
    df        INTEGER NOT NULL,            -- passages holding it
    data      BLOB NOT NULL                -- store.passages.encode(passage numbers, tfs)
) WITHOUT ROWID;
"""
