"""Retrieval benchmark: recall@2 and recall@5 of the gold passages on the shared 2Wiki (354
questions) and HotpotQA (the 342 questions whose gold passages are in the collection) sets,
for the bm25, dense and hybrid rankers.

Query: the question's words (``sieve_lite.words``) as an unfielded ranked query over the whole
collection - exactly what a search does in its zero-hit fallback (an implicit AND of a whole
question admits almost nothing): ``sieve_lite.search.rank_set(coll, words, None, ranker, k)``.
No stop-word list, no stemming: the BQL word rule, as for every other query.

Recall@k of a question = |gold ids in the top k| / |gold ids|, averaged over the questions
(HippoRAG's definition; its BM25 anchors are 2Wiki R@5 61.9, HotpotQA R@5 72.2).

Each question is embedded once (dense and hybrid share it), so the ms/query of the ranker
that runs second excludes the query embedding.

Collections are built with embeddings (the default MiniLM model) and cached as
``bench/out/{2wiki,hotpotqa}.db`` (several minutes each on 2 cores the first time).

    python bench/retrieval.py                 # both sets, all rankers
    python bench/retrieval.py --sets 2wiki --rankers bm25
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite import rank, store  # noqa: E402
from sieve_lite.build import build_collection  # noqa: E402
from sieve_lite.search import rank_set  # noqa: E402
from sieve_lite.sources import iter_documents  # noqa: E402
from sieve_lite.words import words  # noqa: E402

SETS = {
    # name: (corpus file, questions file, build format)
    "2wiki": (SHARED / "data/qa/2wiki/corpus.json", SHARED / "data/qa/2wiki/questions.json",
              "2wiki"),
    "hotpotqa": (SHARED / "data/qa/hotpotqa/corpus.jsonl",
                 SHARED / "data/qa/hotpotqa/questions.jsonl", "hotpotqa"),
}
ANCHORS = {"2wiki": 61.9, "hotpotqa": 72.2}  # HippoRAG BM25 R@5


def load_questions(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        qs = json.loads(text)
    else:
        qs = [json.loads(line) for line in text.splitlines() if line.strip()]
    # HotpotQA: only the questions whose gold passages are in the shared collection.
    return [q for q in qs if q.get("gold_in_context", True)]


def stale(path: Path) -> bool:
    """A cached collection built before a schema change lacks tables of the current schema
    (the schema version is not always bumped during development): rebuild it then."""
    import re

    from sieve_lite.store.migrations import m001_initial

    want = set(re.findall(r"CREATE (?:VIRTUAL )?TABLE (\w+)", m001_initial.SQL))
    conn = store.connect(path)
    try:
        have = {n for (n,) in conn.execute("SELECT name FROM sqlite_schema")}
    finally:
        conn.close()
    return not want <= have


def gold(q: dict) -> set[str]:
    """Gold passage ids: the supporting-fact titles (ids are titles in these two sets)."""
    return {t for t, *_ in q["supporting_facts"]}


def collection(name: str) -> Path:
    corpus, _, fmt = SETS[name]
    path = OUT / f"{name}.db"
    if path.exists() and stale(path):
        path.unlink()
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        print(f"building {path} with embeddings (minutes)...", file=sys.stderr)
        build_collection(iter_documents([corpus], fmt), path, embed=True, quiet=True)
    return path


_embed_query = rank.embed_query
_cache: dict[tuple[int, str], object] = {}


def _cached_embed_query(coll, text: str):
    """dense and hybrid embed the same question: embed it once (saves half the model time)."""
    key = (id(coll), text)
    if key not in _cache:
        _cache[key] = _embed_query(coll, text)
    return _cache[key]


rank.embed_query = _cached_embed_query


def run(name: str, rankers: list[str]) -> dict:
    _, qpath, _ = SETS[name]
    questions = load_questions(qpath)
    out: dict = {"questions": len(questions)}
    with sieve_lite.open(collection(name)) as coll:
        for ranker in rankers:
            r2 = r5 = 0.0
            started = time.perf_counter()
            for q in questions:
                ws = [(w, False) for w in words(q["question"])]
                notes: list[str] = []
                used, hits = rank_set(coll, ws, None, ranker, 5, notes)
                if used != ranker:
                    raise SystemExit(f"{name}: {ranker} ran as {used}: {notes}")
                g = gold(q)
                ids = [h.id for h in hits]
                r2 += len(g & set(ids[:2])) / len(g)
                r5 += len(g & set(ids[:5])) / len(g)
            n = len(questions)
            out[ranker] = {"R@2": round(100 * r2 / n, 1), "R@5": round(100 * r5 / n, 1),
                           "ms_per_query": round(1000 * (time.perf_counter() - started) / n, 1)}
            print(f"{name:9s} {ranker:7s} R@2 {out[ranker]['R@2']:5.1f}  "
                  f"R@5 {out[ranker]['R@5']:5.1f}  ({out[ranker]['ms_per_query']} ms/query)",
                  flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    ap.add_argument("--rankers", nargs="+", choices=["bm25", "dense", "hybrid"],
                    default=["bm25", "dense", "hybrid"])
    args = ap.parse_args()
    path = OUT / "retrieval.json"
    results = json.loads(path.read_text()) if path.exists() else {}  # keep other sets' rows
    for name in args.sets:
        results[name] = run(name, args.rankers)
        if "bm25" in results[name]:
            print(f"{name:9s} anchor  BM25 R@5 {ANCHORS[name]} (HippoRAG)")
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
