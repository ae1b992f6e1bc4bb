"""In-place updates with readers: 4 processes search a collection while another adds and removes
documents in it. Prints the update times, the readers' search latency before and during the
updates (medians, p99, the worst wait) and every reader failure (there must be none).

    python bench/update.py [--docs N] [--readers 4] [--rounds 5] [--batch 50] [--seconds 10]

The collection is the 2WikiMultihopQA passages of ../shared/data/qa/2wiki (lexical, bm25);
each round adds ``--batch`` new passages (copies with new ids) in one ``add`` and removes them
in one ``remove``. Reader latency includes waiting for a commit. The machine is shared: the
figures are medians, and the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

READER = textwrap.dedent("""
    import json, os, sys, time
    import sieve_lite
    path, go, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    queries = ["river", "born OR died", "film director", "football club", "\\"united states\\"",
               "album", "war -peace", "church", "university", "king OR queen"]
    out, failures, i = [], [], 0
    with sieve_lite.open(path) as coll:
        coll.search("warm", k=5, ranker="bm25")
        while not os.path.exists(go):
            time.sleep(0.01)
        while not os.path.exists(stop):
            gen = coll.generation
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                coll.search(queries[i % len(queries)], k=5, ranker="bm25")
            except Exception as e:
                failures.append(f"{type(e).__name__}: {e}")
            out.append((time.time(), time.perf_counter() - t0, time.process_time() - c0,
                        coll.generation != gen))
            i += 1
    print(json.dumps({"samples": out, "failures": failures}))
""")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=0, help="passages to use (0: all)")
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=10.0, help="reading before the updates")
    args = ap.parse_args()

    from sieve_lite.build import build_collection
    from sieve_lite.documents import Document
    from sieve_lite.sources import iter_documents
    from sieve_lite.update import add_documents, remove_documents

    corpus = SHARED / "data" / "qa" / "2wiki" / "corpus.json"
    docs = [d for d in iter_documents([corpus], "2wiki") if isinstance(d, Document)]
    if args.docs:
        docs = docs[:args.docs]
    tmp = Path(tempfile.mkdtemp(prefix="bench-update-"))
    db = tmp / "c.db"
    t0 = time.perf_counter()
    build_collection(docs, db, embed=False, quiet=True)
    print(f"built {len(docs):,} documents in {time.perf_counter() - t0:.1f} s "
          f"({db.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    extra = [Document.from_dict({"id": f"extra-{i}", "title": d.title + " (copy)",
                                 "text": d.sections[0].text})
             for i, d in enumerate(docs[:args.batch])]
    script, go, stop = tmp / "reader.py", tmp / "go", tmp / "stop"
    script.write_text(READER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    readers = [subprocess.Popen([sys.executable, str(script), str(db), str(go), str(stop)],
                                stdout=subprocess.PIPE, text=True, env=env)
               for _ in range(args.readers)]
    time.sleep(3)  # they open the collection and warm up
    go.touch()
    time.sleep(args.seconds)
    updates_from = time.time()
    adds, removes = [], []
    for _ in range(args.rounds):
        adds.append(add_documents(db, extra).seconds)
        removes.append(remove_documents(db, [d.id for d in extra]).seconds)
    updates_to = time.time()
    time.sleep(1)
    stop.touch()
    results = [json.loads(p.communicate()[0]) for p in readers]
    samples = [x for r in results for x in r["samples"]]
    before = [dt for t, dt, _c, reload in samples if t < updates_from]
    during = [dt for t, dt, _c, reload in samples if updates_from <= t <= updates_to]
    cpu_before = [c for t, _dt, c, _r in samples if t < updates_from]
    cpu_during = [c for t, _dt, c, _r in samples if updates_from <= t <= updates_to]
    reloads = [dt for _t, dt, _c, reload in samples if reload]
    failures = [f for r in results for f in r["failures"]]
    ms = 1000.0
    print(f"collection: {len(docs):,} documents; {args.readers} readers (bm25 searches, k=5); "
          f"{args.rounds} rounds of add {args.batch} + remove {args.batch}")
    print(f"update seconds, median: add {statistics.median(adds):.2f}, "
          f"remove {statistics.median(removes):.2f}")
    print(f"reader searches: {len(before):,} before, {len(during):,} during the updates")
    for name, xs in (("before", before), ("during", during)):
        print(f"  {name:6} median {statistics.median(xs) * ms:7.1f} ms   p99 "
              f"{pct(xs, 0.99) * ms:7.1f} ms   max {max(xs) * ms:7.1f} ms")
    print(f"  during/before: median x{statistics.median(during) / statistics.median(before):.2f}"
          f", p99 x{pct(during, 0.99) / pct(before, 0.99):.2f}")
    print(f"  reader CPU per search, median: before {statistics.median(cpu_before) * ms:.1f} ms, "
          f"during {statistics.median(cpu_during) * ms:.1f} ms (the rest of the wall time is "
          "waiting: for a core, or for a commit)")
    print(f"  searches that first reloaded the changed collection: {len(reloads)}, median "
          f"{statistics.median(reloads) * ms if reloads else 0:.1f} ms")
    print(f"reader failures: {len(failures)}" + (f" (first: {failures[0]})" if failures else ""))
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
