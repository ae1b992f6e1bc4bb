"""Engine-only check of the planner (no model): for each question of a dev set, the sieve step
0 query (the plan, else the question's words), whether the first gold document is its first
card, and for two-hop questions whether the first gold document's infobox links to the second
as a reference the question asks about (``agent/hops.py``). Prints one line per question and
a count per kind::

    python bench/plan_reach.py bench/data/pep-dev4.jsonl
    python bench/plan_reach.py bench/data/pep-dev4.jsonl --words   # step 0 without a plan
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite.agent.hops import references  # noqa: E402
from sieve_lite.agent.plan import plan  # noqa: E402
from sieve_lite.agent.tools import or_words  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions", type=Path)
    ap.add_argument("--db", type=Path, default=ROOT / "collections" / "peps.db")
    ap.add_argument("--ranker", default="bm25")
    ap.add_argument("--words", action="store_true",
                    help="no planner: the question's words (step 0 of the other modes)")
    args = ap.parse_args()
    first: Counter[str] = Counter()
    linked: Counter[str] = Counter()
    total: Counter[str] = Counter()
    with sieve_lite.open(args.db) as coll:
        for line in args.questions.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            p = None if args.words else plan(coll, d["question"])
            query = p.query if p else or_words(d["question"])
            ids = [h.id for h in coll.search(query, k=3, ranker=args.ranker).results]
            gold = d["gold_docs"]
            kind = d["kind"]
            total[kind] += 1
            top = bool(ids) and ids[0] == gold[0]
            first[kind] += top
            link = ""
            if len(gold) > 1:
                refs = references(coll, coll.fetch(gold[0], "infobox").text, gold[0],
                                  d["question"])
                ok = any(r.doc == gold[1] and r.related for r in refs)
                linked[kind] += ok
                link = f" link {'ok' if ok else 'MISSING'}"
            print(f"{d['id']:14s} {kind:8s} {'top1' if top else 'miss'}{link}  {query[:90]}")
    for kind in total:
        extra = f", link found {linked[kind]}/{total[kind]}" if linked[kind] else ""
        print(f"{kind}: gold first card {first[kind]}/{total[kind]}{extra}")


if __name__ == "__main__":
    main()
