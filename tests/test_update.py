"""In-place updates (``sieve-lite add``/``remove``): after any sequence of them a collection
searches exactly like a fresh build of the same documents; each runs as one transaction (a
failure changes nothing); readers in other processes never fail while they run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import apsw
import pytest

import sieve_lite
from sieve_lite import update as upd
from sieve_lite.build import build_collection
from sieve_lite.documents import Document
from sieve_lite.errors import BuildError, CollectionError, SieveError
from sieve_lite.verify import verify

DATA = Path(__file__).resolve().parent / "data"
CLI = [sys.executable, "-c", "import sys; from sieve_lite.cli import main; "
       "sys.argv[0] = 'sieve-lite'; main()"]
QUERIES = [q["q"] for q in map(json.loads, (DATA / "bql-examples/queries.jsonl").open())
           if q["expect"] == "ok"] + [
    "generator OR decorator", "walrus", "zurich", "the", "Rationale[section] yield*",
    "Guido[author] -generator", "stained glass", "NOT date[..2100] AND flat",
    "generator AND decorator[title] date[1990]"]  # the last admits nothing: fallback


def sieve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600)


def corpus() -> list[dict]:
    return [json.loads(line) for line in (DATA / "bql-examples/corpus.jsonl").open()]


def build(path: Path, docs: list[dict]) -> Path:
    build_collection([Document.from_dict(d) for d in docs], path, embed=False, force=True)
    return path


def jsonl(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                    encoding="utf-8")
    return path


def changed(d: dict) -> dict:
    """Another version of a document: new title and an extra section."""
    d = json.loads(json.dumps(d))
    d["title"] = d["title"] + " (revised)"
    d.setdefault("sections", [{"heading": "(intro)", "text": d.pop("text", "")}])
    d["sections"].append({"heading": "Revision note", "text": "walrus operators revised"})
    return d


def same_searches(a: Path, b: Path) -> None:
    """Every query, with both lexical rankers: the same total, ids, order and scores."""
    with sieve_lite.open(a) as x, sieve_lite.open(b) as y:
        assert x.fields == y.fields and x.documents == y.documents
        assert x.avg_words == pytest.approx(y.avg_words, rel=1e-12)
        for q in QUERIES:
            for ranker in ("bm25", "bm25-doc"):
                rx, ry = x.search(q, k=1000, ranker=ranker), y.search(q, k=1000, ranker=ranker)
                assert (rx.total, rx.fallback, rx.clause_counts) == \
                    (ry.total, ry.fallback, ry.clause_counts), q
                assert [h.id for h in rx.results] == [h.id for h in ry.results], (q, ranker)
                assert [h.score for h in rx.results] == \
                    pytest.approx([h.score for h in ry.results], rel=1e-9, abs=1e-12), q
                assert [(h.card.snippet, h.card.matched_fields) for h in rx.results] == \
                    [(h.card.snippet, h.card.matched_fields) for h in ry.results], q
        ids = [i for (i,) in y.conn.execute("SELECT id FROM documents ORDER BY id")]
        assert ids == [i for (i,) in x.conn.execute("SELECT id FROM documents ORDER BY id")]
        for i in ids:
            assert x.document(i) == y.document(i)
            assert x.fetch(i).text == y.fetch(i).text
        assert x.meta.content_hash == y.meta.content_hash
        assert (x.meta.sections, x.meta.has_section, x.meta.has_infobox, x.meta.has_author,
                x.meta.has_date) == (y.meta.sections, y.meta.has_section, y.meta.has_infobox,
                                     y.meta.has_author, y.meta.has_date)
    assert verify(a).ok


# --------------------------------------------------------------------------- add, remove
def test_add_and_upsert_equal_a_fresh_build(tmp_path: Path) -> None:
    docs = corpus()
    db = build(tmp_path / "db.db", docs[:40])
    revised = [changed(d) for d in docs[5:8]]
    src = jsonl(tmp_path / "more.jsonl", docs[40:] + revised)
    r = sieve("add", str(db), str(src), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["added"], report["replaced"], report["documents"]) == (27, 3, 67)
    assert "27 added, 3 replaced" in r.stderr
    final = docs[:5] + revised + docs[8:]
    same_searches(db, build(tmp_path / "fresh.db", final[::-1]))  # order does not matter


def test_remove_equals_a_fresh_build(tmp_path: Path) -> None:
    docs = corpus()
    db = build(tmp_path / "db.db", docs)
    gone = [docs[0]["id"], docs[30]["id"], docs[-1]["id"], docs[-2]["id"]]  # last rowids too
    r = sieve("remove", str(db), *gone)
    assert r.returncode == 0 and "4 removed; 63 documents" in r.stderr, r.stderr
    same_searches(db, build(tmp_path / "fresh.db", [d for d in docs if d["id"] not in gone]))


def test_many_updates_renumber_passages_and_stay_exact(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(upd, "COMPACT_SLACK", 0)
    docs = corpus()
    db = build(tmp_path / "db.db", docs)
    current = {d["id"]: d for d in docs}
    for round_ in range(3):
        batch = docs[round_ * 10:round_ * 10 + 10]
        upd.remove_documents(db, [d["id"] for d in batch])
        for d in batch:
            current.pop(d["id"])
        revised = [changed(d) for d in batch]
        upd.add_documents(db, [Document.from_dict(d) for d in revised])
        current.update({d["id"]: d for d in revised})
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    top, live = conn.execute("SELECT max(first + length(lens) / 4), sum(length(lens) / 4) "
                             "FROM passages").fetchone()
    conn.close()
    assert top <= live + live // 2  # renumbered: the numbers of removed passages are gone
    same_searches(db, build(tmp_path / "fresh.db", list(current.values())))


# --------------------------------------------------------------------- all or nothing
def test_a_failure_in_the_middle_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    docs = corpus()
    db = build(tmp_path / "db.db", docs[:40])
    before = db.read_bytes()
    calls = {"n": 0}
    real = upd.ps.add_document

    def fail_on_fourth(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("disk on fire")
        return real(*args, **kw)

    monkeypatch.setattr(upd.ps, "add_document", fail_on_fourth)
    with pytest.raises(RuntimeError, match="disk on fire"):
        upd.add_documents(db, [Document.from_dict(d) for d in docs[40:]])
    assert db.read_bytes() == before and calls["n"] == 4
    assert not list(tmp_path.glob("*-journal"))


def test_refusals_leave_the_file_alone(tmp_path: Path) -> None:
    docs = corpus()
    db = build(tmp_path / "db.db", docs[:10])
    before = db.read_bytes()
    r = sieve("remove", str(db), docs[0]["id"], "no-such-id")
    assert r.returncode == 2 and "no document 'no-such-id'; nothing was removed" in r.stderr
    bad = jsonl(tmp_path / "bad.jsonl", [docs[20], {"id": "x"}])
    r = sieve("add", str(db), str(bad), "--strict")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--strict" in r.stderr
    with pytest.raises(BuildError, match="empty"):
        upd.remove_documents(db, [d["id"] for d in docs[:10]])
    assert db.read_bytes() == before
    # a file from before content_state existed, and a hostile one
    old = tmp_path / "old.db"
    shutil.copyfile(db, old)
    conn = apsw.Connection(str(old))
    conn.execute("DELETE FROM meta WHERE key = 'content_state'")
    conn.close()
    with pytest.raises(CollectionError, match="rebuild it once"):
        upd.add_documents(old, [Document.from_dict(docs[20])])
    hostile = tmp_path / "hostile.db"
    shutil.copyfile(db, hostile)
    conn = apsw.Connection(str(hostile))
    conn.execute("CREATE TRIGGER t AFTER INSERT ON documents BEGIN DELETE FROM meta; END")
    conn.close()
    r = sieve("add", str(hostile), str(jsonl(tmp_path / "one.jsonl", [docs[20]])))
    assert r.returncode == 3 and "unexpected trigger t" in r.stderr
    with pytest.raises(SieveError):
        upd.remove_documents(db, [])


# ------------------------------------------------------------------------------ readers
def test_an_open_collection_sees_the_update(tmp_path: Path) -> None:
    docs = corpus()
    db = build(tmp_path / "db.db", docs)
    with sieve_lite.open(db) as coll:
        first = coll.search("generator", k=100, ranker="bm25")  # caches filled
        r = sieve("remove", str(db), first.results[0].id, docs[-1]["id"])
        assert r.returncode == 0, r.stderr
        again = coll.search("generator", k=100, ranker="bm25")
        assert coll.generation == 1 and coll.documents == 65
        assert first.results[0].id not in [h.id for h in again.results]
    fresh = build(tmp_path / "fresh.db", [d for d in docs if d["id"] not in
                                         (first.results[0].id, docs[-1]["id"])])
    with sieve_lite.open(fresh) as f:
        want = f.search("generator", k=100, ranker="bm25")
    assert [(h.id, h.score) for h in again.results] == \
        [(h.id, pytest.approx(h.score)) for h in want.results]


READER = textwrap.dedent("""
    import json, os, sys, time
    import sieve_lite
    path, stop = sys.argv[1], sys.argv[2]
    queries = ["generator", "generat* OR decorator", "Guido[author]", "walrus", "the",
               "date[2001..2003]", "python[Title] NOT zzz"]
    done, failures, states, waits = 0, [], set(), []
    with sieve_lite.open(path) as coll:
        while not os.path.exists(stop) or done < 20:
            q = queries[done % len(queries)]
            t0 = time.monotonic()
            try:
                res = coll.search(q, k=5, ranker=("bm25", "bm25-doc")[done % 2])
                if res.results:
                    coll.fetch(res.results[0].id)
                states.add(coll.documents)
            except Exception as e:  # any failure is what this test looks for
                failures.append(f"{type(e).__name__}: {e}")
            waits.append(time.monotonic() - t0)
            done += 1
    print(json.dumps({"done": done, "failures": failures, "states": sorted(states),
                      "max_wait": max(waits)}))
