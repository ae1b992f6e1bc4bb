"""Latency benchmark at >= 100,000 documents: bm25, dense and hybrid ranking.

The collection (cached as ``bench/out/latency-100k.db``) is synthetic:

* **text**: each document is a real passage of the shared HotpotQA + 2Wiki collections (so the
  word distribution, and hence FTS5 and BM25 work, is realistic), cycled to 100,000 documents,
  each with a unique title ``<passage title> #<n>``; built by the normal build path
  (``--no-embed``);
* **vectors**: 100,000 random unit vectors of 384 dimensions (the MiniLM size) written into
  the collection's ``doc_vectors`` table afterwards. They are meaningless, but the dense ranker
  does the same work on them as on real ones; the query vector is a random unit vector too, so
  the figures exclude query embedding (MiniLM, ~5-15 ms per query on CPU, reported apart).

Measured: the ranker call alone (``sieve_lite.rank``: admitted set in, top k out, k = 5), on a
warm collection (vectors and per-document arrays already read: the first dense call of a
process reads them, reported as "cold load"), median of the repetitions, wall clock
(``time.perf_counter``) and CPU time (``time.process_time``, one BLAS thread), one process;
the load average is printed because on a shared machine wall time inflates with it. Three
selections: the whole collection (what the zero-hit fallback ranks), a selective one (~1%)
and a broad one (~50%). Queries: 40 short entity-style queries (2-3 words of a random title)
and 40 question-style queries (the first 12 words of HotpotQA questions).

    python bench/latency.py                # build once (a few minutes), then measure
    python bench/latency.py --docs 200000  # another size (another cached file)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

# One BLAS thread: the figures are then per-core and CPU time is comparable to wall time.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite import rank as rk  # noqa: E402
from sieve_lite import store  # noqa: E402
from sieve_lite.build import build_collection  # noqa: E402
from sieve_lite.documents import Document, Section  # noqa: E402
from sieve_lite.embed import DEFAULT_MODEL  # noqa: E402
from sieve_lite.store.migrations.m001_initial import VEC_SQL  # noqa: E402
from sieve_lite.words import words  # noqa: E402

DIM = 384


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


def passages() -> list[tuple[str, str]]:
    out = [(r["title"], r["text"]) for r in map(json.loads, (
        SHARED / "data/qa/hotpotqa/corpus.jsonl").read_text(encoding="utf-8").splitlines())]
    out += [(r["title"], r["text"]) for r in json.loads(
        (SHARED / "data/qa/2wiki/corpus.json").read_text(encoding="utf-8"))]
    return out


def build(path: Path, n: int) -> None:
    src = passages()

    def docs():
        for i in range(n):
            title, text = src[i % len(src)]
            yield Document(id=f"d{i:07d}", title=f"{title} #{i}",
                           sections=(Section("(intro)", text),))

    print(f"building {path}: {n} documents (text) ...", file=sys.stderr, flush=True)
    build_collection(docs(), path, embed=False, quiet=True, force=True)
    print("adding synthetic vectors ...", file=sys.stderr, flush=True)
    conn = store.connect(path, readonly=False, need_vec=True)
    rng = np.random.default_rng(0)
    conn.execute("BEGIN")
    conn.execute(VEC_SQL.format(dim=DIM))
    for lo in range(1, n + 1, 10_000):
        hi = min(lo + 10_000, n + 1)
        v = rng.standard_normal((hi - lo, DIM)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        conn.executemany("INSERT INTO doc_vectors(rowid, embedding) VALUES (?, ?)",
                         [(lo + i, v[i].tobytes()) for i in range(hi - lo)])
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                     [("embed_dim", str(DIM)), ("embed_model", DEFAULT_MODEL),
                      ("source", f"synthetic latency benchmark, {n} documents, random vectors")])
    conn.execute("COMMIT")
    conn.close()


def queries(coll, rng: np.random.Generator) -> list[list[tuple[str, bool]]]:
    titles = [t for (t,) in coll.conn.execute(
        "SELECT title FROM documents WHERE rowid % 997 = 1 LIMIT 400")]
    short = []
    for t in rng.permutation(titles):
        ws = words(t.rsplit(" #", 1)[0])[:3]
        if len(ws) >= 2:
            short.append([(w, False) for w in ws])
        if len(short) == 40:
            break
    qs = [json.loads(line)["question"] for line in (
        SHARED / "data/qa/hotpotqa/questions.jsonl").read_text().splitlines()[:40]]
    long = [[(w, False) for w in words(q)[:12]] for q in qs]
    return short + long


CPU: list[float] = []  # CPU milliseconds of every timed call, in order


def ms(f, *args) -> float:
    """Wall-clock milliseconds of one call ``f(*args)`` (its CPU time goes to ``CPU``)."""
    c = time.process_time()
    t = time.perf_counter()
    f(*args)
    wall = (time.perf_counter() - t) * 1000
    CPU.append((time.process_time() - c) * 1000)
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("-k", type=int, default=5)
    args = ap.parse_args()
    path = OUT / f"latency-{args.docs // 1000}k.db"
    if path.exists() and stale(path):
        path.unlink()
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        build(path, args.docs)
    rng = np.random.default_rng(1)
    results: dict = {"documents": args.docs, "k": args.k,
                     "load_average_at_start": os.getloadavg()[0]}
    with sieve_lite.open(path) as coll:
        t = time.perf_counter()
        rk._stats(coll)
        rk._vectors(coll)
        results["cold_load_ms"] = round((time.perf_counter() - t) * 1000, 1)
        qs = queries(coll, rng)
        n = coll.documents
        selections = {
            "all (fallback)": None,
            "selective ~1%": np.sort(rng.choice(np.arange(1, n + 1), n // 100, replace=False)),
            "broad ~50%": np.sort(rng.choice(np.arange(1, n + 1), n // 2, replace=False)),
        }
        print(f"{n} documents, k={args.k}, cold load of vectors + arrays "
              f"{results['cold_load_ms']} ms; load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} CPUs")
        print(f"{'selection':16s} {'queries':8s} {'bm25':>14s} {'dense':>14s} {'hybrid':>14s} "
              f"{'slower+25':>10s}   (median wall ms; median CPU ms in brackets)")
        for sel_name, admitted in selections.items():
            for q_name, group in (("short", qs[:40]), ("question", qs[40:])):
                times: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
                cpu: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
                for ws in group:
                    terms = rk.scoring_terms(ws)
                    qvec = rng.standard_normal(DIM).astype(np.float32)
                    qvec /= np.linalg.norm(qvec)
                    times["bm25"].append(ms(rk.bm25, coll, terms, admitted, args.k))
                    cpu["bm25"].append(CPU[-1])
                    times["dense"].append(ms(rk.dense, coll, qvec, admitted, args.k))
                    cpu["dense"].append(CPU[-1])
                    times["hybrid"].append(ms(rk.hybrid, coll, terms, qvec, admitted, args.k))
                    cpu["hybrid"].append(CPU[-1])
                med = {r: round(statistics.median(v), 1) for r, v in times.items()}
                mcpu = {r: round(statistics.median(v), 1) for r, v in cpu.items()}
                bound = round(max(med["bm25"], med["dense"]) + 25, 1)
                results[f"{sel_name} / {q_name}"] = {
                    "wall_ms": med, "cpu_ms": mcpu, "hybrid_bound_wall_ms": bound}
                print(f"{sel_name:16s} {q_name:8s} " + " ".join(
                    f"{med[r]:6.1f} ({mcpu[r]:5.1f})" for r in ("bm25", "dense", "hybrid"))
                    + f" {bound:10.1f}", flush=True)
    try:
        from sieve_lite.embed import get_embedder

        emb = get_embedder(DEFAULT_MODEL)
        emb.encode(["warm up"])
        results["query_embedding_ms"] = round(statistics.median(
            ms(emb.encode, [q]) for q in
            ["fort santiago manila", "who directed the film ed wood"] * 5), 1)
        print(f"query embedding (MiniLM, CPU): {results['query_embedding_ms']} ms median")
    except sieve_lite.SieveError as e:
        print(f"query embedding not measured: {e}")
    (OUT / "latency.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {OUT / 'latency.json'}")


if __name__ == "__main__":
    main()
