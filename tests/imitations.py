"""Imitations of the model servers ``--backbone URL`` drives, for the tests: each speaks its
server's documented requests and replies, says about itself what the real one says (the
``owned_by`` of ``/v1/models``, its own endpoints), honours only the constraint the real one
honours (free prose otherwise), and records every request it received.

* ``llama-server``: ``owned_by: llamacpp`` with ``meta``, ``/props``, ``/tokenize``,
  Ollama-style ``/api/tags`` (llama-server has it too); GBNF in ``grammar``.
* ``vllm``: ``owned_by: vllm`` with ``max_model_len``, ``/version`` (0.12.0), ``/tokenize``;
  GBNF in ``structured_outputs.grammar`` (the ``guided_*`` fields were removed in 0.12).
* ``sglang``: ``owned_by: sglang``, ``/get_model_info``; GBNF in ``ebnf``.
* ``ollama``: ``owned_by: library``, ``/api/version``, ``/api/tags``, ``/api/show``; a JSON
  schema in ``format`` of ``/api/chat``, or in ``response_format`` of ``/v1``.
* ``lmstudio``: ``owned_by: organization_owner``, ``/api/v0/models``, ``/api/v1/models``; a
  JSON schema in ``response_format`` (``json_schema``).
* ``openai``: any other OpenAI-compatible server: ``response_format`` json_schema.

``honours=False`` makes a server ignore every constraint (as Ollama does for MLX models).
The replies come from a ``Generator``: ``ModelGenerator`` runs the shipped GGUF in process
under the constraint received (``LlamaGrammar.from_string`` for GBNF, ``from_json_schema``
for a schema), with the sampling asked for; ``CannedGenerator`` (no model, for the fast
tests) answers the pre-run checks.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROSE = "The sea is wide and grey today. Gulls circle over the harbour."


@dataclass
class Constraint:
    """What a server took from a request: GBNF text, or a JSON schema (None: none)."""

    gbnf: str | None = None
    schema: dict[str, Any] | None = None


class Generator(Protocol):
    def __call__(self, messages: list[dict[str, str]], constraint: Constraint,
                 body: dict[str, Any]) -> tuple[str, int, int, str]:
        """(text, prompt tokens, completion tokens, finish reason)."""
        ...


class ModelGenerator:
    """The shipped model in process, one request at a time, under the constraint received."""

    def __init__(self, model_path: str, n_ctx: int = 8192, n_threads: int = 1) -> None:
        import os

        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        from llama_cpp import Llama

        # One thread: the machine's other jobs (and the ask process) share the cores, and
        # llama.cpp's threads wait for each other when one of them is descheduled.
        self.llm = Llama(model_path=model_path, n_ctx=n_ctx, n_threads=n_threads,
                         verbose=False)
        self.lock = threading.Lock()

    def __call__(self, messages: list[dict[str, str]], constraint: Constraint,
                 body: dict[str, Any]) -> tuple[str, int, int, str]:
        from llama_cpp import LlamaGrammar

        grammar = None
        if constraint.gbnf is not None:
            grammar = LlamaGrammar.from_string(constraint.gbnf, verbose=False)
        elif constraint.schema is not None:
            grammar = LlamaGrammar.from_json_schema(json.dumps(constraint.schema),
                                                    verbose=False)
        opts = body.get("options") or body
        with self.lock:
            out = self.llm.create_chat_completion(
                messages, grammar=grammar,
                max_tokens=int(opts.get("num_predict") or opts.get("max_tokens") or 256),
                temperature=float(opts.get("temperature", 0.8)),
                seed=opts.get("seed"), top_p=float(opts.get("top_p", 0.95)),
                top_k=int(opts.get("top_k", 40)), min_p=float(opts.get("min_p", 0.05)),
                repeat_penalty=float(opts.get("repeat_penalty",
                                              opts.get("repetition_penalty", 1.0))))
        choice = out["choices"][0]
        return (choice["message"]["content"] or "", out["usage"]["prompt_tokens"],
                out["usage"]["completion_tokens"], choice["finish_reason"] or "stop")


class CannedGenerator:
    """No model: under a constraint, a reply that fits the pre-run checks (the probe's
    search, the right answer to each capability question); without one, prose."""

    def __init__(self, capable: bool = False) -> None:
        self.capable = capable

    def __call__(self, messages: list[dict[str, str]], constraint: Constraint,
                 body: dict[str, Any]) -> tuple[str, int, int, str]:
        prompt = messages[-1]["content"]
        if constraint.gbnf is None and constraint.schema is None:
            return PROSE, 20, 12, "stop"
        answer = None
        if "Answer with one of:" in prompt:
            choices = prompt.rsplit("Answer with one of:", 1)[1].strip(" .").split(", ")
            right = {"Who is the youngest": "Bob", "On which day": "Wednesday",
                     "does not name an animal": "lamp"}
            answer = next((v for k, v in right.items() if k in prompt and self.capable),
                          choices[0])
        if constraint.gbnf is not None:
            text = f"answer: {answer}" if answer else "search: sea[title]"
        elif answer:
            text = json.dumps({"action": {"name": "answer", "answer": answer}})
        else:
            text = json.dumps({"thought": "", "action": {"name": "search",
                                                         "query": "sea[title]"}})
        return text, 20, 8, "stop"


@dataclass
class Request:
    method: str
    path: str
    body: Any
    seconds: float = 0.0   # how long the reply took (chat requests)


@dataclass
class Imitation:
    """One imitated server on 127.0.0.1 (``url`` is its ``/v1``)."""

    kind: str
    generate: Generator
    honours: bool = True
    model: str = ""
    requests: list[Request] = field(default_factory=list)
    url: str = ""

    def chats(self) -> list[Request]:
        """The chat requests received (the probe's included)."""
        return [r for r in self.requests if r.path in ("/v1/chat/completions", "/api/chat")]

    def constraint_of(self, req: Request) -> Constraint:
        """The constraint the real server would take from this request (what it honours)."""
        b = req.body if isinstance(req.body, dict) else {}
        if not self.honours:
            return Constraint()
        if self.kind in ("llama-server", "llama-cpp-python"):
            return Constraint(gbnf=b.get("grammar"))
        if self.kind == "vllm":
            so = b.get("structured_outputs") or {}
            return Constraint(gbnf=so.get("grammar") if isinstance(so, dict) else None)
        if self.kind == "sglang":
            return Constraint(gbnf=b.get("ebnf"))
        if self.kind == "ollama" and req.path == "/api/chat":
            fmt = b.get("format")
            return Constraint(schema=fmt if isinstance(fmt, dict) else None)
        rf = b.get("response_format") or {}
        if isinstance(rf, dict) and rf.get("type") == "json_schema":
            return Constraint(schema=(rf.get("json_schema") or {}).get("schema"))
        return Constraint()


def _model_id(kind: str) -> str:
    return {"llama-server": MODEL_FILE, "vllm": "HuggingFaceTB/SmolLM2-135M-Instruct",
            "sglang": "HuggingFaceTB/SmolLM2-135M-Instruct", "ollama": "smollm2:135m",
            "lmstudio": "smollm2-135m-instruct", "openai": "smollm2-135m-instruct",
            "llama-cpp-python": f"/models/{MODEL_FILE}"}[kind]


class _Handler(http.server.BaseHTTPRequestHandler):
    imitation: Imitation  # set on a subclass per server

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _missing(self) -> None:
        self._send({"error": "not found"}, 404)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        im = self.imitation
        im.requests.append(Request("GET", self.path, None))
        reply = _get(im, self.path)
        self._missing() if reply is None else self._send(reply)

    def do_POST(self) -> None:  # noqa: N802
        im = self.imitation
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"null")
        except ValueError:
            self._send({"error": "bad json"}, 400)
            return
        req = Request("POST", self.path, body)
        im.requests.append(req)
        if self.path == "/v1/chat/completions" or (self.path == "/api/chat"
                                                   and im.kind == "ollama"):
            t0 = time.perf_counter()
            reply = _chat(im, req)
            req.seconds = time.perf_counter() - t0
            self._send(reply)
            return
        reply = _post(im, self.path, body)
        self._missing() if reply is None else self._send(reply)


