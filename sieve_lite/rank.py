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
  numpy produces the runs and those ranks; one SQL statement (``store.ranking.rrf``) fuses
  them: ranks in, RRF scores and string ids out, ties by id.

Ties break by the document's string id, ascending, everywhere, so results are deterministic.
A bm25 run contains the documents with a positive score; admitted documents that match no
positive word follow them (by id) when bm25 ranks alone, and get their only RRF share from the
dense run in hybrid.
"""

from __future__ import annotations

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
class DocStats:
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


_STATS: weakref.WeakKeyDictionary[Any, tuple[int, DocStats]] = weakref.WeakKeyDictionary()
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


def doc_stats(coll: Any) -> DocStats:
    """``coll``'s ``DocStats``, read once per open collection (and again after a change)."""
    return _per_open(_STATS, coll, DocStats)


def passages(coll: Any) -> PassageIndex:
    """The collection's passage arrays, read on first use and kept while it is open."""
    px = _per_open(_PASSAGES, coll, PassageIndex)
    gs = getattr(coll, "global_stats", None)
    if gs is not None and getattr(px, "global_stats", None) is not gs:
        # A shard of a sharded collection: the whole collection's N and avgdl (shards/stats.py)
        px.n, px.avgdl, px.norm = gs.passages, gs.avgdl, None
        px.global_stats = gs  # type: ignore[attr-defined]
    return px


def _df(coll: Any, t: ScoringTerm, local: int) -> int:
    """A term's passage df: its postings' length, or the whole collection's for a shard."""
    gs = getattr(coll, "global_stats", None)
    return local if gs is None else gs.passage_df(t.word, t.prefix)


