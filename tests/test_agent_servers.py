"""Model servers without a model: each kind is told apart by what it says about itself, its
request builder puts the constraint where that server reads it, the check before a run passes
on a server that honours it and stops one that does not (one line, exit 2, no traceback), and
a server's report decides the profile. The imitations (``tests/imitations.py``) answer from
canned replies here; ``test_agent_servers_model.py`` runs whole episodes with the real model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from imitations import KINDS, CannedGenerator, imitation

from sieve_lite.agent.backbones import HttpBackbone, drop_thinking, make_backbone
from sieve_lite.agent.probe import PROBE_MENU, fits_menu
from sieve_lite.agent.profile import budgets_for
from sieve_lite.agent.servers import (
    LlamaServer,
    Ollama,
    Sampling,
    Server,
    Sglang,
    Vllm,
    params_from_name,
)
from sieve_lite.agent.syntax import Menu
from sieve_lite.agent.transport import Transport
from sieve_lite.errors import ConstraintIgnored, ModelError

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
CONSTRAINT_FIELDS = {"llama-server": "grammar", "vllm": "structured_outputs",
                     "sglang": "ebnf", "ollama": "format", "lmstudio": "response_format",
                     "openai": "response_format"}
LABELS = {"llama-server": "llama-server", "vllm": "vLLM", "sglang": "SGLang",
          "ollama": "Ollama", "lmstudio": "LM Studio", "openai": "an OpenAI-compatible server"}


def sieve_lite(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", "from sieve_lite.cli import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.mark.parametrize("kind", KINDS)
def test_each_server_is_told_apart_and_gets_the_constraint_it_honours(kind: str) -> None:
    with imitation(kind, CannedGenerator()) as im:
        bb = make_backbone(backbone=im.url)
        assert isinstance(bb, HttpBackbone) and bb.supports_grammar
        assert bb.kind.label == LABELS[kind]
        assert bb.model == im.model  # the chat model listed (not LM Studio's embedder)
        # the check before the run went where this server reads a constraint
        probe = im.chats()[0]
        field = CONSTRAINT_FIELDS[kind]
        assert field in probe.body
        for other in set(CONSTRAINT_FIELDS.values()) - {field}:
            assert other not in probe.body
        if kind == "ollama":
            assert probe.path == "/api/chat" and probe.body["think"] is False
            assert probe.body["options"]["num_ctx"] == 8192
            assert probe.body["format"]["additionalProperties"] is False
        elif kind == "vllm":
            assert "root ::=" in probe.body["structured_outputs"]["grammar"]
            assert probe.body["chat_template_kwargs"] == {"enable_thinking": False}
        elif kind in ("llama-server", "sglang"):
            assert "root ::=" in probe.body[field]
        else:
            rf = probe.body["response_format"]
            assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
            assert rf["json_schema"]["schema"]["type"] == "object"
        # what the server reports about its model: 135M, 8k context
        if kind != "openai":
            assert bb.params is not None and bb.params < 1_000_000_000
            assert bb.n_ctx == 8192
            assert budgets_for(bb.params, bb.n_ctx).compact  # the small-model profile


def test_a_server_that_ignores_the_constraint_stops_the_run() -> None:
    with imitation("ollama", CannedGenerator(), honours=False) as im:
        with pytest.raises(ConstraintIgnored) as err:
            make_backbone(backbone=im.url)
        msg = str(err.value)
        assert msg.startswith("Ollama at http://127.0.0.1:") and "\n" not in msg
        assert "format (JSON schema)" in msg and "--allow-unconstrained" in msg
        assert len(im.chats()) == 1  # only the check: the run never started
        warned: list[str] = []
        bb = make_backbone(backbone=im.url, allow_unconstrained=True, warn=warned.append)
        assert not bb.supports_grammar and len(warned) == 1 and "unconstrained" in warned[0]
        # unconstrained requests carry no constraint field at all
        bb.complete([{"role": "user", "content": "hi"}], max_tokens=8,
                    grammar=Menu.of("sieve", thought_chars=0))
        assert "format" not in im.chats()[-1].body


def test_ask_on_a_server_that_ignores_every_constraint_is_one_line_and_exit_2() -> None:
    with imitation("ollama", CannedGenerator(), honours=False) as im:
        r = sieve_lite("ask", str(PEPS), "Which PEP introduced the walrus operator?",
                       "--backbone", im.url, "--json")
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Ollama at ")
    assert "Traceback" not in r.stderr


def test_the_size_unknown_decides_by_the_capability_probe() -> None:
    """An unknown OpenAI-compatible server says nothing of its model: three questions decide.
    A model that fails gets the small-model menus; one that passes, the large budgets."""
    for capable in (False, True):
        with imitation("openai", CannedGenerator(capable=capable), model="house-model") as im:
            bb = make_backbone(backbone=im.url)
            assert bb.params is None and bb.capable is capable
            assert len(im.chats()) == (4 if capable else 2)  # the check, then the questions
            bud = budgets_for(bb.params, bb.n_ctx, capable=bb.capable)
            assert bud.compact is (not capable) and bud.free_search is capable


def test_llama_server_is_told_by_its_owner_even_with_ollamas_api_tags() -> None:
    """llama-server answers Ollama's /api/tags too: its own owned_by decides first."""
    with imitation("llama-server", CannedGenerator()) as im:
        bb = HttpBackbone(im.url)
        assert bb.server == "llama-server" and bb.report.chat_template
        assert bb.report.version == "b9999-imitation"
    with imitation("llama-cpp-python", CannedGenerator()) as im:
        assert HttpBackbone(im.url).server == "llama-cpp-python"


