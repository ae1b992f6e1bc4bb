"""The backbones with the real default GGUF (SmolLM2-135M-Instruct): in-process decoding under
the action grammar, and the HTTP backbone against a real ``python -m llama_cpp.server`` started
here on 127.0.0.1 and stopped after. Marked slow (they run a model); they run in CI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.agent.backbones import (
    HttpBackbone,
    LlamaBackbone,
    default_model_path,
)
from sieve_lite.agent.loop import Agent, Budgets
from sieve_lite.agent.manual import build_manual
from sieve_lite.agent.steps import Search
from sieve_lite.agent.syntax import action_grammar, parse_action
from sieve_lite.agent.tools import CollectionTools
from sieve_lite.errors import ModelError

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama() -> LlamaBackbone:
    return LlamaBackbone(n_ctx=4096)


@pytest.fixture(scope="module")
def mini_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_agent_loop import MINI_DOCS, build_db

    return build_db(tmp_path_factory.mktemp("bb") / "mini.db", MINI_DOCS)


def test_default_model_is_the_wheels_gguf(llama: LlamaBackbone) -> None:
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
    assert llama.n_ctx == 4096  # explicit, not llama-cpp-python's 512 or a silent 2,048
    assert llama.count_tokens("hello world") == 2
    msgs = [{"role": "user", "content": "hi"}]
    assert llama.prompt_tokens(msgs) > llama.count_tokens("hi")
    assert llama.render(msgs, "answer: ").endswith("<|im_start|>assistant\nanswer: ")


def test_grammar_makes_replies_parse_and_queries_valid(llama: LlamaBackbone,
                                                      mini_db: Path) -> None:
    """Whatever the tiny model writes under the grammar is an action, and every query it
    writes is valid BQL on the collection (the engine's own parser says so)."""
    from sieve_lite import bql

    with sieve_lite.open(mini_db) as coll:
        fields = coll.fields
        grammar = action_grammar("sieve", fields, [("1", ["(intro)", "Rationale"])], [])
        # Only the search branch: the property under test is the query.
        search_only = grammar.replace("root ::= thought? (search | fetch | answer)",
                                      "root ::= search")
        assert search_only != grammar
        questions = ["Which PEP introduced the walrus operator?",
                     "Who wrote the style guide for Python code, and when?",
                     'Find PEPs titled "type hints" from 2014 but not about style.']
        queries = []
        for q in questions:
            msgs = [{"role": "system", "content": build_manual(coll)},
                    {"role": "user", "content": f"Question: {q}"}]
            comp = llama.complete(msgs, max_tokens=48, grammar=search_only)
            if comp.finish_reason == "length":
                continue  # cut by max_tokens: not a complete query
            action, repair = parse_action(comp.text, "sieve")
            assert isinstance(action, Search) and repair == ""
            bql.parse(action.query, fields)  # raises QueryError if invalid
            coll.search(action.query, k=5)   # and runs
            queries.append(action.query)
        assert queries, "the model never finished a query within 48 tokens"
        # The full grammar: a fetch can only name a real section of a listed rank.
        comp = llama.complete([{"role": "user", "content": "fetch rank 1"}], max_tokens=64,
                              grammar=grammar)
        action, _ = parse_action(comp.text, "sieve")
        if action.kind == "fetch":
            assert (action.doc, action.section) in {("1", "(intro)"), ("1", "Rationale")}


def test_http_backbone_unreachable_is_one_line_model_error() -> None:
    port = free_port()
    with pytest.raises(ModelError) as err:
        HttpBackbone(f"http://127.0.0.1:{port}/v1", timeout=5)
    assert "cannot connect" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ModelError):
        HttpBackbone("ftp://example/v1")


@pytest.fixture(scope="module")
def llama_server():
    """A real llama_cpp.server on a free loopback port, with the default GGUF."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--verbose",
           "False"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_WAIT_POLICY="passive")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:  # bounded readiness loop
            if proc.poll() is not None:
                raise RuntimeError("llama_cpp.server exited: "
                                   + proc.stderr.read().decode()[-500:])
            try:
                with urllib.request.urlopen(base + "/models", timeout=2) as r:
                    if json.loads(r.read()).get("data"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama_cpp.server did not become ready in 90 s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_http_backbone_against_llama_cpp_server(llama_server: str, mini_db: Path) -> None:
    bb = HttpBackbone(llama_server, n_ctx=4096, timeout=120)
    assert bb.model  # the server's listed model
    comp = bb.complete([{"role": "user", "content": "Say hello."}], max_tokens=8)
    assert comp.prompt_tokens > 0 and 0 < comp.completion_tokens <= 8
    assert isinstance(comp.text, str)
    # llama-cpp-python's server is recognised, and takes the grammar in its 'grammar' field
    assert bb.server == "llama-cpp-python" and bb.supports_grammar
    for call in range(3):
        comp = bb.complete([{"role": "user", "content": "Is the sky green?"}], max_tokens=4,
                           grammar='root ::= "yes" | "no"', call=call)
        assert comp.text in ("yes", "no")
    # A short episode over HTTP under the same grammar as in-process: every reply parses as
    # written (no repair), nothing is repeated, the seed is step 0.
    events: list = []
    with sieve_lite.open(mini_db) as coll:
        tools = CollectionTools(coll, compact=True, sections_shown=4)
        agent = Agent(bb, tools, build_manual(coll, max_steps=2),
                      Budgets(max_steps=2, action_tokens=64, answer_tokens=48,
                              free_search=False, thought_chars=0),
                      on_event=events.append)
        ep = agent.run("Which PEP introduced the walrus operator?")
    assert agent.use_grammar
    assert ep.accounting.stop_reason in ("answer", "step-cap", "no-progress", "nothing-left")
    assert 1 <= ep.accounting.llm_calls <= 3 and ep.accounting.repeats == 0
    assert all(s.action is not None and not s.info.get("repair") for s in ep.steps)
    assert events[0]["event"] == "start" and events[-1]["event"] == "end"
    assert events[1]["index"] == 0
    with pytest.raises(ModelError) as err:
        HttpBackbone(llama_server.replace("/v1", "/nope"), timeout=10).complete(
            [{"role": "user", "content": "x"}], max_tokens=4)
    assert "HTTP 404" in str(err.value)


def test_ask_over_a_real_llama_cpp_server_answers_as_in_process(llama_server: str) -> None:
    """``sieve-lite ask --backbone`` on a real ``python -m llama_cpp.server`` with the shipped
    model: recognised, checked, given the small-model profile from the size in its model's
    name, decoded under the same grammar as in process: PEP 572, cited."""
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", "ask",
           str(root / "collections" / "peps.db"), "Which PEP introduced the walrus operator?",
           "--backbone", llama_server, "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["answer"] == "PEP 572" and out["citations"][0]["doc"] == "pep-0572"
    assert out["accounting"]["parse_failures"] == 0
