"""``sieve-lite mcp``: real sessions with the official SDK's own client, over stdio and over
streamable HTTP, against the shipped collection ``collections/peps.db``.

Each session: the handshake, the tool listing, a search, a fetch, an invalid query (a tool
error with message and column, and the server goes on), an unknown document, and 20
concurrent calls whose answers must equal the same calls made one at a time (the pool lends
each call its own connection; nothing leaks between calls).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK (pip install 'sieve-lite[mcp]')")
from mcp import Client, StdioServerParameters  # noqa: E402

PEPS = Path(__file__).resolve().parents[1] / "collections" / "peps.db"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONIOENCODING": "utf-8"}
WALRUS = '"assignment expression*"[title] OR walrus[body]'

pytestmark = pytest.mark.skipif(not PEPS.exists(), reason="collections/peps.db is missing")


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _concurrent_calls() -> list[tuple[str, dict[str, Any]]]:
    queries = ["walrus", "generator[title]", '"pattern matching"', "async AND await",
               "decorator*", "typing[title] AND date[2015..2017]", "unicode", "GIL OR gil",
               "zipimport", "f-string*[title]"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": q, "k": 3, "ranker": "bm25"}) for q in queries]
    calls += [("fetch", {"doc": d, "section": s}) for d, s in
              [("pep-0572", "abstract"), ("pep-0008", "introduction"), ("pep-0020", None),
               ("pep-0484", "rationale and goals"), ("pep-0622", "walrus patterns")]]
    calls += [("search", {"query": "walrus[auther]"}), ("fetch", {"doc": "pep-9999"}),
              ("collections", {}), ("search", {"query": WALRUS, "k": 2, "ranker": "dense"}),
              ("search", {"query": WALRUS, "k": 2})]  # dense, and the default: hybrid
    assert len(calls) == 20
    return calls


async def _session_checks(client: Client) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"search", "fetch", "manual", "collections"}
    for tool in (await client.list_tools()).tools:
        assert tool.description and len(tool.description) > 60, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    search_schema = next(t for t in (await client.list_tools()).tools
                         if t.name == "search").input_schema
    assert search_schema["required"] == ["query"]
    assert set(search_schema["properties"]) == {"query", "k", "ranker", "collection"}
    assert search_schema["properties"]["k"]["maximum"] == 50

    # search: compact cards as text, the search object as structured content
    r = await client.call_tool("search", {"query": WALRUS, "k": 5, "ranker": "bm25"})
    assert not r.is_error, _text(r)
    data = r.structured_content
    assert data["format"] == 1 and data["type"] == "search" and data["collection"] == "peps"
    assert data["total"] > 0 and not data["fallback"] and len(data["results"]) == 5
    ids = [h["id"] for h in data["results"]]
    assert "pep-0572" in ids
    text = _text(r)
    assert text.startswith(f"{data['total']} admitted; ranked by bm25")
    assert "[1] " + ids[0] in text and "pep-0572 | Assignment Expressions" in text

    # fetch one section
    r = await client.call_tool("fetch", {"doc": "pep-0572", "section": "abstract"})
    assert not r.is_error, _text(r)
    assert r.structured_content["section"] == "Abstract"
    assert "NAME := expr" in _text(r) and _text(r).startswith("pep-0572 | Assignment")

    # an invalid query: a tool error with the message, the column and a caret line
    r = await client.call_tool("search", {"query": "walrus[auther]"})
    assert r.is_error
    err = r.structured_content["error"]
    assert err["kind"] == "QueryError" and err["column"] == 8 and err["length"] == 6
    assert "unknown field 'auther'" in err["message"]
    assert _text(r).splitlines()[-2:] == ["walrus[auther]", "       ^^^^^^"]

    # an unknown document, an unknown section, an unknown collection, a bad k
    r = await client.call_tool("fetch", {"doc": "pep-9999"})
    assert r.is_error and "no document has the id 'pep-9999'" in _text(r)
    r = await client.call_tool("fetch", {"doc": "pep-0572", "section": "no such part"})
    assert r.is_error and "has no section" in _text(r)
    r = await client.call_tool("search", {"query": "x", "collection": "nope"})
    assert r.is_error and "the collections are: peps" in _text(r)
    r = await client.call_tool("search", {"query": "x", "k": 0})
    assert r.is_error

    # the server is still there, and a rank is not a document on a server
    r = await client.call_tool("fetch", {"doc": "1"})
    assert r.is_error and "give the document id" in _text(r)

    # manual and collections
    r = await client.call_tool("manual", {})
    assert not r.is_error and "Over MCP you call tools" in _text(r)
    assert "- author: the author names" in _text(r)
    assert r.structured_content["fields"][:3] == ["title", "section", "body"]
    r = await client.call_tool("collections", {})
    listing = r.structured_content["collections"]
    assert [c["name"] for c in listing] == ["peps"] and listing[0]["documents"] == 736
    assert listing[0]["default"] is True and listing[0]["default_ranker"] == "hybrid"

    # 20 concurrent calls answer exactly what the same calls answer one at a time
    calls = _concurrent_calls()
    sequential = [await client.call_tool(name, args) for name, args in calls]
    concurrent: list[Any] = [None] * len(calls)

    async def one(i: int, name: str, args: dict[str, Any]) -> None:
        concurrent[i] = await client.call_tool(name, args)

    async with anyio.create_task_group() as tg:
        for i, (name, args) in enumerate(calls):
            tg.start_soon(one, i, name, args)
    for (name, args), a, b in zip(calls, sequential, concurrent, strict=True):
        assert a.is_error == b.is_error, (name, args)
        assert _text(a) == _text(b), (name, args)
        assert a.structured_content == b.structured_content, (name, args)
    assert sum(r.is_error for r in concurrent) == 2  # the bad query and the unknown doc
    dense = concurrent[-2].structured_content
    assert dense["ranker"] == "dense" and dense["results"]
    assert concurrent[-1].structured_content["ranker"] == "hybrid"


@pytest.mark.slow
def test_stdio_session() -> None:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", str(PEPS)],
                                   env=ENV)

    async def main() -> None:
        # legacy = the initialize handshake that desktop clients use today
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            assert client.server_info is not None and client.server_info.name == "sieve-lite"
            assert "search" in (client.instructions or "")
            await _session_checks(client)

    anyio.run(main)


def _start_http(*dbs: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*CLI, "mcp", "--http", "--port", "0", *map(str, dbs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    line = ""
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the HTTP server did not start: {line!r}")


@pytest.mark.slow
def test_http_session() -> None:
    proc, url = _start_http(PEPS)
    try:
        async def main() -> None:
            async with Client(url, read_timeout_seconds=120) as client:  # mode auto
                await _session_checks(client)

        anyio.run(main)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err
    assert out == "" and "Traceback" not in err


def test_http_port_taken_is_one_line() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = subprocess.run([*CLI, "mcp", "--http", "--port", str(port), str(PEPS)],
                           capture_output=True, text=True, env=ENV, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("error: cannot serve on 127.0.0.1")
    assert r.stderr.count("\n") == 1


def test_bad_collections_stop_the_server_before_it_starts(tmp_path: Path) -> None:
    r = subprocess.run([*CLI, "mcp", str(tmp_path / "nope.db")], capture_output=True,
                       text=True, env=ENV, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no collection at" in r.stderr
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(PEPS.read_bytes()[:200_000])
    r = subprocess.run([*CLI, "mcp", str(damaged)], capture_output=True, text=True, env=ENV,
                       timeout=60)
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and r.stdout == ""


def test_two_collections_get_distinct_names(tmp_path: Path) -> None:
    from sieve_lite.mcp_server import CollectionPool

    other = tmp_path / "peps.db"
    other.write_bytes(PEPS.read_bytes())
    with CollectionPool([PEPS, other], connections=2) as pool:
        assert list(pool.entries) == ["peps", "peps-2"]
        name, res = pool.search("walrus", k=1, ranker="bm25", collection="peps-2")
        assert name == "peps-2" and res.total > 0


def test_the_pool_never_lends_one_connection_to_two_threads() -> None:
    import threading

    from sieve_lite.mcp_server import CollectionPool

    in_use: set[int] = set()
    guard = threading.Lock()
    clashes: list[int] = []
    seen: set[int] = set()
    errors: list[BaseException] = []

    with CollectionPool([PEPS], connections=3) as pool:
        expected = {q: [h.id for h in pool.search(q, k=3, ranker="bm25")[1].results]
                    for q in ("walrus", "generator", "zen OR aphorism*")}

        def worker(q: str) -> None:
            try:
                for _ in range(5):
                    with pool.borrow(None) as (_, coll):
                        with guard:
                            if id(coll) in in_use:
                                clashes.append(id(coll))
                            in_use.add(id(coll))
                            seen.add(id(coll))
                        res = coll.search(q, k=3, ranker="bm25")
                        assert [h.id for h in res.results] == expected[q]
                        assert coll._session is res  # this call's listing, cleared on return
                        with guard:
                            in_use.discard(id(coll))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(q,)) for q in list(expected) * 3]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert not clashes and 1 <= len(seen) <= 3
        assert len(pool.entries["peps"].opened) == len(seen)


def test_a_returned_connection_keeps_no_listing() -> None:
    from sieve_lite.mcp_server import CollectionPool

    with CollectionPool([PEPS], connections=1) as pool:
        pool.search("walrus", k=2, ranker="bm25")
        with pool.borrow(None) as (_, coll):
            assert coll._session is None  # so fetch("1") cannot read another call's rank 1
