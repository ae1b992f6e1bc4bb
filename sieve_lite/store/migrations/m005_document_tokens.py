"""m005: a smaller document-level index, and a narrower rowid layout (issue 21).

* ``fts_doc`` becomes one column with ``detail=none`` (rowids only): a field's words are told
  apart by a tag in the token (``store.layout.DOC_TAGS``), so column filters are no longer
  needed. At 100k documents: 94 -> 38 MB, and 35% less FTS5 work for it.
* ``passage_postings`` keeps a word's packed list in rows of at most 1,900 bytes
  (``store.passages.PART_BYTES``), joined in ``part`` order when read: one row per word put
  long lists in overflow chains whose last page is mostly empty (15 of 76 MB at 100k
  documents). ``df`` is repeated on every part.
* ``store.layout.SHIFT`` is 13 (was 20): field-value rowids are ``doc << 13 | pos``. Nothing
  in the SQL changes, but every rowid of the value tables does, so files of version 4 are
  refused with the rebuild hint like any other.
"""

SQL = """
DROP TABLE passage_postings;
CREATE TABLE passage_postings (
    term      TEXT NOT NULL,               -- a BQL word (sieve_lite.words)
    part      INTEGER NOT NULL DEFAULT 0,  -- 0, 1, ...: the data of a word's rows, in order
    df        INTEGER NOT NULL,            -- passages holding it
    data      BLOB NOT NULL,               -- store.passages.encode(...), cut into parts
    PRIMARY KEY (term, part)
) WITHOUT ROWID;
DROP TABLE fts_doc;
CREATE VIRTUAL TABLE fts_doc USING fts5(v, content='', detail=none,
                                       tokenize="ascii tokenchars '_'");
"""