""")


def test_four_readers_never_fail_during_updates(tmp_path: Path) -> None:
    docs = corpus()
    db = build(tmp_path / "db.db", docs)
    script, stop = tmp_path / "reader.py", tmp_path / "stop"
    script.write_text(READER)
    readers = [subprocess.Popen([sys.executable, str(script), str(db), str(stop)],
                                stdout=subprocess.PIPE, text=True) for _ in range(4)]
    time.sleep(2)  # let them open and start reading
    extra = [changed(d) | {"id": d["id"] + "-v2"} for d in docs[:8]]
    for _ in range(3):
        upd.add_documents(db, [Document.from_dict(d) for d in extra])
        upd.remove_documents(db, [d["id"] for d in extra])
    stop.touch()
    results = [json.loads(p.communicate(timeout=300)[0]) for p in readers]
    for r in results:
        assert r["failures"] == [] and r["done"] >= 20, r
    assert any(75 in r["states"] for r in results)  # someone read the collection mid-round
    same_searches(db, build(tmp_path / "fresh.db", docs))


# ----------------------------------------------------------------------------- vectors
@pytest.mark.slow
def test_add_to_an_embedded_collection_embeds_like_a_build(tmp_path: Path) -> None:
    import numpy as np

    docs = corpus()[:12]
    db = tmp_path / "v.db"
    build_collection([Document.from_dict(d) for d in docs[:9]], db, embed=True, force=True)
    upd.add_documents(db, [Document.from_dict(d) for d in docs[9:]])
    upd.remove_documents(db, [docs[0]["id"]])  # moves the last document: its vector goes too
    fresh = tmp_path / "f.db"
    build_collection([Document.from_dict(d) for d in docs[1:]], fresh, embed=True, force=True)
    with sieve_lite.open(db) as a, sieve_lite.open(fresh) as b:
        def vectors(c):
            return {i: np.frombuffer(v, dtype=np.float32) for i, v in c.conn.execute(
                "SELECT d.id, v.embedding FROM documents d JOIN doc_vectors v "
                "ON v.rowid = d.rowid")}
        va, vb = vectors(a), vectors(b)
        assert sorted(va) == sorted(vb)
        for i in va:
            assert np.allclose(va[i], vb[i], atol=1e-5), i
        for ranker in ("dense", "hybrid"):
            assert [h.id for h in a.search("generator", k=5, ranker=ranker).results] == \
                [h.id for h in b.search("generator", k=5, ranker=ranker).results]
    assert verify(db).ok
