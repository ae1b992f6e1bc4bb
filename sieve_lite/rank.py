"""Rankers over the whole admitted set: ``bm25``, ``dense`` and ``hybrid`` (RRF, k = 60).

BQL.md section 9.2: a ranker orders *every* document the selection admitted, never a truncated
window, and can never bring back a document the selection refused. So every ranker here takes
the admitted set (``admitted``: a numpy array of document rowids, or ``None`` for the whole
collection, which is what the zero-hit fallback ranks) and scores all of it.

* **bm25** is document-level BM25 over title + body, Lucene/Pyserini style (k1 0.9, b 0.4,
  ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 * (1 - b + b * dl / avgdl))``,
  dl = ``documents.n_words``, avgdl = meta ``avg_words``). Per query term, tf per document is
  the number of its occurrences in the document's title row and section-text rows: one FTS5
  MATCH per term per field, with a registered auxiliary function returning each row's
  instance count; df is the number of documents with tf > 0. SQL gathers these
  (term, document, tf) triples and numpy does the arithmetic (``bm25_scores``); the same formula
  entirely in SQL (``bm25_sql_run``) is kept as the tests' reference - it was 4x slower,
  its GROUP BYs dominating. Term statistics (N, df, avgdl) are collection-wide, as in
  Lucene, whatever the selection.
  A prefix word (``castle*``) is one scoring unit, like Lucene's SynonymQuery over all its
  expansions: its tf is the number of words of the document that start with the stem (FTS5's
  own prefix query counts them, so there is no expansion list to cap), its df the number of
  documents holding any such word. A repeated query word weighs once per repeat (Anserini's
  bag-of-words query does the same).
* **dense** is cosine similarity between the embedded positive words and each admitted
  document's stored embedding. sqlite-vec's brute-force scan costs ~90 ms per 100k documents
  and its rowid-restricted path ~50 us per row, so we read the vectors once per open
  collection into a numpy matrix (~1 s per 100k documents, the first time) and score the
  admitted rows with one matrix product (~10 ms per 100k). Exact float, no quantisation.
  Over ``MAX_MATRIX_BYTES`` the vectors stay on disk and sqlite-vec's ``vec_distance_cosine``
  does the work (slow but the same order; the tests compare the two).
* **hybrid** is reciprocal rank fusion (k = 60) of the full bm25 run and the full dense run of
  the admitted set, computed in SQL: each run is bound as carrays of rowids and their ranks,
  and ``sum(1.0 / (60 + rank))`` groups by document. Only the two top-``2k + 60`` lists can
  hold the fused top ``k`` (proof at ``hybrid``), so only their documents are fused, each
  with its rank counted over the whole run: exact, and no 200k-row GROUP BY at 100k
  documents. ``rrf`` is the same fusion in pure Python and ``rrf_sql`` runs the production
  SQL on given runs; the tests check that all three agree.

Ties break by the document's string id, ascending, everywhere, so results are deterministic.
A bm25 run contains the documents with a positive score; admitted documents that match no
positive word in title or body follow them (by id) when bm25 ranks alone, and get their only
RRF share from the dense run in hybrid.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import apsw
import numpy as np

from .store.layout import doc_sql

K1 = 0.9
B = 0.4
RRF_K = 60
MAX_MATRIX_BYTES = 2 << 30  # above this the vectors stay on disk (sqlite-vec path)
RANKERS = ("bm25", "dense", "hybrid")


@dataclass(frozen=True)
class ScoringTerm:
    """One BM25 query term: a word, or a prefix standing for every word it starts."""

    label: str  # as the user wrote it: 'castle' or 'cast*'
    match: str  # its FTS5 query: '"castle"' or '"cast"*'
    weight: int  # how many times the query repeats it


@dataclass(frozen=True)
class Ranked:
    """One ranked document: its rowid, string id and ranker score."""

    rowid: int
    id: str
    score: float


# ------------------------------------------------------------------------------ query terms
def scoring_terms(words: Sequence[tuple[str, bool]]) -> list[ScoringTerm]:
    """Positive words (``bql.ast.positive_words``: (word, is_prefix), repeats kept) -> BM25
    scoring terms, in first-seen order, repeats folded into ``weight``.

    Words are BQL words (letters and digits), so quoting them for FTS5 is always safe.
    """
    counts = Counter(words)
    return [ScoringTerm(w + ("*" if p else ""), f'"{w}"' + ("*" if p else ""), counts[(w, p)])
            for w, p in dict.fromkeys(words)]


def query_text(words: Sequence[tuple[str, bool]]) -> str:
    """What the dense ranker embeds: the positive words in query order (prefix stems as is)."""
    return " ".join(w for w, _ in words)


# ------------------------------------------------------------------------------------ bm25
_TF_FUNCTION = "sieve_tf"
_TF_BITS = 24  # packed rows: doc << 24 | tf (a field value holds < 16.7M of one word)
_TF_MASK = (1 << _TF_BITS) - 1
_registered: weakref.WeakSet[Any] = weakref.WeakSet()


def _ensure_tf_function(conn: apsw.Connection) -> None:
    """Register the FTS5 auxiliary function ``sieve_tf(table)``: the number of phrase
    instances the current MATCH found in the current row, i.e. the term frequency in one
    field value. Measured 2x faster than counting rows of the fts5vocab ``instance`` tables
    (34 vs 65 ms for a 19-word question on HotpotQA), whose per-occurrence rows dominate."""
    if conn in _registered:
        return
    conn.register_fts5_function(_TF_FUNCTION, lambda api, *args: api.inst_count)
    _registered.add(conn)


def _bm25_ctes(terms: Sequence[ScoringTerm], restricted: bool) -> tuple[str, list[Any]]:
    """CTEs ending in ``sc(d, s)``: the BM25 score of every admitted document with s > 0.

    Parameters are positional ``?`` in text order. When ``restricted``, the caller binds the
    admitted rowids (a carray) as the last parameter of this fragment.
    """
    qt_sql = " UNION ALL ".join("SELECT ? AS qi, ? AS m, ? AS qn" for _ in terms)
    params: list[Any] = [x for qi, st in enumerate(terms) for x in (qi, st.match, st.weight)]
    sql = (
        f"qt(qi, m, qn) AS MATERIALIZED ({qt_sql}), "
        # tf per field value (one title row, one row per section text), then per document
        # (rowid >> 20). CROSS JOIN keeps qt outermost so each MATCH is an index lookup.
        "tfr(qi, d, tf) AS ("
        f" SELECT qt.qi, {doc_sql('fts_body.rowid')}, {_TF_FUNCTION}(fts_body) FROM qt"
        "  CROSS JOIN fts_body WHERE fts_body MATCH qt.m"
        " UNION ALL"
        f" SELECT qt.qi, {doc_sql('fts_title.rowid')}, {_TF_FUNCTION}(fts_title) FROM qt"
        "  CROSS JOIN fts_title WHERE fts_title MATCH qt.m), "
        "tf(qi, d, tf) AS MATERIALIZED (SELECT qi, d, sum(tf) FROM tfr GROUP BY qi, d), "
        # df is collection-wide (documents with tf > 0), whatever the selection, as in Lucene.
        "df(qi, df) AS MATERIALIZED (SELECT qi, count(*) FROM tf GROUP BY qi), "
        "sc(d, s) AS MATERIALIZED ("
        " SELECT tf.d, sum(qt.qn * ln(1.0 + (? - df.df + 0.5) / (df.df + 0.5))"
        "   * tf.tf / (tf.tf + ? * (1.0 - ? + ? * dd.n_words / ?)))"
        " FROM tf JOIN df USING (qi) JOIN qt USING (qi) JOIN documents dd ON dd.rowid = tf.d"
        + (" WHERE tf.d IN (SELECT value FROM carray(?))" if restricted else "")
        + " GROUP BY tf.d)"
    )
    return sql, params


def _bm25_params(n_docs: int, avgdl: float) -> list[Any]:
    return [n_docs, K1, B, B, avgdl if avgdl > 0 else 1.0]


def _carray(rowids: np.ndarray) -> Any:
    """Bind an int64 array for ``carray(?)``. carray refuses empty arrays; rowid -1 never
    exists, so a one-element [-1] stands for "nothing"."""
    arr = np.ascontiguousarray(rowids, dtype=np.int64)
    return apsw.carray(arr if len(arr) else np.full(1, -1, dtype=np.int64))


# ---------------------------------------------------------------------- per-collection data
class _Stats:
    """Per-document arrays indexed by rowid, read once per open collection (~30 ms per 100k
    documents): BM25 lengths and each document's position in string-id order (ties)."""

    def __init__(self, conn: apsw.Connection) -> None:
        rows = conn.execute("SELECT rowid, n_words FROM documents").fetchall()
        top = max((r for r, _ in rows), default=0)
        self.n_words = np.zeros(top + 1, dtype=np.float64)
        self.exists = np.zeros(top + 1, dtype=bool)
        for r, n in rows:
            self.n_words[r] = n
            self.exists[r] = True
        self.by_id = np.fromiter((r for (r,) in conn.execute(
            "SELECT rowid FROM documents ORDER BY id")), dtype=np.int64, count=len(rows))
        self.id_rank = np.full(top + 1, len(rows), dtype=np.int64)
        self.id_rank[self.by_id] = np.arange(len(rows))


