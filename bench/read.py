"""Reading prose on its own: the gold section of each dev question, read as the agent reads it.

For every prose question of a dev set (``bench/data/pep-natural.jsonl`` by default) the gold
section is narrowed to the question (``agent/read.py``) and the model chooses among its
candidates (``agent/choice.py``). Reported:

* where the sentence holding the answer ranks among the section's sentences, by their words
  alone and fused with the query embedder's cosine (``--dense``);
* whether an exact candidate is among all the candidates and among those offered;
* the choice: the top candidate right, answered right, answered wrong, abstained; and the
  model's seconds, for each method: ``likelihood`` (the model's log-likelihood of each
  candidate, prompt cached) and ``grammar`` (a constrained choice: the reply decoded under a
  grammar of the candidates).

    python bench/read.py                              # natural PEP questions, both methods
    python bench/read.py --set bench/data/rfc-natural.jsonl --db bench/out/rfcs.db
    python bench/read.py --methods likelihood --dense

The model is the shipped SmolLM2-135M on ``--threads`` llama.cpp threads (default 1: other
work on a 2-core machine otherwise slows it several times).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite.agent import choice  # noqa: E402
from sieve_lite.agent.backbones import LlamaBackbone  # noqa: E402
from sieve_lite.agent.question import analyze  # noqa: E402
from sieve_lite.agent.read import (  # noqa: E402
    collection_embedder,
    collection_idf,
    rank_sentences,
    read_for,
    split_sentences,
)
from sieve_lite.eval import normalize_answer  # noqa: E402


def sentence_rank(q, text: str, golds: list[str], idf, embed) -> int:
    ranked = rank_sentences(q, split_sentences(text), idf, embed)
    for i, s in enumerate(ranked):
        if any(g and g in normalize_answer(s.text) for g in golds):
            return i
    return 99


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", type=Path, default=ROOT / "bench" / "data" / "pep-natural.jsonl")
    ap.add_argument("--db", type=Path, default=ROOT / "collections" / "peps.db")
    ap.add_argument("--methods", default="likelihood,grammar")
    ap.add_argument("--dense", action="store_true", help="also rank sentences with embeddings")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    coll = sieve_lite.open(args.db)
    idf = collection_idf(coll)
    embed = collection_embedder(coll) if args.dense else None
    bb = LlamaBackbone(n_ctx=4096, n_threads=args.threads)
    methods = [m for m in args.methods.split(",") if m]
    rows = [json.loads(x) for x in args.set.read_text(encoding="utf-8").splitlines() if x]
    rows = [r for r in rows if r["kind"] == "prose"]
    stats: dict[str, dict[str, float]] = {m: {"top": 0, "right": 0, "wrong": 0, "abstained": 0}
                                          for m in methods}
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    first_lex = first_dense = in_all = in_offered = 0
    for r in rows:
        q = analyze(r["question"])
        doc, sec = r["gold_sections"][0]
        text = coll.fetch(doc, sec).text
        golds = [normalize_answer(a) for a in [r["answer"], *r.get("answer_aliases", [])]]
        first_lex += sentence_rank(q, text, golds, idf, None) == 0
        if embed is not None:
            first_dense += sentence_rank(q, text, golds, idf, embed) == 0
        reading = read_for(q, text, (doc, sec), idf)
        exact = [c for c in reading.candidates if normalize_answer(c.text) in golds]
        in_all += bool(exact)
        in_offered += any(normalize_answer(c.text) in golds
                          for c in choice.offered(reading.candidates))
        marks = []
        for m in methods:
            t0 = time.perf_counter()
            if m == "likelihood":
                ch = choice.by_likelihood(bb, q, reading.text(), reading.candidates)
            else:
                ch = choice.by_grammar(bb, q, reading.text(), reading.candidates, "sieve")
            seconds[m].append(time.perf_counter() - t0)
            top = ch.scores[0]["text"] if ch.scores else ""
            right = any(g and g in normalize_answer(top) for g in golds)
            stats[m]["top"] += right
            if ch.answer is None:
                stats[m]["abstained"] += 1
                marks.append(f"{m}: --")
            elif right:
                stats[m]["right"] += 1
                marks.append(f"{m}: OK")
            else:
                stats[m]["wrong"] += 1
                marks.append(f"{m}: XX {ch.answer.text!r}")
        print(f"{r['id']:12s} gold {r['answer']!r:28s} {' | '.join(marks)}", flush=True)
    n = len(rows)
    print(f"\n{n} prose questions, gold section read: the answer's sentence ranks first "
          f"{first_lex}/{n} by its words" + (f", {first_dense}/{n} fused with embeddings"
                                             if embed is not None else "")
          + f"; an exact candidate among all {in_all}/{n}, among the {choice.OFFERED} offered "
          f"{in_offered}/{n}")
    for m in methods:
        s = stats[m]
        print(f"{m:10s}: top candidate right {s['top']:.0f}/{n}; answered right "
              f"{s['right']:.0f}, wrong {s['wrong']:.0f}, abstained {s['abstained']:.0f}; "
              f"median {statistics.median(seconds[m]):.2f} s a choice")


if __name__ == "__main__":
    main()