def test_request_builders() -> None:
    t = Transport("http://127.0.0.1:9/v1")
    s = Sampling(temperature=0.6, seed=43)
    msgs = [{"role": "user", "content": "x"}]
    body = LlamaServer(t, []).body("m", msgs, 40, 'root ::= "a"', s)
    assert body["grammar"] == 'root ::= "a"' and body["repeat_penalty"] == 1.0
    assert (body["temperature"], body["seed"], body["top_k"], body["top_p"]) == (0.6, 43, 40, 0.95)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    vllm = Vllm.__new__(Vllm)
    Server.__init__(vllm, t, [])
    vllm.version = "0.12.1"
    assert vllm.body("m", msgs, 40, "g", s)["structured_outputs"] == {"grammar": "g"}
    vllm.version = "0.10.2"  # before structured_outputs: the guided_* field
    old = vllm.body("m", msgs, 40, "g", s)
    assert old["guided_grammar"] == "g" and "structured_outputs" not in old
    assert Sglang(t, []).body("m", msgs, 40, "g", s)["ebnf"] == "g"
    ollama = Ollama.__new__(Ollama)
    Server.__init__(ollama, t, [])
    ollama.native = True
    native = ollama.body("m", msgs, 40, {"type": "object"}, s, n_ctx=4096)
    assert native["format"] == {"type": "object"} and native["think"] is False
    assert native["options"]["num_predict"] == 40 and native["options"]["num_ctx"] == 4096
    assert native["stream"] is False
    ollama.native = False  # its /v1: response_format
    assert ollama.body("m", msgs, 40, {"type": "object"}, s)["response_format"]["type"] == \
        "json_schema"
    plain = Server(t, []).body("m", msgs, 40, None, s)
    assert not {"grammar", "response_format", "ebnf"} & set(plain)
    with pytest.raises(TypeError):
        Server(t, []).body("m", msgs, 40, "root ::= x", s)  # a schema server takes no GBNF


def test_sizes_in_names_and_thinking_blocks() -> None:
    assert params_from_name("/models/SmolLM2-135M-Instruct.Q4_1.gguf") == 135_000_000
    assert params_from_name("qwen2.5:7b") == 7_000_000_000
    assert params_from_name("Qwen/Qwen3-30B-A3B") == 30_000_000_000
    assert params_from_name("Mixtral-8x7B-v0.1") == 56_000_000_000
    assert params_from_name("llama-8k-chat") is None and params_from_name("default") is None
    assert drop_thinking("<think>hmm\nmore</think>\nsearch: x") == "search: x"
    assert drop_thinking("<think>never closed") == ""
    assert drop_thinking("search: <think>") == "search: <think>"


def test_the_probe_menu_fits_only_its_own_actions() -> None:
    assert fits_menu("search: sea[title]", PROBE_MENU)
    assert fits_menu("thought: short\nfetch: 1 | Résumé", PROBE_MENU)
    assert fits_menu("answer: beta", PROBE_MENU)
    assert not fits_menu("The sea is wide and grey.", PROBE_MENU)
    assert not fits_menu("search: the sea", PROBE_MENU)
    assert not fits_menu("fetch: 2 | Introduction", PROBE_MENU)
    assert not fits_menu("thought: " + "x" * 41 + "\nanswer: alpha", PROBE_MENU)
    assert not fits_menu('{"action": {"name": "search", "query": "sea[title]"}}', PROBE_MENU)


def test_unreachable_and_bad_urls_are_one_line() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ModelError) as err:
        HttpBackbone(f"http://127.0.0.1:{port}/v1", timeout=5)
    assert "cannot connect" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ModelError):
        HttpBackbone("ftp://example/v1")
    r = sieve_lite("ask", str(PEPS), "walrus?", "--backbone", f"http://127.0.0.1:{port}/v1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot connect" in r.stderr


def test_a_schema_reply_is_read_back_as_action_lines() -> None:
    """Over a schema server the loop sees the action lines, never the JSON."""
    with imitation("lmstudio", CannedGenerator()) as im:
        bb = HttpBackbone(im.url)
        comp = bb.complete([{"role": "system", "content": "manual"},
                            {"role": "assistant", "content": "fetch: 1 | Abstract"},
                            {"role": "user", "content": PROBE_MENU and "Write two sentences "
                                                                       "about the sea."}],
                           max_tokens=48, grammar=PROBE_MENU)
        assert comp.text == "search: sea[title]"
        sent = im.chats()[-1].body
        # how to write JSON is said after the manual; the earlier action is shown as JSON
        assert sent["messages"][0]["content"].startswith("manual\n\nWrite each reply as one")
        assert json.loads(sent["messages"][1]["content"]) == \
            {"action": {"name": "fetch", "doc": "1", "section": "Abstract"}}
        assert sent["max_tokens"] == 48 + 48  # room for the JSON around the action