_STATS: weakref.WeakKeyDictionary[Any, _Stats] = weakref.WeakKeyDictionary()


def _stats(coll: Any) -> _Stats:
    st = _STATS.get(coll)
    if st is None:
        st = _STATS[coll] = _Stats(coll.conn)
    return st


def _sort(stats: _Stats, rowids: np.ndarray, scores: np.ndarray,
          k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, scores) best first, ties by string id; only the top ``k`` when given (exact:
    every candidate tied with the k-th score is kept until the final cut)."""
    if k is not None and len(scores) > 4 * k:
        kth = np.partition(-scores, k - 1)[k - 1]
        keep = -scores <= kth
        rowids, scores = rowids[keep], scores[keep]
    order = np.lexsort((stats.id_rank[rowids], -scores))
    if k is not None:
        order = order[:k]
    return rowids[order], scores[order]


def _ids(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, str]:
    if not len(rowids):
        return {}
    return dict(conn.execute("SELECT rowid, id FROM documents WHERE rowid IN "
                             "(SELECT value FROM carray(?))",
                             (_carray(np.asarray(rowids, dtype=np.int64)),)))


def _ranked(conn: apsw.Connection, rowids: np.ndarray, scores: np.ndarray) -> list[Ranked]:
    ids = _ids(conn, rowids.tolist())
    return [Ranked(int(r), ids[int(r)], float(s)) for r, s in zip(rowids, scores, strict=True)]


def _admitted_rows(stats: _Stats, admitted: np.ndarray | None) -> np.ndarray:
    if admitted is None:
        return np.flatnonzero(stats.exists).astype(np.int64)
    return np.asarray(admitted, dtype=np.int64)


def fill_by_id(coll: Any, ranked: list[Ranked], admitted: np.ndarray | None,
                k: int) -> list[Ranked]:
    """Append admitted documents no run reached (score 0, by id) until there are ``k``
    hits: the whole admitted set is ranked, the ones no positive word reached come last."""
    if len(ranked) >= k:
        return ranked[:k]
    stats = _stats(coll)
    rest = _admitted_rows(stats, admitted)
    rest = rest[~np.isin(rest, [h.rowid for h in ranked])]
    rest = rest[np.argsort(stats.id_rank[rest], kind="stable")][: k - len(ranked)]
    return ranked + _ranked(coll.conn, rest, np.zeros(len(rest)))


# ------------------------------------------------------------------------------------ bm25
def bm25_scores(coll: Any, terms: Sequence[ScoringTerm]) -> np.ndarray:
    """BM25 score of every document, indexed by rowid (0 where no term occurs).

    SQL gathers (document, tf) pairs from one FTS5 MATCH per term per field; numpy does the
    arithmetic. Measured on HotpotQA questions (19 words): 38 ms, against 165 ms for the same
    formula entirely in SQL (``bm25_sql_run``, kept as the reference), whose GROUP BYs and
    joins over ~60k (term, row) pairs dominate.
    """
    stats = _stats(coll)
    scores = np.zeros(len(stats.n_words), dtype=np.float64)
    if not terms:
        return scores
    conn = coll.conn
    _ensure_tf_function(conn)
    # One query per term, one packed integer per field value: doc << 24 | tf. Fetching one
    # int per row instead of a (term, doc, tf) tuple measured 40% less CPU at 100k documents
    # (12-word questions: 195 vs 330 ms), the row fetch being most of the cost.
    sql = (f"SELECT ({doc_sql()} << {_TF_BITS}) | min({_TF_FUNCTION}(fts_body), {_TF_MASK})"
           " FROM fts_body WHERE fts_body MATCH ?1 UNION ALL"
           f" SELECT ({doc_sql()} << {_TF_BITS}) | min({_TF_FUNCTION}(fts_title), {_TF_MASK})"
           " FROM fts_title WHERE fts_title MATCH ?1")
    n_docs = coll.documents
    avgdl = coll.avg_words if coll.avg_words > 0 else 1.0
    norm = K1 * (1.0 - B + B * stats.n_words / avgdl)
    for st in terms:
        packed = np.fromiter(chain.from_iterable(conn.execute(sql, (st.match,))),
                             dtype=np.int64)
        if not len(packed):
            continue
        tf = np.bincount(packed >> _TF_BITS, weights=packed & _TF_MASK, minlength=len(scores))
        df = np.count_nonzero(tf)
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        scores += st.weight * idf * tf / (tf + norm)
    return scores


def bm25_run(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
             limit: int | None = None) -> list[Ranked]:
    """Admitted documents with a positive BM25 score, best first (ties by id)."""
    rows, scores = _bm25_order(coll, terms, admitted, limit)
    return _ranked(coll.conn, rows, scores)


def _bm25_order(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
                limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    stats = _stats(coll)
    all_scores = bm25_scores(coll, terms)
    rows = _admitted_rows(stats, admitted)
    scores = all_scores[rows]
    pos = scores > 0
    return _sort(stats, rows[pos], scores[pos], limit)


def bm25(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
         k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set under BM25."""
    return fill_by_id(coll, bm25_run(coll, terms, admitted, k), admitted, k)


