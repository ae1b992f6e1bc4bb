"""`sieve-lite ask` end to end, as a user runs it: a subprocess, the real default GGUF, a small
collection, offline. It must end with an answer and a transcript, whatever their quality."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", COLUMNS="100")


def sieve_lite(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """The console script's entry point in a fresh interpreter (the venv's, whatever PATH)."""
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def mini_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_agent_loop import MINI_DOCS, build_db

    return build_db(tmp_path_factory.mktemp("e2e") / "mini.db", MINI_DOCS)


@pytest.mark.slow
def test_ask_end_to_end_with_the_default_gguf(mini_db: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "episode.jsonl"
    r = sieve_lite("ask", str(mini_db), "Which PEP introduced the walrus operator?",
                   "--max-steps", "2", "--json", "--transcript", str(transcript))
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    assert out["question"] == "Which PEP introduced the walrus operator?"
    assert isinstance(out["answer"], str) and out["answer"]
    acc = out["accounting"]
    assert acc["stop_reason"] in ("answer", "step-cap", "context")
    assert 1 <= acc["llm_calls"] <= 4 and acc["steps"] <= 2
    assert acc["distinct_tokens"] > 0 and acc["accumulated_prompt_tokens"] >= acc["distinct_tokens"] - acc["completion_tokens"]  # noqa: E501
    assert acc["model_seconds"] > 0 and acc["wall_seconds"] >= acc["model_seconds"]
    for c in out["citations"]:
        assert set(c) == {"doc", "section", "pages"}  # pages: '' unless the source has them
    # the live view went to stderr: the question and each step
    assert "Which PEP introduced the walrus operator?" in r.stderr
    assert "step 1" in r.stderr and "answer" in r.stderr
    # the transcript: start, one event per step, end; and it replays
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert events[0]["event"] == "start" and events[-1]["event"] == "end"
    assert events[0]["n_ctx"] == 8192 and events[0]["grammar"] is True
    assert "SmolLM2-135M-Instruct" in events[0]["backbone"]
    assert events[-1]["answer"] == out["answer"]
    assert sum(e["event"] == "step" for e in events) >= 1
    replay = sieve_lite("ask", "--replay", str(transcript))
    assert replay.returncode == 0, replay.stderr
    assert out["answer"].split()[0] in replay.stdout and "step 1" in replay.stdout
    replay_json = sieve_lite("ask", "--replay", str(transcript), "--json")
    assert json.loads(replay_json.stdout)["answer"] == out["answer"]


def test_ask_arguments(mini_db: Path, tmp_path: Path) -> None:
    r = sieve_lite("ask")
    assert r.returncode == 2 and "QUESTION" in r.stderr
    r = sieve_lite("ask", str(tmp_path / "nope.db"), "a question")
    assert r.returncode == 2 and "collection not found" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = sieve_lite("ask", str(mini_db), "q", "--model", str(tmp_path / "none.gguf"))
    assert r.returncode == 2 and "model file not found" in r.stderr
    r = sieve_lite("ask", "--help")
    assert r.returncode == 0 and "search-visit" in r.stdout and "[DB] QUESTION" in r.stdout
