"""Random strings through parse -> compile -> execute: only ``QueryError`` may escape.

Never an SQL error (``apsw.Error``), never any other exception; a refusal is one line, names a
column inside the query, and is printable as UTF-8 (no lone surrogate leaks into it). Whatever
parses is also checked against the brute force, so the fuzzer doubles as a compiler test on odd
ASTs. The collection file is unchanged at the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

try:
    from bruteforce import BruteForce, Engine, build_collection_from_jsonl, engine_available
    from bruteforce import read_jsonl as read_docs
except ImportError:  # tests/ as a package
    from tests.bruteforce import (  # type: ignore[no-redef]
        BruteForce,
        Engine,
        build_collection_from_jsonl,
        engine_available,
    )
    from tests.bruteforce import read_jsonl as read_docs  # type: ignore[no-redef]

from sieve_lite.errors import QueryError

FIXTURE = Path(__file__).resolve().parent / "fixture_corpus.jsonl"

pytestmark = pytest.mark.skipif(not engine_available(),
                                reason="sieve_lite.bql.parse/compile_query not there yet")

FRAGMENTS = [
    "AND", "OR", "NOT", "NEAR", "NEAR(", "NEAR/3(", "NEAR/0(", "NEAR/x(", "NEAR/-1(",
    "NEAR/99999999999999999999(", "-", "--", "*", "**", '"', '""', "(", ")", "()", "[", "]", "[]",
    "[title]", "[ti,body]", "[date]", "[nosuch]", "[title,", "date[", "date", "..", ">=", "<=",
    ">", "<", ",", ":", "^", "'", "\\", ";", "--", "/*", "*/", "%", "_", "2002", "2019-02-29",
    "2018-13", "2018..2023", "..2002", "2020-05", "0000", "9999-12-31", " ", "  ", "\t", "\n",
    "\x00", "\u00a0", "\u3000", "\u200b", "\ufeff", "\u202e", "\u0301", "ﬁ", "ß", "İ", "Ø",
    "Zürich", "O'Brien", "COVID-19", "C++", "3.14", "e-mail", "fort", "castle", "river",
    "glass", "stained", "and", "or", "not", "near", "intro", "(intro)", "title:x", "ᦂᦱ",
    "🏰", "東京", "'; DROP TABLE documents; --", "\" OR 1=1 --", "?", "?1", ":p0", "@x", "$x",
]

surrogates = st.integers(0xD800, 0xDFFF).map(chr)
pieces = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.characters(),
    st.text(max_size=6),
    surrogates,
)
queries = st.lists(pieces, max_size=24).map("".join)


@pytest.fixture(scope="module")
def fuzz_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, BruteForce]]:
    db = build_collection_from_jsonl(FIXTURE, tmp_path_factory.mktemp("bql-fuzz") / "f.db")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    engine = Engine(db)
    yield engine, BruteForce(read_docs(FIXTURE))
    engine.close()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before, "the collection changed"
    leftovers = [p.name for p in db.parent.iterdir() if p.name != db.name]
    assert not leftovers, f"files appeared beside the collection: {leftovers}"


def check_refusal(query: str, err: QueryError) -> None:
    text = str(err)
    assert text and "\n" not in text and "\r" not in text, f"not one line: {text!r}"
    text.encode("utf-8")  # raises on a lone surrogate copied into the message
    assert 1 <= err.column <= len(query) + 1, f"column {err.column} outside {query!r}: {text}"


def run_any(engine: Engine, brute: BruteForce, query: str) -> None:
    note(f"query: {query!r}")
    try:
        node = engine.parse(query)
    except QueryError as e:
        check_refusal(query, e)
        return
    try:
        got = engine.run_node(node)
    except QueryError as e:  # allowed, though the parser should have caught it
        check_refusal(query, e)
        return
    except apsw.Error as e:
        pytest.fail(f"SQL error for {query!r}: {type(e).__name__}: {e}\n  AST: {node!r}")
    want = brute.evaluate(node)
    assert got == want, (f"{query!r}: engine vs brute force over the engine's AST\n"
                         f"  missing: {sorted(want - got)}\n  extra: {sorted(got - want)}\n"
                         f"  AST: {node!r}")


@settings(max_examples=1500, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(query=queries)
def test_fuzz_only_query_errors(fuzz_env: tuple[Engine, BruteForce], query: str) -> None:
    run_any(*fuzz_env, query)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(query=st.text(max_size=60))
def test_fuzz_plain_text(fuzz_env: tuple[Engine, BruteForce], query: str) -> None:
    run_any(*fuzz_env, query)
