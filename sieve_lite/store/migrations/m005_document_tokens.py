"""m005: a smaller document-level index, and a narrower rowid layout (issue 21).

* ``fts_doc`` becomes one column with ``detail=none`` (rowids only): a field's words are told
  apart by a tag in the token (``store.layout.DOC_TAGS``), so column filters are no longer
  needed. At 100k documents: 94 -> 38 MB, and 35% less FTS5 work for it.
* ``store.layout.SHIFT`` is 13 (was 20): field-value rowids are ``doc << 13 | pos``. Nothing
  in the SQL changes, but every rowid of the value tables does, so files of version 4 are
  refused with the rebuild hint like any other.
"""

SQL = """
DROP TABLE fts_doc;
CREATE VIRTUAL TABLE fts_doc USING fts5(v, content='', detail=none,
                                       tokenize="ascii tokenchars '_'");
"""
