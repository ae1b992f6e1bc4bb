"""One file vs shards (issue 23): build time, search latency in process, and through Ray.

    python bench/shards.py [--shards 3] [--queries 60] [--repeat 3] [--embed] [--ray]

The corpus is the in-repo HotpotQA passages (955 documents; ``tests/data/qa/hotpotqa``), the
queries its first questions as OR queries (broad) and AND queries (mostly fallbacks). Prints
medians side by side and their ratios, and checks that every result is equal (a benchmark of
wrong answers is worthless). Bounded: a few hundred searches per configuration.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite.build import build_collection  # noqa: E402
from sieve_lite.shards.build import sharded_build  # noqa: E402
from sieve_lite.sources import iter_documents  # noqa: E402
from sieve_lite.words import words  # noqa: E402

HOTPOT = ROOT / "tests" / "data" / "qa" / "hotpotqa"


def queries(n: int) -> list[str]:
    qs = [json.loads(x)["question"] for x in (HOTPOT / "questions.jsonl").open()][:n]
    out = []
    for q in qs:
        ws = list(dict.fromkeys(words(q)))[:24]
        out += [" OR ".join(ws), " ".join(ws)]
    return out


def timed(coll, qs: list[str], ranker: str, repeat: int) -> tuple[float, list]:
    per, results = [], []
    for q in qs:
        best = []
        for _ in range(repeat):
            t = time.perf_counter()
            r = coll.search(q, k=10, ranker=ranker)
            best.append(time.perf_counter() - t)
        per.append(statistics.median(best))
        results.append(r.to_dict())
    return statistics.median(per) * 1000, results


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--embed", action="store_true", help="with embeddings (dense, hybrid)")
    ap.add_argument("--ray", action="store_true", help="also through Ray (a local cluster)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-shards-"))
    src = tmp / "hotpot.jsonl"
    rows = [json.loads(x) for x in (HOTPOT / "corpus.jsonl").open(encoding="utf-8")]
    src.write_text("".join(json.dumps({"id": r["title"], "title": r["title"],
                                       "text": r["text"]}) + "\n" for r in rows))
    t = time.perf_counter()
    build_collection(iter_documents([src], "jsonl"), tmp / "one.db", embed=a.embed, quiet=True)
    t_one = time.perf_counter() - t
    t = time.perf_counter()
    sharded_build(iter_documents([src], "jsonl"), tmp / "dir", a.shards, embed=a.embed)
    t_sh = time.perf_counter() - t
    print(f"corpus: {len(rows)} documents; build: one file {t_one:.1f} s, {a.shards} shards "
          f"{t_sh:.1f} s (x{t_sh / t_one:.2f})")
    qs = queries(a.queries)
    rankers = ["bm25", "bm25-doc"] + (["dense", "hybrid"] if a.embed else [])
    t = time.perf_counter()
    one = sieve_lite.open(tmp / "one.db")
    t_open1 = time.perf_counter() - t
    t = time.perf_counter()
    sh = sieve_lite.open(tmp / "dir")
    t_open2 = time.perf_counter() - t
    print(f"open: one file {t_open1 * 1000:.0f} ms, sharded {t_open2 * 1000:.0f} ms "
          "(checksums of every shard)")
    colls = {"one file": one, f"{a.shards} shards": sh}
    if a.ray:
        from sieve_lite.shards.ray import open_ray

        t = time.perf_counter()
        colls[f"{a.shards} shards on Ray"] = open_ray(tmp / "dir", "local")
        print(f"Ray: local cluster and actors up in {time.perf_counter() - t:.1f} s")
    print(f"\nmedian search latency, k=10, {len(qs)} queries x {a.repeat} (ms):")
    print(f"{'ranker':10}" + "".join(f"{n:>24}" for n in colls) + "   ratio to one file")
    for ranker in rankers:
        row, ref = [], None
        for coll in colls.values():
            ms, res = timed(coll, qs, ranker, a.repeat)
            if ref is None:
                ref = res
            elif res != ref:
                print(f"  RESULTS DIFFER for {ranker}")
                return 1
            row.append(ms)
        print(f"{ranker:10}" + "".join(f"{ms:24.2f}" for ms in row) + "   "
              + " ".join(f"x{ms / row[0]:.2f}" for ms in row[1:]))
    print("\nevery result equal to the one-file build's (ids, order, totals, scores, cards)")
    for c in colls.values():
        c.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