def sort_scored(stats: DocStats, rowids: np.ndarray, scores: np.ndarray,
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


def admitted_rows(stats: DocStats, admitted: np.ndarray | None) -> np.ndarray:
    """The admitted rowids as int64; every document's when ``admitted`` is None."""
    if admitted is None:
        return np.flatnonzero(stats.exists).astype(np.int64)
    return np.asarray(admitted, dtype=np.int64)


def _restrict(stats: DocStats, rows: np.ndarray, scores: np.ndarray,
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
    stats = doc_stats(coll)
    rest = admitted_rows(stats, admitted)
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

    def span_of(self, px: PassageIndex, doc: int) -> tuple[int, int]:
        """The slice of ``q``/``s`` that holds ``doc``'s scored passages."""
        lo = int(np.searchsorted(self.q, px.first[doc]))
        hi = int(np.searchsorted(self.q, px.first[doc] + px.count[doc]))
        return lo, hi


# The last few rankings per collection (a hybrid search and a fallback rank the same words
# again).
_LAST: weakref.WeakKeyDictionary[Any, dict[tuple, PassageScores]] = weakref.WeakKeyDictionary()
_KEEP = 4


_Postings = tuple[np.ndarray, np.ndarray]
# (generation, word, prefix) -> [passage numbers, tfs, their document runs or None]
_POSTINGS: weakref.WeakKeyDictionary[Any, dict[tuple[int, str, bool], list]] = \
    weakref.WeakKeyDictionary()
_KEEP_POSTINGS = 16


def _decoded(coll: Any, word: str, prefix: bool) -> list:
    kept = _POSTINGS.setdefault(coll, {})
    key = (getattr(coll, "generation", 0), word, prefix)  # an update changes the postings
    got = kept.get(key)
    if got is None:
        got = [*term_postings(coll.conn, word, prefix, len(passages(coll).doc)), None]
        if len(kept) >= _KEEP_POSTINGS:
            del kept[next(iter(kept))]
        kept[key] = got
    return got


def postings(coll: Any, word: str, prefix: bool) -> _Postings:
    """A word's (or prefix unit's) passage postings, decoded; the last few per collection are
    kept, so a search's selection, ranking and cards decode each word once."""
    got = _decoded(coll, word, prefix)
    return got[0], got[1]


def _doc_runs(px: PassageIndex, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, docs) of ascending passage numbers ``q``: where each document's run of
    passages begins, and its document (a document's passages are consecutive numbers)."""
    d = px.doc[q]
    if not len(d):
        return np.zeros(0, np.int64), d
    starts = np.flatnonzero(np.concatenate(([True], d[1:] != d[:-1])))
    return starts, d[starts]


def _runs(coll: Any, word: str, prefix: bool) -> tuple[np.ndarray, np.ndarray]:
    """``_doc_runs`` of a term's postings, kept with them: the selection and the ranking of
    a one-word query share them."""
    got = _decoded(coll, word, prefix)
    if got[2] is None:
        got[2] = _doc_runs(passages(coll), got[0])
    return got[2]


def docs_with(coll: Any, word: str, prefix: bool) -> np.ndarray:
    """The documents (ascending rowids) with a passage holding the word, or a word starting
    with the stem: exactly the documents where the unscoped atom matches, since a document's
    passages hold every word of every text field (title, headings, body, infobox, authors)."""
    d = _runs(coll, word, prefix)[1]  # ascending after a build: passages in document order
    if len(d) > 1 and (d[1:] < d[:-1]).any():  # an in-place update gave a document new,
        return np.unique(d)  # higher numbers
    return d


def _scored_passages(coll: Any) -> PassageIndex:
    px = passages(coll)
    if px.norm is None:
        px.norm = K1 * (1.0 - B + B * px.length / px.avgdl)
    return px


def _term_parts(coll: Any, px: PassageIndex, terms: Sequence[ScoringTerm]
                ) -> tuple[list[tuple[ScoringTerm, int, np.ndarray, np.ndarray]], int]:
    """Each term with postings: (term, df, passage numbers, tfs); and their total length."""
    parts = []
    for t in terms:
        ids, tfs = postings(coll, t.word, t.prefix)
        if len(ids):
            parts.append((t, _df(coll, t, len(ids)), ids, tfs))
    return parts, sum(len(p[2]) for p in parts)


def _term_scores(px: PassageIndex, t: ScoringTerm, df: int, ids: np.ndarray,
                 tfs: np.ndarray) -> np.ndarray:
    """One term's BM25 share in the passages ``ids`` (tfs: its counts there; df: its
    document frequency over all passages)."""
    idf = np.log(1.0 + (px.n - df + 0.5) / (df + 0.5))
    return (t.weight * idf) * tfs / (tfs + px.norm[ids])


def _merge(parts: list[tuple[np.ndarray, np.ndarray]], sparse: bool,
           size: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The score per passage, summed over the terms' (passage numbers, scores) in query-term
    order: (passages, scores), ascending passages. ``sparse``: by sorting and ``reduceat``;
    else as a dense accumulator adds, over all ``size`` passages, or over the touched ones
    when ``size`` is None. Restricted to some documents' passages, the same ``sparse`` gives
    the same sums, bit for bit, as over all passages."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0)
    if len(parts) == 1:  # one term: its postings are already the touched passages
        return parts[0]
    if sparse:
        # Few postings: merge them by sorting (the sum per passage in query-term order, as
        # the dense path adds them).
        ids = np.concatenate([i for i, _ in parts])
        order = np.argsort(ids, kind="stable")
        ids, sc = ids[order], np.concatenate([v for _, v in parts])[order]
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        return ids[starts], np.add.reduceat(sc, starts)
    if size is None:
        q = np.unique(np.concatenate([i for i, _ in parts]))
        acc = np.zeros(len(q), dtype=np.float64)
        for ids, sc in parts:
            acc[np.searchsorted(q, ids)] += sc
        return q, acc
    # Many: one dense accumulator over all passages (numbers are unique within a term).
    acc = np.zeros(size, dtype=np.float64)
    for ids, sc in parts:
        acc[ids] += sc
    q = np.flatnonzero(acc)
    return q, acc[q]


def _bm25_admitted(coll: Any, terms: Sequence[ScoringTerm],
                   admitted: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(rowids, scores) of the admitted documents with a positive passage-level score,
    computed on their passages alone when they hold few of the terms' postings (a selective
    query: binary searches per document instead of arithmetic over whole postings lists);
    None when scoring every passage is cheaper. Same sums, in the same order, as
    ``passage_bm25``, so the same scores bit for bit."""
    px = _scored_passages(coll)
    parts, total = _term_parts(coll, px, terms)
    adm = np.asarray(admitted, dtype=np.int64)
    if len(adm) * 8 >= total:  # a broad selection: as many documents as postings
        return None
    first = px.first[adm]
    end = first + px.count[adm]
    local = []
    for t, df, ids, tfs in parts:
        sel, _ = _gather(ids, first, end)
        if len(sel):
            local.append((ids[sel], _term_scores(px, t, df, ids[sel], tfs[sel])))
    sparse = total * 8 < len(px.doc)
    q, s = _merge(local, sparse, None)
    if not len(q):
        return np.zeros(0, np.int64), np.zeros(0)
    if len(q) > 1 and (q[1:] < q[:-1]).any():  # one term's passages, gathered in rowid
        order = np.argsort(q, kind="stable")  # order: renumbered by an in-place update
        q, s = q[order], s[order]
    run = _best_per_doc(q, s, _doc_runs(px, q))
    return run.docs, run.best


def passage_bm25(coll: Any, terms: Sequence[ScoringTerm]) -> PassageScores:
    """Passage-level BM25 of ``terms`` (see the module docstring). The last result per
    collection is kept, so the cards of a search reuse its ranking's work."""
    # (the generation: an update in another process changes every score)
    key = (getattr(coll, "generation", 0), *((t.word, t.prefix, t.weight) for t in terms))
    kept = _LAST.setdefault(coll, {})
    if key in kept:
        return kept[key]
    px = _scored_passages(coll)
    parts, total = _term_parts(coll, px, terms)
    q, s = _merge([(ids, _term_scores(px, t, df, ids, tfs)) for t, df, ids, tfs in parts],
                  total * 8 < len(px.doc), len(px.doc))
    # one term: its postings are the passages, and their runs are kept with them
    runs = _runs(coll, parts[0][0].word, parts[0][0].prefix) if len(parts) == 1 else \
        _doc_runs(px, q)
    res = _best_per_doc(q, s, runs)
    if len(kept) >= _KEEP:
        del kept[next(iter(kept))]  # the oldest
    kept[key] = res
    return res


def _best_per_doc(q: np.ndarray, s: np.ndarray,
                  runs: tuple[np.ndarray, np.ndarray]) -> PassageScores:
    """Max score per document of passages (q, s), ascending q, whose document runs are
    ``runs`` (``_doc_runs``). A build numbers passages in document order, so the runs' documents
    ascend too; after an in-place update a changed document's passages have new, higher
    numbers, and the documents are put in order."""
    if not len(q):
        return PassageScores(q, s, np.zeros(0, np.int64), np.zeros(0))
    starts, docs = runs
    best = _segment_max(s, starts)
    if len(docs) > 1 and (docs[1:] < docs[:-1]).any():  # renumbered by an in-place update
        order = np.argsort(docs, kind="stable")
        docs, best = docs[order], best[order]
    return PassageScores(q, s, docs, best)


def _segment_max(v: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``np.maximum.reduceat(v, starts)`` (segments non-empty, ``starts[0] == 0``), without
    its cost per segment (~45 ns; a broad word has 100k documents): segments are visited
    longest first, and step j takes the maximum with every segment's j-th value in one
    vectorised operation over the segments longer than j. Max is exact: same result."""
    lens = np.diff(starts, append=len(v))
    top = int(lens.max()) if len(lens) else 0
    if top <= 1:
        return v[starts]
    if top > 512 or len(starts) < 64:
        return np.maximum.reduceat(v, starts)
    order = np.argsort(lens.astype(np.int16), kind="stable")  # radix sort on 16 bits
    sorted_lens = lens[order]
    at = starts[order]
    best = v[at]
    for j in range(1, top):
        lo = int(np.searchsorted(sorted_lens, j, side="right"))  # segments longer than j
        np.maximum(best[lo:], v[at[lo:] + j], out=best[lo:])
    out = np.empty_like(best)
    out[order] = best
    return out


def _gather(ids: np.ndarray, first: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where postings ``ids`` (ascending) fall in the passage ranges [first, end) of some
    documents: (indices into ids, the range each belongs to), ranges in the given order."""
    lo = np.searchsorted(ids, first)
    n = np.searchsorted(ids, end) - lo
    m = int(n.sum())
    if not m:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.arange(m) + np.repeat(lo - (np.cumsum(n) - n), n), np.repeat(np.arange(len(n)), n)


def best_passages(coll: Any, terms: Sequence[ScoringTerm],
                  docs: Sequence[int]) -> list[tuple[str, int] | None]:
    """What each document's best passage under ``terms`` is: ("section", pos), ("infobox", 0),
    ("author", 0) or ("title", 0); None when no passage scores.

    Scored for these documents' passages alone, from the terms' decoded postings (binary
    searches): the same arithmetic, in the same term order, as ``passage_bm25`` does for
    every passage, so the same passage wins (the first among equal scores), without scoring
    the whole collection when the cards' words differ from the ranking's."""
    px = _scored_passages(coll)
    d = np.asarray(docs, dtype=np.int64)
    first, count = px.first[d], px.count[d]
    offset = np.cumsum(count) - count
    acc = np.zeros(int(count.sum()), dtype=np.float64)
    for t in terms:
        ids, tfs = postings(coll, t.word, t.prefix)
        if not len(ids):
            continue
        at, which = _gather(ids, first, first + count)
        if not len(at):
            continue
        q = ids[at]
        acc[offset[which] + (q - first[which])] += _term_scores(px, t, _df(coll, t, len(ids)),
                                                               q, tfs[at])
    out: list[tuple[str, int] | None] = []
    for i, doc in enumerate(d.tolist()):
        seg = acc[int(offset[i]):int(offset[i] + count[i])]
        out.append(px.shape(doc).kind(int(np.argmax(seg))) if seg.any() else None)
    return out


def best_passage(coll: Any, terms: Sequence[ScoringTerm], doc: int) -> tuple[str, int] | None:
    """``best_passages`` of one document."""
    return best_passages(coll, terms, [doc])[0]


def term_passages_of(coll: Any, word: str, prefix: bool,
                     docs: Sequence[int]) -> list[list[tuple[tuple[str, int], int]]]:
    """Where a query word (or prefix unit) occurs in each document: (passage kind, tf) for
    each of its passages holding it, from the decoded postings (kept from the ranking)."""
    px = passages(coll)
    ids, tfs = postings(coll, word, prefix)
    d = np.asarray(docs, dtype=np.int64)
    first = px.first[d]
    at, which = _gather(ids, first, first + px.count[d])
    out: list[list[tuple[tuple[str, int], int]]] = [[] for _ in range(len(d))]
    shapes: dict[int, Any] = {}
    firsts = first.tolist()
    for i, q, tf in zip(which.tolist(), ids[at].tolist(), tfs[at].tolist(), strict=True):
        shape = shapes.get(i)
        if shape is None:
            shape = shapes[i] = px.shape(int(d[i]))
        out[i].append((shape.kind(q - firsts[i]), int(tf)))
    return out


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


def term_passages(coll: Any, word: str, prefix: bool,
                  doc: int) -> list[tuple[tuple[str, int], int]]:
    """``term_passages_of`` one document."""
    return term_passages_of(coll, word, prefix, [doc])[0]


def bm25_pairs(coll: Any, terms: Sequence[ScoringTerm],
               admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, scores) of the admitted documents with a positive passage-level score."""
    if admitted is not None:
        got = _bm25_admitted(coll, terms, admitted)
        if got is not None:
            return got
    run = passage_bm25(coll, terms)
    return _restrict(doc_stats(coll), run.docs, run.best, admitted)


def bm25_run(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
             limit: int | None = None) -> list[Ranked]:
    """Admitted documents with a positive passage-level BM25 score, best first (ties by id)."""
    rows, scores = bm25_pairs(coll, terms, admitted)
    rows, scores = sort_scored(doc_stats(coll), rows, scores, limit)
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
    stats = doc_stats(coll)
    scores = np.zeros(len(stats.n_words), dtype=np.float64)
    if not terms:
        return scores
    gs = getattr(coll, "global_stats", None)  # a shard: the whole collection's statistics
    n_docs = coll.documents if gs is None else gs.documents
    avg_words = coll.avg_words if gs is None else gs.avg_words
    avgdl = avg_words if avg_words > 0 else 1.0
    norm = K1 * (1.0 - B + B * stats.n_words / avgdl)
    for st in terms:
        packed = sql.document_tf(coll.conn, st.match)
        if not len(packed):
            continue
        tf = np.bincount(packed >> sql.TF_BITS, weights=packed & sql.TF_MASK,
                         minlength=len(scores))
        df = np.count_nonzero(tf) if gs is None else gs.document_df(st.word, st.prefix)
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        scores += st.weight * idf * tf / (tf + norm)
    return scores


def bm25_doc_pairs(coll: Any, terms: Sequence[ScoringTerm],
                   admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, scores) of the admitted documents with a positive document-level score."""
    stats = doc_stats(coll)
    all_scores = bm25_doc_scores(coll, terms)
    rows = admitted_rows(stats, admitted)
    scores = all_scores[rows]
    pos = scores > 0
    return rows[pos], scores[pos]


def bm25_doc_run(coll: Any, terms: Sequence[ScoringTerm], admitted: np.ndarray | None,
                 limit: int | None = None) -> list[Ranked]:
    """Admitted documents with a positive document-level BM25 score, best first."""
    rows, scores = bm25_doc_pairs(coll, terms, admitted)
    rows, scores = sort_scored(doc_stats(coll), rows, scores, limit)
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


def use_matrix(coll: Any) -> bool:
    """Whether the vectors fit the in-memory matrix (else sqlite-vec ranks on disk)."""
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
    if not use_matrix(coll):
        rows, sims = dense_order_sqlite(coll.conn, qvec, admitted)
        return (rows, sims) if k is None else (rows[:k], sims[:k])
    rows, sims = dense_scores(coll, qvec, admitted)
    return sort_scored(doc_stats(coll), rows, sims, k)


_SIM_CHUNK = 8192  # rows per step of ``similarities`` (a 12 MB buffer at 384 dimensions)


def similarities(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row's dot product with ``q`` (float32), computed the same way for every row: the
    float32 products, then numpy's pairwise sum along the row. BLAS's ``sgemv`` changes its
    summation order with a row's position and the matrix's shape, so the same document got
    another last bit in another matrix (a narrow selection, or a shard of the collection:
    1 ulp, 1.5e-8, is more than the 1e-9 the sharded results must match to). ~1.6x the
    time of ``matrix @ q``."""
    out = np.empty(len(matrix), dtype=np.float32)
    buf = np.empty((min(_SIM_CHUNK, len(matrix)), matrix.shape[1]), dtype=np.float32)
    for lo in range(0, len(matrix), _SIM_CHUNK):
        hi = min(lo + _SIM_CHUNK, len(matrix))
        part = buf[:hi - lo]
        np.multiply(matrix[lo:hi], q, out=part)
        part.sum(axis=1, out=out[lo:hi])
    return out


def dense_scores(coll: Any, qvec: np.ndarray,
                 admitted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, cosine similarity) of the admitted documents with a vector, unordered."""
    vec = _vectors(coll)
    q = qvec.astype(np.float32)
    if not len(vec.rowids):
        return vec.rowids, np.zeros(0, np.float32)
    if admitted is None:
        return vec.rowids, similarities(vec.matrix, q)
    adm = admitted[admitted < len(vec.row_of)]
    idx = vec.row_of[adm]
    idx = idx[idx >= 0]
    if len(idx) * 8 < len(vec.rowids):
        # A small selection: copying its rows and multiplying them is cheaper than the product
        # over the whole matrix (0.3 vs 10 ms for 1k of 100k documents).
        return vec.rowids[idx], similarities(vec.matrix[idx], q)
    # A broad one: one product over the whole matrix (~15 ms per 100k), then pick.
    return vec.rowids[idx], similarities(vec.matrix, q)[idx]


def dense_order_sqlite(conn: Any, qvec: np.ndarray,
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
def _ranks_in_run(stats: DocStats, rows: np.ndarray, scores: np.ndarray,
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


def fuse(conn: Any, cand: np.ndarray, ranks: Sequence[np.ndarray],
         k: int | None = None) -> list[Ranked]:
    """RRF of candidates given their 1-based rank in each run (0 = absent from it), fused in
    SQL (``store.ranking.rrf``): score = sum of 1 / (60 + rank) over the runs holding it;
    best first, ties by id; the top ``k`` (all when None)."""
    runs = []
    for r in ranks:
        r = np.asarray(r, dtype=np.int64)
        present = r > 0
        runs.append((cand[present], r[present]))
    return [Ranked(int(r), i, float(s)) for r, i, s in sql.rrf(conn, runs, RRF_K, k)]


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
    stats = doc_stats(coll)
    depth = 2 * k + RRF_K
    b_rows, b_sc = bm25_pairs(coll, terms, admitted)
    if use_matrix(coll):
        d_rows, d_sc = dense_scores(coll, qvec, admitted)
    else:
        d_rows, d_sc = dense_order_sqlite(coll.conn, qvec, admitted)
    cand = np.union1d(sort_scored(stats, b_rows, b_sc, depth)[0],
                      sort_scored(stats, d_rows, d_sc, depth)[0])
    # numpy ranks the runs; one SQL statement fuses them (the design's RRF in SQL) and
    # returns the string ids with the scores.
    fused = fuse(coll.conn, cand, [_ranks_in_run(stats, b_rows, b_sc, cand),
                                   _ranks_in_run(stats, d_rows, d_sc, cand)], k)
    # Admitted documents with neither a bm25 score nor a vector still get a rank: last.
    return fill_by_id(coll, fused, admitted, k)
