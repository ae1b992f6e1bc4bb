"""search(): exact totals, the zero-hit fallback and its per-clause counts, strict mode, the
session kept for fetch by rank, the JSON shape, and the ``search`` command (exit codes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import sieve_lite
from sieve_lite.build import build_collection
from sieve_lite.cli import cli
from sieve_lite.errors import QueryError
from sieve_lite.search import clause_text, render_compact
from sieve_lite.sources import iter_documents
from sieve_lite.store.passages import term_dfs

EXAMPLES = Path(__file__).resolve().parent / "data" / "bql-examples"
QUERIES = [json.loads(line) for line in (EXAMPLES / "queries.jsonl").open(encoding="utf-8")]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("search") / "ex.db"
    build_collection(iter_documents([EXAMPLES / "corpus.jsonl"], "jsonl"), out, embed=False,
                     quiet=True)
    return out


@pytest.fixture()
def coll(db):
    with sieve_lite.open(db) as c:
        yield c


@pytest.mark.parametrize("case", [q for q in QUERIES if q["expect"] == "ok"],
                         ids=lambda q: q["q"])
def test_total_is_exact_and_results_are_admitted(coll, case):
    res = coll.search(case["q"], k=1000, ranker="bm25", strict=True)
    assert res.total == len(case["ids"])
    assert sorted(h.id for h in res.results) == sorted(case["ids"])
    assert [h.rank for h in res.results] == list(range(1, len(res.results) + 1))


@pytest.mark.parametrize("case", [q for q in QUERIES if q["expect"] == "error"],
                         ids=lambda q: q["q"])
def test_bad_queries_raise_query_error(coll, case):
    with pytest.raises(QueryError):
        coll.search(case["q"])


def test_fallback_reports_each_clause(coll):
    res = coll.search("generator AND decorator[title] date[1990]", ranker="bm25")
    assert res.total == 0 and res.fallback and res.fallback_reason
    assert res.clause_counts == [("generator", 5), ("decorator[title]", 0), ("date[1990]", 0)]
    assert res.ranked == coll.documents
    # the fallback ranks the whole collection by the positive words, with the same ranker
    same = coll.search("generator OR decorator", k=5, ranker="bm25")
    assert [h.id for h in res.results] == [h.id for h in same.results]
    assert "FALLBACK" in render_compact(res)


def test_fallback_clause_counts_match_each_clause_alone(coll):
    res = coll.search('"stained glass" OR jazz yield NOT generator[title]', ranker="bm25")
    assert res.fallback
    for text, count in res.clause_counts:
        if text.startswith("NOT "):
            alone = coll.search(text[4:], k=1, strict=True).total
            assert count == coll.documents - alone
        else:
            assert count == coll.search(text, k=1, strict=True).total, text


def test_strict_turns_fallback_off(coll):
    res = coll.search('"stained glass"', strict=True)
    assert not res.fallback and res.results == [] and res.total == 0
    assert res.clause_counts == [('"stained glass"', 0)]


def test_no_positive_words_lists_by_id(coll):
    res = coll.search("date[2002]", k=10)
    assert res.ranker == "id"
    assert [h.id for h in res.results] == sorted(h.id for h in res.results)
    empty = coll.search("date[1800]")
    assert not empty.fallback and empty.results == []


def test_session_is_the_last_listing(coll):
    res = coll.search("generator", k=3, ranker="bm25")
    assert coll._session is res
    assert coll.fetch(2).id == res.results[1].id


def test_k_and_ranker_are_checked(coll):
    with pytest.raises(QueryError, match="k must be"):
        coll.search("generator", k=0)
    with pytest.raises(QueryError, match="k must be"):
        coll.search("generator", k=1001)
    with pytest.raises(QueryError, match="unknown ranker"):
        coll.search("generator", ranker="tfidf")


def test_json_shape(coll):
    d = coll.search("generator", k=2, ranker="bm25").to_dict()
    for key in ("query", "total", "ranker", "fallback", "results", "clause_counts", "notes"):
        assert key in d
    for r in d["results"]:
        for key in ("rank", "id", "title", "score", "headings", "matched_fields", "snippet",
                    "snippet_section", "infobox_keys"):
            assert key in r
    json.dumps(d)


def test_clause_text_reads_back_as_bql(coll):
    from sieve_lite.bql import dump, parse

    for q in ['fort[title,body]', '"sao paulo"*', 'NEAR/3(default argument)[body]',
              'a (b OR c)', 'x NOT (y OR z)', 'date[2001..2003] AND O\'Brien']:
        node = parse(q, coll.fields)
        assert dump(parse(clause_text(node), coll.fields)) == dump(node), q


# ------------------------------------------------------------------------------ command line
def _run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_search_exit_codes(db):
    ok = _run("search", str(db), "generator", "--ranker", "bm25")
    assert ok.exit_code == 0 and "pep-0492" in ok.output and "ranked by bm25" in ok.output
    none = _run("search", str(db), '"stained glass"', "--strict")
    assert none.exit_code == 1 and "0 admitted" in none.output
    bad = _run("search", str(db), "x[nosuch]")
    assert bad.exit_code == 2
    fell = _run("search", str(db), '"stained glass"', "--ranker", "bm25")
    assert fell.exit_code == 1 and "fallback" in fell.output  # shown, flagged, still exit 1


def test_cli_search_json_explain_sql(db):
    r = _run("search", str(db), "yield[body] NOT generator[title]", "--json", "-k", "2",
             "--ranker", "bm25", "--explain", "--sql")
    d = json.loads(r.output)
    assert d["total"] == 5 and len(d["results"]) == 2 and d["ranker"] == "bm25"
    assert d["explain"] and d["sql"]["params"]
    text = _run("search", str(db), "yield", "--explain", "--sql", "--compact", "--ranker",
                "bm25").output
    assert text.startswith("query:") and "sql: SELECT" in text and "[1] " in text


def test_cli_k_range(db):
    assert _run("search", str(db), "yield", "-k", "1001").exit_code == 2


def _selection_queries(coll) -> list[str]:
    """Example and golden queries, and generated AND/OR/NOT/date mixes of unscoped words and
    prefixes drawn from the collection's own vocabulary (deterministic)."""
    import random

    here = Path(__file__).resolve().parent
    qs = [q["q"] for q in QUERIES]
    qs += [json.loads(line)["q"] for line in (here / "golden" / "parse.jsonl").open()]
    vocab = sorted(t for t, _df in term_dfs(coll.conn))
    rng = random.Random(5)

    def atom() -> str:
        w = rng.choice(vocab)
        r = rng.random()
        if r < 0.2 and len(w) > 3:
            return w[: rng.randint(2, len(w) - 1)] + "*"
        if r < 0.3:
            return rng.choice(["date[2000..2005]", "date[>=2010]", "date[<1999]", "date[2002]"])
        return w

    for _ in range(300):
        a, b, c, d = atom(), atom(), atom(), atom()
        qs.append(rng.choice([f"{a}", f"{a} {b}", f"{a} OR {b}", f"{a} NOT {b}",
                              f"({a} OR {b}) {c} -{d}", f"{a} OR ({b} {c} NOT {d})",
                              f"{a} -({b} OR {c})", f"{a} ({b} OR {c}) -{d} date[..2005]"]))
    return qs


@pytest.fixture(scope="module")
def fixture_coll(tmp_path_factory):
    """tests/fixture_corpus.jsonl: accents, ligatures, sharp s, separators in words."""
    out = tmp_path_factory.mktemp("fixture") / "fx.db"
    src = Path(__file__).resolve().parent / "fixture_corpus.jsonl"
    build_collection(iter_documents([src], "jsonl"), out, embed=False, quiet=True)
    with sieve_lite.open(out) as c:
        yield c


@pytest.mark.parametrize("which", ["coll", "fixture_coll"])
def test_numpy_selection_equals_sql(which, request):
    """Queries of unscoped words, prefixes and dates are selected in numpy from the passage
    postings; every one admits exactly what its compiled SQL admits."""
    from sieve_lite import search as s

    coll = request.getfixturevalue(which)
    checked = 0
    for q in _selection_queries(coll):
        try:
            node = s.parse(coll, q)
        except QueryError:
            continue
        if not s._numpy_selectable(node) or isinstance(node, s.Not):
            continue
        got = s._numpy_admitted(coll, node)
        want = s.admitted_rowids(coll, *s.compile_node(coll, node))
        assert got.tolist() == want.tolist(), q
        checked += 1
    assert checked > 250
