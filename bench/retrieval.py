"""Retrieval benchmark: recall@2 and recall@5 of the gold passages on the shared 2Wiki (354
questions) and HotpotQA (the 342 questions whose gold passages are in the collection) sets,
and on the PEP development set (``bench/data/pep-dev.jsonl``, 60 questions over the 736 PEPs):
whether the document the question names (its first gold document) is in the top 5; for the
bm25, bm25-doc, dense and hybrid rankers.

Query: the question's words (``sieve_lite.words``) as an unfielded ranked query over the whole
collection - exactly what a search does in its zero-hit fallback (an implicit AND of a whole
question admits almost nothing): ``sieve_lite.search.rank_set(coll, words, None, ranker, k)``.
No stop-word list, no stemming: the BQL word rule, as for every other query.

Recall@k of a question = |gold ids in the top k| / |gold ids|, averaged over the questions
(HippoRAG's definition; its BM25 anchors are 2Wiki R@5 61.9, HotpotQA R@5 72.2).

PEP dev set: "top 5" = the share of questions whose named document (``gold_docs[0]``; for a
two-hop question the PEP it starts from) is among the first 5; "any@5" counts a question when
any of its gold documents is; per kind (header, section, lookup, two-hop) for bm25.

``--check`` also compares the ``bm25`` top 10 of every question with an independent
passage-level BM25 (``tests/oracles.py``: bm25s over passages cut from the source documents,
a document scoring as its best passage) and reports how many agree (scores to 1e-9).

Each question is embedded once (dense and hybrid share it), so the ms/query of the ranker
that runs second excludes the query embedding.

Collections are built with embeddings (the default MiniLM model) and cached as
``bench/out/{2wiki,hotpotqa,peps}.db`` (several minutes each on 2 cores the first time).

    python bench/retrieval.py                 # all sets, all rankers
    python bench/retrieval.py --sets peps --rankers bm25 bm25-doc --check
    python bench/retrieval.py --lexical --check   # bm25 and bm25-doc only, no embeddings
    python bench/retrieval.py --embedders torch onnx --rankers dense hybrid

``--embedders`` builds each set once per document embedder (``SIEVE_LITE_BUILD_EMBEDDER``:
``torch`` = sentence-transformers fp32 at 256 tokens, what builds used before issue 21;
``onnx`` = the int8 ONNX Runtime default) as ``bench/out/NAME-EMBEDDER.db`` and prints their
rows one after the other, with the mean cosine between the two builds' vectors of the same
documents. Queries are embedded the same way for both (``NumpyBert``, fp32).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside the checkout; SIEVE_LITE_SHARED names another place (a git worktree's).
SHARED = Path(os.environ.get("SIEVE_LITE_SHARED") or ROOT.parent / "shared")
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import sieve_lite  # noqa: E402
from sieve_lite import rank, store  # noqa: E402
from sieve_lite.build import build_collection  # noqa: E402
from sieve_lite.search import rank_set  # noqa: E402
from sieve_lite.sources import iter_documents  # noqa: E402
from sieve_lite.words import words  # noqa: E402

RANKERS = ["bm25", "bm25-doc", "dense", "hybrid"]

SETS = {
    # name: (corpus file, questions file, build format)
    "2wiki": (SHARED / "data/qa/2wiki/corpus.json", SHARED / "data/qa/2wiki/questions.json",
              "2wiki"),
    "hotpotqa": (SHARED / "data/qa/hotpotqa/corpus.jsonl",
                 SHARED / "data/qa/hotpotqa/questions.jsonl", "hotpotqa"),
    "peps": (SHARED / "data/corpora/peps", ROOT / "bench/data/pep-dev.jsonl", "rst"),
}
ANCHORS = {"2wiki": 61.9, "hotpotqa": 72.2}  # HippoRAG BM25 R@5
PEP_TARGET = 95.0  # issue 15: the named document in the top 5 with bm25


def load_questions(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        qs = json.loads(text)
    else:
        qs = [json.loads(line) for line in text.splitlines() if line.strip()]
    # HotpotQA: only the questions whose gold passages are in the shared collection.
    return [q for q in qs if q.get("gold_in_context", True)]


def stale(path: Path) -> bool:
    """A cached collection of another schema version, or built before a schema change (the
    version is not always bumped during development), is rebuilt."""
    import re

    from sieve_lite.store.schema import migrations

    want = {t for _n, _name, mod in migrations()
            for t in re.findall(r"CREATE (?:VIRTUAL )?TABLE (\w+)", mod.SQL)}
    conn = store.connect(path)
    try:
        have = {n for (n,) in conn.execute("SELECT name FROM sqlite_schema")}
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()
    return not want <= have or version != store.SCHEMA_VERSION


def gold(q: dict) -> set[str]:
    """Gold passage ids: the supporting-fact titles (ids are titles in these two sets)."""
    return {t for t, *_ in q["supporting_facts"]}


def collection(name: str, lexical: bool = False, embedder: str = "") -> Path:
    corpus, _, fmt = SETS[name]
    path = OUT / f"{name}{'-lex' if lexical else ''}{'-' + embedder if embedder else ''}.db"
    if path.exists() and stale(path):
        path.unlink()
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        print(f"building {path}{'' if lexical else ' with embeddings (minutes)'}...",
              file=sys.stderr)
        from sieve_lite import embed

        before = os.environ.get(embed.BUILD_EMBEDDER_ENV)
        if embedder:
            os.environ[embed.BUILD_EMBEDDER_ENV] = embedder.rstrip("0123456789")
        try:
            started = time.perf_counter()
            rep = build_collection(iter_documents([corpus], fmt), path, embed=not lexical,
                                   quiet=True)
            print(f"  built in {time.perf_counter() - started:.0f} s (embedding "
                  f"{rep.timings.get('embed', 0):.0f} s)", file=sys.stderr)
        finally:
            if before is None:
                os.environ.pop(embed.BUILD_EMBEDDER_ENV, None)
            else:
                os.environ[embed.BUILD_EMBEDDER_ENV] = before
    return path


def vector_cosine(a: Path, b: Path) -> tuple[float, float]:
    """(mean, min) cosine between two builds' stored vectors of the same document ids."""
    import numpy as np

    def read(path: Path) -> dict[str, bytes]:
        conn = store.connect(path)
        try:
            return dict(conn.execute("SELECT d.id, v.embedding FROM doc_vectors v "
                                     "JOIN documents d ON d.rowid = v.rowid"))
        finally:
            conn.close()

    va, vb = read(a), read(b)
    ids = sorted(va.keys() & vb.keys())
    x = np.frombuffer(b"".join(va[i] for i in ids), dtype=np.float32).reshape(len(ids), -1)
    y = np.frombuffer(b"".join(vb[i] for i in ids), dtype=np.float32).reshape(len(ids), -1)
    cos = np.sum(x * y, axis=1)
    return float(cos.mean()), float(cos.min())


