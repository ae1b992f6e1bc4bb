"""m004: a smaller file (issue 21).

* ``packing``: the zstd dictionary the section texts are packed with (``store.packing``): at
  most one row, none when the collection was too small to train one (texts are then zlib).
* Pages of 8 KiB (``writes.PAGE_SIZE``, set by the build before the schema is made).

FTS5 ``columnsize=0`` was measured and left out: nothing ranks with FTS5's ``bm25()``, but a
contentless table without ``%_docsize`` cannot be scanned, and the open-time check reads the
first and last rowid of every FTS table (``integrity.check_ranges``).
"""

SQL = """
CREATE TABLE packing (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    dict  BLOB NOT NULL                    -- a zstd dictionary (zstandard.train_dictionary)
);
"""