def _get(im: Imitation, path: str) -> Any:
    model = im.model
    if path == "/v1/models":
        owner = {"llama-server": "llamacpp", "vllm": "vllm", "sglang": "sglang",
                 "ollama": "library", "lmstudio": "organization_owner", "openai": "someone",
                 "llama-cpp-python": "me"}[im.kind]
        entry: dict[str, Any] = {"id": model, "object": "model", "owned_by": owner,
                                 "created": 0}
        if im.kind == "llama-server":
            entry["meta"] = {"n_params": 134515008, "n_ctx_train": 8192, "n_ctx": 8192,
                             "n_vocab": 49152}
        if im.kind in ("vllm", "sglang"):
            entry.update(max_model_len=8192, root=model)
        models = [entry]
        if im.kind == "lmstudio":  # LM Studio lists embedding models too
            models.append({"id": "text-embedding-nomic-embed-text-v1.5", "object": "model",
                           "owned_by": owner})
        return {"object": "list", "data": models}
    if im.kind == "llama-server":
        if path == "/props":
            return {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1,
                    "chat_template": "{% for message in messages %}...{% endfor %}",
                    "model_path": f"/models/{MODEL_FILE}", "build_info": "b9999-imitation"}
        if path == "/api/tags":
            return {"models": [{"name": model, "model": model}]}
    if im.kind == "vllm" and path == "/version":
        return {"version": "0.12.0"}
    if im.kind == "sglang" and path == "/get_model_info":
        return {"model_path": "HuggingFaceTB/SmolLM2-135M-Instruct", "is_generation": True,
                "tokenizer_path": "HuggingFaceTB/SmolLM2-135M-Instruct"}
    if im.kind == "ollama":
        if path == "/api/version":
            return {"version": "0.12.6"}
        if path == "/api/tags":
            return {"models": [{"name": model, "model": model, "size": 98362432,
                                "details": {"parameter_size": "135M",
                                            "quantization_level": "Q4_1"}}]}
    if im.kind == "lmstudio":
        if path == "/api/v0/models":
            return {"object": "list", "data": [
                {"id": model, "object": "model", "type": "llm", "publisher": "lmstudio-ai",
                 "arch": "llama", "compatibility_type": "gguf", "quantization": "Q4_1",
                 "state": "loaded", "max_context_length": 8192}]}
        if path == "/api/v1/models":
            return {"models": [{"type": "llm", "key": model, "params_string": "135M",
                                "max_context_length": 8192, "format": "gguf",
                                "loaded_instances": [{"id": model,
                                                      "config": {"context_length": 8192}}]}]}
    return None


