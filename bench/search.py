"""Selection benchmark: how fast BQL admits documents on a large synthetic collection.

Run from the repository root::

    python bench/search.py                  # 100,000 documents (built and cached on first run)
    python bench/search.py --docs 20000 --per-class 30 --plans

What is measured (and how):

* the collection is ``bench/corpus.py``'s Zipfian corpus (>= 1,000,000 section rows for
  100,000 documents), built lexical-only once and cached under ``bench/out/``;
* queries: ``--per-class`` (default 40) per class, drawn deterministically (``--seed``) from the
  collection's own term statistics (``vocab_body_row``: how many section texts hold a word):
  selective word (in 30-300 section texts), phrase (two adjacent words of a random section,
  both in >= 2,000 texts), fielded AND across sections (``heading[section] AND a[body] AND
  b[body]``, or title + body + section), NOT, prefix, date range (all forms), broad single word
  (the 40 most frequent words), and mixed queries of 6-10 atoms like an agent writes (fields,
  groups, a NOT, a date); the bands are for 100,000 documents and scale with the size;
* "compile" = ``parse`` + ``compile_query`` of a query never seen before, cold (every BQL memo
  cache emptied first, the compiler's SQL-by-shape memo included), over all queries and over
  the mixed ones alone; "compile, shape cached" = a new query whose shape (operators and
  field scopes; words and dates are parameters) was compiled before; "selection" = executing
  the compiled SQL and fetching every admitted rowid (the count is their number). Ranking is
  not timed;
* one untimed warm-up pass over all queries, then each query ``--repeat`` times (default 3);
  a query's time is its median; the table shows p50/p95/max over the queries of a class;
* ``--plans`` prints EXPLAIN QUERY PLAN for the slowest query of every class (it is printed
  anyway for a class that misses its target).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import apsw  # noqa: E402
from corpus import HEADINGS, OUT, ensure_collection  # noqa: E402

import sieve_lite  # noqa: E402
from sieve_lite.bql import compile_query, parse  # noqa: E402
from sieve_lite.words import words  # noqa: E402

# class -> (p50 target ms, p95 target ms); None = no target
TARGETS: dict[str, tuple[float | None, float | None]] = {
    "compile": (None, 2.0),
    "compile, shape cached": (None, 2.0),
    "selective word": (15.0, 50.0),
    "phrase": (None, None),
    "AND across sections": (None, 300.0),
    "NOT": (None, 300.0),
    "prefix": (None, None),
    "date range": (None, None),
    "broad word": (None, 300.0),
    "mixed 6-10 atoms": (None, None),
    "compile, mixed only": (None, 2.0),
}
CLASSES = [c for c in TARGETS if not c.startswith("compile")]


@dataclass
class Result:
    name: str
    times: list[float] = field(default_factory=list)  # ms, one per query
    hits: list[int] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def term_stats(conn: apsw.Connection) -> list[tuple[str, int]]:
    """(word, number of section texts holding it), most frequent first."""
    rows = conn.execute("SELECT term, doc FROM vocab_body_row").fetchall()
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def make_queries(conn: apsw.Connection, per_class: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    stats = term_stats(conn)
    freq = dict(stats)

    def band(lo: int, hi: int) -> list[str]:
        return [t for t, n in stats if lo <= n <= hi and t.isalpha()]

    # bands scale with the collection (figures are for ~1,040,000 section texts)
    k = conn.execute("SELECT count(*) FROM sections").fetchone()[0] / 1_040_000
    selective = band(max(3, int(30 * k)), max(30, int(300 * k)))
    mid, common = band(int(2_000 * k), int(30_000 * k)), band(int(50_000 * k), int(400_000 * k))
    broad = [t for t, _ in stats[:per_class]]
    n_docs = conn.execute("SELECT max(rowid) FROM documents").fetchone()[0]
    heading_words = [w for h in HEADINGS[:30] for w in words(h) if w not in ("of", "and")]

    phrases: list[str] = []
    while len(phrases) < per_class:
        doc = rng.randint(1, n_docs)
        n_sec = conn.execute("SELECT count(*) FROM sections WHERE doc = ?", (doc,)).fetchone()[0]
        row = conn.execute("SELECT unpack(text) FROM sections WHERE doc = ? AND pos = ?",
                           (doc, rng.randrange(n_sec))).fetchone() if n_sec else None
        ws = words(row[0]) if row else []
        pairs = [(a, b) for a, b in zip(ws, ws[1:], strict=False)
                 if min(freq.get(a, 0), freq.get(b, 0)) >= 2_000 * k]
        if pairs:
            a, b = rng.choice(pairs)
            phrases.append(f'"{a} {b}"')

    cross = []
    for i in range(per_class):
        a, b = rng.sample(mid, 2)
        if i % 2:
            cross.append(f"{rng.choice(heading_words)}[section] AND {a}[body] AND {b}[body]")
        else:
            cross.append(f"{rng.choice(mid)}[title] AND {a}[body] AND "
                         f"{rng.choice(heading_words)}[section]")

    nots = []
    for i in range(per_class):
        a, b = rng.choice(mid), rng.choice(common)
        nots.append(f"{a} NOT {b}" if i % 2 else f"{a}[body] -{b}[section] -{rng.choice(mid)}")

    prefixes = []
    pool = selective + mid + common
    while len(prefixes) < per_class:
        w = rng.choice(pool)
        if len(w) >= 4:
            prefixes.append(w[: rng.randint(3, min(5, len(w)))] + "*")

    dates = []
    for i in range(per_class):
        y = rng.randint(1955, 2024)
        form = i % 6
        m = rng.randint(1, 12)
        dates.append([f"date[{y}..{min(2025, y + rng.randint(0, 8))}]", f"{y}-{m:02d}[date]",
                      f"date[>={y}-{m:02d}]", f"date[..{y}]", f"date[<{y}]", f"date[{y}]"][form])

    mixed = []
    for _ in range(per_class):  # what an agent writes: several fields, groups, a NOT, a date
        a, b, c, d = rng.sample(mid, 4)
        mixed.append(rng.choice([
            f'({a} OR {b})[title,body] "{c} {d}" -{rng.choice(common)}[section] '
            f"{rng.choice(dates)}",
            f"{a} {b} {c}[body] NOT ({d} OR {rng.choice(mid)})[tiab] {rng.choice(selective)}*",
            f"NEAR/5({a} {b}) OR ({c}[section] {d}[body] -{rng.choice(mid)}) "
            f"{rng.choice(heading_words)}[section]",
        ]))
    return {
        "selective word": rng.sample(selective, per_class),
        "phrase": phrases,
        "AND across sections": cross,
        "NOT": nots,
        "prefix": prefixes,
        "date range": dates,
        "broad word": broad,
        "mixed 6-10 atoms": mixed,
    }


class _DictCache:
    def __init__(self, d: dict) -> None:
        self.d = d

    def cache_clear(self) -> None:
        self.d.clear()


def bql_caches(shapes: bool = True) -> list:
    """The memo caches of the BQL modules and the word rule: functools caches, and (when
    ``shapes``) the compiler's SQL-by-query-shape memo."""
    import importlib

    out: list = []
    for name in ("sieve_lite.words", "sieve_lite.bql.tokens", "sieve_lite.bql.parser",
                 "sieve_lite.bql.dates", "sieve_lite.bql.compiler"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        out += [f for f in vars(mod).values() if callable(getattr(f, "cache_clear", None))]
        if shapes:
            out += [_DictCache(v) for k, v in vars(mod).items()
                    if isinstance(v, dict) and "SHAPE" in k.upper()]
    return out


def cold_compile_ms(query: str, fields: tuple[str, ...], caches: list) -> float:
    """parse + compile of a query never seen before (the memo caches emptied first)."""
    for cache in caches:
        cache.cache_clear()
    t = time.perf_counter()
    compile_query(parse(query, fields), fields)
    return (time.perf_counter() - t) * 1000


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    out: object = None
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--corpus-seed", type=int, default=1)
    ap.add_argument("--seed", type=int, default=7, help="seed of the query draw")
    ap.add_argument("--per-class", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plans", action="store_true", help="EXPLAIN QUERY PLAN of the slowest")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = ap.parse_args()

    db = ensure_collection(args.docs, args.corpus_seed)
    coll = sieve_lite.open(db)
    conn = coll.conn
    fields = coll.fields
    qfile = OUT / f"queries-{db.stem}-q{args.seed}-n{args.per_class}.json"
    if qfile.exists():
        queries = json.loads(qfile.read_text())
    else:
        queries = make_queries(conn, args.per_class, args.seed)
        qfile.write_text(json.dumps(queries, indent=1))

    compiled = {c: [compile_query(parse(q, fields), fields) for q in qs]
                for c, qs in queries.items()}
    # warm-up: every query once (page cache, FTS structure records)
    for cs in compiled.values():
        for c in cs:
            conn.execute(c.sql, c.params).fetchall()

    results: dict[str, Result] = {"compile": Result("compile")}
    for cls in CLASSES:
        res = results[cls] = Result(cls)
        for q, c in zip(queries[cls], compiled[cls], strict=True):
            ms, rows = timed(lambda c=c: conn.execute(c.sql, c.params).fetchall(), args.repeat)
            res.times.append(ms)
            res.hits.append(len(rows))  # type: ignore[arg-type]
            res.queries.append(q)
    comp = results["compile"]
    comp_mixed = results["compile, mixed only"] = Result("compile, mixed only")
    comp_shape = results["compile, shape cached"] = Result("compile, shape cached")
    caches, per_query_caches = bql_caches(), bql_caches(shapes=False)
    for cls in CLASSES:
        for q in queries[cls]:
            runs = [cold_compile_ms(q, fields, caches) for _ in range(max(5, args.repeat))]
            for r in (comp, comp_mixed) if cls.startswith("mixed") else (comp,):
                r.times.append(statistics.median(runs))
                r.queries.append(q)
            cold_compile_ms(q, fields, caches)
            runs = [cold_compile_ms(q, fields, per_query_caches)
                    for _ in range(max(5, args.repeat))]
            comp_shape.times.append(statistics.median(runs))
            comp_shape.queries.append(q)

    info = coll.info()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"corpus: {info['documents']:,} documents, {info['sections']:,} sections, "
          f"{coll.avg_words * coll.documents:,.0f} words (title + body), "
          f"{info['size_bytes'] / 1e6:,.0f} MB; {db}")
    print(f"machine: {cpus} usable cores of {os.cpu_count()}, {platform.machine()}, "
          f"{platform.system()} {platform.release()}; Python {platform.python_version()}; "
          f"SQLite {apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()}); load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"method: {args.per_class} queries per class (seed {args.seed}), warm cache, median of "
          f"{args.repeat} runs per query (compile: of {max(5, args.repeat)}); selection = "
          "execute + fetch all admitted rowids")
    print()
    header = (f"{'class':<22}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
              f"{'hits p50':>10}{'hits max':>10}  target")
    print(header)
    print("-" * len(header))
    missed = []
    for name, res in results.items():
        p50, p95 = pct(res.times, 50), pct(res.times, 95)
        t50, t95 = TARGETS[name]
        verdict = []
        if t50 is not None:
            verdict.append(f"p50<={t50:g} {'ok' if p50 <= t50 else 'MISS'}")
        if t95 is not None:
            verdict.append(f"p95<={t95:g} {'ok' if p95 <= t95 else 'MISS'}")
        if any("MISS" in v for v in verdict):
            missed.append(name)
        hits = (f"{statistics.median(res.hits):>10,.0f}{max(res.hits):>10,}" if res.hits
                else f"{'':>10}{'':>10}")
        print(f"{name:<22}{len(res.times):>4}{p50:>9.2f}{p95:>9.2f}{max(res.times):>9.2f}"
              f"{hits}  {', '.join(verdict)}")
    print()
    for name, res in results.items():
        if name.startswith("compile") or not (args.plans or name in missed):
            continue
        i = max(range(len(res.times)), key=res.times.__getitem__)
        q = res.queries[i]
        c = compile_query(parse(q, fields), fields)
        print(f"slowest {name}: {q!r} {res.times[i]:.1f} ms, {res.hits[i]:,} hits")
        print(f"  SQL: {c.sql}")
        print(f"  params: {c.params}")
        depth: dict[int, int] = {0: 0}
        for node_id, parent, _, detail in conn.execute("EXPLAIN QUERY PLAN " + c.sql, c.params):
            depth[node_id] = depth.get(parent, 0) + 1
            print(f"  {'  ' * depth[node_id]}{detail}")
        print()
    if any(m.startswith("compile") for m in missed) or args.plans:
        i = max(range(len(comp.times)), key=comp.times.__getitem__)
        print(f"slowest compile: {comp.queries[i]!r} {comp.times[i]:.2f} ms")
    if args.json:
        args.json.write_text(json.dumps({n: {"p50": pct(r.times, 50), "p95": pct(r.times, 95),
                                             "max": max(r.times), "queries": r.queries,
                                             "times": r.times, "hits": r.hits}
                                         for n, r in results.items()}, indent=1))
    coll.close()


if __name__ == "__main__":
    main()
