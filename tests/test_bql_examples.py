"""The 44 BQL examples of the contract (``tests/data/bql-examples``): each query admits exactly
the listed documents, or is refused with exactly the listed message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.bql import compile_query, parse
from sieve_lite.errors import QueryError

EXAMPLES = Path(__file__).resolve().parent / "data" / "bql-examples"


def _cases() -> list[dict]:
    path = EXAMPLES / "queries.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


CASES = _cases()


@pytest.fixture(scope="session")
def bql_examples(tmp_path_factory: pytest.TempPathFactory):
    from sieve_lite.build import build_collection
    from sieve_lite.sources.jsonl import read_jsonl

    out = tmp_path_factory.mktemp("bql-examples") / "examples.db"
    build_collection(read_jsonl(EXAMPLES / "corpus.jsonl"), out, embed=False)
    coll = sieve_lite.open(out)
    yield coll
    coll.close()


def admitted(coll, query: str) -> set[str]:
    node = parse(query, coll.fields)
    c = compile_query(node, coll.fields)
    ids = set()
    for (rowid,) in coll.conn.execute(c.sql, c.params).fetchall():
        (doc_id,) = coll.conn.execute("SELECT id FROM documents WHERE rowid = ?",
                                      (rowid,)).fetchone()
        ids.add(doc_id)
    return ids


def test_there_are_44_examples():
    assert len(CASES) == 44


@pytest.mark.parametrize("case", CASES, ids=[c["q"] for c in CASES])
def test_shared_example(bql_examples, case: dict) -> None:
    if case["expect"] == "ok":
        assert admitted(bql_examples, case["q"]) == set(case["ids"])
    else:
        with pytest.raises(QueryError) as info:
            parse(case["q"], bql_examples.fields)
        assert str(info.value) == case["message"]


def test_examples_collection_fields(bql_examples) -> None:
    assert bql_examples.fields == ("title", "section", "body", "infobox", "author", "date",
                                   "tiab", "all")