_embed_query = rank.embed_query
_cache: dict[tuple[int, str], object] = {}


def _cached_embed_query(coll, text: str):
    """dense and hybrid embed the same question: embed it once (saves half the model time)."""
    key = (id(coll), text)
    if key not in _cache:
        _cache[key] = _embed_query(coll, text)
    return _cache[key]


rank.embed_query = _cached_embed_query


def source_docs(name: str) -> list[dict]:
    """The set's documents as DOCUMENTS.md dicts (for the oracle), as the build reads them."""
    from sieve_lite.documents import Document

    corpus, _, fmt = SETS[name]
    return [d.to_dict() for d in iter_documents([corpus], fmt) if isinstance(d, Document)]


def run(name: str, rankers: list[str], check: bool = False, lexical: bool = False,
        embedder: str = "") -> dict:
    _, qpath, _ = SETS[name]
    questions = load_questions(qpath)
    out: dict = {"questions": len(questions)}
    label = f"{name}{'/' + embedder if embedder else ''}"
    with sieve_lite.open(collection(name, lexical, embedder)) as coll:
        for ranker in rankers:
            r2 = r5 = any5 = 0.0
            kinds: dict[str, list[int]] = {}
            started = time.perf_counter()
            for q in questions:
                ws = [(w, False) for w in words(q["question"])]
                notes: list[str] = []
                used, hits = rank_set(coll, ws, None, ranker, 5, notes)
                if used != ranker:
                    raise SystemExit(f"{name}: {ranker} ran as {used}: {notes}")
                ids = [h.id for h in hits]
                if name == "peps":
                    named = q["gold_docs"][0] in ids[:5]
                    r5 += named
                    any5 += any(g in ids[:5] for g in q["gold_docs"])
                    kinds.setdefault(q["kind"], []).append(int(named))
                    continue
                g = gold(q)
                r2 += len(g & set(ids[:2])) / len(g)
                r5 += len(g & set(ids[:5])) / len(g)
            n = len(questions)
            ms = round(1000 * (time.perf_counter() - started) / n, 1)
            if name == "peps":
                out[ranker] = {"top5": round(100 * r5 / n, 1), "any@5": round(100 * any5 / n, 1),
                               "by_kind": {k: f"{sum(v)}/{len(v)}" for k, v in kinds.items()},
                               "ms_per_query": ms}
                print(f"{label:9s} {ranker:8s} top5 {out[ranker]['top5']:5.1f}  any@5 "
                      f"{out[ranker]['any@5']:5.1f}  by kind {out[ranker]['by_kind']}  "
                      f"({ms} ms/query)", flush=True)
                continue
            out[ranker] = {"R@2": round(100 * r2 / n, 1), "R@5": round(100 * r5 / n, 1),
                           "ms_per_query": ms}
            print(f"{label:9s} {ranker:8s} R@2 {out[ranker]['R@2']:5.1f}  "
                  f"R@5 {out[ranker]['R@5']:5.1f}  ({ms} ms/query)", flush=True)
        if check:
            out["check"] = check_exact(name, coll, questions)
    return out


