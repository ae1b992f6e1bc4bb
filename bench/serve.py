"""What ``sieve-lite serve`` answers for agents, against the library called in process, on the
shipped collections/peps.db. Loopback only; every cell is bounded in time.

    python bench/serve.py [--seconds 4] [--ranker hybrid] [--workers 1 2] [--json FILE]

* **in-process ceiling**: one process, one open ``Collection``, ``search(q, k)`` one query
  after another over the same queries (measured before and after the servers; the larger is
  the ceiling, so the ratio is not flattered by a busy moment).
* **servers**: ``sieve-lite serve --workers N --port 0`` as a subprocess for N in
  ``--workers``; clients (one asyncio loop, httpx2, one connection per client) send
  ``POST /retrieve`` with ``batch`` queries each, ``concurrency`` requests in flight, for
  ``--seconds``: concurrency 1, 4, 16 and 32 with single queries, then batches of 32 and 256
  with 4 in flight. Per cell: queries/s, request latency p50/p99, errors (a non-200 answer, a
  transport error, or an ``errors`` entry: the queries are all valid), and each worker's RSS.
* **Ray**: ``--ray ADDRESS|local`` adds the same cells through ``sieve-lite serve --ray``
  (``RAY_LINE`` below is the hook; the option is refused until serve has ``--ray``).

Targets (issue 23): with ``--workers 2``, 32 queries a request and 4 in flight, at least 0.8x
the in-process queries/s of the same run with 0 errors; 16 clients sending single queries get
0 errors. Queries: 256 drawn from the collection's titles (plain words, fielded, phrases,
OR, dates), all valid BQL. The machine is shared: the load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PEPS = ROOT / "collections" / "peps.db"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
K = 5
CELLS = [(1, 1), (1, 4), (1, 16), (1, 32), (32, 4), (256, 4)]  # (batch, concurrency)
RAY_LINE: list[str] | None = None  # serve options for the Ray line, e.g. ["--ray", "local"]

STOP = {"a", "an", "and", "the", "of", "for", "to", "in", "on", "with", "from", "by", "as",
        "or", "not", "near", "into", "at", "is", "be"}


def make_queries(path: Path, n: int = 256) -> list[str]:
    """``n`` valid BQL queries from the collection's titles, deterministic."""
    from sieve_lite.store import connect

    conn = connect(path, readonly=True)
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM documents ORDER BY rowid")]
    finally:
        conn.close()
    out: list[str] = []
    for i, title in enumerate(titles):
        ws = [w for w in re.findall(r"[a-z]+", title.lower()) if len(w) > 2 and w not in STOP]
        if len(ws) < 2:
            continue
        a, b = ws[0], ws[-1]
        form = i % 5
        if form == 0:
            out.append(f"{a} {b}")
        elif form == 1:
            out.append(f"{a}[title]")
        elif form == 2:
            out.append(f'"{ws[0]} {ws[1]}"')
        elif form == 3:
            out.append(f"{a} OR {b}")
        else:
            out.append(f"{b} AND date[2005..]")
        if len(out) == n:
            break
    return out


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def in_process(queries: list[str], ranker: str, seconds: float) -> dict[str, Any]:
    import sieve_lite

    with sieve_lite.open(PEPS) as coll:
        for q in queries[:32]:  # warm: the model, the ranker's caches
            coll.search(q, k=K, ranker=ranker)
        times: list[float] = []
        t0 = time.perf_counter()
        i = 0
        while time.perf_counter() - t0 < seconds or i < len(queries):
            t = time.perf_counter()
            coll.search(queries[i % len(queries)], k=K, ranker=ranker)
            times.append(time.perf_counter() - t)
            i += 1
        wall = time.perf_counter() - t0
    return {"qps": i / wall, "p50_ms": pct(times, 0.5) * 1e3, "p99_ms": pct(times, 0.99) * 1e3,
            "queries": i}


