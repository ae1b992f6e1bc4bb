"""Whole episodes over every server kind, with the shipped model: each imitation
(``tests/imitations.py``) generates with SmolLM2-135M in this process under the constraint
it received, and ``sieve-lite ask ... --backbone URL --json`` runs as a user runs it. Every
chat request must carry the constraint that server honours, and the answer must cite a
section (PEP 572 on the grammar servers, which decode as the in-process model does). Marked
slow: they run a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from imitations import KINDS, ModelGenerator, imitation

from sieve_lite.agent.models import default_model_path

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
QUESTION = "Which PEP introduced the walrus operator?"
GRAMMAR_SERVERS = ("llama-server", "vllm", "sglang")


@pytest.fixture(scope="module")
def generator() -> ModelGenerator:
    return ModelGenerator(str(default_model_path()))


def honoured(kind: str, body: dict) -> bool:
    """The request carries a constraint where this kind of server reads one."""
    if kind in ("llama-server", "llama-cpp-python"):
        return "root ::=" in body.get("grammar", "")
    if kind == "vllm":
        return "root ::=" in (body.get("structured_outputs") or {}).get("grammar", "")
    if kind == "sglang":
        return "root ::=" in body.get("ebnf", "")
    if kind == "ollama" and "format" in body:
        return body["format"].get("type") == "object"
    rf = body.get("response_format") or {}
    return rf.get("type") == "json_schema" and rf["json_schema"]["strict"] is True


@pytest.mark.parametrize("kind", KINDS)
def test_ask_answers_over_every_server_kind(kind: str, generator: ModelGenerator,
                                            tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    with imitation(kind, generator) as im:
        cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", "ask", str(PEPS),
               QUESTION, "--backbone", im.url, "--json", "--transcript", str(transcript)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=ENV)
        chats = im.chats()
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["citations"], out
    if kind in GRAMMAR_SERVERS:
        assert out["answer"] == "PEP 572"
        assert out["citations"][0]["doc"] == "pep-0572"
    assert len(chats) >= 2  # the check, then the episode
    assert all(honoured(kind, c.body) for c in chats), [sorted(c.body) for c in chats]
    acc = out["accounting"]
    assert acc["parse_failures"] == 0 and acc["repeats"] == 0
    start = json.loads(transcript.read_text().splitlines()[0])
    assert start["grammar"] is True and start["budgets"]["compact"]  # the small-model profile
