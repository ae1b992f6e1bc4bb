"""``sieve-lite serve``'s JSON API for agents (``/retrieve``, ``/search``, ``/fetch``), through
the real ASGI app (Starlette's test client: the guard, the routes, the worker threads, the
pool) against the shipped collection ``collections/peps.db`` (hybrid by default: it has
embeddings), compared with the library and with ``sieve-lite search --json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the server needs starlette (sieve-lite[mcp])")
pytest.importorskip("httpx2", reason="the test client needs httpx2 (a dependency of mcp)")
from starlette.testclient import TestClient  # noqa: E402

import sieve_lite  # noqa: E402
from sieve_lite.output import fetch_object, search_object  # noqa: E402
from sieve_lite.serve import ServeConfig, create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
BASE = "http://127.0.0.1:8377"

pytestmark = pytest.mark.skipif(not PEPS.exists(), reason="collections/peps.db is missing")


def queries_64() -> list[str]:
    """64 valid queries of every kind: words, fields, phrases, prefixes, OR, NOT, dates, one
    that admits nothing (a fallback listing) and one with nothing to rank by."""
    base = ["walrus", "generator[title]", '"pattern matching"', "async AND await", "decorator*",
            "typing[title] AND date[2015..2017]", "unicode", "zipimport", "f-string*[title]",
            "zen OR aphorism*", '"assignment expression*"[title] OR walrus[body]',
            "import NOT module", "walrus[title] AND date[2018..]", "date[2001..2002]",
            "gil OR \"global interpreter lock\"", "release schedule"]
    words = ["exception", "iterator", "namespace", "coroutine", "annotation", "packaging",
             "metaclass", "slice", "lambda", "bytes", "buffer", "closure", "descriptor",
             "ordering", "keyword", "logging", "threading", "decimal", "pickle", "encoding",
             "dataclass", "context", "operator", "integer"]
    out = list(base)
    for i, w in enumerate(words):
        out.append(w)
        out.append(f"{w}[title]" if i % 2 else f"{w} AND date[2010..]")
    return out[:64]


@pytest.fixture(scope="module")
def client() -> Any:
    app = create_app(ServeConfig(paths=(str(PEPS),), connections=3))
    with TestClient(app, base_url=BASE) as c:
        yield c


def _lib(queries: list[str], k: int, ranker: str, strict: bool = False) -> list[dict[str, Any]]:
    with sieve_lite.open(PEPS) as coll:
        return [search_object(coll.search(q, k=k, ranker=ranker, strict=strict),
                              collection="peps") for q in queries]


def _compare(entries: list[dict[str, Any]], expected: dict[str, Any], query: str) -> None:
    assert [e["document"]["id"] for e in entries] == [h["id"] for h in expected["results"]], query
    assert [e["score"] for e in entries] == [h["score"] for h in expected["results"]], query
    assert [e["card"] for e in entries] == expected["results"], query
    for e, h in zip(entries, expected["results"], strict=True):
        assert e["rank"] == h["rank"]
        assert e["total"] == expected["total"] and e["ranker"] == expected["ranker"]
        assert e["fallback"] == expected["fallback"]
        assert e["document"]["contents"].split("\n")[0] == h["title"]
        assert f"] {h['id']} | {h['title']}" in e["document"]["contents"]


@pytest.mark.parametrize("ranker", [None, "bm25", "dense"])
def test_retrieve_64_matches_search(client: Any, ranker: str | None) -> None:
    qs = queries_64()
    body: dict[str, Any] = {"queries": qs, "topk": 7, "return_scores": True}
    if ranker:
        body["ranker"] = ranker
    r = client.post("/retrieve", json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["format"] == 1 and data["type"] == "retrieve" and data["collection"] == "peps"
    assert data["errors"] == [] and len(data["result"]) == 64 == len(data["searches"])
    expected = _lib(qs, 7, ranker or "hybrid")
    for q, entries, summary, exp in zip(qs, data["result"], data["searches"], expected,
                                        strict=True):
        _compare(entries, exp, q)
        assert summary == {**{k: v for k, v in exp.items()
                              if k not in ("format", "type", "collection", "results")},
                           "shown": len(exp["results"])}
    assert any(s["fallback"] for s in data["searches"])  # the batch held a fallback
    assert any(s["total"] > 100 for s in data["searches"])


def test_retrieve_matches_the_cli(client: Any) -> None:
    """The same queries through ``sieve-lite search --json`` (a real process each)."""
    qs = ['"assignment expression*"[title] OR walrus[body]', "walrus[title] AND date[2018..]",
          "generator[title]"]
    data = client.post("/retrieve", json={"queries": qs, "topk": 5,
                                          "return_scores": True}).json()
    for q, entries in zip(qs, data["result"], strict=True):
        out = subprocess.run([*CLI, "search", str(PEPS), q, "-k", "5", "--json"],
                             capture_output=True, text=True,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=300)
        assert out.returncode in (0, 1), out.stderr
        cli = json.loads(out.stdout)
        _compare(entries, cli, q)


def test_retrieve_strict_and_without_scores(client: Any) -> None:
    qs = ["walrus[title] AND date[2018..]", "walrus"]
    data = client.post("/retrieve", json={"queries": qs, "topk": 2, "strict": True,
                                          "ranker": "bm25"}).json()
    assert data["result"][0] == [] and data["searches"][0]["strict"] is True
    assert data["searches"][0]["fallback"] is False and data["errors"] == []
    first = data["result"][1][0]  # return_scores false: Search-R1's bare documents
    assert set(first) >= {"id", "contents", "card", "rank", "ranker", "total"}
    assert "score" not in first and "document" not in first
    exp = _lib(["walrus"], 2, "bm25")[0]
    assert [d["id"] for d in data["result"][1]] == [h["id"] for h in exp["results"]]


def test_a_bad_query_does_not_sink_the_batch(client: Any) -> None:
    qs = ["walrus", "walrus[auther]", "generator[title]", "", 42, '"unclosed phrase',
          "date[2018..2001] OR x", "async AND await"]
    r = client.post("/retrieve", json={"queries": qs, "topk": 3, "return_scores": True,
                                       "ranker": "bm25"})
    assert r.status_code == 200, r.text
    data = r.json()
    bad = {e["index"]: e for e in data["errors"]}
    assert {1, 3, 4, 5} <= set(bad) and not {0, 2, 7} & set(bad)
    assert "unknown field 'auther'" in bad[1]["message"] and bad[1]["kind"] == "QueryError"
    assert "string" in bad[4]["message"]
    for i in bad:
        assert data["result"][i] == [] and data["searches"][i] is None
    good = [0, 2, 7]
    exp = _lib([qs[i] for i in good], 3, "bm25")
    for i, e in zip(good, exp, strict=True):
        _compare(data["result"][i], e, qs[i])


def test_batch_and_body_bounds() -> None:
    app = create_app(ServeConfig(paths=(str(PEPS),), max_body_bytes=100_000, max_batch=4096))
    with TestClient(app, base_url=BASE) as c:
        r = c.post("/retrieve", json={"queries": ["x"] * 4097, "topk": 1})
        assert r.status_code == 413
        err = r.json()["error"]
        assert "4097 queries" in err["message"] and "4096" in err["message"]
        r = c.post("/retrieve", json={"queries": ["walrus"] * 4096, "topk": 1,
                                      "ranker": "bm25"})
        assert r.status_code == 200 and len(r.json()["result"]) == 4096
        assert r.json()["result"][4095] == r.json()["result"][0] != []
        big = json.dumps({"queries": ["walrus " * 20] * 1000}).encode()
        assert len(big) > 100_000
        r = c.post("/retrieve", content=big, headers={"content-type": "application/json"})
        assert r.status_code == 413 and "100000 bytes" in r.text

        def chunks() -> Any:  # no Content-Length: the streamed body is counted as it comes
            for _ in range(20):
                yield b" " * 10_000

        r = c.post("/retrieve", content=chunks())
        assert r.status_code == 413 and "100000 bytes" in r.text
        r = c.post("/mcp", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413  # the guard reads a streamed body before any route
        body = json.dumps({"queries": ["walrus"], "ranker": "bm25"}).encode()
        r = c.post("/retrieve", content=iter([body[:7], body[7:]]))  # streamed, in bounds
        assert r.status_code == 200 and r.json()["result"][0]
        for body, status, words in [
                (b"not json", 400, "JSON object"), (b"[1, 2]", 400, "JSON object"),
                (json.dumps({"queries": "walrus", "topk": 0}).encode(), 400, "'topk'"),
                (json.dumps({"queries": {"a": 1}}).encode(), 400, "'queries'"),
                (json.dumps({"queries": ["a"], "ranker": "nope"}).encode(), 400, "ranker"),
                (json.dumps({"queries": ["a"], "collection": "nope"}).encode(), 404,
                 "no collection named 'nope'")]:
            r = c.post("/retrieve", content=body)
            assert r.status_code == status, (body, r.text)
            assert r.json()["type"] == "error" and words in r.json()["error"]["message"]
        assert c.post("/retrieve", json={"queries": []}).json()["result"] == []
        assert c.get("/retrieve").status_code == 405


def test_search_and_fetch_shapes(client: Any) -> None:
    q = '"assignment expression*"[title] OR walrus[body]'
    r = client.post("/search", json={"query": q, "k": 4, "ranker": "bm25"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.json() == _lib([q], 4, "bm25")[0]
    r = client.post("/search", json={"query": q})  # the defaults: k 5, hybrid
    assert r.json() == _lib([q], 5, "hybrid")[0]
    r = client.post("/search", json={"query": "walrus[title] AND date[2018..]",
                                     "strict": True})
    assert r.json()["results"] == [] and r.json()["strict"] is True
    with sieve_lite.open(PEPS) as coll:
        exp = fetch_object(coll.fetch("pep-0572", "abstract"), collection="peps")
        outline = fetch_object(coll.fetch("pep-0572"), collection="peps")
    assert client.post("/fetch", json={"doc": "pep-0572", "section": "abstract"}).json() == exp
    assert client.post("/fetch", json={"doc": "pep-0572"}).json() == outline
    r = client.post("/search", json={"query": "walrus[auther]"})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["kind"] == "QueryError" and err["column"] == 8
    r = client.post("/fetch", json={"doc": "pep-9999"})
    assert r.status_code == 404 and r.json()["type"] == "error"
    r = client.post("/fetch", json={"doc": "pep-0572", "section": "no such section"})
    assert r.status_code == 404
    assert client.post("/search", json={"k": 3}).status_code == 400
    assert client.post("/fetch", json={}).status_code == 400


def test_the_guard_covers_the_api(client: Any) -> None:
    body = {"queries": ["walrus"]}
    r = client.post("/retrieve", json=body, headers={"host": "evil.example"})
    assert r.status_code == 421
    r = client.post("/retrieve", json=body, headers={"origin": "http://evil.example"})
    assert r.status_code == 403
    r = client.post("/search", json={"query": "walrus"},
                    headers={"sec-fetch-site": "cross-site"})
    assert r.status_code == 403
    r = client.post("/fetch", json={"doc": "pep-0572"}, headers={"origin": BASE})
    assert r.status_code == 200  # the page's own origin may post
    assert r.headers["x-content-type-options"] == "nosniff"
    app = create_app(ServeConfig(paths=(str(PEPS),), token="s3cret"))
    with TestClient(app, base_url=BASE) as c:
        assert c.post("/retrieve", json=body).status_code == 401
        r = c.post("/retrieve", json=body, headers={"authorization": "Bearer s3cret"})
        assert r.status_code == 200 and r.json()["errors"] == []


def test_batched_embedding_is_exact() -> None:
    """``encode_queries`` gives each text the vector it gets alone, bit for bit (the reason
    /retrieve with dense or hybrid equals single searches)."""
    import numpy as np

    from sieve_lite.embed import encode_queries, get_query_embedder

    with sieve_lite.open(PEPS) as coll:
        emb = get_query_embedder(coll.embed_model)
    texts = [re.sub(r"\W+", " ", q).strip() or "x" for q in queries_64()]
    batch = encode_queries(emb, texts)
    for t, v in zip(texts, batch, strict=True):
        assert np.array_equal(v, emb.encode([t])[0].astype(np.float32)), t
