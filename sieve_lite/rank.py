"""Rankers over the whole admitted set: ``bm25``, ``bm25-doc``, ``dense`` and ``hybrid``.

BQL.md section 9.2: a ranker orders *every* document the selection admitted, never a truncated
window, and can never bring back a document the selection refused. So every ranker here takes
the admitted set (``admitted``: a numpy array of document rowids, or ``None`` for the whole
collection, which is what the zero-hit fallback ranks) and scores all of it.

* **bm25** is passage-level BM25: a document scores as its best passage. Passages
  (``store.passages``): each section read with the document's title and the section's heading,
  the infobox (title, keys, values), the author list (title, names). Statistics are over
  passages (N passages, df = passages holding the term, dl = passage words, avgdl their
  mean), Lucene/Pyserini style: k1 0.9, b 0.4, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``,
  ``tf / (tf + k1 * (1 - b + b * dl / avgdl))``, summed over the query's positive words (a
  repeated word weighs once per repeat). Postings were counted at build time; a query reads one
  row per word (``passage_postings``) and numpy does the rest: no per-row Python. Long
  sectioned documents (PEPs, RFCs) then compete by their most relevant part, and the infobox
  and authors are scored.
* **bm25-doc** is the paper's document-level BM25 over title + body (same constants, dl =
  ``documents.n_words``): term frequencies per title and section-text row from FTS5, summed
  per document. Kept for comparison (and the bm25s fidelity test).
  In both, a prefix word (``castle*``) is one scoring unit, like Lucene's SynonymQuery over
  all its expansions: tf = the words starting with the stem, df = units holding any.
* **dense** is cosine similarity between the embedded positive words and each admitted
  document's stored embedding, one matrix product over vectors read once per open collection
  (sqlite-vec's ``vec_distance_cosine`` above ``MAX_MATRIX_BYTES``; the tests compare both).
* **hybrid** is reciprocal rank fusion (k = 60) of the full bm25 run and the full dense run of
  the admitted set. Only the two top-``2k + 60`` lists can hold the fused top ``k`` (proof at
  ``hybrid``), so only their documents are fused, each with its rank counted over the whole run.

Ties break by the document's string id, ascending, everywhere, so results are deterministic.
A bm25 run contains the documents with a positive score; admitted documents that match no
positive word follow them (by id) when bm25 ranks alone, and get their only RRF share from the
dense run in hybrid.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .options import RANKERS  # noqa: F401 - defined there so front ends need no numpy
from .store import ranking as sql
from .store.passages import PassageIndex, term_postings

K1 = 0.9
B = 0.4
RRF_K = 60
MAX_MATRIX_BYTES = 2 << 30  # above this the vectors stay on disk (sqlite-vec path)


@dataclass(frozen=True)
class ScoringTerm:
    """One BM25 query term: a word, or a prefix standing for every word it starts."""

    label: str  # as the user wrote it: 'castle' or 'cast*'
    match: str  # its FTS5 query: '"castle"' or '"cast"*'
    weight: int  # how many times the query repeats it
    word: str = ""  # the BQL word (the stem of a prefix)
    prefix: bool = False


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
    return [ScoringTerm(w + ("*" if p else ""), f'"{w}"' + ("*" if p else ""), counts[(w, p)],
                        w, p) for w, p in dict.fromkeys(words)]


def query_text(words: Sequence[tuple[str, bool]]) -> str:
    """What the dense ranker embeds: the positive words in query order (prefix stems as is)."""
    return " ".join(w for w, _ in words)


# ---------------------------------------------------------------------- per-collection data
class _Stats:
    """Per-document arrays indexed by rowid, read once per open collection (~30 ms per 100k
    documents): document-level BM25 lengths and each document's position in id order."""

    def __init__(self, conn: Any) -> None:
        rows = sql.document_lengths(conn)
        top = max((r for r, _ in rows), default=0)
        self.n_words = np.zeros(top + 1, dtype=np.float64)
        self.exists = np.zeros(top + 1, dtype=bool)
        if rows:
            r = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
            self.n_words[r] = np.fromiter((n for _, n in rows), dtype=np.float64, count=len(rows))
            self.exists[r] = True
        self.by_id = np.asarray(sql.rowids_by_id(conn), dtype=np.int64)
        self.id_rank = np.full(top + 1, len(rows), dtype=np.int64)
        self.id_rank[self.by_id] = np.arange(len(rows))
        self._conn = conn
        self._dates: tuple[np.ndarray, np.ndarray] | None = None

    def dates(self) -> tuple[np.ndarray, np.ndarray]:
        """(date_lo, date_hi) per rowid, YYYYMMDD; an undated or missing document has an
        empty span (lo > hi), so no range overlaps it. Read on first use."""
        if self._dates is None:
            lo = np.full(len(self.exists), 99999999, dtype=np.int64)
            hi = np.zeros(len(self.exists), dtype=np.int64)
            for r, a, b in sql.document_dates(self._conn):
                if a is not None and b is not None:
                    lo[r], hi[r] = a, b
            self._dates = lo, hi
        return self._dates


