"""Reference implementations the rankers are tested against (test-only; ``bench/`` uses
``PassageOracle`` too).

* ``PassageOracle``: passage-level BM25 by ``bm25s`` (``method="lucene"``, k1 0.9, b 0.4,
  float64), over passages cut here from the documents' dicts (DOCUMENTS.md shape) by BQL.md
  section 9's definition, independently of ``sieve_lite.store.passages``; a document scores
  as its best passage. Only the word rule (``sieve_lite.words.words``) is shared.
* ``bm25_doc_sql_run``: the document-level BM25 of ``bm25-doc`` computed entirely in SQL.
* ``rrf``: reciprocal rank fusion in plain Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sieve_lite import rank as rk
from sieve_lite.store import ranking as rsql
from sieve_lite.store.layout import SHIFT
from sieve_lite.words import words


# ---------------------------------------------------------------------------- passage BM25
def document_passages(doc: dict) -> list[list[str]]:
    """A document's passages as word lists: each section (title + heading + text; the
    ``(intro)`` label is no heading), the infobox (title + keys and values), the author list
    (title + names); a document with none of these: its title."""
    title = words(doc.get("title", ""))
    sections = doc.get("sections")
    if sections is None:
        sections = [{"heading": "(intro)", "text": doc["text"]}] if "text" in doc else []
    out = []
    for s in sections:
        head = [] if s["heading"] == "(intro)" else words(s["heading"])
        out.append(title + head + words(s["text"]))
    box = doc.get("infobox") or []
    if box:
        out.append(title + [w for k, v in box for w in words(f"{k}: {v}")])
    authors = doc.get("author") or []
    if isinstance(authors, str):
        authors = [authors]
    if authors:
        out.append(title + [w for a in authors for w in words(a)])
    return out or [title]


class PassageOracle:
    """bm25s over every passage of ``docs``; ``top(query_words, k)`` -> [(id, score)]."""

    def __init__(self, docs: Sequence[dict]) -> None:
        import bm25s

        self.owner: list[int] = []
        corpus: list[list[str]] = []
        for i, d in enumerate(docs):
            for p in document_passages(d):
                corpus.append(p)
                self.owner.append(i)
        self.ids = [d["id"] for d in docs]
        self.ref = bm25s.BM25(method="lucene", k1=0.9, b=0.4, dtype="float64")
        self.ref.index(corpus, show_progress=False)
        self.owner_arr = np.asarray(self.owner)

    def doc_scores(self, query: list[str]) -> np.ndarray:
        """Best-passage score of every document (index = position in ``docs``)."""
        out = np.zeros(len(self.ids))
        known = [w for w in query if w in self.ref.vocab_dict]
        if not known:
            return out
        s = self.ref.get_scores(known)
        np.maximum.at(out, self.owner_arr, s)
        return out

    def top(self, query: list[str], k: int = 10) -> list[tuple[str, float]]:
        s = self.doc_scores(query)
        order = sorted((i for i in np.flatnonzero(s > 0)), key=lambda i: (-s[i], self.ids[i]))
        return [(self.ids[i], float(s[i])) for i in order[:k]]


def assert_same_top(ours: Sequence[tuple[str, float]], oracle: PassageOracle,
                    query: list[str], k: int = 10, rel: float = 1e-9) -> None:
    """Our top ``k`` equals the oracle's: the same scores rank by rank, and every document we
    list has the oracle's score (so only exact ties may be ordered differently)."""
    want = oracle.top(query, k)
    full = oracle.doc_scores(query)
    where = {d: i for i, d in enumerate(oracle.ids)}
    assert len(ours) == len(want), (query, ours, want)
    for (doc, score), (_wdoc, wscore) in zip(ours, want, strict=True):
        assert abs(score - wscore) <= rel * max(1.0, abs(wscore)), (query, ours, want)
        assert abs(full[where[doc]] - score) <= rel * max(1.0, abs(score)), (query, doc)


# --------------------------------------------------------------------------- doc-level SQL
def _bm25_doc_ctes(terms: Sequence[rk.ScoringTerm], restricted: bool) -> tuple[str, list[Any]]:
    """CTEs ending in ``sc(d, s)``: the document-level BM25 score of every admitted document
    with s > 0. Parameters are positional; the admitted carray is bound last."""
    qt_sql = " UNION ALL ".join("SELECT ? AS qi, ? AS m, ? AS qn" for _ in terms)
    params: list[Any] = [x for qi, st in enumerate(terms) for x in (qi, st.match, st.weight)]
    sql = (
        f"qt(qi, m, qn) AS MATERIALIZED ({qt_sql}), "
        "tfr(qi, d, tf) AS ("
        f" SELECT qt.qi, fts_body.rowid >> {SHIFT}, sieve_tf(fts_body) FROM qt"
        "  CROSS JOIN fts_body WHERE fts_body MATCH qt.m"
        " UNION ALL"
        f" SELECT qt.qi, fts_title.rowid >> {SHIFT}, sieve_tf(fts_title) FROM qt"
        "  CROSS JOIN fts_title WHERE fts_title MATCH qt.m), "
        "tf(qi, d, tf) AS MATERIALIZED (SELECT qi, d, sum(tf) FROM tfr GROUP BY qi, d), "
        "df(qi, df) AS MATERIALIZED (SELECT qi, count(*) FROM tf GROUP BY qi), "
        "sc(d, s) AS MATERIALIZED ("
        " SELECT tf.d, sum(qt.qn * ln(1.0 + (? - df.df + 0.5) / (df.df + 0.5))"
        "   * tf.tf / (tf.tf + ? * (1.0 - ? + ? * dd.n_words / ?)))"
        " FROM tf JOIN df USING (qi) JOIN qt USING (qi) JOIN documents dd ON dd.rowid = tf.d"
        + (" WHERE tf.d IN (SELECT value FROM carray(?))" if restricted else "")
        + " GROUP BY tf.d)"
    )
    return sql, params


def bm25_doc_sql_run(coll: Any, terms: Sequence[rk.ScoringTerm],
                     admitted: np.ndarray | None) -> list[rk.Ranked]:
    """``bm25-doc`` entirely in SQL (the reference its numpy path is tested against)."""
    if not terms or (admitted is not None and len(admitted) == 0):
        return []
    rsql.ensure_tf_function(coll.conn)
    ctes, params = _bm25_doc_ctes(terms, admitted is not None)
    avgdl = coll.avg_words if coll.avg_words > 0 else 1.0
    params += [coll.documents, rk.K1, rk.B, rk.B, avgdl]
    if admitted is not None:
        params.append(rsql._carray(admitted))
    sql = ("WITH " + ctes + " SELECT sc.d, dd.id, sc.s FROM sc JOIN documents dd"
           " ON dd.rowid = sc.d ORDER BY sc.s DESC, dd.id")
    return [rk.Ranked(r, i, s) for r, i, s in coll.conn.execute(sql, params)]


# -------------------------------------------------------------------------------- fusion
def rrf(runs: Sequence[Sequence[rk.Ranked]], k: int = rk.RRF_K) -> list[rk.Ranked]:
    """Reciprocal rank fusion in pure Python: score = sum over runs of 1 / (k + rank)."""
    scores: dict[int, float] = {}
    ids: dict[int, str] = {}
    for run in runs:
        for rank, hit in enumerate(run, start=1):
            scores[hit.rowid] = scores.get(hit.rowid, 0.0) + 1.0 / (k + rank)
            ids[hit.rowid] = hit.id
    return sorted((rk.Ranked(r, ids[r], s) for r, s in scores.items()),
                  key=lambda h: (-h.score, h.id))
