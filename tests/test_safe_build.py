"""Builds that lose nothing: the data-loss cases of issue 9 as tests (a bad UTF-8 line, outputs
that must not be replaced, a wrong --format), skip summaries, and progress with a total."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.build import build_collection
from sieve_lite.errors import OutputError
from sieve_lite.sources import Meter, iter_documents

DATA = Path(__file__).resolve().parent / "data"
CLI = [sys.executable, "-c", "import sys; from sieve_lite.cli import main; "
       "sys.argv[0] = 'sieve-lite'; main()"]


def sieve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def docs_jsonl(path: Path, n: int, bad: dict[int, bytes] | None = None) -> Path:
    """``n`` JSON Lines documents; line numbers in ``bad`` (1-based) get those bytes instead."""
    with open(path, "wb") as f:
        for i in range(1, n + 1):
            if bad and i in bad:
                f.write(bad[i] + b"\n")
            else:
                f.write(json.dumps({"id": f"d{i}", "title": f"Doc {i}",
                                    "text": f"words of document {i}"}).encode() + b"\n")
    return path


# -------------------------------------------------------------------------- bad UTF-8 line
def test_invalid_utf8_skips_only_its_line(tmp_path: Path) -> None:
    bad = b'{"id": "bad", "title": "caf\xe9", "text": "latin-1, not UTF-8"}'
    src = docs_jsonl(tmp_path / "docs.jsonl", 1000, {500: bad})
    r = sieve("build", "docs.jsonl", "-o", "out.db", "--no-embed", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"skipped: {src.name}:500: not valid UTF-8" in r.stderr
    assert "999 documents" in r.stderr and "1 skipped" in r.stderr
    with sieve_lite.open(tmp_path / "out.db") as coll:
        assert coll.documents == 999
        assert coll.document("d499") and coll.document("d501") and coll.document("d1000")


def test_invalid_utf8_in_a_passage_file(tmp_path: Path) -> None:
    lines = [json.dumps({"title": f"T{i}", "text": f"passage {i}"}).encode() for i in range(5)]
    lines[2] = b'{"title": "T2", "text": "\xff\xfe"}'
    src = tmp_path / "corpus.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    items = list(iter_documents([src], "hotpotqa"))
    errors = [str(x) for x in items if not isinstance(x, sieve_lite.documents.Document)]
    assert errors == [f"{src}:3: not valid UTF-8 (invalid start byte at byte 25 of the line)"]
    assert len(items) == 5


# ------------------------------------------------------------------------------- outputs
def test_existing_collection_needs_force(tmp_path: Path, examples_db: Path) -> None:
    docs_jsonl(tmp_path / "d.jsonl", 3)
    out = tmp_path / "out.db"
    shutil.copyfile(examples_db, out)
    before = out.read_bytes()
    r = sieve("build", "d.jsonl", "-o", "out.db", "--no-embed", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--force" in r.stderr
    assert out.read_bytes() == before
    r = sieve("build", "d.jsonl", "-o", "out.db", "--no-embed", "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with sieve_lite.open(out) as coll:
        assert coll.documents == 3


def test_plain_file_and_own_input_are_never_replaced(tmp_path: Path) -> None:
    src = docs_jsonl(tmp_path / "d.jsonl", 3)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    for out, why in ((notes, "not a sieve-lite collection"), (src, "is also an input")):
        before = out.read_bytes()
        r = sieve("build", "d.jsonl", "-o", out.name, "--no-embed", "--force", cwd=tmp_path)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and why in r.stderr, r.stderr
        assert out.read_bytes() == before
    with pytest.raises(OutputError, match="is also an input"):
        build_collection(iter_documents([src]), src, embed=False, inputs=[src], force=True)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_killed_builds_temp_file_is_removed_by_the_next_build(tmp_path: Path) -> None:
    src = docs_jsonl(tmp_path / "d.jsonl", 3)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a process id that is certainly gone
    stale = tmp_path / f".out.db.building-{dead.pid}"
    stale.write_bytes(b"half a build")
    build_collection(iter_documents([src]), tmp_path / "out.db", embed=False)
    assert not stale.exists()


# ------------------------------------------------------------- skip summaries, early stop
def test_wrong_format_stops_early_with_a_hint(tmp_path: Path) -> None:
    """HotpotQA passages (no ids) read as DOCUMENTS.md JSON Lines: every record fails."""
    shutil.copyfile(DATA / "qa/hotpotqa/corpus.jsonl", tmp_path / "passages.jsonl")
    r = sieve("build", "passages.jsonl", "-o", "out.db", "--no-embed", "--format", "jsonl",
              cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 6  # the first 5 skips, then the one-line stop with its hint
    assert all(ln.startswith("skipped: passages.jsonl:") for ln in lines[:5])
    assert lines[5].startswith("error: the first 100 records all failed")
    assert "--format" in lines[5] and "passages.jsonl:1: missing 'id'" in lines[5]
    assert not (tmp_path / "out.db").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_many_bad_records_are_summarised(tmp_path: Path) -> None:
    docs_jsonl(tmp_path / "d.jsonl", 30, {i: b"{broken" for i in range(2, 22)})
    r = sieve("build", "d.jsonl", "-o", "out.db", "--no-embed", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert [ln.split(":")[2] for ln in lines[:5]] == ["2", "3", "4", "5", "6"]
    assert lines[5] == "skipped: ... and 15 more bad records not shown"
    assert "10 documents" in lines[6] and "20 skipped" in lines[6]
    assert lines[7].startswith("hint: most records were skipped") and "jsonl" not in lines[6]
    report = build_collection(iter_documents([tmp_path / "d.jsonl"]), tmp_path / "o2.db",
                              embed=False)
    assert report.skipped_count == 20 and len(report.skipped) == 5


# -------------------------------------------------------------------------------- progress
def test_meter_counts_files_up_front_and_bytes_as_read(tmp_path: Path) -> None:
    src = docs_jsonl(tmp_path / "d.jsonl", 50)
    meter = Meter()
    it = iter_documents([src], "auto", meter)
    first = next(it)
    assert meter.total == src.stat().st_size and 0 < meter.done < meter.total
    assert first.id == "d1"
    list(it)
    assert meter.done == meter.total
    folder = DATA / "corpora" / "rust-rfcs"
    meter = Meter()
    it = iter_documents([folder], "auto", meter)
    next(it)
    assert meter.files == 12 and meter.total == sum(p.stat().st_size
                                                    for p in folder.iterdir())
    list(it)
    assert meter.done == meter.total


@pytest.mark.skipif(sys.platform != "linux", reason="a pseudo-terminal")
def test_progress_on_a_terminal_shows_share_and_eta(tmp_path: Path) -> None:
    docs_jsonl(tmp_path / "d.jsonl", 20_000)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*CLI, "build", "d.jsonl", "-o", "out.db", "--no-embed"],
                            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=follower, env={**os.environ, "COLUMNS": "120"})
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(leader)
    text = seen.decode(errors="replace")
    assert proc.returncode == 0, text[-500:]
    assert "indexing" in text and "%" in text and "ETA" in text
    assert "built out.db: 20,000 documents" in text
