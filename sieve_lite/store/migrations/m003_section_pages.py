"""m003: the page range of a section (PDF sources), in a table of its own.

One row per section that has pages; its rowid is the section's rowid (``doc << 20 | pos``),
so a document's ranges are one rowid range and sections without pages cost nothing. Pages are
1-based physical page numbers (the n-th page of the file), inclusive.
"""

SQL = """
CREATE TABLE section_pages (
    rowid    INTEGER PRIMARY KEY,          -- the section's rowid: doc_rowid << 20 | pos
    first    INTEGER NOT NULL,             -- first page, 1-based
    last     INTEGER NOT NULL              -- last page, inclusive
);
"""
