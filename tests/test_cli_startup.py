"""A quick command line (issue 10): what each command imports, and the spinner.

Each command runs in a fresh interpreter that records ``sys.modules`` at exit, so an eager
import added anywhere on a command's path (a CLI module's top, the library, a dependency that
imports numpy) fails here by name. Speed itself is measured in ``bench/cli.py``, not here.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"

# Record the modules loaded when the CLI exits (main() always ends in sys.exit).
RUNNER = ("import atexit, json, sys\n"
          "out = sys.argv.pop(1)\n"
          "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
          "from sieve_lite.cli import main\n"
          "main()\n")

TORCH = {"torch", "sentence_transformers", "transformers"}
MODEL = TORCH | {"tokenizers", "safetensors"}
RANKING = {"numpy", "sqlglot"}


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    env.pop("SIEVE_LITE_EMBEDDER", None)
    env.update(extra)
    return env


def _modules(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(out), *args], env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {m.split(".")[0] for m in json.loads(out.read_text())}


@pytest.mark.parametrize("args", [
    ("info", str(PEPS), "--json"),
    ("info", str(PEPS)),
    ("fetch", str(PEPS), "pep-0572", "abstract"),
    ("fetch", str(PEPS), "pep-0572", "--json"),
], ids=["info-json", "info", "fetch", "fetch-outline-json"])
def test_info_and_fetch_import_no_ranking_or_model_code(tmp_path: Path,
                                                        args: tuple[str, ...]) -> None:
    loaded = _modules(tmp_path, *args)
    assert not loaded & (RANKING | MODEL), sorted(loaded & (RANKING | MODEL))


def test_bm25_search_imports_no_model_code(tmp_path: Path) -> None:
    loaded = _modules(tmp_path, "search", str(PEPS), "walrus operator", "--ranker", "bm25")
    assert not loaded & MODEL, sorted(loaded & MODEL)


def test_hybrid_search_embeds_without_torch(tmp_path: Path) -> None:
    loaded = _modules(tmp_path, "search", str(PEPS), "walrus operator", "--json")
    assert "tokenizers" in loaded  # the query was embedded (by NumpyBert) ...
    assert not loaded & TORCH, sorted(loaded & TORCH)  # ... and torch never loaded


def _run_with_terminal_stderr(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run with stdout piped and stderr on a pseudo-terminal: (code, stdout, stderr)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=follower,
                                stdin=subprocess.DEVNULL)
        os.close(follower)
        err = b""
        while True:
            ready, _, _ = select.select([leader], [], [], 300)
            if not ready:
                proc.kill()
                raise AssertionError("the command did not finish")
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        out = proc.stdout.read().decode() if proc.stdout else ""
        code = proc.wait(timeout=60)
    finally:
        os.close(leader)
    return code, out, err.decode(errors="replace")


def test_spinner_only_on_a_terminal() -> None:
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", "search",
           str(PEPS), "walrus operator", "--json"]
    env = _env(SIEVE_LITE_SPINNER_DELAY="0", TERM="xterm")
    code, out, err = _run_with_terminal_stderr(cmd, env)
    assert code == 0
    assert "searching peps.db" in err
    assert json.loads(out)["results"]  # stdout is the result alone
    piped = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == ""
    assert json.loads(piped.stdout)["results"]
