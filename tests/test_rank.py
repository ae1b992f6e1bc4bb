"""Rankers: BM25 fidelity to reference implementations, RRF fusion = RRF in Python, dense and
hybrid never leave the admitted set, the whole admitted set is ranked, ties break by id.

* ``bm25`` (passage level) is checked against ``oracles.PassageOracle``: bm25s over passages
  cut independently from the documents' dicts, a document scoring as its best passage; the top
  10 must be equal (scores to 1e-9). On the in-repo fixture ``tests/data/peps-sample.jsonl``
  (30 real PEPs with sections, infobox and authors; every title, heading, author and infobox
  value as a query, and questions made of them), and on the HotpotQA sample of ``tests/data``.
* ``bm25-doc`` (the paper's document-level BM25) against ``bm25s`` (``method="lucene"``, k1 0.9,
  b 0.4) fed the same words (title + text). The collection is the 955-passage HotpotQA
  sample of ``tests/data`` and the queries are its 200 questions, written as the OR of the
  question's distinct words: that admits every passage holding any of the words, which is
  exactly the set bm25s scores above zero, so both rank the same set over the same statistics
  and the top 10 must agree. (Implicit AND of all the words would admit almost nothing; the
  fallback path ranks the same words over the whole collection and is checked on the
  questions where it triggers.)

``tests/data/peps-sample.jsonl`` was made from the first 30 PEPs of the shared corpus under
9,000 bytes with an infobox, authors and at least three sections, through ``sources.rst``.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from oracles import PassageOracle, assert_same_top, bm25_doc_sql_run, rrf

import sieve_lite
from sieve_lite import rank as rk
from sieve_lite.build import build_collection
from sieve_lite.sources import iter_documents
from sieve_lite.words import words

SAMPLE = Path(__file__).resolve().parent / "data" / "peps-sample.jsonl"
DATA = Path(__file__).resolve().parent / "data"
HOTPOT = DATA / "qa" / "hotpotqa"
EXAMPLES = DATA / "bql-examples" / "corpus.jsonl"
PEPS_DB = DATA.parent.parent / "collections" / "peps.db"  # the shipped collection (736 PEPs)


def _build(tmp: Path, name: str, docs: list[dict] | Path, embed: bool = False) -> Path:
    src = docs if isinstance(docs, Path) else tmp / f"{name}.jsonl"
    if not isinstance(docs, Path):
        src.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    out = tmp / f"{name}.db"
    build_collection(iter_documents([src], "jsonl"), out, embed=embed, quiet=True)
    return out


@pytest.fixture(scope="session")
def hotpot(tmp_path_factory):
    rows = [json.loads(line) for line in (HOTPOT / "corpus.jsonl").open(encoding="utf-8")]
    docs = [{"id": r["title"], "title": r["title"], "text": r["text"]} for r in rows]
    path = _build(tmp_path_factory.mktemp("hotpot"), "hotpot", docs)
    with sieve_lite.open(path) as coll:
        yield coll, docs


@pytest.fixture(scope="session")
def examples_vec(tmp_path_factory):
    """The BQL examples corpus WITH embeddings (the real model; ~15-30 s)."""
    path = _build(tmp_path_factory.mktemp("exvec"), "exvec", EXAMPLES, embed=True)
    with sieve_lite.open(path) as coll:
        yield coll


@pytest.fixture(scope="session")
def examples(tmp_path_factory):
    path = _build(tmp_path_factory.mktemp("ex"), "ex", EXAMPLES)
    with sieve_lite.open(path) as coll:
        yield coll


def _questions(n: int) -> list[str]:
    qs = [json.loads(line)["question"] for line in (HOTPOT / "questions.jsonl").open()]
    return qs[:n]


@pytest.fixture(scope="session")
def sample(tmp_path_factory):
    docs = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]
    path = _build(tmp_path_factory.mktemp("sample"), "sample", SAMPLE)
    with sieve_lite.open(path) as coll:
        yield coll, docs


def _sample_queries(docs: list[dict]) -> list[list[str]]:
    """Every title, heading, infobox value and author as a query, and 40 'questions' of
    words drawn from several of them (deterministic)."""
    qs: list[list[str]] = []
    for d in docs:
        qs.append(words(d["title"]))
        qs += [words(s["heading"]) for s in d["sections"] if s["heading"] != "(intro)"]
        qs += [words(v) for _, v in d["infobox"]] + [words(a) for a in d["author"]]
    pool = sorted({w for q in qs for w in q})
    rng = random.Random(11)
    qs += [rng.sample(pool, rng.randint(2, 9)) for _ in range(40)]
    return [q for q in qs if q]


# ------------------------------------------------------------------------------ fidelity
def test_passage_bm25_equals_bm25s_passages(sample):
    pytest.importorskip("bm25s")
    coll, docs = sample
    oracle = PassageOracle(docs)
    checked = 0
    for q in _sample_queries(docs):
        terms = rk.scoring_terms([(w, False) for w in q])
        ours = rk.bm25_run(coll, terms, None, 10)
        assert_same_top([(h.id, h.score) for h in ours], oracle, q)
        checked += 1
    assert checked > 300


def test_passage_bm25_search_equals_bm25s(sample):
    """Through search: an OR of the words admits what bm25s scores; the fallback of an AND
    that admits nothing ranks the whole collection the same way."""
    pytest.importorskip("bm25s")
    coll, docs = sample
    oracle = PassageOracle(docs)
    checked = 0
    for q in ["guido OR release", "unicode OR encoding OR source", "Final OR Rejected OR zzzz",
              "warnings zzzz", "guido unicode release zzzz"]:
        res = coll.search(q, k=10, ranker="bm25")
        ws = words(q.replace(" OR ", " "))
        assert res.fallback == ("zzzz" in q and " OR " not in q)
        assert_same_top([(h.id, h.score) for h in res.results if h.score > 0], oracle, ws)
        checked += 1
    assert checked == 5


def test_passage_bm25_hotpot_equals_bm25s(hotpot):
    pytest.importorskip("bm25s")
    coll, docs = hotpot
    oracle = PassageOracle(docs)
    for q in _questions(60):
        ws = list(dict.fromkeys(words(q)))[:64]
        ours = rk.bm25_run(coll, rk.scoring_terms([(w, False) for w in ws]), None, 10)
        assert_same_top([(h.id, h.score) for h in ours], oracle, ws)


def test_passage_scores_by_hand(sample):
    """One document's best passage recomputed from the formula (N, df, avgdl over passages;
    a repeated query word weighs twice; a prefix is one unit)."""
    from oracles import document_passages

    coll, docs = sample
    passages = [p for d in docs for p in document_passages(d)]
    n, avgdl = len(passages), sum(map(len, passages)) / len(passages)
    q = [("unicode", False), ("source", False), ("source", False), ("encod", True)]

    def tf(p: list[str], w: str, prefix: bool) -> int:
        return sum(1 for x in p if (x.startswith(w) if prefix else x == w))

    def score(p: list[str]) -> float:
        total = 0.0
        for w, prefix in q:
            df = sum(1 for x in passages if tf(x, w, prefix))
            f = tf(p, w, prefix)
            idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
            total += idf * f / (f + 0.9 * (1 - 0.4 + 0.4 * len(p) / avgdl))
        return total

    by_id = {d["id"]: document_passages(d) for d in docs}
    hits = rk.bm25_run(coll, rk.scoring_terms(q), None, 5)
    assert hits
    for hit in hits:
        assert hit.score == pytest.approx(max(score(p) for p in by_id[hit.id]), rel=1e-9)


def test_best_passage_names_the_passage(sample):
    coll, docs = sample
    d = docs[0]
    author = d["author"][0]
    res = coll.search(f'"{author}"[author]', k=1, ranker="bm25")
    assert res.results[0].card.snippet_section == "authors"
    assert author.split()[-1] in res.results[0].card.snippet
    key, value = next((k, v) for k, v in d["infobox"] if k == "Status")
    res = coll.search(f"{value}[infobox] {key}", k=50, ranker="bm25")
    assert all(h.card.snippet_section in ("infobox", *h.card.headings) for h in res.results)
    assert any(h.card.snippet_section == "infobox" for h in res.results)


def test_walrus_ranks_pep_572_in_the_top_5_with_bm25():
    """Issue 15: a long document that mentions a word in one section competes by that section.
    PEP 572 (assignment expressions, a long PEP) names "the walrus operator" once, in its
    Abstract; ranked as one bag of words (bm25-doc), that one mention falls out of the top 5.
    (``collections/peps.db`` is in the repository.)"""
    with sieve_lite.open(PEPS_DB) as coll:
        top = [h.id for h in coll.search("walrus", k=5, ranker="bm25").results]
        doc = [h.id for h in coll.search("walrus", k=5, ranker="bm25-doc").results]
    assert "pep-0572" in top, top
    assert "pep-0572" not in doc, doc  # what passage-level scoring changed


def test_bm25_doc_matches_bm25s_top10(hotpot):
    bm25s = pytest.importorskip("bm25s")
    coll, docs = hotpot
    ref = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    ref.index([words(d["title"]) + words(d["text"]) for d in docs], show_progress=False)
    jaccards = []
    for q in _questions(200):
        ws = list(dict.fromkeys(words(q)))[:64]
        res = coll.search(" OR ".join(ws), k=10, ranker="bm25-doc")
        ours = {h.id for h in res.results}
        # the same distinct words: a repeated word would weigh twice in bm25s only
        ids, _ = ref.retrieve([ws], k=10, show_progress=False, n_threads=1)
        theirs = {docs[i]["id"] for i in ids[0]}
        jaccards.append(len(ours & theirs) / len(ours | theirs))
    assert np.mean(jaccards) >= 0.95, np.mean(jaccards)


def test_bm25_doc_scores_equal_reference_formula(hotpot):
    """Scores, not only the order: recompute Lucene BM25 by hand for the top hits."""
    coll, docs = hotpot
    by_id = {d["id"]: words(d["title"]) + words(d["text"]) for d in docs}
    n = len(docs)
    avgdl = sum(len(w) for w in by_id.values()) / n
    q = ["woman", "portrayed", "corliss", "archer", "film", "the", "the"]  # repeats weigh twice
    df = {t: sum(1 for w in by_id.values() if t in w) for t in set(q)}
    terms = rk.scoring_terms([(w, False) for w in q])
    for hit in rk.bm25_doc(coll, terms, None, 5):
        doc = by_id[hit.id]
        want = sum(np.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * doc.count(t)
                   / (doc.count(t) + 0.9 * (1 - 0.4 + 0.4 * len(doc) / avgdl)) for t in q)
        assert hit.score == pytest.approx(want, rel=1e-9)


def test_bm25_doc_fallback_ranks_collection_like_bm25s(hotpot):
    """A question as an implicit AND admits nothing; the fallback ranks all by its words."""
    bm25s = pytest.importorskip("bm25s")
    coll, docs = hotpot
    ref = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    ref.index([words(d["title"]) + words(d["text"]) for d in docs], show_progress=False)
    checked = 0
    for q in _questions(30):
        res = coll.search(" ".join(words(q)[:60]), k=10, ranker="bm25-doc")
        if not res.fallback:
            continue
        checked += 1
        ids, _ = ref.retrieve([words(q)[:60]], k=10, show_progress=False, n_threads=1)
        assert [h.id for h in res.results][:3] == [docs[i]["id"] for i in ids[0]][:3]
        assert res.total == 0 and res.ranked == coll.documents
    assert checked >= 20


# -------------------------------------------------------------------------------- fusion
def _random_runs(coll, rng: random.Random) -> list[list[rk.Ranked]]:
    rows = list(coll.conn.execute("SELECT rowid, id FROM documents"))
    runs = []
    for _ in range(rng.randint(1, 3)):
        picked = rng.sample(rows, rng.randint(0, len(rows)))
        runs.append([rk.Ranked(r, i, 0.0) for r, i in picked])
    return runs


def test_fuse_equals_python_rrf(examples):
    """RRF in SQL (``store.ranking.rrf``) against RRF in plain Python, on random runs."""
    rng = random.Random(7)
    for _ in range(50):
        runs = _random_runs(examples, rng)
        want = rrf(runs)
        cand = np.array(sorted({h.rowid for run in runs for h in run}), dtype=np.int64)
        ranks = []
        for run in runs:
            pos = {h.rowid: i + 1 for i, h in enumerate(run)}
            ranks.append(np.array([pos.get(int(c), 0) for c in cand], dtype=np.int64))
        got = rk.fuse(examples.conn, cand, ranks)
        assert [h.id for h in got] == [h.id for h in want]
        assert [h.rowid for h in got] == [h.rowid for h in want]
        if len(runs) <= 2:  # hybrid's case: a + b, the same float arithmetic, equal
            assert [h.score for h in got] == [h.score for h in want]
        assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-12)
        for k in (1, 3):
            assert rk.fuse(examples.conn, cand, ranks, k) == got[:k]


def test_ranks_in_run_counts_ties_by_id(examples):
    stats = rk.doc_stats(examples)
    rows = np.array([r for (r,) in examples.conn.execute("SELECT rowid FROM documents")])
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 4, len(rows)).astype(np.float64)  # many exact ties
    order, _ = rk.sort_scored(stats, rows, scores)
    want = {int(r): i + 1 for i, r in enumerate(order)}
    got = rk._ranks_in_run(stats, rows, scores, rows)
    assert [want[int(r)] for r in rows] == got.tolist()
    assert rk._ranks_in_run(stats, rows[:3], scores[:3], rows[3:5]).tolist() == [0, 0]


def test_rrf_ties_break_by_id(examples):
    rows = [rk.Ranked(r, i, 0) for r, i in examples.conn.execute(
        "SELECT rowid, id FROM documents ORDER BY id DESC LIMIT 4")]
    runs = [rows[:2], rows[2:]]  # ranks 1, 2 in each run: two pairs of equal fused scores
    fused = rrf(runs)
    assert [h.id for h in fused] == sorted([rows[0].id, rows[2].id]) + \
        sorted([rows[1].id, rows[3].id])
    cand = np.array([h.rowid for h in rows], dtype=np.int64)
    got = rk.fuse(examples.conn, cand, [np.array([1, 2, 0, 0]), np.array([0, 0, 1, 2])])
    assert [h.id for h in got] == [h.id for h in fused]


def test_rrf_sql_edges(examples):
    """Nothing to fuse gives nothing; a rowid that is no document is dropped; ranks must be
    1-based (0 would mean "absent" to ``fuse``, which never passes it on)."""
    assert rk.fuse(examples.conn, np.zeros(0, np.int64), [np.zeros(0, np.int64)] * 2, 5) == []
    assert rk.sql.rrf(examples.conn, [], rk.RRF_K) == []
    (top,) = examples.conn.execute("SELECT max(rowid) FROM documents").fetchone()
    got = rk.sql.rrf(examples.conn, [(np.array([top, top + 1]), np.array([2, 1]))], rk.RRF_K)
    assert [(r, s) for r, _, s in got] == [(top, 1.0 / 62)]
    with pytest.raises(ValueError):
        rk.sql.rrf(examples.conn, [(np.array([1]), np.array([0]))], rk.RRF_K)


# ---------------------------------------------------------------------- whole admitted set
def test_bm25_ranks_whole_admitted_set(examples):
    # bm25-doc: 'generat*' admits 33 documents; some match only in a heading or the infobox,
    # and those still get a rank (score 0, after the scored ones, by id). bm25 scores headings
    # and the infobox, so there the unscored are the documents admitted by the date alone.
    for ranker, query in (("bm25-doc", "generat* OR Rationale[section]"),
                          ("bm25", "generat* OR date[2000..2003]")):
        res = examples.search(query, k=1000, ranker=ranker)
        assert len(res.results) == res.total
        scores = [h.score for h in res.results]
        assert scores == sorted(scores, reverse=True)
        zeros = [h.id for h in res.results if h.score == 0]
        assert zeros == sorted(zeros) and zeros, ranker


def test_not_words_and_dates_do_not_score(examples):
    for ranker in ("bm25", "bm25-doc"):
        plain = examples.search("yield[body]", k=1000, ranker=ranker)
        negated = examples.search("yield[body] NOT zzzz date[1990..2100]", k=1000,
                                  ranker=ranker)
        got = {h.id: h.score for h in negated.results}
        assert got
        for h in plain.results:
            if h.id in got:
                assert got[h.id] == pytest.approx(h.score)


def test_prefix_is_one_scoring_unit(examples):
    terms = rk.scoring_terms([("generat", True), ("generat", True), ("yield", False)])
    assert [(t.label, t.match, t.weight) for t in terms] == \
        [("generat*", '"generat"*', 2), ("yield", '"yield"', 1)]
    # tf of a prefix = every word starting with the stem: 'generator generators generated'
    # in one document scores like a word occurring three times.
    scores = rk.bm25_doc_scores(examples, terms[:1])
    assert (scores > 0).sum() == examples.search("generat*[tiab]", k=1000).total
    assert not rk.bm25_doc_scores(examples, rk.scoring_terms([("zzqx", True)])).any()
    # passage level: every document holding such a word anywhere scores
    run = rk.passage_bm25(examples, terms[:1])
    assert len(run.docs) == examples.search("generat*", k=1000).total
    assert not len(rk.passage_bm25(examples, rk.scoring_terms([("zzqx", True)])).docs)


def test_numpy_bm25_doc_equals_sql_bm25_doc(hotpot):
    coll, _ = hotpot
    rng = np.random.default_rng(3)
    for q in _questions(20):
        ws = [(w, False) for w in words(q)] + [("ame", True)]
        terms = rk.scoring_terms(ws)
        admitted = None if rng.random() < 0.5 else np.sort(rng.choice(
            np.arange(1, coll.documents + 1), size=coll.documents // 2,
            replace=False)).astype(np.int64)
        fast = rk.bm25_doc_run(coll, terms, admitted)
        ref = bm25_doc_sql_run(coll, terms, admitted)
        assert [h.id for h in fast] == [h.id for h in ref]
        assert [h.score for h in fast] == pytest.approx([h.score for h in ref], rel=1e-9)


def test_ties_break_by_id(tmp_path):
    same = {"title": "Twin", "text": "identical words here"}
    path = _build(tmp_path, "twins", [{"id": i, **same} for i in ("b", "c", "a")])
    with sieve_lite.open(path) as coll:
        for ranker in ("bm25", "bm25-doc", "hybrid"):
            res = coll.search("identical", k=3, ranker=ranker)
            assert [h.id for h in res.results] == ["a", "b", "c"]


def test_lexical_collection_notes_need_for_embeddings(examples):
    for ranker in ("dense", "hybrid"):
        res = examples.search("generator", ranker=ranker)
        assert res.ranker == "bm25"
        assert any("needs embeddings" in n for n in res.notes)
        assert [h.id for h in res.results] == \
            [h.id for h in examples.search("generator", ranker="bm25").results]


# -------------------------------------------------------------------------- with vectors
QUERIES = [json.loads(line) for line in (DATA / "bql-examples" / "queries.jsonl").open()]


@pytest.mark.slow
def test_dense_and_hybrid_stay_in_admitted_set(examples_vec, monkeypatch):
    """Every example query: dense and hybrid rank exactly the admitted set, all of it.
    (Ranking only, through search's own steps: building 1000 cards per query is not the
    point here.)"""
    from sieve_lite import search as s

    # dense and hybrid embed the same words: once is enough (the model dominates the runtime)
    monkeypatch.setattr(rk, "embed_query", functools.lru_cache(rk.embed_query))
    coll = examples_vec
    for case in QUERIES:
        if case["expect"] != "ok" or not case["ids"]:
            continue
        node = s.parse(coll, case["q"])
        admitted = s.admitted_rowids(coll, *s.compile_node(coll, node))
        for ranker in ("dense", "hybrid"):
            notes: list[str] = []
            used, ranked = s.rank_set(coll, s.positive_words(node), admitted, ranker, 1000,
                                      notes)
            words_ = s.positive_words(node)
            assert used == (ranker if words_ else "id")  # dates alone: listed by id
            assert sorted(h.id for h in ranked) == sorted(case["ids"]), case["q"]


@pytest.mark.slow
def test_hybrid_is_rrf_of_full_runs(examples_vec):
    coll = examples_vec
    words_ = [("generator", False), ("context", False)]
    terms = rk.scoring_terms(words_)
    qvec = rk.embed_query(coll, rk.query_text(words_))
    for admitted in (None, np.array([r for (r,) in coll.conn.execute(
            "SELECT rowid FROM documents WHERE rowid % 3 = 0")], dtype=np.int64)):
        b = rk.bm25_run(coll, terms, admitted)
        d = rk.dense(coll, qvec, admitted, 1000)
        want = rrf([b, d])
        # k = 1, 2: only the top 2k + 60 of each run are fused (fewer than the 67 documents)
        for k in (1, 2, 5, 1000):
            got = rk.hybrid(coll, terms, qvec, admitted, k)
            assert [h.id for h in got] == [h.id for h in want][:k]
            assert [h.score for h in got] == pytest.approx([h.score for h in want][:k])
        # dense via numpy == dense via sqlite-vec's own distance
        order, sims = rk.dense_order(coll, qvec, admitted)
        order2, sims2 = rk.dense_order_sqlite(coll.conn, qvec, admitted)
        assert np.allclose(sims, sims2, atol=1e-5)
        assert list(order[:5]) == list(order2[:5])


@pytest.mark.slow
def test_dense_fallback_ranks_whole_collection(examples_vec):
    res = examples_vec.search('"stained glass"', k=1000, ranker="dense")
    assert res.fallback and len(res.results) == examples_vec.documents


# ------------------------------------------------------- scoring only the admitted passages
def _bm25_equal_on_subsets(coll, queries: list[list[tuple[str, bool]]], seed: int) -> int:
    """``_bm25_admitted`` (a selection's own passages) against ``passage_bm25`` over every
    passage, restricted afterwards: the same documents and the same scores, bit for bit;
    and ``best_passage`` (one document's passages) names the passage the whole run scores
    best (the first of equal scores). Returns how many selections took the admitted path."""
    rng = random.Random(seed)
    px = rk.passages(coll)
    everyone = np.flatnonzero(rk.doc_stats(coll).exists)
    used = 0
    for q in queries:
        terms = rk.scoring_terms(q)
        run = rk.passage_bm25(coll, terms)
        for size in (1, 2, 5, 20):
            adm = np.sort(np.asarray(rng.sample(list(everyone), min(size, len(everyone)))))
            got = rk._bm25_admitted(coll, terms, adm)
            if got is None:
                continue
            used += 1
            want = rk._restrict(rk.doc_stats(coll), run.docs, run.best, adm)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), q
        for doc in run.docs[:20].tolist():
            lo, hi = np.searchsorted(run.q, (px.first[doc], px.first[doc] + px.count[doc]))
            best = int(run.q[lo + int(np.argmax(run.s[lo:hi]))]) - int(px.first[doc])
            assert rk.best_passage(coll, terms, doc) == px.shape(doc).kind(best), (q, doc)
    return used


def test_bm25_of_admitted_passages_equals_whole_run(sample):
    coll, docs = sample
    queries = [[(w, False) for w in q] for q in _sample_queries(docs)]
    queries += [[(w[:3], True), (w, False)] for q in _sample_queries(docs)[:20] for w in q[:1]]
    assert _bm25_equal_on_subsets(coll, queries, 5) > 100


def test_bm25_of_admitted_passages_after_updates(tmp_path):
    """After in-place updates a document's passages have new, higher numbers: the admitted
    path still sums and picks exactly what the whole run does."""
    from sieve_lite import update as upd
    from sieve_lite.documents import Document

    docs = [json.loads(line) for line in EXAMPLES.open(encoding="utf-8")]
    db = _build(tmp_path, "upd", docs)
    upd.add_documents(db, [Document.from_dict({**d, "title": d["title"] + " again"})
                           for d in docs[:10]])
    upd.remove_documents(db, [docs[12]["id"]])
    pool = sorted({w for d in docs for w in words(d["title"])})
    rng = random.Random(2)
    queries = [[(w, False) for w in rng.sample(pool, rng.randint(1, 4))] for _ in range(60)]
    with sieve_lite.open(db) as coll:
        assert _bm25_equal_on_subsets(coll, queries, 9) > 50
