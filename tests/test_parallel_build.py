"""The parallel index build (issue 21): every FTS5 table built by a process and file of its
own, then adopted by a verbatim copy of its shadow tables. It must give the very index a
single writer gives, pass SQLite's and FTS5's integrity checks and ``verify``, answer every
query alike, and leave nothing behind when killed."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

import sieve_lite
from sieve_lite.build import build_collection
from sieve_lite.sources import iter_documents
from sieve_lite.store.writes import FTS_SHADOWS, FTS_TABLES
from sieve_lite.verify import verify

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork-only workers")

QUERIES = ["castle", "fort AND manila", '"w1 w2"', "w12*", "castle NOT fort", "santiago[title]",
           "w7[section]", "status[infobox]", "ada[author]", "NEAR(fort manila, 5)",
           "castle OR santiago", "date[1990..2000] AND w3"]


def corpus(path: Path, n: int, seed: int = 3) -> Path:
    """``n`` documents with sections, infobox, authors and dates (about 1,300 characters
    each: past the size at which a build starts its worker processes)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)] + ["castle", "fort", "santiago", "manila"]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            secs = [{"heading": "(intro)" if j == 0 else " ".join(rng.choices(vocab, k=2)),
                     "text": " ".join(rng.choices(vocab, k=rng.randint(20, 80)))}
                    for j in range(rng.randint(1, 6))]
            doc = {"id": f"d{i}", "title": " ".join(rng.choices(vocab, k=4)), "sections": secs,
                   "infobox": [["Status", rng.choice(["Final", "Draft", "castle"])]],
                   "author": [rng.choice(["Ada Lovelace", "Alan Turing", "Grace Hopper"])],
                   "date": f"{rng.randint(1950, 2024)}-0{rng.randint(1, 9)}"}
            f.write(json.dumps(doc) + "\n")
    return path


def shadows(db: Path) -> dict[str, list[tuple]]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {f"{t}_{s}": conn.execute(f"SELECT * FROM {t}_{s} ORDER BY 1, 2").fetchall()
                for t in FTS_TABLES for s in FTS_SHADOWS}
    finally:
        conn.close()


def test_parallel_index_is_the_single_writers(tmp_path: Path) -> None:
    if "torch" in sys.modules:
        # An earlier test loaded torch, after which this process never forks workers (see
        # processes.can_fork): run this test in a fresh interpreter, so the parallel build runs.
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              f"{__file__}::test_parallel_index_is_the_single_writers",
                              "--basetemp", str(tmp_path / "child")],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        return
    src = corpus(tmp_path / "c.jsonl", 600)
    one, par = tmp_path / "one.db", tmp_path / "par.db"
    r1 = build_collection(iter_documents([src]), one, embed=False, fts_workers=False)
    r2 = build_collection(iter_documents([src]), par, embed=False, fts_workers=True)
    assert r1.fts_workers == 0 and r2.fts_workers == len(FTS_TABLES) and r2.workers == 2
    # the same index, byte for byte: every row of every shadow table
    assert shadows(one) == shadows(par)
    conn = apsw.Connection(str(par))
    for t in FTS_TABLES:
        conn.execute(f"INSERT INTO {t}({t}, rank) VALUES ('integrity-check', 0)")
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    assert all(c.ok for c in verify(par).checks if c.name != "vectors")
    admitting = 0
    with sieve_lite.open(one) as a, sieve_lite.open(par) as b:
        for q in QUERIES:
            ra, rb = a.search(q, k=20, ranker="bm25"), b.search(q, k=20, ranker="bm25")
            assert ra.to_dict() == rb.to_dict(), q  # ids, scores, snippets, counts
            admitting += ra.total > 0
    assert admitting >= 8  # the queries test something
    assert not list(tmp_path.glob(".*"))  # no part file, no temporary left


def _alive_with(marker: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().split(") ", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state != "Z":
            pids.append(int(proc.name))
    return pids


def test_a_killed_parallel_build_leaves_nothing(tmp_path: Path) -> None:
    src = corpus(tmp_path / "parallel-kill-source.jsonl", 30_000)
    out = tmp_path / "out.db"
    code = ("import sys; from sieve_lite.build import build_collection; "
            "from sieve_lite.sources import iter_documents; "
            "build_collection(iter_documents([sys.argv[1]]), sys.argv[2], embed=False, "
            "fts_workers=True)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(src), str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    part = tmp_path / f".out.db.building-{proc.pid}-fts-fts_body"
    deadline = time.time() + 120
    while not part.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert part.exists(), "the parallel build never started its FTS writers"
    time.sleep(0.5)
    assert proc.poll() is None, "the build finished before it could be killed; make it bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # the FTS writers and the preparing workers notice that their parent is gone and exit
    deadline = time.time() + 10
    while _alive_with(src.name) and time.time() < deadline:
        time.sleep(0.1)
    assert _alive_with(src.name) == []
    assert not out.exists()
    # the next build of the same output removes the killed one's files (its process is gone)
    build_collection(iter_documents([corpus(tmp_path / "small.jsonl", 3)]), out, embed=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "out.db", "parallel-kill-source.jsonl", "small.jsonl"]