_STATS: weakref.WeakKeyDictionary[Any, tuple[int, _Stats]] = weakref.WeakKeyDictionary()
_PASSAGES: weakref.WeakKeyDictionary[Any, tuple[int, PassageIndex]] = \
    weakref.WeakKeyDictionary()


def _per_open(cache: weakref.WeakKeyDictionary, coll: Any, make: Any) -> Any:
    """``make(coll.conn)``, read once per open collection and again after another process
    changed the file (``coll.generation``, bumped by ``Collection.snapshot``)."""
    gen = getattr(coll, "generation", 0)
    hit = cache.get(coll)
    if hit is None or hit[0] != gen:
        hit = cache[coll] = (gen, make(coll.conn))
    return hit[1]


def _stats(coll: Any) -> _Stats:
    return _per_open(_STATS, coll, _Stats)


def passages(coll: Any) -> PassageIndex:
    """The collection's passage arrays, read on first use and kept while it is open."""
    return _per_open(_PASSAGES, coll, PassageIndex)


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


def _ranked(conn: Any, rowids: np.ndarray, scores: np.ndarray) -> list[Ranked]:
    ids = sql.ids_of(conn, rowids)
    return [Ranked(int(r), ids[int(r)], float(s)) for r, s in zip(rowids, scores, strict=True)]


def _admitted_rows(stats: _Stats, admitted: np.ndarray | None) -> np.ndarray:
    if admitted is None:
        return np.flatnonzero(stats.exists).astype(np.int64)
    return np.asarray(admitted, dtype=np.int64)


