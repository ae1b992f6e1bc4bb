"""``sieve-lite get``: against a real ``python -m http.server`` on 127.0.0.1 (and a range-capable
variant of it, ``tests/range_http.py``), with a good file, tampered files, a cut-off download
and its resume; local paths; outputs that must not be replaced. Also ``collections/index.json``
is true to the files it lists."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.errors import DamagedCollection, DownloadError, OutputError
from sieve_lite.get import file_sha256, get_collection, index_entry, write_index

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"  # 19 MB: big enough to cut a download in the middle
CLI = [sys.executable, "-c", "import sys; from sieve_lite.cli import main; "
       "sys.argv[0] = 'sieve-lite'; main()"]


class Server:
    """A static file server in its own process on 127.0.0.1 (stopped by ``stop``)."""

    def __init__(self, folder: Path, ranges: bool = False) -> None:
        self.folder, self.ranges = folder, ranges
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        if self.ranges:
            cmd = [sys.executable, str(ROOT / "tests" / "range_http.py"), str(self.port),
                   str(self.folder)]
        else:
            cmd = [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1",
                   "--directory", str(self.folder)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the test server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path / "www"
    folder.mkdir()
    shutil.copyfile(PEPS, folder / "peps.db")
    write_index(folder)
    server = Server(folder)
    yield server, folder
    server.stop()


def sieve(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def tamper(path: Path) -> None:
    """Change one byte inside a zlib-packed section text of the file."""
    data = bytearray(path.read_bytes())
    i = data.index(b"PEP 572") if b"PEP 572" in data else len(data) // 2
    data[i] ^= 0x20
    path.write_bytes(bytes(data))


# ------------------------------------------------------------------------------ good files
def test_get_checks_against_index_and_renames(served, tmp_path: Path) -> None:
    server, _ = served
    out = tmp_path / "got.db"
    r = sieve("get", server.url("peps.db"), "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["format"] == 1 and report["checksum"] == "index.json"
    assert report["sha256"] == file_sha256(PEPS) and report["resumed_from"] == 0
    assert out.read_bytes() == PEPS.read_bytes()
    assert leftovers(tmp_path) == []
    with sieve_lite.open(out) as coll:
        assert coll.documents == 736


def test_get_a_path_and_a_file_url(tmp_path: Path) -> None:
    out = tmp_path / "a.db"
    report = get_collection(str(PEPS), out)
    assert report.checksum == "index.json"  # collections/index.json beside the file
    out2 = tmp_path / "b.db"
    assert get_collection(PEPS.as_uri(), out2, sha256=file_sha256(PEPS)).checksum == "given"
    assert out.read_bytes() == out2.read_bytes() == PEPS.read_bytes()


# --------------------------------------------------------------------------- tampered files
def test_tampered_file_fails_the_index_checksum(served, tmp_path: Path) -> None:
    server, folder = served
    tamper(folder / "peps.db")
    out = tmp_path / "got.db"
    r = sieve("get", server.url("peps.db"), "-o", str(out))
    assert r.returncode == 3, r.stderr
    assert r.stderr.count("\n") == 1 and "not the expected" in r.stderr
    assert "(index.json)" in r.stderr and "it was not saved" in r.stderr
    assert not out.exists() and leftovers(tmp_path) == []


def test_tampered_file_without_a_checksum_fails_verify(served, tmp_path: Path) -> None:
    server, folder = served
    tamper(folder / "peps.db")
    (folder / "index.json").unlink()
    out = tmp_path / "got.db"
    with pytest.raises(DamagedCollection, match="not a sound collection") as info:
        get_collection(server.url("peps.db"), out)
    assert "integrity" in str(info.value) or "content" in str(info.value)
    assert not out.exists() and leftovers(tmp_path) == []


def test_wrong_sha256_and_a_bad_sha256(served, tmp_path: Path) -> None:
    server, _ = served
    with pytest.raises(DamagedCollection, match=r"not the expected 0{64} \(given\)"):
        get_collection(server.url("peps.db"), tmp_path / "x.db", sha256="0" * 64)
    r = sieve("get", server.url("peps.db"), "-o", str(tmp_path / "x.db"), "--sha256", "abc")
    assert r.returncode == 2 and "is not 64 hex digits" in r.stderr
    r = sieve("get", server.url("nothing.db"), "-o", str(tmp_path / "x.db"))
    assert r.returncode == 2 and "HTTP 404" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "x.db").exists()


# ---------------------------------------------------------------------- cut off, resumed
@pytest.mark.parametrize("ranges", [False, True], ids=["http.server", "with-ranges"])
def test_cut_off_download_resumes(tmp_path: Path, ranges: bool) -> None:
    folder = tmp_path / "www"
    folder.mkdir()
    shutil.copyfile(PEPS, folder / "peps.db")
    server = Server(folder, ranges=ranges)
    out = tmp_path / "got.db"
    try:
        def kill_early(done: int, total: int | None) -> None:
            if done >= 1 << 20:
                server.stop()  # the server dies with most of the file still unsent

        with pytest.raises(DownloadError, match="run the same command again to resume"):
            get_collection(server.url("peps.db"), out, sha256=file_sha256(PEPS),
                           progress=kill_early)
        part = tmp_path / ".got.db.part"
        kept = part.stat().st_size
        assert 1 << 20 <= kept < PEPS.stat().st_size and not out.exists()
        server.start()
        report = get_collection(server.url("peps.db"), out, sha256=file_sha256(PEPS))
    finally:
        server.stop()
    # http.server ignores Range and sends it all again; the range server sends the rest.
    assert report.resumed_from == (kept if ranges else 0)
    assert out.read_bytes() == PEPS.read_bytes() and leftovers(tmp_path) == []


# --------------------------------------------------------------------------------- outputs
def test_outputs_that_must_not_be_replaced(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("my notes")
    with pytest.raises(OutputError, match="not a sieve-lite collection"):
        get_collection(str(PEPS), text)
    assert text.read_text() == "my notes"
    existing = tmp_path / "peps.db"
    shutil.copyfile(PEPS, existing)
    r = sieve("get", str(PEPS), "-o", str(existing))
    assert r.returncode == 2 and "--force" in r.stderr
    r = sieve("get", str(PEPS), "-o", str(existing), "--force", "-q")
    assert r.returncode == 0 and r.stderr == ""


# --------------------------------------------------------------------------- the index
def test_collections_index_is_true_to_the_files() -> None:
    index = json.loads((ROOT / "collections" / "index.json").read_text(encoding="utf-8"))
    files = sorted(p.name for p in (ROOT / "collections").glob("*.db"))
    assert [e["file"] for e in index["collections"]] == files
    for entry in index["collections"]:
        assert entry == index_entry(ROOT / "collections" / entry["file"]), (
            "collections/index.json is stale: run 'python -m sieve_lite.get collections'")
