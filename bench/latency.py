"""sieve-lite against tantivy-py on the same corpus: build speed, size, and per-query latency.

Run from the repository root (tantivy is a development dependency: ``pip install tantivy``)::

    python bench/latency.py                      # 100,000 documents (built once, then cached)
    python bench/latency.py --docs 10000 --repeat 3
    python bench/latency.py --rebuild            # time both builds again
    python bench/latency.py --profile            # also: where sieve-lite's query time goes
    python bench/latency.py --docs 1000000 --rebuild --no-queries --repeat 1
        # 1 M documents (4.4 GB of JSONL, about 1 hour of sieve-lite build on 2 idle cores
        # and 60 GB free disk with the tantivy index): the builds and sizes only

How it is measured:

* **Corpus**: ``bench/corpus.py``'s generated documents (recombined real-looking text with a
  Zipfian vocabulary, sections, infobox, authors, dates), written once as JSON Lines
  (``bench/out/zipf-<n>-s1.jsonl``); both engines index that file.
* **Builds**: sieve-lite through ``build_collection`` on the JSONL (``--no-embed``; its own
  worker processes), tantivy through ``IndexWriter`` with 2 threads, each document parsed from
  the same JSONL; the fields are the same (title, section headings without ``(intro)``,
  section texts, ``key: value`` infobox entries, authors, the date span as two integers).
  tantivy stores no text and sieve-lite stores all of it, so the builds compare by documents
  per second and the files by their ratio to the JSONL. Each build runs in a child process
  (sieve-lite through the CLI: ``cli.py build --no-embed``) under a small measuring parent:
  wall seconds, CPU seconds of the build and every worker process it started, the peak RSS
  of its largest process, and the peak of the memory summed over all its processes (PSS, so
  pages a forked worker shares with its parent count once; sampled every 0.2 s), printed
  with the load average.
* **Queries**: ``--per-class`` (default 22) in each of 9 classes, drawn deterministically from
  the collection's own term statistics (``bench/search.py``'s draw for selective, phrase,
  fielded AND, NOT, prefix and broad words; here also date + word, OR, infobox). Each BQL query
  is translated from its parsed AST to a tantivy query object with the same meaning
  (``to_tantivy``), so both engines answer the same question.
* **Timing**: one process, both engines warm (one untimed pass), then ``--repeat`` rounds; in
  each round every query runs on sieve-lite and then on tantivy, so load affects both alike.
  sieve-lite: ``search(query, k=10, ranker="bm25")`` (parse, compile, exact count, ranking of
  the whole admitted set, 10 cards with snippets and matched fields). tantivy: query
  construction, ``searcher.search(query, 10, count=True)`` and the 10 ids. A query's time is
  its median over the rounds; per class: p50 / p95 over its queries, and the median over its
  queries of the per-query ratio sieve / tantivy. Exact counts are compared on every query.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from corpus import OUT, STATUSES, TYPES, generate  # noqa: E402
from search import make_queries, pct  # noqa: E402

import sieve_lite  # noqa: E402
from sieve_lite.bql import parse  # noqa: E402
from sieve_lite.bql.ast import And, DateRange, Near, Not, Or, Term, expand_fields  # noqa: E402
from sieve_lite.words import words  # noqa: E402

CLASSES = {  # our class name -> bench/search.py's
    "selective": "selective word", "phrase": "phrase", "fielded AND": "AND across sections",
    "NOT": "NOT", "prefix": "prefix", "date + word": None, "broad": "broad word", "OR": None,
    "infobox": None,
}
TEXT = ("title", "section", "body", "infobox", "author")
TARGET_RATIO, TARGET_P50, TARGET_BROAD_P95 = 10.0, 5.0, 50.0


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


# ----------------------------------------------------------------------------------- corpus
def corpus_jsonl(n: int, seed: int = 1) -> Path:
    path = OUT / f"zipf-{n}-s{seed}.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for d in generate(n, seed):
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        tmp.rename(path)
    return path


MEASURE = r"""
import os, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.Popen(sys.argv[1:])
tree_kb = 0
while p.poll() is None:  # the summed PSS of the child and every process under it, each 0.2 s
    kids, rss = {}, {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open(f"/proc/{d}/stat").read().rsplit(") ", 1)[1].split()
                kids.setdefault(int(st[1]), []).append(int(d))
                rss[int(d)] = int(st[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
            except (OSError, IndexError, ValueError):
                pass
    todo, total = [p.pid], 0
    while todo:
        q = todo.pop()
        try:  # PSS: pages a forked worker shares with its parent are counted once
            pss = open(f"/proc/{q}/smaps_rollup").read().split("Pss:", 1)[1].split()[0]
            total += int(pss)
        except (OSError, IndexError, ValueError):
            total += rss.get(q, 0)
        todo += kids.get(q, [])
    tree_kb = max(tree_kb, total)
    time.sleep(0.2)
wall = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{p.returncode} {wall} {u.ru_utime + u.ru_stime} {u.ru_maxrss} {tree_kb}")
"""


def measured(cmd: list[str]) -> dict:
    """Run ``cmd`` under a fresh parent: its wall seconds, CPU seconds (it and every worker
    process it started), the peak RSS of its largest process and the peak of the memory summed
    over it and its workers (proportional set size: shared pages counted once; sampled every
    0.2 s), in MB."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True,
                         check=True).stdout.split()
    code, wall, cpu_s, rss_kb, tree_kb = (int(out[0]), float(out[1]), float(out[2]),
                                          int(out[3]), int(out[4]))
    if code:
        raise SystemExit(f"{cmd[:4]} failed ({code})")
    return {"seconds": wall, "cpu": cpu_s, "rss_mb": rss_kb / 1024, "tree_rss_mb": tree_kb / 1024}


def build_sieve(src: Path, out: Path) -> dict:
    """``sieve-lite build --no-embed`` through the CLI, in a child process."""
    out.unlink(missing_ok=True)
    res = measured([sys.executable, str(HERE.parent / "cli.py"), "build", str(src), "-o",
                    str(out), "--no-embed", "--format", "jsonl", "--quiet"])
    import sieve_lite

    with sieve_lite.open(out) as coll:
        res["documents"] = coll.documents
    return res


def tantivy_schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    for f in TEXT:
        sb.add_text_field(f, stored=False, tokenizer_name="default", index_option="position")
    sb.add_integer_field("date_lo", indexed=True, fast=True)
    sb.add_integer_field("date_hi", indexed=True, fast=True)
    return sb.build()


def build_tantivy(src: Path, out: Path) -> dict:
    """tantivy-py's build in a child process (``--tantivy-build``), measured as sieve-lite's."""
    shutil.rmtree(out, ignore_errors=True)
    res = measured([sys.executable, str(HERE / "latency.py"), "--tantivy-build", str(src),
                    str(out)])
    res["documents"] = sum(1 for _ in src.open(encoding="utf-8"))
    return res


def tantivy_build(src: Path, out: Path) -> dict:
    import tantivy

    from sieve_lite.documents import date_span

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t, c = time.perf_counter(), cpu()
    index = tantivy.Index(tantivy_schema(), path=str(out))
    writer = index.writer(heap_size=512 << 20, num_threads=2)
    n = 0
    with src.open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            secs = d.get("sections") or [{"heading": "(intro)", "text": d.get("text", "")}]
            fields: dict = {"id": d["id"], "title": d["title"],
                            "section": [s["heading"] for s in secs if s["heading"] != "(intro)"],
                            "body": [s["text"] for s in secs],
                            "infobox": [f"{k}: {v}" for k, v in d.get("infobox", [])],
                            "author": d.get("author", [])}
            if d.get("date"):
                fields["date_lo"], fields["date_hi"] = date_span(d["date"])
            writer.add_document(tantivy.Document(**{k: v for k, v in fields.items() if v != []}))
            n += 1
    writer.commit()
    writer.wait_merging_threads()
    return {"seconds": time.perf_counter() - t, "cpu": cpu() - c, "documents": n}


def where_bytes(db: Path) -> list[tuple[str, int]]:
    """Bytes per table (an FTS5 table's shadow tables together), largest first (dbstat)."""
    import re

    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        sizes: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            key = re.sub(r"_(data|idx|docsize|config|content)$", "", name)
            sizes[key] = sizes.get(key, 0) + size
    finally:
        conn.close()
    return sorted(sizes.items(), key=lambda kv: -kv[1])


def dir_size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


# ---------------------------------------------------------------------------------- queries
def extra_queries(conn, per_class: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed + 1)
    rows = conn.execute("SELECT term, doc FROM vocab_body_row").fetchall()
    k = conn.execute("SELECT count(*) FROM sections").fetchone()[0] / 1_040_000
    mid = sorted(t for t, n in rows if 2_000 * k <= n <= 30_000 * k and t.isalpha())
    dated = []
    for i in range(per_class):
        y = rng.randint(1960, 2022)
        dated.append(f"{rng.choice(mid)} " + [f"date[{y}..{y + rng.randint(0, 6)}]",
                                              f"date[{y}]", f"date[>={y}-06]"][i % 3])
    ors = [" OR ".join(rng.sample(mid, rng.randint(2, 4))) for _ in range(per_class)]
    values = [w for v in STATUSES + TYPES for w in words(v)]
    box = []
    for i in range(per_class):
        v = rng.choice(values)
        box.append([f"{v}[infobox]", f"{v}[infobox] AND {rng.choice(mid)}[body]",
                    f'"status {v}"[infobox]'][i % 3])
    return {"date + word": dated, "OR": ors, "infobox": box}


def draw(coll, per_class: int, seed: int) -> dict[str, list[str]]:
    # The draw reads the whole body vocabulary (fts5vocab): at 1 M documents one statement
    # takes longer than a collection's statement budget, so it has a connection of its own.
    from sieve_lite.collection import Collection

    stats = Collection(coll.path, budget=3600)
    try:
        base = make_queries(stats.conn, per_class, seed)
        extra = extra_queries(stats.conn, per_class, seed)
    finally:
        stats.close()
    return {c: (base[src] if src else extra[c])[:per_class] for c, src in CLASSES.items()}


def to_tantivy(node, schema):
    """The tantivy query with the meaning BQL.md gives ``node`` (document-level Boolean; a
    phrase within one field value)."""
    import tantivy
    from tantivy import Occur, Query

    def atom(t: Term, field: str):
        if not t.is_phrase:
            if t.prefix:
                return Query.regex_query(schema, field, t.words[0] + ".*")
            return Query.term_query(schema, field, t.words[0])
        if t.prefix:
            return Query.phrase_prefix_query(schema, field, list(t.words))
        return Query.phrase_query(schema, field, list(t.words))

    def any_of(qs):
        return qs[0] if len(qs) == 1 else Query.boolean_query([(Occur.Should, q) for q in qs])

    def walk(n):
        if isinstance(n, Term):
            return any_of([atom(n, f) for f in expand_fields(n.fields, TEXT)])
        if isinstance(n, Near):
            raise ValueError("NEAR is not in the benchmark's classes")
        if isinstance(n, DateRange):
            parts = []
            if n.hi is not None:
                parts.append(Query.range_query(schema, "date_lo", tantivy.FieldType.Integer,
                                               None, n.hi))
            if n.lo is not None:
                parts.append(Query.range_query(schema, "date_hi", tantivy.FieldType.Integer,
                                               n.lo, None))
            return Query.boolean_query([(Occur.Must, q) for q in parts])
        if isinstance(n, And):
            return Query.boolean_query(
                [(Occur.MustNot, walk(c.child)) if isinstance(c, Not) else (Occur.Must, walk(c))
                 for c in n.children])
        if isinstance(n, Or):
            return Query.boolean_query([(Occur.Should, walk(c)) for c in n.children])
        raise ValueError(f"cannot translate {n!r}")

    return walk(node)


# ----------------------------------------------------------------------------------- timing
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--per-class", type=int, default=22)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--tantivy-build", nargs=2, metavar=("JSONL", "DIR"),
                    help=argparse.SUPPRESS)  # internal: the measured child of build_tantivy
    ap.add_argument("--no-queries", action="store_true", help="builds and sizes only")
    args = ap.parse_args()
    if args.tantivy_build:
        tantivy_build(Path(args.tantivy_build[0]), Path(args.tantivy_build[1]))
        return
    import tantivy

    src = corpus_jsonl(args.docs)
    db, tdir = OUT / f"latency-{args.docs}.db", OUT / f"tantivy-{args.docs}"
    builds_file = OUT / f"latency-{args.docs}-builds.json"
    builds = json.loads(builds_file.read_text()) if builds_file.exists() else {}
    if args.rebuild or not db.exists() or "sieve" not in builds:
        print(f"building sieve-lite from {src} ...", file=sys.stderr, flush=True)
        builds["sieve"] = build_sieve(src, db)
        builds["sieve"]["load"] = os.getloadavg()[0]
    if args.rebuild or not tdir.exists() or "tantivy" not in builds:
        print(f"building tantivy from {src} ...", file=sys.stderr, flush=True)
        builds["tantivy"] = build_tantivy(src, tdir)
        builds["tantivy"]["load"] = os.getloadavg()[0]
    builds_file.write_text(json.dumps(builds, indent=1))

    jsonl_bytes, db_bytes, t_bytes = src.stat().st_size, db.stat().st_size, dir_size(tdir)
    print(f"corpus {src.name}: {args.docs:,} documents, {jsonl_bytes / 1e6:,.0f} MB JSONL")
    for name, b, size in (("sieve-lite", builds["sieve"], db_bytes),
                          ("tantivy", builds["tantivy"], t_bytes)):
        print(f"build {name:10s} {b['seconds']:7.1f} s wall  {b['cpu']:7.1f} s CPU  "
              f"{b['documents'] / b['seconds']:8,.0f} docs/s  {size / 1e6:7,.0f} MB "
              f"({size / jsonl_bytes:.2f}x JSONL)  peak RSS {b.get('rss_mb', 0):6,.0f} MB "
              f"(all processes, PSS {b.get('tree_rss_mb', 0):,.0f} MB)  "
              f"load {b.get('load', 0):.1f}")
    sb, tb = builds["sieve"], builds["tantivy"]
    print(f"build ratios: docs/s {tb['seconds'] / sb['seconds']:.2f}x tantivy's (target >= "
          f"0.4), CPU {sb['cpu'] / tb['cpu']:.2f}x (target <= 2); peak RSS "
          f"{sb.get('tree_rss_mb', 0):,.0f} MB summed over its processes (target <= 1,536 "
          f"at 100k); file "
          f"{db_bytes / jsonl_bytes:.2f}x JSONL (target <= 1.5)")
    print("where sieve-lite's bytes go (share of the file; x JSONL):")
    for name, nbytes in where_bytes(db)[:8]:
        print(f"  {name:22s} {nbytes / 1e6:8,.1f} MB {100 * nbytes / db_bytes:5.1f}%"
              f" {nbytes / jsonl_bytes:5.2f}x")

    if args.no_queries:
        return
    coll = sieve_lite.open(db)
    index = tantivy.Index.open(str(tdir))
    index.reload()
    searcher = index.searcher()
    schema = index.schema
    queries = draw(coll, args.per_class, args.seed)
    flat = [(c, q) for c, qs in queries.items() for q in qs]

    def run_sieve(q: str) -> int:
        return coll.search(q, k=10, ranker="bm25").total

    def run_tantivy(q: str) -> int:
        res = searcher.search(to_tantivy(parse(q, coll.fields), schema), 10, count=True)
        [searcher.doc(a)["id"][0] for _, a in res.hits]
        return res.count

    counts = {q: (run_sieve(q), run_tantivy(q)) for _, q in flat}  # warm-up, and the counts
    times: dict[str, dict[str, list[float]]] = {q: {"s": [], "t": [], "sc": [], "tc": []}
                                                for _, q in flat}
    load0 = os.getloadavg()[0]
    for _ in range(args.repeat):
        for _, q in flat:
            c0, t0 = time.process_time(), time.perf_counter()
            run_sieve(q)
            times[q]["s"].append((time.perf_counter() - t0) * 1000)
            times[q]["sc"].append((time.process_time() - c0) * 1000)
            c0, t0 = time.process_time(), time.perf_counter()
            run_tantivy(q)
            times[q]["t"].append((time.perf_counter() - t0) * 1000)
            times[q]["tc"].append((time.process_time() - c0) * 1000)
    med = {q: {k: statistics.median(v) for k, v in d.items()} for q, d in times.items()}
    print(f"\n{len(flat)} queries, {args.repeat} interleaved rounds; load average "
          f"{load0:.1f} at start, {os.getloadavg()[0]:.1f} at end, {os.cpu_count()} CPUs")
    head = (f"{'class':12s} {'n':>3s} {'ratio':>6s} {'sieve p50':>9s} {'p95':>7s} "
            f"{'tantivy p50':>11s} {'p95':>6s} {'counts':>7s} | {'CPU ratio':>9s} "
            f"{'sieve CPU':>9s} {'tantivy CPU':>11s}")
    print(head)
    print("-" * len(head))
    summary = {}
    for c, qs in queries.items():
        s = [med[q]["s"] for q in qs]
        t = [med[q]["t"] for q in qs]
        ratio = statistics.median(med[q]["s"] / med[q]["t"] for q in qs)
        cpu_ratio = statistics.median(med[q]["sc"] / max(med[q]["tc"], 1e-3) for q in qs)
        same = sum(counts[q][0] == counts[q][1] for q in qs)
        sc, tc = pct([med[q]["sc"] for q in qs], 50), pct([med[q]["tc"] for q in qs], 50)
        summary[c] = {"ratio": ratio, "sieve_p50": pct(s, 50), "sieve_p95": pct(s, 95),
                      "tantivy_p50": pct(t, 50), "tantivy_p95": pct(t, 95),
                      "counts_equal": f"{same}/{len(qs)}", "cpu_ratio": cpu_ratio,
                      "sieve_cpu_p50": sc, "tantivy_cpu_p50": tc}
        print(f"{c:12s} {len(qs):3d} {ratio:5.1f}x {pct(s, 50):9.2f} {pct(s, 95):7.2f} "
              f"{pct(t, 50):11.2f} {pct(t, 95):6.2f} {same:3d}/{len(qs)} | {cpu_ratio:8.1f}x "
              f"{sc:9.2f} {tc:11.2f}")
    s_all = [med[q]["s"] for _, q in flat]
    t_all = [med[q]["t"] for _, q in flat]
    overall = statistics.median(med[q]["s"] / med[q]["t"] for _, q in flat)
    overall_cpu = statistics.median(med[q]["sc"] / max(med[q]["tc"], 1e-3) for _, q in flat)
    same = sum(a == b for a, b in counts.values())  # over distinct queries
    print(f"{'overall':12s} {len(flat):3d} {overall:5.1f}x {pct(s_all, 50):9.2f} "
          f"{pct(s_all, 95):7.2f} {pct(t_all, 50):11.2f} {pct(t_all, 95):6.2f} "
          f"{same:3d}/{len(counts)} | {overall_cpu:8.1f}x "
          f"{pct([med[q]['sc'] for _, q in flat], 50):9.2f} "
          f"{pct([med[q]['tc'] for _, q in flat], 50):11.2f}")
    print("(ratio: median over a class's queries of sieve-lite p50 / tantivy p50, wall clock; "
          "CPU: the same in process CPU time, which load inflates less; counts over distinct "
          "queries)")
    for q, (a, b) in counts.items():
        if a != b:
            print(f"  count differs: {q!r}: sieve-lite {a}, tantivy {b}")
    print(f"\ntargets: every class ratio <= {TARGET_RATIO:g}x: "
          f"{'ok' if all(v['ratio'] <= TARGET_RATIO for v in summary.values()) else 'MISS'}; "
          f"overall p50 <= {TARGET_P50:g} ms: {'ok' if pct(s_all, 50) <= TARGET_P50 else 'MISS'};"
          f" broad p95 <= {TARGET_BROAD_P95:g} ms: "
          f"{'ok' if summary['broad']['sieve_p95'] <= TARGET_BROAD_P95 else 'MISS'}; counts "
          f"{'ok' if same == len(counts) else 'MISS'}; file <= 1.3x JSONL: "
          f"{'ok' if db_bytes <= 1.3 * jsonl_bytes else 'MISS'}; build >= tantivy: "
          f"{'ok' if builds['sieve']['seconds'] <= builds['tantivy']['seconds'] else 'MISS'}")
    (OUT / f"latency-{args.docs}.json").write_text(json.dumps(
        {"builds": builds, "sizes": {"jsonl": jsonl_bytes, "sieve": db_bytes, "tantivy": t_bytes},
         "classes": summary, "overall": {"ratio": overall, "sieve_p50": pct(s_all, 50),
                                         "tantivy_p50": pct(t_all, 50)},
         "queries": {q: {"class": c, **med[q], "counts": counts[q]} for c, q in flat}},
        indent=1))
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _, q in flat:
            run_sieve(q)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        print(buf.getvalue())


if __name__ == "__main__":
    main()