def bm25_sql_run(coll: Any, terms: Sequence[ScoringTerm],
                 admitted: np.ndarray | None) -> list[Ranked]:
    """The same BM25 entirely in SQL (the reference the numpy path is tested against)."""
    if not terms or (admitted is not None and len(admitted) == 0):
        return []
    _ensure_tf_function(coll.conn)
    ctes, params = _bm25_ctes(terms, admitted is not None)
    params += _bm25_params(coll.documents, coll.avg_words)
    if admitted is not None:
        params.append(_carray(admitted))
    sql = ("WITH " + ctes + " SELECT sc.d, dd.id, sc.s FROM sc JOIN documents dd"
           " ON dd.rowid = sc.d ORDER BY sc.s DESC, dd.id")
    return [Ranked(r, i, s) for r, i, s in coll.conn.execute(sql, params)]


# ----------------------------------------------------------------------------------- dense
class _Vectors:
    """A collection's document embeddings as one float32 matrix (rows in rowid order of
    ``doc_vectors``); ``row_of[rowid]`` is a document's row, -1 when it has no vector."""

    def __init__(self, conn: apsw.Connection) -> None:
        rows = conn.execute("SELECT rowid, embedding FROM doc_vectors").fetchall()
        self.rowids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
        dim = len(rows[0][1]) // 4 if rows else 0
        self.matrix = np.frombuffer(b"".join(v for _, v in rows),
                                    dtype=np.float32).reshape(len(rows), dim)
        top = int(self.rowids.max()) if len(rows) else 0
        self.row_of = np.full(top + 1, -1, dtype=np.int64)
        self.row_of[self.rowids] = np.arange(len(rows))


