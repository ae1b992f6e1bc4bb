"""m001: the first schema of a collection file.

Rowid layout: every field-value row (title, section, infobox entry, author) has the rowid
``doc_rowid << 20 | position`` so that ``rowid >> 20`` is the document's rowid without a join.
This is what lets document-level AND/OR/NOT run as set operations directly over FTS5 results.
(Since m005 the shift is 13, ``store.layout.SHIFT``; the comments below keep the SQL as it was.)
The FTS5 tables are contentless (``content=''``): the text lives once, in the base tables, and
the FTS tables index its *normalised* form (``sieve_lite.words.index_text``: BQL words joined by
single spaces), so positions are BQL words. The tokenizer is FTS5's ``ascii``, which treats every
non-ASCII character as part of a token and so splits exactly on the spaces we put there; the
word rule itself (NFKD, marks dropped, casefold, letters and digits) is applied once, in Python,
for indexing and querying alike. ``unicode61`` would be close but not exact: its Unicode tables
are older than Python's and treat some letters (New Tai Lue vowel signs, Vedic signs) as
separators, which would split BQL words.
"""

SQL = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE documents (
    rowid    INTEGER PRIMARY KEY,          -- 1..N, dense
    id       TEXT NOT NULL UNIQUE,         -- the DOCUMENTS.md id
    title    TEXT NOT NULL,
    date     TEXT,                         -- as given: YYYY, YYYY-MM or YYYY-MM-DD
    date_lo  INTEGER,                      -- first day of the date's span, YYYYMMDD
    date_hi  INTEGER,                      -- last day of the date's span, YYYYMMDD
    url      TEXT,
    meta     TEXT,                         -- JSON object or NULL
    n_words  INTEGER NOT NULL              -- BQL words in title + section texts (BM25 length)
);
CREATE INDEX documents_date ON documents(date_lo, date_hi) WHERE date_lo IS NOT NULL;

CREATE TABLE sections (
    rowid    INTEGER PRIMARY KEY,          -- doc_rowid << 20 | pos
    doc      INTEGER NOT NULL,
    pos      INTEGER NOT NULL,             -- 0-based order in the document
    heading  TEXT NOT NULL,                -- '(intro)' for text before the first heading
    text     NOT NULL                      -- TEXT, or zlib BLOB (packing.py): unpack(text)
);

CREATE TABLE infobox (
    rowid    INTEGER PRIMARY KEY,          -- doc_rowid << 20 | pos
    doc      INTEGER NOT NULL,
    pos      INTEGER NOT NULL,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL
);

CREATE TABLE authors (
    rowid    INTEGER PRIMARY KEY,          -- doc_rowid << 20 | pos
    doc      INTEGER NOT NULL,
    pos      INTEGER NOT NULL,
    name     TEXT NOT NULL
);

-- One FTS5 table per searchable field; one row per field value.
CREATE VIRTUAL TABLE fts_title   USING fts5(v, content='', tokenize='ascii');
CREATE VIRTUAL TABLE fts_section USING fts5(v, content='', tokenize='ascii');
CREATE VIRTUAL TABLE fts_body    USING fts5(v, content='', tokenize='ascii');
CREATE VIRTUAL TABLE fts_infobox USING fts5(v, content='', tokenize='ascii');
CREATE VIRTUAL TABLE fts_author  USING fts5(v, content='', tokenize='ascii');

-- One row per document (rowid = doc_rowid), one column per field, no positions: a word or
-- prefix atom, and any AND/OR/NOT among such atoms, is a single MATCH here with column filters
-- (document-level semantics for free, no DISTINCT over section rows). Phrases and NEAR, which
-- must hold within one field value, use the per-value tables above.
CREATE VIRTUAL TABLE fts_doc USING fts5(title, section, body, infobox, author, content='',
                                       detail=column, tokenize='ascii');

-- Term statistics for document-level BM25 (title + body): fts5vocab over the two FTS tables.
CREATE VIRTUAL TABLE vocab_title_instance USING fts5vocab('fts_title', 'instance');
CREATE VIRTUAL TABLE vocab_body_instance  USING fts5vocab('fts_body', 'instance');
CREATE VIRTUAL TABLE vocab_title_row      USING fts5vocab('fts_title', 'row');
CREATE VIRTUAL TABLE vocab_body_row       USING fts5vocab('fts_body', 'row');
"""

# The vec0 table needs the embedding dimension, known only at build time (see store.schema).
VEC_SQL = (
    "CREATE VIRTUAL TABLE doc_vectors USING vec0("
    "embedding float[{dim}] distance_metric=cosine)"
)