def start_server(workers: int, ranker: str, extra: list[str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*CLI, "serve", "--workers", str(workers), "--port", "0",
                             "--ranker", ranker, *extra, str(PEPS)],
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.stderr is not None
    while True:
        line = proc.stderr.readline()
        if not line:
            raise SystemExit(f"the server did not start (exit {proc.wait()})")
        m = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if m:
            return proc, m.group(0)


def worker_rss_mb(pid: int) -> list[float]:
    """RSS of the server's worker processes (its children; itself when it has none)."""
    def rss(p: int) -> float:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            ks = [int(x) for x in (task / "children").read_text().split()]
            kids += [k for k in ks if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]
        except OSError:
            pass
    return [round(rss(p), 1) for p in (kids or [pid])]


async def load(url: str, queries: list[str], batch: int, concurrency: int,
               seconds: float) -> dict[str, Any]:
    import httpx2 as httpx  # the HTTP client the mcp SDK brings

    lat: list[float] = []
    errors = 0
    answered = 0
    cursor = 0
    deadline = time.perf_counter() + seconds

    async def client(c: int) -> None:
        nonlocal errors, answered, cursor
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            sent = 0
            while time.perf_counter() < deadline or sent == 0:
                qs = [queries[(cursor + j) % len(queries)] for j in range(batch)]
                cursor += batch
                t = time.perf_counter()
                try:
                    r = await http.post("retrieve", json={"queries": qs, "topk": K,
                                                          "return_scores": True})
                    body = r.json()
                    ok = r.status_code == 200 and not body["errors"] and \
                        len(body["result"]) == batch
                except (httpx.HTTPError, ValueError, KeyError):
                    ok = False
                lat.append(time.perf_counter() - t)
                sent += 1
                if ok:
                    answered += batch
                else:
                    errors += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(concurrency)))
    wall = time.perf_counter() - t0
    return {"batch": batch, "concurrency": concurrency, "qps": answered / wall,
            "requests": len(lat), "p50_ms": pct(lat, 0.5) * 1e3,
            "p99_ms": pct(lat, 0.99) * 1e3, "errors": errors}


def run_server(label: str, workers: int, ranker: str, extra: list[str], queries: list[str],
               seconds: float) -> list[dict[str, Any]]:
    proc, url = start_server(workers, ranker, extra)
    rows = []
    try:
        asyncio.run(load(url, queries, 32, 2 * workers, 2.0))  # warm every worker
        for batch, conc in CELLS:
            row = asyncio.run(load(url, queries, batch, conc, seconds))
            row.update(server=label, workers=workers, rss_mb=worker_rss_mb(proc.pid))
            rows.append(row)
            print(f"  {label:10} batch {batch:4} x {conc:2} in flight: {row['qps']:8.1f} q/s  "
                  f"p50 {row['p50_ms']:8.1f} ms  p99 {row['p99_ms']:8.1f} ms  errors "
                  f"{row['errors']}  RSS MB {row['rss_mb']}", flush=True)
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
        if code not in (0, 1):
            print(f"  note: {label} exited {code} on SIGTERM")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0, help="per cell")
    ap.add_argument("--ranker", default="hybrid")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--ray", default=None, metavar="ADDRESS|local")
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load0 = os.getloadavg()
    queries = make_queries(PEPS)
    print(f"{len(queries)} queries, k={K}, ranker {args.ranker}, {args.seconds:g} s a cell, "
          f"{os.cpu_count()} cores, load average {load0[0]:.2f}", flush=True)
    before = in_process(queries, args.ranker, args.seconds)
    print(f"  in-process: {before['qps']:.1f} q/s  p50 {before['p50_ms']:.1f} ms  "
          f"p99 {before['p99_ms']:.1f} ms", flush=True)
    rows: list[dict[str, Any]] = []
    for w in args.workers:
        rows += run_server(f"workers {w}", w, args.ranker, [], queries, args.seconds)
    if args.ray:
        if RAY_LINE is None:
            raise SystemExit("--ray: sieve-lite serve has no --ray yet (RAY_LINE)")
        rows += run_server("ray", 1, args.ranker, [*RAY_LINE, args.ray], queries, args.seconds)
    after = in_process(queries, args.ranker, args.seconds)
    print(f"  in-process again: {after['qps']:.1f} q/s", flush=True)
    ceiling = max(before["qps"], after["qps"])
    load1 = os.getloadavg()
    print(f"\nload average {load0[0]:.2f} at start, {load1[0]:.2f} at end; in-process ceiling "
          f"{ceiling:.1f} q/s (p50 {before['p50_ms']:.1f} ms a query)\n")
    print("| server | batch | in flight | queries/s | x in-process | p50 ms | p99 ms | errors "
          "| RSS MB per worker |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['server']} | {r['batch']} | {r['concurrency']} | {r['qps']:.1f} | "
              f"{r['qps'] / ceiling:.2f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
              f"{r['errors']} | {', '.join(f'{x:.0f}' for x in r['rss_mb'])} |")
    target = [r for r in rows if r["workers"] == 2 and r["server"] == "workers 2"
              and r["batch"] == 32 and r["concurrency"] == 4]
    single16 = [r for r in rows if r["batch"] == 1 and r["concurrency"] == 16]
    for r in target:
        ratio = r["qps"] / ceiling
        print(f"\ntarget: workers 2, 32 a request, 4 in flight: {ratio:.2f}x in-process "
              f"(>= 0.8: {'met' if ratio >= 0.8 and not r['errors'] else 'MISSED'}), "
              f"{r['errors']} errors")
    for r in single16:
        print(f"target: 16 clients, single queries ({r['server']}): {r['errors']} errors "
              f"({'met' if not r['errors'] else 'MISSED'})")
    if args.json:
        args.json.write_text(json.dumps({"load_average": [load0, load1],
                                         "in_process": [before, after], "rows": rows},
                                        indent=1))


if __name__ == "__main__":
    main()
