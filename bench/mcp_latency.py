"""What the MCP layer costs: a tool call over stdio and over streamable HTTP (``sieve-lite mcp
--http``, and ``/mcp`` of ``sieve-lite serve``) against the same search or fetch made
in-process, on the shipped collections/peps.db.

    python bench/mcp_latency.py [--rounds 5]

For each transport: the median of ``rounds`` passes over 10 bm25 searches (k = 5) and 5
fetches, one call at a time, and the wall time of the same 15 calls sent at once. The
in-process column is ``Collection.search`` / ``Collection.fetch`` on one open collection.
Medians and ratios only (the machine is shared and noisy); the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
QUERIES = ["walrus", "generator[title]", '"pattern matching"', "async AND await", "decorator*",
           "typing[title] AND date[2015..2017]", "unicode", "zipimport", "f-string*[title]",
           "zen OR aphorism*"]
FETCHES = [("pep-0572", "abstract"), ("pep-0008", "introduction"), ("pep-0020", None),
           ("pep-0484", "rationale and goals"), ("pep-0622", "walrus patterns")]
CALLS: list[tuple[str, dict[str, Any]]] = (
    [("search", {"query": q, "k": 5, "ranker": "bm25"}) for q in QUERIES]
    + [("fetch", {"doc": d, "section": s}) for d, s in FETCHES])


def in_process(rounds: int) -> tuple[float, float]:
    import sieve_lite

    search_t, fetch_t = [], []
    with sieve_lite.open(PEPS) as coll:
        for q in QUERIES:  # warm the caches, as a running server has them
            coll.search(q, k=5, ranker="bm25")
        for _ in range(rounds):
            for q in QUERIES:
                t = time.perf_counter()
                coll.search(q, k=5, ranker="bm25")
                search_t.append(time.perf_counter() - t)
            for d, s in FETCHES:
                t = time.perf_counter()
                coll.fetch(d, s)
                fetch_t.append(time.perf_counter() - t)
    return statistics.median(search_t), statistics.median(fetch_t)


async def over(client: Any, rounds: int) -> tuple[float, float, float]:
    for name, args in CALLS:  # warm up
        await client.call_tool(name, args)
    times: dict[str, list[float]] = {"search": [], "fetch": []}
    for _ in range(rounds):
        for name, args in CALLS:
            t = time.perf_counter()
            r = await client.call_tool(name, args)
            times[name].append(time.perf_counter() - t)
            assert not r.is_error
    bursts = []
    for _ in range(rounds):
        t = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for name, args in CALLS:
                tg.start_soon(client.call_tool, name, args)
        bursts.append(time.perf_counter() - t)
    return (statistics.median(times["search"]), statistics.median(times["fetch"]),
            statistics.median(bursts))


def stdio(rounds: int) -> tuple[float, float, float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", str(PEPS)],
                                   env=dict(os.environ))

    async def main() -> tuple[float, float, float]:
        async with Client(params, read_timeout_seconds=120) as client:
            return await over(client, rounds)

    return anyio.run(main)


def http(rounds: int, serve: bool = False) -> tuple[float, float, float]:
    """``sieve-lite mcp --http``, or (``serve``) ``/mcp`` of ``sieve-lite serve``."""
    from mcp import Client

    cmd = ["serve"] if serve else ["mcp", "--http"]
    proc = subprocess.Popen([*CLI, *cmd, "--port", "0", str(PEPS)],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = ""
        while not url:
            line = proc.stderr.readline()
            if not line:
                raise SystemExit("the HTTP server did not start")
            m = re.search(r"http://127\.0\.0\.1:\d+/(mcp)?", line)
            url = (m.group(0).rstrip("/").removesuffix("/mcp") + "/mcp") if m else ""

        async def main() -> tuple[float, float, float]:
            async with Client(url, read_timeout_seconds=120) as client:
                return await over(client, rounds)

        return anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    load = os.getloadavg()
    lib_s, lib_f = in_process(args.rounds)
    st = stdio(args.rounds)
    ht = http(args.rounds)
    sv = http(args.rounds, serve=True)
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (at start), "
          f"{args.rounds} rounds, {len(CALLS)} calls per round; http: mcp --http, "
          "serve: /mcp of sieve-lite serve")
    print(f"{'':22}{'in-process':>12}{'stdio':>12}{'http':>12}{'serve':>12}{'stdio/lib':>11}"
          f"{'http/lib':>10}{'http-lib':>10}")
    for i, (name, lib) in enumerate((("search p50 (ms)", lib_s), ("fetch p50 (ms)", lib_f))):
        print(f"{name:22}{lib * 1e3:12.2f}{st[i] * 1e3:12.2f}{ht[i] * 1e3:12.2f}"
              f"{sv[i] * 1e3:12.2f}{st[i] / lib:11.1f}{ht[i] / lib:10.1f}"
              f"{(ht[i] - lib) * 1e3:10.2f}")
    print(f"{'15 at once, p50 (ms)':22}{'':>12}{st[2] * 1e3:12.1f}{ht[2] * 1e3:12.1f}"
          f"{sv[2] * 1e3:12.1f}")


if __name__ == "__main__":
    main()