_VECTORS: weakref.WeakKeyDictionary[Any, _Vectors] = weakref.WeakKeyDictionary()


def _vectors(coll: Any) -> _Vectors:
    """The collection's vector matrix, read on first use and kept while it is open."""
    v = _VECTORS.get(coll)
    if v is None:
        v = _VECTORS[coll] = _Vectors(coll.conn)
    return v


def _use_matrix(coll: Any) -> bool:
    return coll.documents * max(coll.embed_dim, 1) * 4 <= MAX_MATRIX_BYTES


def embed_query(coll: Any, text: str) -> np.ndarray:
    """The query's embedding with the collection's own model (normalised float32)."""
    from .embed import get_embedder

    return get_embedder(coll.embed_model).encode([text])[0].astype(np.float32)


def dense_order(coll: Any, qvec: np.ndarray, admitted: np.ndarray | None,
                k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Admitted documents with a vector, most similar first (ties by id): (rowids, sims);
    all of them, or the top ``k``. Similarity is cosine (the stored vectors and the query are
    normalised), i.e. ``1 - vec_distance_cosine``."""
    if not _use_matrix(coll):
        rows, sims = _dense_order_sqlite(coll.conn, qvec, admitted)
        return (rows, sims) if k is None else (rows[:k], sims[:k])
    rows, sims = _dense_scores(coll, qvec, admitted)
    return _sort(_stats(coll), rows, sims, k)


def _dense_scores(coll: Any, qvec: np.ndarray,
                  admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, cosine similarity) of the admitted documents with a vector, unordered."""
    vec = _vectors(coll)
    q = qvec.astype(np.float32)
    if not len(vec.rowids):
        return vec.rowids, np.zeros(0, np.float32)
    if admitted is None:
        return vec.rowids, vec.matrix @ q
    adm = admitted[admitted < len(vec.row_of)]
    idx = vec.row_of[adm]
    idx = idx[idx >= 0]
    if len(idx) * 8 < len(vec.rowids):
        # A small selection: copying its rows and multiplying them is cheaper than the product
        # over the whole matrix (0.3 vs 10 ms for 1k of 100k documents).
        return vec.rowids[idx], vec.matrix[idx] @ q
    # A broad one: one product over the whole matrix (~10 ms per 100k), then pick; copying
    # half the matrix first would cost more than it saves.
    return vec.rowids[idx], (vec.matrix @ q)[idx]


def _dense_order_sqlite(conn: apsw.Connection, qvec: np.ndarray,
                        admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The same ordering computed by sqlite-vec (for collections too large to hold in RAM;
    also the tests' cross-check of the matrix path)."""
    sql = ("SELECT v.rowid, 1.0 - vec_distance_cosine(v.embedding, ?) AS sim FROM doc_vectors v"
           " JOIN documents dd ON dd.rowid = v.rowid")
    params: list[Any] = [qvec.astype(np.float32).tobytes()]
    if admitted is not None:
        sql += " WHERE v.rowid IN (SELECT value FROM carray(?))"
        params.append(_carray(admitted))
    sql += " ORDER BY sim DESC, dd.id"
    rows = conn.execute(sql, params).fetchall()
    return (np.asarray([r for r, _ in rows], dtype=np.int64),
            np.asarray([s for _, s in rows], dtype=np.float32))


def dense(coll: Any, qvec: np.ndarray, admitted: np.ndarray | None, k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set by embedding similarity."""
    rows, sims = dense_order(coll, qvec, admitted, k)
    return fill_by_id(coll, _ranked(coll.conn, rows, sims), admitted, k)


# ---------------------------------------------------------------------------------- hybrid
# The fusion, shared by the production path and ``rrf_sql``: each run is bound as two carrays,
# documents and their 1-based ranks in that run; a document sums 1 / (k + rank) over the runs
# it appears in; ties break by string id.
def _fuse_sql(n_runs: int) -> str:
    ctes = ", ".join(f"run{i}(doc, r) AS (SELECT d.value, r.value FROM carray(?) d"
                     " JOIN carray(?) r ON r.rowid = d.rowid)" for i in range(n_runs))
    union = " UNION ALL ".join(f"SELECT doc, r FROM run{i}" for i in range(n_runs))
    return (f"WITH {ctes}, "
            f"fused(doc, s) AS (SELECT doc, sum(1.0 / (? + r)) FROM ({union}) GROUP BY doc) "
            "SELECT fused.doc, dd.id, fused.s FROM fused JOIN documents dd ON dd.rowid = fused.doc"
            " ORDER BY fused.s DESC, dd.id")


def _ranks_in_run(stats: _Stats, rows: np.ndarray, scores: np.ndarray,
                  wanted: np.ndarray) -> np.ndarray:
    """1-based rank of each ``wanted`` rowid in the run (rows, scores) ordered by score
    descending then id; 0 where a rowid is not in the run. Counting, not sorting the run:
    rank = documents scoring higher + documents tied but earlier by id + 1."""
    out = np.zeros(len(wanted), dtype=np.int64)
    if not len(rows):
        return out
    pos = np.full(len(stats.id_rank), -1, dtype=np.int64)
    pos[rows] = np.arange(len(rows))
    where = pos[wanted]
    present = where >= 0
    s = scores[where[present]]
    neg = np.sort(-scores)
    higher = np.searchsorted(neg, -s, side="left")
    tied = np.searchsorted(neg, -s, side="right") - higher
    rank = higher + 1
    idr = stats.id_rank[rows]
    for j in np.flatnonzero(tied > 1):  # exact ties: rare, count the earlier ids
        same = scores == s[j]
        rank[j] += int(np.count_nonzero(idr[same] < stats.id_rank[wanted[present][j]]))
    out[present] = rank
    return out


def hybrid(coll: Any, terms: Sequence[ScoringTerm], qvec: np.ndarray,
           admitted: np.ndarray | None, k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set by RRF (k = 60) of the bm25 run (every admitted
    document with a positive score) and the dense run (every admitted document with a
    vector), fused in SQL.

    Exact without fusing all of both runs: a document outside the top ``D = 2k + 60`` of both
    runs scores below ``2 / (61 + D) < 1 / (60 + k)``, while the top ``k`` of a run with at
    least ``k`` documents each score at least ``1 / (60 + k)``; so the fused top ``k`` lies
    among the two top-``D`` lists (and when no run has ``k`` documents, nothing is cut). Each
    candidate is fused with its full ranks in both runs, counted over the whole runs.
    """
    stats = _stats(coll)
    depth = 2 * k + RRF_K
    scores_all = bm25_scores(coll, terms)
    rows = _admitted_rows(stats, admitted)
    b_sc = scores_all[rows]
    b_rows, b_sc = rows[b_sc > 0], b_sc[b_sc > 0]
    if _use_matrix(coll):
        d_rows, d_sc = _dense_scores(coll, qvec, admitted)
    else:
        d_rows, d_sc = _dense_order_sqlite(coll.conn, qvec, admitted)
    cand = np.union1d(_sort(stats, b_rows, b_sc, depth)[0], _sort(stats, d_rows, d_sc, depth)[0])
    rb = _ranks_in_run(stats, b_rows, b_sc, cand)
    rd = _ranks_in_run(stats, d_rows, d_sc, cand)
    params: list[Any] = [_carray(cand[rb > 0]), _carray(rb[rb > 0]),
                         _carray(cand[rd > 0]), _carray(rd[rd > 0]), RRF_K, k]
    hits = [Ranked(r, i, s) for r, i, s in coll.conn.execute(_fuse_sql(2) + " LIMIT ?", params)]
    # Admitted documents with neither a bm25 score nor a vector still get a rank: last.
    return fill_by_id(coll, hits, admitted, k)


def rrf(runs: Sequence[Sequence[Ranked]], k: int = RRF_K) -> list[Ranked]:
    """Reciprocal rank fusion in pure Python: score = sum over runs of 1 / (k + rank)."""
    scores: dict[int, float] = {}
    ids: dict[int, str] = {}
    for run in runs:
        for rank, hit in enumerate(run, start=1):
            scores[hit.rowid] = scores.get(hit.rowid, 0.0) + 1.0 / (k + rank)
            ids[hit.rowid] = hit.id
    return sorted((Ranked(r, ids[r], s) for r, s in scores.items()),
                  key=lambda h: (-h.score, h.id))


def rrf_sql(conn: apsw.Connection, runs: Sequence[Sequence[Ranked]],
            k: int = RRF_K) -> list[Ranked]:
    """The same fusion through the SQL the hybrid ranker runs (to check that the two agree)."""
    params: list[Any] = []
    for run in runs:
        params.append(_carray(np.asarray([h.rowid for h in run], dtype=np.int64)))
        params.append(_carray(np.arange(1, len(run) + 1, dtype=np.int64)))
    return [Ranked(r, i, s) for r, i, s in conn.execute(_fuse_sql(len(runs)), params + [k])]