def _post(im: Imitation, path: str, body: Any) -> Any:
    if im.kind == "llama-cpp-python" and path == "/extras/tokenize":
        return {"tokens": [1] * max(1, len(str(body.get("input", ""))) // 4)}
    if im.kind == "ollama" and path == "/api/show":
        return {"template": "{{ .Prompt }}", "details": {"parameter_size": "135M"},
                "model_info": {"general.architecture": "llama",
                               "general.parameter_count": 134515008,
                               "llama.context_length": 8192}}
    return None


def _chat(im: Imitation, req: Request) -> Any:
    body = req.body if isinstance(req.body, dict) else {}
    messages = [{"role": m["role"], "content": m["content"]} for m in body.get("messages", [])]
    text, p_tok, c_tok, finish = im.generate(messages, im.constraint_of(req), body)
    if req.path == "/api/chat":
        return {"model": im.model, "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": text}, "done": True,
                "done_reason": finish, "prompt_eval_count": p_tok, "eval_count": c_tok}
    return {"id": "chatcmpl-imitation", "object": "chat.completion", "created": int(time.time()),
            "model": im.model, "choices": [{"index": 0, "finish_reason": finish,
                                            "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": p_tok, "completion_tokens": c_tok,
                      "total_tokens": p_tok + c_tok}}


@contextmanager
def imitation(kind: str, generate: Generator, honours: bool = True,
              model: str | None = None) -> Iterator[Imitation]:
    """An imitated ``kind`` server on a free loopback port, for the ``with`` block (serving
    ``model``, by default a name like the real server's for the shipped model)."""
    im = Imitation(kind, generate, honours, model=model or _model_id(kind))
    handler = type("Handler", (_Handler,), {"imitation": im})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    im.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield im
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


KINDS = ("llama-server", "vllm", "sglang", "ollama", "lmstudio", "openai")


if __name__ == "__main__":  # python tests/imitations.py KIND [--ignore]: serve one, by hand
    import sys

    from sieve_lite.agent.models import default_model_path

    with imitation(sys.argv[1], ModelGenerator(str(default_model_path())),
                   honours="--ignore" not in sys.argv) as im:
        print(im.url, flush=True)
        threading.Event().wait()