def _restrict(stats: _Stats, rows: np.ndarray, scores: np.ndarray,
              admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The (rows, scores) pairs whose row is admitted (all when ``admitted`` is None)."""
    if admitted is None:
        return rows, scores
    mask = np.zeros(len(stats.exists), dtype=bool)
    mask[np.asarray(admitted, dtype=np.int64)] = True
    keep = mask[rows]
    return rows[keep], scores[keep]


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


# ------------------------------------------------------------------------ bm25 (passages)
@dataclass
class PassageScores:
    """Passage-level BM25 of one query over the whole collection.

    ``q``/``s``: the passages with a positive score (ascending numbers) and their scores.
    ``docs`` (ascending rowids): the documents with a positive score; ``best``: their score,
    their best passage's.
    """

    q: np.ndarray
    s: np.ndarray
    docs: np.ndarray
    best: np.ndarray
    # each query term's postings, (word, is_prefix) -> (passage numbers, tfs): cards read
    # where a word occurs from them
    postings: dict[tuple[str, bool], tuple[np.ndarray, np.ndarray]] = \
        dataclasses.field(default_factory=dict)

    def span_of(self, px: PassageIndex, doc: int) -> tuple[int, int]:
        """The slice of ``q``/``s`` that holds ``doc``'s scored passages."""
        lo = int(np.searchsorted(self.q, px.first[doc]))
        hi = int(np.searchsorted(self.q, px.first[doc] + px.count[doc]))
        return lo, hi

    def passage_of(self, px: PassageIndex, doc: int) -> int | None:
        """The number of ``doc``'s best passage (the first among equal scores), or None when
        it scores 0. Found when asked (a card needs it): no per-document work in ranking."""
        lo, hi = self.span_of(px, doc)
        if lo == hi:
            return None
        return int(self.q[lo + int(np.argmax(self.s[lo:hi]))])


# The last few results per collection: a search's ranking, and its cards (whose snippets may
# score a subset of the words), read them again without recomputing.
_LAST: weakref.WeakKeyDictionary[Any, dict[tuple, PassageScores]] = weakref.WeakKeyDictionary()
_KEEP = 4


_Postings = tuple[np.ndarray, np.ndarray]
_POSTINGS: weakref.WeakKeyDictionary[Any, dict[tuple[int, str, bool], _Postings]] = \
    weakref.WeakKeyDictionary()
_KEEP_POSTINGS = 16


def postings(coll: Any, word: str, prefix: bool) -> tuple[np.ndarray, np.ndarray]:
    """A word's (or prefix unit's) passage postings, decoded; the last few per collection are
    kept, so a search's selection, ranking and cards decode each word once."""
    kept = _POSTINGS.setdefault(coll, {})
    key = (getattr(coll, "generation", 0), word, prefix)  # an update changes the postings
    got = kept.get(key)
    if got is None:
        got = term_postings(coll.conn, word, prefix, len(passages(coll).doc))
        if len(kept) >= _KEEP_POSTINGS:
            del kept[next(iter(kept))]
        kept[key] = got
    return got


def docs_with(coll: Any, word: str, prefix: bool) -> np.ndarray:
    """The documents (ascending rowids) with a passage holding the word, or a word starting
    with the stem: exactly the documents where the unscoped atom matches, since a document's
    passages hold every word of every text field (title, headings, body, infobox, authors)."""
    ids, _ = postings(coll, word, prefix)
    d = passages(coll).doc[ids]  # non-decreasing after a build: passages in document order
    if len(d) < 2:
        return d
    if (d[1:] < d[:-1]).any():  # an in-place update gave a document new, higher numbers
        return np.unique(d)
    return d[np.concatenate(([True], d[1:] != d[:-1]))]


def passage_bm25(coll: Any, terms: Sequence[ScoringTerm]) -> PassageScores:
    """Passage-level BM25 of ``terms`` (see the module docstring). The last result per
    collection is kept, so the cards of a search reuse its ranking's work."""
    # (the generation: an update in another process changes every score)
    key = (getattr(coll, "generation", 0), *((t.word, t.prefix, t.weight) for t in terms))
    kept = _LAST.setdefault(coll, {})
    if key in kept:
        return kept[key]
    px = passages(coll)
    size = len(px.doc)
    if px.norm is None:
        px.norm = K1 * (1.0 - B + B * px.length / px.avgdl)
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    decoded = {}
    for t in terms:
        ids, tfs = postings(coll, t.word, t.prefix)
        decoded[(t.word, t.prefix)] = (ids, tfs)
        if not len(ids):
            continue
        df = len(ids)
        idf = np.log(1.0 + (px.n - df + 0.5) / (df + 0.5))
        parts.append((ids, (t.weight * idf) * tfs / (tfs + px.norm[ids])))
    total = sum(len(i) for i, _ in parts)
    if not parts:
        q, s = np.zeros(0, np.int64), np.zeros(0)
    elif len(parts) == 1:  # one term: its postings are already the touched passages
        q, s = parts[0]
    elif total * 8 < size:
        # Few postings: merge them by sorting (the sum per passage in query-term order, as
        # the dense path adds them).
        ids = np.concatenate([i for i, _ in parts])
        order = np.argsort(ids, kind="stable")
        ids, sc = ids[order], np.concatenate([v for _, v in parts])[order]
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        q, s = ids[starts], np.add.reduceat(sc, starts)
    else:
        # Many: one dense accumulator over all passages (numbers are unique within a term).
        acc = np.zeros(size, dtype=np.float64)
        for ids, sc in parts:
            acc[ids] += sc
        q = np.flatnonzero(acc)
        s = acc[q]
    res = _best_per_doc(px.doc[q], q, s)
    res.postings = decoded
    if len(kept) >= _KEEP:
        del kept[next(iter(kept))]  # the oldest
    kept[key] = res
    return res


def _best_per_doc(d: np.ndarray, q: np.ndarray, s: np.ndarray) -> PassageScores:
    """Max score per document of passages (d, q, s), ascending q. A build numbers passages in
    document order, so d is non-decreasing too; after an in-place update a changed document's
    passages have new, higher numbers, and the passages are put in document order first."""
    if not len(q):
        return PassageScores(q, s, np.zeros(0, np.int64), np.zeros(0))
    # A document's passages are consecutive numbers, so each is one run of d.
    starts = np.flatnonzero(np.concatenate(([True], d[1:] != d[:-1])))
    docs, best = d[starts], np.maximum.reduceat(s, starts)
    if len(docs) > 1 and (docs[1:] < docs[:-1]).any():  # renumbered by an in-place update
        order = np.argsort(docs, kind="stable")
        docs, best = docs[order], best[order]
    return PassageScores(q, s, docs, best)


def best_passage(coll: Any, terms: Sequence[ScoringTerm], doc: int) -> tuple[str, int] | None:
    """What ``doc``'s best passage under ``terms`` is: ("section", pos), ("infobox", 0),
    ("author", 0) or ("title", 0); None when no passage scores."""
    px = passages(coll)
    q = passage_bm25(coll, terms).passage_of(px, doc)
    if q is None:
        return None
    return px.shape(doc).kind(q - int(px.first[doc]))


def passage_scores(coll: Any, terms: Sequence[ScoringTerm], doc: int
                   ) -> list[tuple[tuple[str, int], float]]:
    """Every scoring passage of ``doc`` under ``terms``, as (kind, score) in passage order:
    how the agent orders a document's sections for a question (the ranker's own scores)."""
    px = passages(coll)
    run = passage_bm25(coll, terms)
    first = int(px.first[doc])
    lo, hi = run.span_of(px, doc)
    shape = px.shape(doc)
    return [(shape.kind(int(run.q[i]) - first), float(run.s[i])) for i in range(lo, hi)]


def term_passages(coll: Any, terms: Sequence[ScoringTerm], word: str, prefix: bool,
                  doc: int) -> list[tuple[tuple[str, int], int]]:
    """Where a query word (or prefix unit) occurs in ``doc``: (passage kind, tf) for each of
    its passages holding it, from the postings the ranking decoded."""
    px = passages(coll)
    got = passage_bm25(coll, terms).postings.get((word, prefix))
    ids, tfs = got if got is not None else postings(coll, word, prefix)
    first = int(px.first[doc])
    lo = int(np.searchsorted(ids, first))
    hi = int(np.searchsorted(ids, first + int(px.count[doc])))
    shape = px.shape(doc)
    return [(shape.kind(int(ids[i]) - first), int(tfs[i])) for i in range(lo, hi)]


def _bm25_pairs(coll: Any, terms: Sequence[ScoringTerm],
                admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, scores) of the admitted documents with a positive passage-level score."""
    run = passage_bm25(coll, terms)
    return _restrict(_stats(coll), run.docs, run.best, admitted)


def bm25_run(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
             limit: int | None = None) -> list[Ranked]:
    """Admitted documents with a positive passage-level BM25 score, best first (ties by id)."""
    rows, scores = _bm25_pairs(coll, terms, admitted)
    rows, scores = _sort(_stats(coll), rows, scores, limit)
    return _ranked(coll.conn, rows, scores)


def bm25(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
         k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set under passage-level BM25."""
    return fill_by_id(coll, bm25_run(coll, terms, admitted, k), admitted, k)


# ------------------------------------------------------------------------- bm25-doc
def bm25_doc_scores(coll: Any, terms: Sequence[ScoringTerm]) -> np.ndarray:
    """Document-level BM25 score of every document, indexed by rowid (0 where no term occurs).

    SQL gathers (document, tf) pairs from one FTS5 MATCH per term per field; numpy does the
    arithmetic. Term statistics (N, df, avgdl) are collection-wide, as in Lucene.
    """
    stats = _stats(coll)
    scores = np.zeros(len(stats.n_words), dtype=np.float64)
    if not terms:
        return scores
    n_docs = coll.documents
    avgdl = coll.avg_words if coll.avg_words > 0 else 1.0
    norm = K1 * (1.0 - B + B * stats.n_words / avgdl)
    for st in terms:
        packed = sql.document_tf(coll.conn, st.match)
        if not len(packed):
            continue
        tf = np.bincount(packed >> sql.TF_BITS, weights=packed & sql.TF_MASK,
                         minlength=len(scores))
        df = np.count_nonzero(tf)
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        scores += st.weight * idf * tf / (tf + norm)
    return scores


def _bm25_doc_pairs(coll: Any, terms: Sequence[ScoringTerm],
                    admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    stats = _stats(coll)
    all_scores = bm25_doc_scores(coll, terms)
    rows = _admitted_rows(stats, admitted)
    scores = all_scores[rows]
    pos = scores > 0
    return rows[pos], scores[pos]


def bm25_doc_run(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
                 limit: int | None = None) -> list[Ranked]:
    """Admitted documents with a positive document-level BM25 score, best first."""
    rows, scores = _bm25_doc_pairs(coll, terms, admitted)
    rows, scores = _sort(_stats(coll), rows, scores, limit)
    return _ranked(coll.conn, rows, scores)


def bm25_doc(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
             k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set under document-level BM25 (the paper's)."""
    return fill_by_id(coll, bm25_doc_run(coll, terms, admitted, k), admitted, k)


# ----------------------------------------------------------------------------------- dense
class _Vectors:
    """A collection's document embeddings as one float32 matrix (rows in rowid order of
    ``doc_vectors``); ``row_of[rowid]`` is a document's row, -1 when it has no vector."""

    def __init__(self, conn: Any) -> None:
        rows = sql.vectors(conn)
        self.rowids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
        dim = len(rows[0][1]) // 4 if rows else 0
        self.matrix = np.frombuffer(b"".join(v for _, v in rows),
                                    dtype=np.float32).reshape(len(rows), dim)
        top = int(self.rowids.max()) if len(rows) else 0
        self.row_of = np.full(top + 1, -1, dtype=np.int64)
        self.row_of[self.rowids] = np.arange(len(rows))


_VECTORS: weakref.WeakKeyDictionary[Any, tuple[int, _Vectors]] = weakref.WeakKeyDictionary()


def _vectors(coll: Any) -> _Vectors:
    """The collection's vector matrix, read on first use and kept while it is open."""
    return _per_open(_VECTORS, coll, _Vectors)


def _use_matrix(coll: Any) -> bool:
    return coll.documents * max(coll.embed_dim, 1) * 4 <= MAX_MATRIX_BYTES


def embed_query(coll: Any, text: str) -> np.ndarray:
    """The query's embedding with the collection's own model (normalised float32); torch-free
    when ``embed.get_query_embedder`` can reproduce the model."""
    from .embed import get_query_embedder

    return get_query_embedder(coll.embed_model).encode([text])[0].astype(np.float32)


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
    # A broad one: one product over the whole matrix (~10 ms per 100k), then pick.
    return vec.rowids[idx], (vec.matrix @ q)[idx]


def _dense_order_sqlite(conn: Any, qvec: np.ndarray,
                        admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The same ordering computed by sqlite-vec (for collections too large to hold in RAM;
    also the tests' cross-check of the matrix path)."""
    rows = sql.dense_sqlite(conn, qvec, admitted)
    return (np.asarray([r for r, _ in rows], dtype=np.int64),
            np.asarray([s for _, s in rows], dtype=np.float32))


def dense(coll: Any, qvec: np.ndarray, admitted: np.ndarray | None, k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set by embedding similarity."""
    rows, sims = dense_order(coll, qvec, admitted, k)
    return fill_by_id(coll, _ranked(coll.conn, rows, sims), admitted, k)


# ---------------------------------------------------------------------------------- hybrid
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


def fuse(stats: _Stats, cand: np.ndarray, ranks: Sequence[np.ndarray],
         k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """RRF of candidates given their 1-based rank in each run (0 = absent): score = sum of
    1 / (60 + rank) over the runs holding it; best first, ties by id."""
    score = np.zeros(len(cand), dtype=np.float64)
    for r in ranks:
        score += np.where(r > 0, 1.0 / (RRF_K + np.maximum(r, 1)), 0.0)
    keep = score > 0
    return _sort(stats, cand[keep], score[keep], k)


def hybrid(coll: Any, terms: Sequence[ScoringTerm], qvec: np.ndarray,
           admitted: np.ndarray | None, k: int) -> list[Ranked]:
    """Top ``k`` of the whole admitted set by RRF (k = 60) of the bm25 run (every admitted
    document with a positive score) and the dense run (every admitted document with a
    vector).

    Exact without fusing all of both runs: a document outside the top ``D = 2k + 60`` of both
    runs scores below ``2 / (61 + D) < 1 / (60 + k)``, while the top ``k`` of a run with at
    least ``k`` documents each score at least ``1 / (60 + k)``; so the fused top ``k`` lies
    among the two top-``D`` lists (and when no run has ``k`` documents, nothing is cut). Each
    candidate is fused with its full ranks in both runs, counted over the whole runs.
    """
    stats = _stats(coll)
    depth = 2 * k + RRF_K
    b_rows, b_sc = _bm25_pairs(coll, terms, admitted)
    if _use_matrix(coll):
        d_rows, d_sc = _dense_scores(coll, qvec, admitted)
    else:
        d_rows, d_sc = _dense_order_sqlite(coll.conn, qvec, admitted)
    cand = np.union1d(_sort(stats, b_rows, b_sc, depth)[0], _sort(stats, d_rows, d_sc, depth)[0])
    rows, scores = fuse(stats, cand, [_ranks_in_run(stats, b_rows, b_sc, cand),
                                      _ranks_in_run(stats, d_rows, d_sc, cand)], k)
    # Admitted documents with neither a bm25 score nor a vector still get a rank: last.
    return fill_by_id(coll, _ranked(coll.conn, rows, scores), admitted, k)
