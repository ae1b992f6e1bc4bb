"""The indexing path: round trips, bad input, atomic builds, refusals, ``info --json``."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

import sieve_lite
from sieve_lite import build as build_mod
from sieve_lite.build import build_collection
from sieve_lite.documents import Document
from sieve_lite.errors import BuildError, CollectionError, DocumentError
from sieve_lite.processes import can_fork
from sieve_lite.sources import iter_documents

CLI = [sys.executable, "-c", "import sys; from sieve_lite.cli import main; "
       "sys.argv[0] = 'sieve-lite'; main()"]


def sieve(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False))
                            + "\n" for r in rows), encoding="utf-8")
    return path


def temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.building-*"))


LONG = "Zürich and São Paulo; ﬁne straße. " * 20  # > 160 bytes: stored packed
FULL = {"id": "full", "title": "Full — Ünïcode",
        "sections": [{"heading": "(intro)", "text": "before"}, {"heading": "H", "text": LONG},
                     {"heading": "H", "text": ""}],
        "infobox": {"Status": "Final", "Count": 3},
        "author": "Ann Lee", "date": "2001-07", "url": "https://example.org/full",
        "meta": {"source": "test", "n": 1, "nested": {"a": [1, 2]}, "_own": True}}
FLAT = {"id": "flat", "title": "", "text": "a flat body", "author": ["A. One", "B. Two"],
        "infobox": [["k", "v"], ["k", "v2"]], "date": "1999"}


# -------------------------------------------------------------------------------- round trip
def test_round_trip_of_every_field(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "docs.jsonl", [FULL, FLAT])
    out = tmp_path / "rt.db"
    report = build_collection(iter_documents([src]), out, embed=False)
    assert report.documents == 2 and report.sections == 4 and not report.skipped
    with sieve_lite.open(out) as coll:
        full = coll.document("full")
        flat = coll.document("flat")
        assert coll.document("missing") is None
        assert set(coll.fields) == {"title", "section", "body", "infobox", "author", "date",
                                    "tiab", "all"}
    assert full == {**FULL, "infobox": [["Status", "Final"], ["Count", "3"]],
                    "author": ["Ann Lee"]}
    assert flat == {"id": "flat", "title": "", "sections": [{"heading": "(intro)",
                                                             "text": "a flat body"}],
                    "infobox": [["k", "v"], ["k", "v2"]], "author": ["A. One", "B. Two"],
                    "date": "1999"}
    # meta keeps its key order; the builders' '_where' tag is not stored
    assert list(full["meta"]) == ["source", "n", "nested", "_own"]


def test_examples_db_round_trip(examples_db: Path, data_dir: Path) -> None:
    with sieve_lite.open(examples_db) as coll:
        for line in (data_dir / "bql-examples/corpus.jsonl").read_text().splitlines():
            d = json.loads(line)
            if "text" in d:
                d["sections"] = [{"heading": "(intro)", "text": d.pop("text")}]
            assert coll.document(d["id"]) == d


def test_repeated_id_names_both_lines(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "rep.jsonl", [
        {"id": "a", "title": "A", "text": "x"}, {"id": "b", "title": "B", "text": "y"},
        {"id": "a", "title": "A again", "text": "z"}])
    seen: list[DocumentError] = []
    report = build_collection(iter_documents([src]), tmp_path / "r.db", embed=False,
                              on_skip=seen.append)
    assert report.documents == 2
    assert report.skipped == [f"{src}:3: repeats id 'a' (first at {src}:1); ids must be unique"]
    assert seen[0].where == f"{src}:3"


def test_values_of_one_kind_are_bounded_by_the_rowid_layout(tmp_path: Path) -> None:
    """A document's values of one kind share its rowid range (``doc << SHIFT | pos``): the
    most the layout holds is built and searchable to the last one; one more is skipped."""
    from sieve_lite.store.layout import MAX_VALUES

    most = [f"Writer{i}" for i in range(MAX_VALUES - 1)]
    src = write_jsonl(tmp_path / "wide.jsonl", [
        {"id": "wide", "title": "Wide", "text": "x", "author": most},
        {"id": "wider", "title": "Wider", "text": "y", "author": [*most, "Writerlast"]},
        {"id": "sections", "title": "S", "sections": [{"heading": f"H{i}", "text": "z"}
                                                      for i in range(MAX_VALUES)]}])
    report = build_collection(iter_documents([src]), tmp_path / "w.db", embed=False)
    assert report.documents == 1
    assert report.skipped == [
        f"{src}:{n}: document {d!r} has over {MAX_VALUES - 1} sections, infobox entries or "
        "authors" for n, d in ((2, "wider"), (3, "sections"))]
    with sieve_lite.open(tmp_path / "w.db") as coll:
        last = f"writer{MAX_VALUES - 2}[author]"
        res = coll.search(last, ranker="bm25")
        assert res.total == 1 and [h.id for h in res.results] == ["wide"]
        assert coll.document("wide")["author"][-1] == f"Writer{MAX_VALUES - 2}"


def test_content_hash_is_deterministic_and_inline_equals_workers(tmp_path: Path,
                                                                 data_dir: Path,
                                                                 monkeypatch) -> None:
    docs = [d for d in iter_documents([data_dir / "qa/musique/corpus.json"])]
    a = build_collection(docs, tmp_path / "a.db", embed=False, workers=0)
    monkeypatch.setattr(build_mod, "POOL_AFTER_CHARS", 0)
    monkeypatch.setattr(build_mod, "BATCH_DOCS", 50)
    b = build_collection(docs, tmp_path / "b.db", embed=False, workers=2)
    assert a.workers == 0 and b.workers == (2 if can_fork() else 0)
    assert a.words == b.words and a.documents == b.documents == 236

    def dump(p: Path) -> tuple:
        conn = apsw.Connection(str(p), flags=apsw.SQLITE_OPEN_READONLY)
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        tables = tuple(tuple(conn.execute(f"SELECT * FROM {t} ORDER BY rowid"))
                       for t in ("documents", "sections", "infobox", "authors"))
        vocab = tuple(conn.execute("SELECT * FROM vocab_body_instance"))
        conn.close()
        return meta["content_hash"], tables, vocab

    assert dump(tmp_path / "a.db") == dump(tmp_path / "b.db")


def test_no_documents_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="no documents were indexed"):
        build_collection([DocumentError("bad", "x:1")], tmp_path / "none.db", embed=False)
    assert not (tmp_path / "none.db").exists() and temps(tmp_path) == []


# -------------------------------------------------------------------------- bad lines, CLI
BAD = [{"id": "a", "title": "A", "text": "x"},
       {"id": "b", "title": "B", "text": "y"},
       "{this is not json",
       {"title": "no id", "text": "z"},
       {"id": "c", "title": "C", "text": "w", "date": "2018-13"}]


def test_cli_reports_bad_lines_and_goes_on(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "bad.jsonl", BAD)
    r = sieve("build", "bad.jsonl", "-o", "x.db", "--no-embed", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert any(ln.startswith("skipped: bad.jsonl:3: not valid JSON") for ln in lines)
    assert any(ln.startswith("skipped: bad.jsonl:4: missing 'id'") for ln in lines)
    assert any(ln.startswith("skipped: bad.jsonl:5: document 'c'") and "month 13" in ln
               for ln in lines)
    assert "built x.db: 2 documents" in r.stderr and "3 skipped" in r.stderr
    with sieve_lite.open(tmp_path / "x.db") as coll:
        assert coll.documents == 2
    # --quiet: nothing on stderr
    r = sieve("build", "bad.jsonl", "-o", "q.db", "--no-embed", "--quiet", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == ""


def test_cli_strict_stops_and_writes_nothing(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "bad.jsonl", BAD)
    r = sieve("build", "bad.jsonl", "-o", "x.db", "--no-embed", "--strict", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: bad.jsonl:3: not valid JSON") and "--strict" in r.stderr
    assert not (tmp_path / "x.db").exists() and temps(tmp_path) == []


def test_cli_build_folder_with_format(tmp_path: Path, data_dir: Path) -> None:
    r = sieve("build", str(data_dir / "structured/wikipedia"), "-o", "w.db",
              "--format", "wikipedia", "--no-embed", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with sieve_lite.open(tmp_path / "w.db") as coll:
        assert coll.documents == 2 and "infobox" in coll.fields
    r = sieve("build", "nowhere", "-o", "n.db", "--no-embed", cwd=tmp_path)
    assert r.returncode == 2 and "does not exist" in r.stderr and r.stderr.count("\n") == 1


# ------------------------------------------------------------------------------ atomicity
def old_file(tmp_path: Path, examples_db: Path) -> tuple[Path, bytes]:
    out = tmp_path / "out.db"
    shutil.copyfile(examples_db, out)
    return out, out.read_bytes()


@pytest.mark.parametrize("workers", [0, 2])
def test_exception_mid_stream_leaves_old_file(tmp_path: Path, examples_db: Path,
                                              workers: int, monkeypatch) -> None:
    monkeypatch.setattr(build_mod, "POOL_AFTER_CHARS", 0)
    out, before = old_file(tmp_path, examples_db)
    src = _big_jsonl(tmp_path / "src.jsonl", 5000)

    def docs() -> Iterator[Document | DocumentError]:
        for i, d in enumerate(iter_documents([src])):
            if i == 3000:
                raise RuntimeError("source broke")
            yield d

    with pytest.raises(RuntimeError, match="source broke"):
        build_collection(docs(), out, embed=False, workers=workers, force=True)
    assert out.read_bytes() == before and temps(tmp_path) == []


def test_strict_stop_leaves_old_file(tmp_path: Path, examples_db: Path) -> None:
    out, before = old_file(tmp_path, examples_db)
    src = write_jsonl(tmp_path / "bad.jsonl", BAD)
    with pytest.raises(BuildError, match=r"bad\.jsonl:3: .*--strict"):
        build_collection(iter_documents([src]), out, embed=False, strict=True, force=True)
    assert out.read_bytes() == before and temps(tmp_path) == []


def _big_jsonl(path: Path, n: int) -> Path:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(5000)] + ["castle", "fort", "santiago", "manila"]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            text = " ".join(rng.choices(vocab, k=90))
            f.write(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": text}) + "\n")
    return path


def _alive_with(marker: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if marker.encode() in cmd and state != "Z":
            pids.append(int(proc.name))
    return pids


@pytest.mark.skipif(sys.platform != "linux", reason="uses /proc and SIGKILL")
def test_sigkill_mid_build_leaves_old_file(tmp_path: Path, examples_db: Path) -> None:
    out, before = old_file(tmp_path, examples_db)
    big = _big_jsonl(tmp_path / "big-kill-source.jsonl", 60_000)
    proc = subprocess.Popen([*CLI, "build", str(big), "-o", str(out), "--no-embed", "-q",
                             "--force"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tmp = out.with_name(f".{out.name}.building-{proc.pid}")
    deadline = time.time() + 60
    while not tmp.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert tmp.exists(), "the build never started writing"
    time.sleep(1.0)
    assert proc.poll() is None, "the build finished before it could be killed; make it bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert out.read_bytes() == before
    # Worker processes notice that their parent is gone and exit.
    deadline = time.time() + 5
    while _alive_with(big.name) and time.time() < deadline:
        time.sleep(0.1)
    assert _alive_with(big.name) == []
    # The killed build's temp file stays (nothing runs at SIGKILL); the next build of the same
    # output removes it because its process is gone.
    assert tmp.exists()
    build_collection([Document.from_dict({"id": "x", "title": "X", "text": "y"})], out,
                     embed=False, force=True)
    assert temps(tmp_path) == []
    with sieve_lite.open(out) as coll:
        assert coll.documents == 1


# -------------------------------------------------------------------------------- refusals
def one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    return r.stderr


def test_refuses_other_schema_version(tmp_path: Path, examples_db: Path) -> None:
    copy = tmp_path / "v99.db"
    shutil.copyfile(examples_db, copy)
    conn = apsw.Connection(str(copy))
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    err = one_line_error(sieve("info", str(copy)))
    assert "schema version 99" in err and "upgrade sieve-lite" in err
    with pytest.raises(CollectionError, match="version 99"):
        sieve_lite.open(copy)


def test_refuses_non_sieve_sqlite_and_garbage(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = apsw.Connection(str(other))
    conn.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
    conn.close()
    assert "not a sieve-lite collection" in one_line_error(sieve("info", str(other)))
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(random.Random(1).randbytes(20_000))
    assert "not a SQLite file" in one_line_error(sieve("info", str(garbage)))
    assert "no collection at" in one_line_error(sieve("info", str(tmp_path / "none.db")))


def test_info_json(examples_db: Path) -> None:
    r = sieve("info", str(examples_db), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert set(info) == {"format", "type", "path", "documents", "sections", "fields",
                         "schema_version", "tokenizer", "embed_model", "embed_dim", "avg_words",
                         "build_time", "content_hash", "name", "description", "version",
                         "license", "source", "size_bytes"}
    assert info["format"] == 1 and info["type"] == "info"
    assert info["name"] == "examples" and info["description"] is None
    assert info["path"] == str(examples_db)
    assert info["documents"] == 67 and info["sections"] == 1242
    assert info["fields"] == ["title", "section", "body", "infobox", "author", "date", "tiab",
                              "all"]
    assert info["schema_version"] == sieve_lite.store.SCHEMA_VERSION
    assert info["tokenizer"].startswith("sieve-words-v1")
    assert info["embed_model"] is None and info["embed_dim"] is None
    assert info["avg_words"] > 100
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", info["build_time"])
    assert re.fullmatch(r"[0-9a-f]{64}", info["content_hash"])
    assert info["source"] == "jsonl: bql-examples/corpus.jsonl"
    assert info["size_bytes"] == examples_db.stat().st_size


# ------------------------------------------------------------------------------- embedded
@pytest.mark.slow
def test_embedded_build(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "e.jsonl", [FULL, FLAT, {"id": "c", "title": "Castles",
                                                          "text": "A castle on a hill."}])
    report = build_collection(iter_documents([src]), tmp_path / "e.db", embed=True)
    assert report.embedded and report.documents == 3
    with sieve_lite.open(tmp_path / "e.db") as coll:
        assert coll.info()["embed_dim"] == 384 and coll.has_vectors
        assert coll.conn.execute("SELECT count(*) FROM doc_vectors").fetchone()[0] == 3
