"""BQL tokenizer and parser: golden ASTs and error messages (tests/golden/), spans, limits and
hostile input. Regenerate the golden files with ``python tests/regen_golden.py``."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from sieve_lite.bql import (
    And,
    DateRange,
    Near,
    Not,
    Or,
    Span,
    Term,
    dump,
    explain,
    parse,
    positive_words,
    top_level_and_clauses,
)
from sieve_lite.bql.tokens import tokenize
from sieve_lite.errors import QueryError

GOLDEN = Path(__file__).resolve().parent / "golden"
FULL = ("title", "section", "body", "infobox", "author", "date", "tiab", "all")
SMALL = ("title", "body", "tiab", "all")


def _load(name: str) -> list[dict]:
    return [json.loads(line) for line in (GOLDEN / name).read_text(encoding="utf-8").splitlines()
            if line.strip()]


PARSE = _load("parse.jsonl")
ERRORS = _load("errors.jsonl")


def _fields(case: dict) -> tuple[str, ...]:
    return tuple(case.get("fields") or FULL)


def _id(case: dict) -> str:
    q = case["q"]
    return q if len(q) <= 40 else f"{q[:37]}...({len(q)})"


# -- golden files ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", PARSE, ids=[_id(c) for c in PARSE])
def test_golden_parse(case: dict) -> None:
    node = parse(case["q"], _fields(case))
    assert dump(node) == case["ast"]
    assert explain(node, _fields(case)) == case["explain"]


@pytest.mark.parametrize("case", ERRORS, ids=[_id(c) for c in ERRORS])
def test_golden_error(case: dict) -> None:
    with pytest.raises(QueryError) as info:
        parse(case["q"], _fields(case))
    err = info.value
    assert str(err) == case["message"]
    assert err.column == case["column"]
    assert f"column {err.column}" in str(err)
    assert err.query == case["q"]


def test_golden_files_are_big_enough() -> None:
    assert len(PARSE) >= 80 and len(ERRORS) >= 80


# -- the AST ---------------------------------------------------------------------------------
def test_ast_shapes_and_spans() -> None:
    node = parse('fort -"new spain"[title] NEAR/3(a "b c")[body] date[2018..2023]', FULL)
    assert isinstance(node, And)
    fort, neg, near, date = node.children
    assert fort == Term(("fort",), False, ("all",), Span(1, 4))
    assert isinstance(neg, Not) and neg.span == Span(6, 1)
    assert neg.child == Term(("new", "spain"), False, ("title",), Span(7, 11), quoted=True)
    assert isinstance(near, Near) and near.distance == 3 and near.fields == ("body",)
    assert near.span == Span(26, 15)
    assert [t.words for t in near.items] == [("a",), ("b", "c")]
    assert all(t.fields == ("body",) for t in near.items)
    assert date == DateRange(20180101, 20231231, Span(48, 16), "2018..2023")


def test_ast_is_frozen_and_hashable() -> None:
    a = parse("(fort OR castle) -spain date[2002]", FULL)
    b = parse("(fort OR castle) -spain date[2002]", FULL)
    assert a == b and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.children = ()  # type: ignore[misc]


def test_flattening() -> None:
    node = parse("a (b (c OR (d OR e))) ((f))", FULL)
    assert isinstance(node, And) and len(node.children) == 4
    assert isinstance(node.children[2], Or) and len(node.children[2].children) == 3
    assert not any(isinstance(c, And) for c in node.children)


def test_positive_words_and_clauses() -> None:
    node = parse('fort sant* -spain "new world" NEAR(a bc*) date[2002]', FULL)
    assert positive_words(node) == [("fort", False), ("sant", True), ("new", False),
                                    ("world", False), ("a", False), ("bc", True)]
    assert len(top_level_and_clauses(node)) == 6


def test_fields_follow_the_collection() -> None:
    assert parse("fort[tiab]", SMALL).fields == ("tiab",)
    with pytest.raises(QueryError, match="this collection has: title, body, tiab, all$"):
        parse("fort[section]", SMALL)
    with pytest.raises(QueryError, match=r"field 'au' \(author\) at column 6"):
        parse("fort[au]", SMALL)


def test_error_carries_query_column_and_length() -> None:
    with pytest.raises(QueryError) as info:
        parse("fort[auther]", FULL)
    err = info.value
    assert (err.column, err.length, err.query) == (6, 6, "fort[auther]")
    assert err.highlight().splitlines()[1] == "     ^^^^^^"


def test_tokens_keep_columns() -> None:
    toks = tokenize('a  "b cd"* (NEAR/2(x y))[ti] -z')
    assert [(t.kind, t.column) for t in toks] == [
        ("WORD", 1), ("PHRASE", 4), ("LPAREN", 12), ("NEAR", 13), ("WORD", 20), ("WORD", 22),
        ("RPAREN", 23), ("RPAREN", 24), ("SCOPE", 25), ("NEG", 30), ("WORD", 31)]


# -- limits ----------------------------------------------------------------------------------
def test_limits_at_the_edge() -> None:
    parse("x" * 1000, FULL)
    parse(" ".join(["w"] * 64), FULL)
    parse("(" * 20 + "x" + ")" * 20, FULL)
    parse("NEAR(a b) " + " ".join(["w"] * 62), FULL)  # NEAR items count, the NEAR does not
    parse("date[2002] " + " ".join(["w"] * 63), FULL)  # a date counts once
    for query, limit in [("x" * 1001, "1,000 characters"),
                         (" ".join(["w"] * 65), "64 atoms"),
                         ("NEAR(a b) " + " ".join(["w"] * 63), "64 atoms"),
                         ("(" * 21 + "x" + ")" * 21, "20 levels")]:
        with pytest.raises(QueryError, match=limit):
            parse(query, FULL)


def test_huge_input_is_refused_fast() -> None:
    for query in ("x" * 100_000, "(" * 100_000, '"' * 100_000, "NOT " * 25_000):
        start = time.perf_counter()
        with pytest.raises(QueryError, match="1,000 characters"):
            parse(query, FULL)
        assert time.perf_counter() - start < 0.05


# -- hostile input ---------------------------------------------------------------------------
HOSTILE = [
    "\x00", "a\x00b", "\ud800", "a\udfffb", "^", "fort^2", "title:x", "NEAR(", "*", "**", "\\",
    "'", "`", "fort;DROP TABLE documents", "x' OR '1'='1", '"; DELETE FROM documents; --',
    "(" * 200 + "x" + ")" * 200, ")" * 50, "]" * 5, "[" * 5, "-" * 999, "NOT " * 240 + "x",
    "x " + "NOT " * 240 + "y", "\u202e", "\ufeffx", "x\u2028y", "\t\n\r", "NEAR/-1(a b)",
    "NEAR/1.5(a b)", "NEAR/99999999999999999999(a b)", "date[" + "9" * 40 + "]",
    "date[99999-01-01]", "date[2020-02-30]", "date[>>2020]", "date[<=]", "date[...2020]",
    "x[" + "title," * 100 + "title]", "𝔣𝔬𝔯𝔱", "ﬁ*", "ß*", "Ⅻ", "①②", "٣٤", "x\u0301*",
]


@pytest.mark.parametrize("query", HOSTILE, ids=[repr(q)[:30] for q in HOSTILE])
def test_hostile_input_gives_query_error_or_ast(query: str) -> None:
    try:
        node = parse(query, FULL)
    except QueryError as err:
        text = str(err)
        text.encode("utf-8")  # no lone surrogate copied into the message
        assert "\n" not in text and len(text) < 600
        assert 1 <= err.column <= len(query) + 1
        assert f"column {err.column}" in text
    else:
        dump(node)
        explain(node, FULL)


def test_random_garbage_never_crashes() -> None:
    rng = random.Random(20240601)
    alphabet = list('ab"()[]*-,:.<>=/ ') + ["AND ", "OR ", "NOT ", "NEAR(", "NEAR/3(", "date[",
                                             "[title]", "2002", "..", "\x00", "é"]
    for _ in range(3000):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        try:
            parse(query, FULL)
        except QueryError as err:
            assert f"column {err.column}" in str(err), (query, str(err))
