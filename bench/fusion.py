"""Reciprocal rank fusion in SQL against the numpy fusion it replaced (issue 21, item 5).

Run from the repository root::

    python bench/fusion.py                          # collections/peps.db, PEP dev questions
    python bench/fusion.py --db bench/out/hotpotqa-onnx.db --questions \\
        ../shared/data/qa/hotpotqa/questions.jsonl --repeat 7

For every question (its words as an unfielded query over the whole collection, as
``bench/retrieval.py`` ranks them) and k = 5 and k = 100, one process times, interleaved:

* ``numpy``: the fusion as it was before (``fuse_numpy`` below, kept here as the reference):
  RRF scores of the candidates in numpy, sorted by score then id, then the string ids read
  by ``ids_of``;
* ``sql``: ``rank.fuse``, one statement (``store.ranking.rrf``): ranks in, RRF scores and ids
  out, ties by id;
* ``hybrid``: the whole ``rank.hybrid`` call (runs, ranks, fusion, fill), for scale.

The runs and each candidate's ranks are computed once per question, outside the timing (numpy
produces them in both). Each question's time is the median of ``--repeat``; the table shows
p50 and p95 over the questions, and checks that both fusions return the same ids and
scores for every question.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import sieve_lite  # noqa: E402
from sieve_lite import rank as rk  # noqa: E402
from sieve_lite.words import words  # noqa: E402


def fuse_numpy(coll, cand: np.ndarray, ranks: list[np.ndarray], k: int) -> list[rk.Ranked]:
    """The numpy fusion of before issue 21 (``rank.fuse`` then ``rank._ranked``)."""
    stats = rk.doc_stats(coll)
    score = np.zeros(len(cand), dtype=np.float64)
    for r in ranks:
        score += np.where(r > 0, 1.0 / (rk.RRF_K + np.maximum(r, 1)), 0.0)
    keep = score > 0
    rows, scores = rk.sort_scored(stats, cand[keep], score[keep], k)
    return rk._ranked(coll.conn, rows, scores)


def candidates(coll, terms, qvec, k: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """What ``rank.hybrid`` fuses: the union of both runs' top 2k + 60 and their ranks."""
    stats = rk.doc_stats(coll)
    depth = 2 * k + rk.RRF_K
    b_rows, b_sc = rk.bm25_pairs(coll, terms, None)
    d_rows, d_sc = rk.dense_scores(coll, qvec, None)
    cand = np.union1d(rk.sort_scored(stats, b_rows, b_sc, depth)[0],
                      rk.sort_scored(stats, d_rows, d_sc, depth)[0])
    return cand, [rk._ranks_in_run(stats, b_rows, b_sc, cand),
                  rk._ranks_in_run(stats, d_rows, d_sc, cand)]


def timed(fn, repeat: int) -> tuple[float, object]:
    out = None
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times), out


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(values, p)) if values else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, default=ROOT / "collections" / "peps.db")
    ap.add_argument("--questions", type=Path, default=ROOT / "bench" / "data" / "pep-dev.jsonl")
    ap.add_argument("--limit", type=int, default=60, help="at most this many questions")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ks", type=int, nargs="+", default=[5, 100])
    args = ap.parse_args()
    text = args.questions.read_text(encoding="utf-8")
    qs = json.loads(text) if text.lstrip().startswith("[") else \
        [json.loads(line) for line in text.splitlines() if line.strip()]
    qs = [q["question"] for q in qs][:args.limit]
    load_before = os.getloadavg()
    rows: dict[tuple[int, str], list[float]] = {}
    cands: dict[int, list[int]] = {}
    with sieve_lite.open(args.db) as coll:
        prepared = []
        for q in qs:
            ws = [(w, False) for w in words(q)]
            terms = rk.scoring_terms(ws)
            prepared.append((terms, rk.embed_query(coll, rk.query_text(ws))))
        for k in args.ks:
            for terms, qvec in prepared:
                cand, ranks = candidates(coll, terms, qvec, k)
                cands.setdefault(k, []).append(len(cand))
                fuse_numpy(coll, cand, ranks, k)  # warm
                a_ms, a = timed(functools.partial(fuse_numpy, coll, cand, ranks, k), args.repeat)
                b_ms, b = timed(functools.partial(rk.fuse, coll.conn, cand, ranks, k),
                                args.repeat)
                h_ms, _ = timed(functools.partial(rk.hybrid, coll, terms, qvec, None, k),
                                args.repeat)
                if a != b:
                    raise SystemExit(f"k={k}: the SQL fusion differs from numpy's")
                for name, ms in (("numpy", a_ms), ("sql", b_ms), ("hybrid", h_ms)):
                    rows.setdefault((k, name), []).append(ms)
        n_docs = coll.documents
    load_after = os.getloadavg()
    print(f"{args.db.name}: {n_docs:,} documents, {len(qs)} questions, median of "
          f"{args.repeat} per question; load average before "
          + " ".join(f"{x:.2f}" for x in load_before) + ", after "
          + " ".join(f"{x:.2f}" for x in load_after))
    print(f"{'k':>4} {'candidates':>11} {'step':<16} {'p50 ms':>8} {'p95 ms':>8}")
    for k in args.ks:
        for name, label in (("numpy", "fusion, numpy"), ("sql", "fusion, SQL"),
                            ("hybrid", "hybrid, whole")):
            ms = rows[(k, name)]
            print(f"{k:>4} {statistics.median(cands[k]):>11.0f} {label:<16} {pct(ms, 50):>8.3f} "
                  f"{pct(ms, 95):>8.3f}")
    print("same ids and scores from both fusions on every question: yes")


if __name__ == "__main__":
    main()
