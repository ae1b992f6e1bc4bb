"""BQL compiler: golden SQL (tests/golden/compile.jsonl) and the exact semantics of the SQL on a
small hand-made collection, in every compiler mode."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.bql import Compiled, compile_clauses, compile_query, parse
from sieve_lite.bql.ast import And, Not, Span, Term
from sieve_lite.documents import Document

GOLDEN = Path(__file__).resolve().parent / "golden"
FULL = ("title", "section", "body", "infobox", "author", "date", "tiab", "all")
COMPILE = [json.loads(line) for line in
           (GOLDEN / "compile.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", COMPILE, ids=[c["q"] for c in COMPILE])
def test_golden_compile(case: dict) -> None:
    fields = tuple(case.get("fields") or FULL)
    c = compile_query(parse(case["q"], fields), fields)
    assert c.sql == case["sql"]
    assert list(c.params) == case["params"]
    assert c.sql.count("?") == len(c.params)


DOCS = [
    {"id": "split", "title": "Alpha", "sections": [
        {"heading": "(intro)", "text": "stained windows"},
        {"heading": "Glass", "text": "the glass works"}]},
    {"id": "phrase", "title": "Stained glass museum", "text": "a museum"},
    {"id": "heading", "title": "Beta", "sections": [
        {"heading": "Castle history", "text": "old walls"}]},
    {"id": "intro", "title": "Gamma", "text": "intro text only"},
    {"id": "infobox", "title": "Delta", "text": "process notes",
     "infobox": [["Status", "Final"], ["Type", "Process"]], "date": "2002"},
    {"id": "author", "title": "Engines", "text": "analytical engine",
     "author": ["Ada Lovelace", "Charles Babbage"], "date": "2002-12"},
    {"id": "nodate", "title": "Flat", "text": "fort on flat ground"},
    {"id": "notitle", "title": "", "text": "river fort"},
    {"id": "fort", "title": "Fort Santiago Manila", "text": "spain built it", "date": "1590-05-02"},
    {"id": "near", "title": "Capital", "text": "manila is the capital near fort santiago",
     "date": "2020"},
    {"id": "prefix", "title": "Castles", "text": "castles and castellan", "date": "2003-01-01"},
]


@pytest.fixture(scope="module")
def coll(tmp_path_factory: pytest.TempPathFactory):
    from sieve_lite.build import build_collection

    out = tmp_path_factory.mktemp("bql-compiler") / "small.db"
    build_collection([Document.from_dict(d) for d in DOCS], out, embed=False)
    c = sieve_lite.open(out)
    yield c
    c.close()


MODES = [("setops", True), ("in", True), ("setops", False), ("in", False)]


def run(coll, query: str, mode: str = "setops", optimize: bool = True) -> set[str]:
    c = compile_query(parse(query, coll.fields), coll.fields, mode=mode, optimize=optimize)
    rows = coll.conn.execute(c.sql, c.params).fetchall()
    docs = [r[0] for r in rows]
    assert len(docs) == len(set(docs)), f"duplicate documents from {c.sql}"
    ids = dict(coll.conn.execute("SELECT rowid, id FROM documents").fetchall())
    return {ids[d] for d in docs}


SEMANTICS = [
    # AND is document-level: the two words may sit in different sections or fields
    ("stained glass", {"split", "phrase"}),
    ("stained[body] glass[body]", {"split"}),
    ("stained[body] glass[section]", {"split"}),
    # a phrase or NEAR holds within one field value
    ('"stained glass"', {"phrase"}),
    ("NEAR(stained glass)", {"phrase"}),
    ("NEAR/4(manila fort)[body]", {"near"}),
    ("NEAR/3(manila fort)[body]", set()),
    ("NEAR/1(manila fort)", {"fort"}),
    ("NEAR/0(manila fort)", set()),
    ('NEAR/4(manila "fort santiago")[body]', {"near"}),
    ('"status final"[infobox]', {"infobox"}),
    ('"final type"[infobox]', set()),
    ('"final type"', set()),
    ("Status: Final[infobox]", {"infobox"}),
    ('"lovelace charles"[author]', set()),
    ("lovelace charles[author]", {"author"}),
    # fields
    ("castle[section]", {"heading"}),
    ("castle[body]", set()),
    ("intro[section]", set()),
    ("intro", {"intro"}),
    ("fort[title]", {"fort"}),
    ("fort[tiab]", {"nodate", "notitle", "fort", "near"}),
    ("fort[title,body]", {"nodate", "notitle", "fort", "near"}),
    # prefixes; no stemming
    ("castle", {"heading"}),
    ("castle[tiab]", set()),
    ("castle*", {"heading", "prefix"}),
    ('"and cast"*', {"prefix"}),
    ('"and cast*"', {"prefix"}),
    ("castles[title]", {"prefix"}),
    # title: one row per document, so AND/NOT on title may be one MATCH
    ("fort[title] santiago[title]", {"fort"}),
    ("fort[title] -spain[title]", {"fort"}),
    ("fort[title] -spain", set()),
    ("fort -spain[title]", {"nodate", "notitle", "fort", "near"}),
    ("(fort santiago)[title] OR river", {"fort", "notitle"}),
    ("(fort[title] -manila[title]) OR river", {"notitle"}),
    ("fort[title] OR river[title]", {"fort"}),
    # NOT
    ("fort NOT spain", {"nodate", "notitle", "near"}),
    ("fort -(spain OR river)", {"nodate", "near"}),
    ("fort (NOT spain)", {"nodate", "notitle", "near"}),
    ("fort OR castle* NOT castellan", {"nodate", "notitle", "fort", "near", "heading"}),
    # dates: a partial date covers its span; undated documents never match a date
    ("date[2002]", {"infobox", "author"}),
    ("date[2002-06]", {"infobox"}),
    ("date[2002-12-31]", {"infobox", "author"}),
    ("date[..2002-11]", {"infobox", "fort"}),
    ("date[2003..]", {"near", "prefix"}),
    ("date[>2002]", {"near", "prefix"}),
    ("date[>=2002-12]", {"infobox", "author", "near", "prefix"}),
    ("date[<2002-12]", {"infobox", "fort"}),
    ("date[<=1590-05-01]", set()),
    ("date[1590-05-02]", {"fort"}),
    ("fort NOT date[1000..2100]", {"nodate", "notitle"}),
    ("fort -date[..2000]", {"nodate", "notitle", "near"}),
    ("(date[2002] OR date[2020]) -lovelace", {"infobox", "near"}),
    ("(2002 OR 2020)[date] fort", {"near"}),
]


@pytest.mark.parametrize("mode,optimize", MODES)
@pytest.mark.parametrize("query,expected", SEMANTICS, ids=[q for q, _ in SEMANTICS])
def test_semantics(coll, query: str, expected: set[str], mode: str, optimize: bool) -> None:
    assert run(coll, query, mode, optimize) == expected


def test_lone_not_clause_counts_its_complement(coll) -> None:
    node = parse("fort -spain -date[..2002]", coll.fields)
    counts = []
    for c in compile_clauses(node, coll.fields):
        counts.append(len(coll.conn.execute(c.sql, c.params).fetchall()))
    total = len(DOCS)
    assert counts == [4, total - 1, total - 3]
    lone = compile_query(Not(Term(("spain",), False, ("all",), Span(1, 5)), Span(1, 1)),
                         coll.fields)
    assert len(coll.conn.execute(lone.sql, lone.params).fetchall()) == total - 1
    only_nots = And((Not(Term(("fort",), False, ("all",), Span(1, 4)), Span(1, 1)),
                     Not(Term(("castle",), True, ("all",), Span(1, 6)), Span(1, 1))))
    c = compile_query(only_nots, coll.fields)
    assert len(coll.conn.execute(c.sql, c.params).fetchall()) == total - 4 - 2


def test_result_is_one_column_named_doc(coll) -> None:
    for query in ("fort", "castle* castellan", "fort OR date[2002]", "fort -spain", "date[2002]"):
        c = compile_query(parse(query, coll.fields), coll.fields)
        cur = coll.conn.cursor()
        cur.execute(c.sql, c.params)
        assert [d[0] for d in cur.getdescription()] == ["doc"]
        cur.close()
        # callers wrap it, e.g. for counts
        coll.conn.execute(f"SELECT count(doc) FROM ({c.sql})", c.params).fetchall()


def test_compiled_is_frozen() -> None:
    c = compile_query(parse("fort", FULL), FULL)
    assert isinstance(c, Compiled) and isinstance(c.params, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.sql = "DROP TABLE documents"  # type: ignore[misc]


MATCH = re.compile(r'^[\w" ()*,{}:]+$')


@pytest.mark.parametrize("query", [
    "x' OR '1'='1", '"; DELETE FROM documents; --', "fort;DROP TABLE documents",
    "Robert'); DROP TABLE documents;--", "title:x", "fort^2", "a\x00b", "NEAR/99999999(a b)",
    '"fort" AND "x" OR NOT', "NOT[title] spain", "x -- y",
])
def test_user_text_never_reaches_sql(coll, query: str) -> None:
    try:
        node = parse(query, coll.fields)
    except sieve_lite.QueryError:
        return
    c = compile_query(node, coll.fields)
    sql = c.sql.lower()
    for word in ("drop", "delete", "'", ";", "--"):
        assert word not in sql
    for p in c.params:
        assert isinstance(p, int) or MATCH.match(p), p
    coll.conn.execute(c.sql, c.params).fetchall()


@pytest.mark.parametrize("query", [
    "fort", "(fort OR castle*)[title] spain", "a OR b c[title] OR d[body]",
    "x[title] (y OR z)[title] -w[title] v[body]", "((a b)[title] -c[title]) OR d",
])
def test_modes_give_same_documents(coll, query: str) -> None:
    results = [run(coll, query, m, o) for m, o in MODES]
    assert all(r == results[0] for r in results)


# fts_doc keeps every field in one column, each non-body word behind its field's tag ("_t",
# "_s", "_i", "_a"): a word or prefix in one field must reach that field's words only.
@pytest.mark.parametrize("query,expected", [
    ("st*[body]", {"split"}),
    ("st*[title]", {"phrase"}),
    ("st*[infobox]", {"infobox"}),
    ("th*[body]", {"split", "near"}),
    ("ad*[author]", {"author"}),
    ("ad*[body] OR ada[title,section,infobox]", set()),
    ("ca*[section]", {"heading"}),
    ("ca* -ca*[title]", {"heading"}),
    ("fi*[infobox] -fi*[body]", {"infobox"}),
    ("in*[body] -in*[title]", {"intro"}),
    ("glass[section] -glass[title]", {"split"}),
])
def test_field_tags_keep_fields_apart(coll, query: str, expected: set[str]) -> None:
    assert run(coll, query, "setops", False) == expected  # the per-value tables alone
    assert run(coll, query) == expected  # through fts_doc


def test_big_query_compiles_fast() -> None:
    import time

    node = parse(" ".join(f"w{i}" for i in range(64)), FULL)
    start = time.perf_counter()
    compile_query(node, FULL)
    assert time.perf_counter() - start < 1.0


def test_shape_memo_gives_the_same_sql_and_params_as_a_cold_compile() -> None:
    """The SQL text is memoised by query shape; a warm compile must equal a cold one."""
    from sieve_lite.bql import compiler

    fields = ("title", "section", "body", "infobox", "author", "date", "tiab", "all")
    golden = Path(__file__).parent / "golden" / "parse.jsonl"
    queries = [json.loads(line)["q"] for line in golden.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    nodes = []
    for q in queries:
        try:
            nodes.append(parse(q, fields))
        except sieve_lite.QueryError:
            continue
    assert len(nodes) > 50
    compiler._compile.cache_clear()
    for node in nodes:  # fill the shape memo; many golden queries share a shape
        compile_query(node, fields)
    warm = []
    for node in nodes:
        compiler._compile.cache_clear()
        warm.append(compile_query(node, fields))
    cold = []
    for node in nodes:
        compiler._compile.cache_clear()
        compiler._SQL_BY_SHAPE.clear()
        cold.append(compile_query(node, fields))
    assert warm == cold
    shapes = {compiler._shape(n) for n in nodes}
    assert len(shapes) < len(nodes)  # the memo really was shared between queries