def check_exact(name: str, coll, questions: list[dict]) -> dict:
    """The bm25 top 10 of every question against the independent passage-level oracle."""
    from oracles import PassageOracle, assert_same_top

    oracle = PassageOracle(source_docs(name))
    agree = 0
    for q in questions:
        ws = words(q["question"])
        _, hits = rank_set(coll, [(w, False) for w in ws], None, "bm25", 10, [])
        try:
            assert_same_top([(h.id, h.score) for h in hits if h.score > 0], oracle, ws)
            agree += 1
        except AssertionError as e:
            print(f"  {name}: top 10 differs for {q['question']!r}: {str(e)[:200]}")
    print(f"{name:9s} check    bm25 top 10 equal to bm25s passages on {agree}/{len(questions)}"
          " questions", flush=True)
    return {"equal_top10": agree, "questions": len(questions)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    ap.add_argument("--rankers", nargs="+", choices=RANKERS, default=RANKERS)
    ap.add_argument("--check", action="store_true",
                    help="compare the bm25 top 10 with bm25s over passages")
    ap.add_argument("--lexical", action="store_true",
                    help="collections without embeddings (bench/out/NAME-lex.db): bm25 and "
                         "bm25-doc only, minutes faster to build")
    ap.add_argument("--embedders", nargs="+", choices=["torch", "onnx"], default=[],
                    help="build and compare each set once per document embedder")
    ap.add_argument("--onnx-tokens", type=int, default=0,
                    help="cut documents at this many tokens in onnx builds (default: "
                         "embed.FAST_MAX_TOKENS); the collection is named onnx<N>")
    args = ap.parse_args()
    if args.onnx_tokens:
        from sieve_lite import embed

        embed.FAST_MAX_TOKENS = args.onnx_tokens
        args.embedders = [f"onnx{args.onnx_tokens}" if e == "onnx" else e
                          for e in args.embedders]
    if args.lexical:
        args.rankers = [r for r in args.rankers if r.startswith("bm25")]
    path = OUT / "retrieval.json"
    results = json.loads(path.read_text()) if path.exists() else {}  # keep other sets' rows
    for name in args.sets:
        if args.embedders:
            for emb in args.embedders:
                results[f"{name}-{emb}"] = run(name, args.rankers, args.check, False, emb)
            if len(args.embedders) == 2:
                mean, low = vector_cosine(collection(name, False, args.embedders[0]),
                                          collection(name, False, args.embedders[1]))
                results[f"{name}-cosine"] = {"mean": round(mean, 5), "min": round(low, 5)}
                print(f"{name:9s} cosine   {args.embedders[0]} vs {args.embedders[1]} stored "
                      f"vectors: mean {mean:.5f}, min {low:.5f}")
            continue
        results[name] = run(name, args.rankers, args.check, args.lexical)
        if "bm25" in results[name] and name in ANCHORS:
            print(f"{name:9s} anchor   BM25 R@5 {ANCHORS[name]} (HippoRAG)")
        elif "bm25" in results[name]:
            print(f"{name:9s} target   bm25 top5 >= {PEP_TARGET}")
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
