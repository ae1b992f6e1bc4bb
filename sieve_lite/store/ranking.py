"""The SQL the rankers run over a collection's tables (``sieve_lite.rank`` does the arithmetic).

Passage-level BM25 reads ``passage_postings`` through ``store.passages``; this module holds the
rest: document lengths and id order, the document-level BM25 of ``bm25-doc`` (term frequencies
from the per-value FTS5 tables), string ids of rowids, the stored vectors, and the reciprocal
rank fusion of ``hybrid`` (``rrf``).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from itertools import chain
from typing import Any

import apsw
import numpy as np

from .layout import doc_sql

_TF_FUNCTION = "sieve_tf"
TF_BITS = 24  # packed rows: doc << 24 | tf (a field value holds < 16.7M of one word)
TF_MASK = (1 << TF_BITS) - 1
_registered: weakref.WeakSet[Any] = weakref.WeakSet()

# One packed integer per field value, doc << 24 | tf, over the title and section-text rows that
# hold the term (?1, an FTS5 match string). Fetching one int per row instead of a tuple measured
# 40% less CPU at 100k documents, the row fetch being most of the cost.
_DOC_TF_SQL = (
    f"SELECT ({doc_sql()} << {TF_BITS}) | min({_TF_FUNCTION}(fts_body), {TF_MASK})"
    " FROM fts_body WHERE fts_body MATCH ?1 UNION ALL"
    f" SELECT ({doc_sql()} << {TF_BITS}) | min({_TF_FUNCTION}(fts_title), {TF_MASK})"
    " FROM fts_title WHERE fts_title MATCH ?1")


def ensure_tf_function(conn: apsw.Connection) -> None:
    """Register the FTS5 auxiliary function ``sieve_tf(table)``: the number of phrase instances
    the current MATCH found in the current row (the term frequency in one field value)."""
    if conn in _registered:
        return
    conn.register_fts5_function(_TF_FUNCTION, lambda api, *args: api.inst_count)
    _registered.add(conn)


def document_tf(conn: apsw.Connection, match: str) -> np.ndarray:
    """Packed ``doc << TF_BITS | tf`` per title or section-text row matching ``match``."""
    ensure_tf_function(conn)
    return np.fromiter(chain.from_iterable(conn.execute(_DOC_TF_SQL, (match,))), dtype=np.int64)


def document_lengths(conn: apsw.Connection) -> list[tuple[int, int]]:
    """(rowid, n_words) of every document."""
    return conn.execute("SELECT rowid, n_words FROM documents").fetchall()


def document_dates(conn: apsw.Connection) -> list[tuple[int, int | None, int | None]]:
    """(rowid, date_lo, date_hi) of every document (NULL when undated)."""
    return conn.execute("SELECT rowid, date_lo, date_hi FROM documents").fetchall()


def rowids_by_id(conn: apsw.Connection) -> list[int]:
    """Document rowids in string-id order (the tie-break of every ranking)."""
    return [r for (r,) in conn.execute("SELECT rowid FROM documents ORDER BY id")]


def _carray(rowids: np.ndarray) -> Any:
    """Bind an int64 array for ``carray(?)``. carray refuses empty arrays; rowid -1 never
    exists, so a one-element [-1] stands for "nothing"."""
    arr = np.ascontiguousarray(rowids, dtype=np.int64)
    return apsw.carray(arr if len(arr) else np.full(1, -1, dtype=np.int64))


def ids_of(conn: apsw.Connection, rowids: np.ndarray) -> dict[int, str]:
    """String id of each document rowid."""
    if not len(rowids):
        return {}
    return dict(conn.execute("SELECT rowid, id FROM documents WHERE rowid IN "
                             "(SELECT value FROM carray(?))", (_carray(rowids),)))


def vectors(conn: apsw.Connection) -> list[tuple[int, bytes]]:
    """(rowid, float32 embedding bytes) of every stored document vector."""
    return conn.execute("SELECT rowid, embedding FROM doc_vectors").fetchall()


def dense_sqlite(conn: apsw.Connection, qvec: np.ndarray,
                 admitted: np.ndarray | None) -> list[tuple[int, float]]:
    """(rowid, cosine similarity) of the admitted documents with a vector, most similar first,
    ties by id, computed by sqlite-vec."""
    sql = ("SELECT v.rowid, 1.0 - vec_distance_cosine(v.embedding, ?) AS sim FROM doc_vectors v"
           " JOIN documents dd ON dd.rowid = v.rowid")
    params: list[Any] = [qvec.astype(np.float32).tobytes()]
    if admitted is not None:
        sql += " WHERE v.rowid IN (SELECT value FROM carray(?))"
        params.append(_carray(admitted))
    sql += " ORDER BY sim DESC, dd.id"
    return conn.execute(sql, params).fetchall()


# Reciprocal rank fusion of ranked runs in one statement: ranks in, RRF scores out, ties by
# id. ?1 holds every run's (document, rank) pairs, each as one int64 ``rank << 32 | rowid``
# (1-based ranks counted over the whole run; a document absent from a run has no pair of it),
# in one carray: a document's score is the sum over its pairs, whichever run they come from.
# ?2 is RRF's k (60) and ?3 how many to return (-1: all). Packed pairs bind as one array with
# no join on positions: measured 2x faster than a JSON object per run through json_each (0.14
# against 0.25 ms at k = 5, 0.43 against 0.87 at k = 100). For hybrid's two runs, sum() gives
# numpy's a + b exactly (SQLite sums with compensation, which for two terms is the correctly
# rounded a + b), so equal fused scores stay equal and the id breaks the tie.
_RRF_SQL = f"""
SELECT f.doc, d.id, f.score FROM (
    SELECT value & {(1 << 32) - 1} AS doc, sum(1.0 / (?2 + (value >> 32))) AS score
    FROM carray(?1) GROUP BY doc
) AS f JOIN documents d ON d.rowid = f.doc
ORDER BY f.score DESC, d.id
LIMIT ?3"""


def rrf(conn: apsw.Connection, runs: Sequence[tuple[np.ndarray, np.ndarray]], k_rrf: int,
        limit: int | None = None) -> list[tuple[int, str, float]]:
    """Reciprocal rank fusion of ``runs``, each (rowids, their 1-based ranks in that run):
    (rowid, id, score) best first, ties by id, the top ``limit`` (all when None). A document
    scores 1 / (k_rrf + rank) summed over the runs holding it; rowids that are no document are
    dropped (the join). Rowids must be below 2**32 and ranks below 2**31 (the packing)."""
    packed = []
    for rowids, ranks in runs:
        rows = np.asarray(rowids, dtype=np.int64)
        rk = np.asarray(ranks, dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= 1 << 32 or rk.min() < 1
                          or rk.max() >= 1 << 31):
            raise ValueError("RRF takes rowids below 2**32 and ranks from 1 to 2**31 - 1")
        packed.append((rk << 32) | rows)
    pairs = np.concatenate(packed) if packed else np.zeros(0, np.int64)
    # nothing: carray's [-1] stands in, rank -1 of rowid 2**32 - 1, which is no document
    return conn.execute(_RRF_SQL, (_carray(pairs), int(k_rrf),
                                   -1 if limit is None else int(limit))).fetchall()
