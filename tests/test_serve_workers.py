"""``sieve-lite serve`` as a real process on loopback: ``--workers 2`` under concurrent clients
(0 errors, answers equal to the library's), MCP over streamable HTTP at ``/mcp`` with the
official SDK's client, and a clean stop on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx2", reason="the client needs httpx2 (a dependency of mcp)")

import sieve_lite  # noqa: E402
from sieve_lite.output import search_object  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONIOENCODING": "utf-8"}
QUERIES = ["walrus", "generator[title]", '"pattern matching"', "async AND await", "decorator*",
           "typing[title] AND date[2015..2017]", "unicode", "zipimport", "f-string*[title]",
           "zen OR aphorism*", "walrus[title] AND date[2018..]", "import NOT module"]

pytestmark = pytest.mark.skipif(not PEPS.exists(), reason="collections/peps.db is missing")


def _children(pid: int) -> list[int]:
    """The server's worker processes (not multiprocessing's resource tracker)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = [int(x) for x in (task / "children").read_text().split()]
            out += [k for k in kids
                    if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]
        except OSError:
            pass
    return out


class Server:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([*CLI, "serve", "--port", "0", *args, str(PEPS)],
                                     stderr=subprocess.PIPE, text=True, env=ENV)
        assert self.proc.stderr is not None
        self.url = ""
        deadline = time.monotonic() + 180
        while not self.url and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"http://127\.0\.0\.1:\d+/", line)
            self.url = m.group(0) if m else ""
        if not self.url:
            self.proc.kill()
            pytest.fail(f"the server did not start: {self.proc.stderr.read()}")

    def stop(self) -> tuple[int, str]:
        """SIGTERM; (exit code, what it wrote on stderr)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail("the server did not stop within 60 s of SIGTERM")
        return self.proc.returncode, err


@pytest.fixture(scope="module")
def expected() -> dict[str, list[str]]:
    with sieve_lite.open(PEPS) as coll:
        return {q: [h["id"] for h in
                    search_object(coll.search(q, k=3, ranker="bm25"))["results"]]
                for q in QUERIES}


def test_two_workers_under_load_then_sigterm(expected: dict[str, list[str]]) -> None:
    server = Server("--workers", "2", "--ranker", "bm25")
    try:
        # Workers start after the socket is bound: wait until both answer.
        deadline = time.monotonic() + 120
        while len(_children(server.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = _children(server.proc.pid)
        assert len(workers) == 2, workers

        def single(i: int) -> list[str]:
            q = QUERIES[i % len(QUERIES)]
            with httpx.Client(base_url=server.url, timeout=120) as http:
                bad = []
                for _ in range(6):
                    r = http.post("retrieve", json={"queries": [q], "topk": 3,
                                                    "return_scores": True})
                    if r.status_code != 200 or r.json()["errors"]:
                        bad.append(f"{r.status_code} {r.text[:200]}")
                    elif [e["document"]["id"] for e in r.json()["result"][0]] != expected[q]:
                        bad.append(f"{q}: wrong ids")
                return bad

        def batch(i: int) -> list[str]:
            with httpx.Client(base_url=server.url, timeout=120) as http:
                r = http.post("retrieve", json={"queries": QUERIES * 3, "topk": 3,
                                                "return_scores": True})
                if r.status_code != 200 or r.json()["errors"]:
                    return [f"{r.status_code} {r.text[:200]}"]
                got = [[e["document"]["id"] for e in res] for res in r.json()["result"]]
                return [] if got == [expected[q] for q in QUERIES * 3] else ["batch: wrong"]

        with ThreadPoolExecutor(20) as pool:
            futures = [pool.submit(single, i) for i in range(16)]
            futures += [pool.submit(batch, i) for i in range(4)]
            problems = [p for f in futures for p in f.result()]
        assert problems == []
        # a search and a fetch in the CLI's shapes, from whichever worker answers
        r = httpx.post(server.url + "search", json={"query": "walrus", "k": 2,
                                                    "ranker": "bm25"})
        assert r.json()["type"] == "search" and len(r.json()["results"]) == 2
    finally:
        code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err and "error" not in err.lower(), err
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or \
            "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_mcp_over_http_on_serve(expected: dict[str, list[str]]) -> None:
    """The SDK's own client against ``/mcp`` of a real two-worker server: stateless, so any
    worker answers any call."""
    pytest.importorskip("mcp", reason="the MCP SDK (pip install 'sieve-lite[mcp]')")
    import anyio
    from mcp import Client

    server = Server("--workers", "2")
    try:
        async def main() -> None:
            async with Client(server.url + "mcp", read_timeout_seconds=120) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names == {"search", "fetch", "manual", "collections"}
                for q in QUERIES:
                    r = await client.call_tool("search", {"query": q, "k": 3,
                                                          "ranker": "bm25"})
                    assert not r.is_error
                    assert [h["id"] for h in r.structured_content["results"]] == expected[q]
                r = await client.call_tool("fetch", {"doc": "pep-0572",
                                                     "section": "abstract"})
                assert not r.is_error and r.structured_content["type"] == "fetch"
                r = await client.call_tool("search", {"query": "walrus[auther]"})
                assert r.is_error and r.structured_content["error"]["column"] == 8
                r = await client.call_tool("search", {"query": "walrus", "k": 2})
                assert r.structured_content["ranker"] == "hybrid"
                async with anyio.create_task_group() as tg:  # calls in flight at once
                    for q in QUERIES:
                        tg.start_soon(client.call_tool, "search", {"query": q})

        anyio.run(main)
        # the Host check covers /mcp too
        r = httpx.post(server.url + "mcp", json={}, headers={"host": "evil.example"})
        assert r.status_code == 421
    finally:
        code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err, err


def test_one_process_stops_cleanly_on_sigterm() -> None:
    server = Server("--ranker", "bm25")
    try:
        r = httpx.post(server.url + "retrieve", json={"queries": QUERIES, "topk": 2})
        assert r.status_code == 200 and r.json()["errors"] == []
        assert _children(server.proc.pid) == []  # no worker processes: it serves itself
    finally:
        code, err = server.stop()
    assert code == 0, err
    assert "Traceback" not in err, err
