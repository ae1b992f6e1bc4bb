"""``sieve-lite model list | get`` and ``ask --model NAME``, against a local HTTP server on
127.0.0.1 that serves files slowly enough to be cut off, honours ``Range`` and records the
``Range`` of every request. The model folder is moved with ``XDG_DATA_HOME``."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sieve_lite.agent.models import default_model_path, find_model, resolve_source
from sieve_lite.errors import ModelError, OutputError

ROOT = Path(__file__).resolve().parents[1]


class SlowRangeHandler(http.server.SimpleHTTPRequestHandler):
    """Files with ``Range`` support, sent in 64 KiB pieces ``delay`` seconds apart."""

    ranges: list[str | None]
    delay: float

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.ranges.append(self.headers.get("Range"))
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        m = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if m:
            start = int(m.group(1))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        try:
            for i in range(start, len(data), 1 << 16):
                self.wfile.write(data[i:i + (1 << 16)])
                time.sleep(self.delay)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Served:
    def __init__(self, folder: Path, delay: float) -> None:
        self.ranges: list[str | None] = []
        handler = type("H", (SlowRangeHandler,), {"ranges": self.ranges, "delay": delay})
        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{name}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    folder = tmp_path / "served"
    folder.mkdir()
    # a small GGUF-looking file (the magic, then bytes) for the download tests
    (folder / "tiny-model.gguf").write_bytes(b"GGUF" + os.urandom(3 * (1 << 20)))
    (folder / "page.gguf").write_bytes(b"<html>not a model</html>")
    return folder


@pytest.fixture
def served(files: Path) -> Iterator[Served]:
    s = Served(files, delay=0.02)
    try:
        yield s
    finally:
        s.close()


def env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), HF_HUB_OFFLINE="1")


def sieve(tmp_path: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=env(tmp_path))


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_wrong_checksum_keeps_nothing(files: Path, served: Served, tmp_path: Path) -> None:
    models = tmp_path / "data" / "sieve-lite" / "models"
    r = sieve(tmp_path, "model", "get", served.url("tiny-model.gguf"), "--sha256", "0" * 64)
    assert r.returncode == 3 and r.stderr.count("\n") == 1, r.stderr
    assert "not the expected" in r.stderr and "not saved" in r.stderr
    assert list(models.iterdir()) == []  # no file, no part, no note
    # a right checksum on something that is not a GGUF file: refused too
    r = sieve(tmp_path, "model", "get", served.url("page.gguf"), "--sha256",
              sha(files / "page.gguf"))
    assert r.returncode == 3 and "not a GGUF file" in r.stderr
    assert list(models.iterdir()) == []
    r = sieve(tmp_path, "model", "get", served.url("tiny-model.gguf"), "--sha256", "abc")
    assert r.returncode == 2 and "64 hex digits" in r.stderr


def test_a_download_killed_halfway_resumes_with_range(files: Path, served: Served,
                                                      tmp_path: Path) -> None:
    url = served.url("tiny-model.gguf")
    digest = sha(files / "tiny-model.gguf")
    part = tmp_path / "data" / "sieve-lite" / "models" / ".tiny-model.gguf.part"
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", "model", "get",
           url, "--sha256", digest]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env(tmp_path))
    size = (files / "tiny-model.gguf").stat().st_size
    deadline = time.monotonic() + 120
    while not (part.exists() and part.stat().st_size > size // 3):
        assert proc.poll() is None, "the download ended before it could be cut"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # killed: no clean-up of any kind
    proc.wait(timeout=30)
    kept = part.stat().st_size
    assert 0 < kept < size
    r = sieve(tmp_path, "model", "get", url, "--sha256", digest, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["resumed_from"] >= kept and not report["already"]
    assert served.ranges[0] is None and served.ranges[-1] == f"bytes={report['resumed_from']}-"
    model = Path(report["path"])
    assert model.name == "tiny-model.gguf" and sha(model) == digest and not part.exists()
    # listed by name, and found by name
    r = sieve(tmp_path, "model", "list", "--json")
    listed = json.loads(r.stdout)
    assert r.returncode == 0
    assert listed["folder"] == str(tmp_path / "data" / "sieve-lite" / "models")
    assert [m["where"] for m in listed["models"]] == ["shipped", "folder"]
    assert listed["models"][1]["name"] == "tiny-model" and listed["models"][0]["default"]
    # the same file again: already there, nothing downloaded
    before = len(served.ranges)
    r = sieve(tmp_path, "model", "get", url, "--sha256", digest, "--json")
    assert json.loads(r.stdout)["already"] and len(served.ranges) == before


def test_progress_lines_show_rate_and_time_left(files: Path, tmp_path: Path) -> None:
    slow = Served(files, delay=0.12)  # about 7 s for the file: one line at 5 s
    try:
        r = sieve(tmp_path, "model", "get", slow.url("tiny-model.gguf"), "--sha256",
                  sha(files / "tiny-model.gguf"))
    finally:
        slow.close()
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("model get:")]
    assert lines and "/s" in lines[0] and "ETA" in lines[0] and "of 3.1 MB" in lines[0]
    assert "saved" in r.stderr and "ask --model tiny-model" in r.stderr


def test_finding_models_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    folder = tmp_path / "sieve-lite" / "models"
    folder.mkdir(parents=True)
    for name in ("Qwen2.5-1.5B-Instruct-Q4_K_M.gguf", "qwen2.5-7b.gguf"):
        (folder / name).write_bytes(b"GGUF")
    assert find_model("qwen2.5-7b") == folder / "qwen2.5-7b.gguf"
    assert find_model("QWEN2.5-1.5B-Instruct-Q4_K_M.gguf").name.startswith("Qwen2.5-1.5B")
    assert find_model("qwen2.5-1") == folder / "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"
    with pytest.raises(ModelError, match="2 models begin so"):
        find_model("qwen")
    with pytest.raises(ModelError, match="holds Qwen2.5"):
        find_model("llama")
    real = default_model_path()
    assert find_model(str(real)) == real  # a path still works
    assert resolve_source("hf:bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-"
                          "Q4_K_M.gguf") == ("https://huggingface.co/bartowski/SmolLM2-135M-"
                                             "Instruct-GGUF/resolve/main/SmolLM2-135M-"
                                             "Instruct-Q4_K_M.gguf")
    assert resolve_source("hf:o/r@v2/sub/f.gguf") == \
        "https://huggingface.co/o/r/resolve/v2/sub/f.gguf"
    with pytest.raises(OutputError):
        resolve_source("hf:only-owner/f.gguf")


@pytest.mark.slow
def test_ask_model_name_runs_a_model_from_the_folder(tmp_path: Path) -> None:
    """The shipped GGUF, got from a local server into the folder, run by its name."""
    shipped = default_model_path()
    s = Served(shipped.parent, delay=0)
    try:
        r = sieve(tmp_path, "model", "get", s.url(shipped.name), "--sha256", sha(shipped),
                  "--quiet")
    finally:
        s.close()
    assert r.returncode == 0, r.stderr
    r = sieve(tmp_path, "ask", str(ROOT / "collections" / "peps.db"),
              "Which PEP introduced the walrus operator?", "--model",
              "SmolLM2-135M-Instruct.Q4_1", "--json", timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["answer"] == "PEP 572" and out["citations"][0]["doc"] == "pep-0572"
    r = sieve(tmp_path, "ask", "walrus?", "--model", "no-such-model")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no model named" in r.stderr
