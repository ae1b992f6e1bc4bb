"""The model servers ``--backbone URL`` can drive: one class per server kind, each with its one
request builder, chosen by what the server says about itself.

==================  ==========================================  ===============================
kind                told apart by                               the constraint it honours
==================  ==========================================  ===============================
llama-server        ``/v1/models`` ``owned_by: llamacpp``       GBNF in ``grammar``
llama-cpp-python    ``owned_by: me`` and ``/extras/tokenize``   GBNF in ``grammar``
vLLM                ``owned_by: vllm`` (or ``/version``)        ``structured_outputs.grammar``
                                                                (``guided_grammar`` before 0.12)
SGLang              ``owned_by: sglang`` (``/get_model_info``)  EBNF in ``ebnf``
Ollama              ``/api/version`` (or ``library`` and        a JSON schema in ``format`` of
                    ``/api/tags``)                              ``/api/chat``
LM Studio           ``owned_by: organization_owner`` or         ``response_format`` json_schema
                    ``/api/v0/models``                          (strict)
anything else       (the safe default)                          ``response_format`` json_schema
                                                                (strict)
==================  ==========================================  ===============================

The grammar servers get the same GBNF as the in-process model (xgrammar, behind vLLM and
SGLang, reads llama.cpp's GBNF); the others get ``schema.menu_schema`` of the same menu.
Thinking models are told not to think where the server has a switch for it
(``chat_template_kwargs: {"enable_thinking": false}``, Ollama's ``think: false``); a
``<think>`` block that comes anyway is dropped by the backbone. Each kind also says what it
knows of its model (``report``: parameter count, context, chat template) and, where it can,
counts tokens exactly (``count_tokens``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .profile import parse_size_label
from .transport import HttpStatusError, Transport


@dataclass(frozen=True)
class Sampling:
    """What every request asks for: the in-process sampler's settings."""

    temperature: float
    seed: int
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.0


@dataclass
class Reply:
    """A chat reply as the server gave it (usage None when it reported none)."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str


@dataclass
class ModelReport:
    """What the server says about the model it serves."""

    model: str
    params: int | None = None          # parameter count
    n_ctx: int | None = None           # the context it runs the model with (else trained)
    chat_template: str | None = None   # None: the server does not show it
    version: str | None = None         # the server's version, when it tells
    notes: dict[str, Any] = field(default_factory=dict)


def params_from_name(name: str) -> int | None:
    """A size in a model's name: 'SmolLM2-135M-Instruct' -> 135e6, 'qwen2.5:7b' -> 7e9,
    'Mixtral-8x7B' -> 56e9 (the first word that is one; thousands are not sizes here: '8k' is
    a context)."""
    for part in re.split(r"[-_/:\s]+", name):
        if re.fullmatch(r"(?:\d+x)?\d+(?:\.\d+)?[MBTmbt]", part):
            return parse_size_label(part)
    return None


def _first_model(listed: list[dict[str, Any]]) -> str:
    ids = [str(d.get("id") or "") for d in listed]
    chat = [i for i in ids if i and "embed" not in i.lower()]
    return (chat or ids or ["default"])[0]


def _entry(listed: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return next((d for d in listed if d.get("id") == model), listed[0] if listed else {})


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None and int(value) > 0 else None
    except (TypeError, ValueError):
        return None


class Server:
    """An OpenAI-compatible server of unknown kind: ``response_format`` json_schema with
    ``strict`` (the safe default: what OpenAI's API and most compatible servers take)."""

    kind = "openai"
    label = "an OpenAI-compatible server"
    grammar = False   # True: takes GBNF text; False: a JSON schema
    field = "response_format (json_schema, strict)"
    fix = ("this server does not honour response_format json_schema; serve the model with "
           "llama-server, vLLM, SGLang, Ollama or LM Studio")

    def __init__(self, transport: Transport, listed: list[dict[str, Any]]) -> None:
        self.t = transport
        self.listed = listed

    def default_model(self) -> str:
        return _first_model(self.listed)

    def report(self, model: str) -> ModelReport:
        entry = _entry(self.listed, model)
        return ModelReport(model, params=params_from_name(model),
                           n_ctx=_int(entry.get("max_model_len")))

    # -- the request ---------------------------------------------------------------------
    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        """The request builder: the chat body, with the constraint where this kind reads it
        (``n_ctx``: the context to run the model with, for servers that take it per
        request)."""
        body = self._openai(model, messages, max_tokens, s)
        if constraint is not None:
            body["response_format"] = _json_schema_format(constraint)
        return body

    def _openai(self, model: str, messages: list[dict[str, str]], max_tokens: int,
                s: Sampling) -> dict[str, Any]:
        return {"model": model, "messages": messages, "max_tokens": max_tokens,
                "temperature": s.temperature, "top_p": s.top_p, "seed": s.seed,
                "stream": False}

    def chat(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling, n_ctx: int) -> Reply:
        data = self.t.post("/chat/completions",
                           self.body(model, messages, max_tokens, constraint, s, n_ctx))
        return _openai_reply(data, self.t.url("/chat/completions"))

    def count_tokens(self, model: str, text: str) -> int | None:
        """Tokens of ``text`` by the server's tokenizer; None when it cannot tell."""
        return None


def _json_schema_format(schema: str | dict[str, Any]) -> dict[str, Any]:
    from .schema import SCHEMA_NAME

    if not isinstance(schema, dict):
        raise TypeError("a JSON-schema server needs the menu's schema, not grammar text")
    return {"type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": schema}}


def _openai_reply(data: Any, url: str) -> Reply:
    from ..errors import ModelError

    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(f"{url}: reply has no choices[0].message") from None
    usage = data.get("usage") or {}
    return Reply(text=str(text), prompt_tokens=_int(usage.get("prompt_tokens")),
                 completion_tokens=_int(usage.get("completion_tokens")),
                 finish_reason=str(choice.get("finish_reason") or "stop"))


class _Grammar(Server):
    """A server that takes GBNF, with llama.cpp's sampler settings."""

    grammar = True

    def _grammar_body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
                      s: Sampling) -> dict[str, Any]:
        body = self._openai(model, messages, max_tokens, s)
        body.update(top_k=s.top_k, min_p=s.min_p)
        return body


def _gbnf(constraint: str | dict[str, Any]) -> str:
    if not isinstance(constraint, str):
        raise TypeError("a grammar server needs GBNF text")
    return constraint


_NO_THINKING = {"enable_thinking": False}


class LlamaServer(_Grammar):
    """llama.cpp's ``llama-server``."""

    kind = "llama-server"
    label = "llama-server"
    field = "grammar (GBNF)"
    fix = ("llama-server runs without a grammar it cannot parse; update llama.cpp, and see "
           "its log for the grammar error")

    def report(self, model: str) -> ModelReport:
        meta = _entry(self.listed, model).get("meta") or {}
        props = self.t.ask("/props") or {}
        settings = props.get("default_generation_settings") or {}
        n_ctx = _int(settings.get("n_ctx")) or _int(meta.get("n_ctx")) or \
            _int(meta.get("n_ctx_train"))
        build = props.get("build_info")
        return ModelReport(model, params=_int(meta.get("n_params")) or params_from_name(model),
                           n_ctx=n_ctx, chat_template=props.get("chat_template"),
                           version=str(build) if build else None)

    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        body = self._grammar_body(model, messages, max_tokens, s)
        body.update(repeat_penalty=s.repeat_penalty, chat_template_kwargs=_NO_THINKING)
        if constraint is not None:
            body["grammar"] = _gbnf(constraint)
        return body

    def count_tokens(self, model: str, text: str) -> int | None:
        out = self.t.ask("/tokenize", {"content": text, "add_special": False})
        tokens = out.get("tokens") if isinstance(out, dict) else None
        return len(tokens) if isinstance(tokens, list) else None


class LlamaCppPython(_Grammar):
    """llama-cpp-python's server (``python -m llama_cpp.server``). It shows no parameter
    count or context: the size comes from the model's name (its file name by default), and
    its thinking switch does not exist (a ``<think>`` block is dropped)."""

    kind = "llama-cpp-python"
    label = "llama-cpp-python's server"
    field = "grammar (GBNF)"
    fix = "update llama-cpp-python (pip install -U 'llama-cpp-python[server]')"

    def report(self, model: str) -> ModelReport:
        return ModelReport(model, params=params_from_name(model))

    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        body = self._grammar_body(model, messages, max_tokens, s)
        # Its own default is 1.1; the in-process model samples without a penalty.
        body["repeat_penalty"] = s.repeat_penalty
        if constraint is not None:
            body["grammar"] = _gbnf(constraint)
        return body

    def count_tokens(self, model: str, text: str) -> int | None:
        out = self.t.ask("/extras/tokenize/count", {"input": text, "model": model})
        return _int(out.get("count")) if isinstance(out, dict) else None


class Vllm(_Grammar):
    """vLLM: ``structured_outputs: {"grammar": ...}`` from 0.12 (its ``guided_*`` fields were
    removed then); ``guided_grammar`` for a version before 0.11 that says so."""

    kind = "vllm"
    label = "vLLM"
    field = "structured_outputs.grammar (GBNF read by xgrammar)"
    fix = "use vLLM 0.12 or newer with its default structured-output backend (xgrammar)"

    def __init__(self, transport: Transport, listed: list[dict[str, Any]]) -> None:
        super().__init__(transport, listed)
        out = self.t.ask("/version")
        self.version = str(out.get("version")) if isinstance(out, dict) and \
            out.get("version") else None

    def _old(self) -> bool:
        m = re.match(r"(\d+)\.(\d+)", self.version or "")
        return bool(m) and (int(m.group(1)), int(m.group(2))) < (0, 11)

    def report(self, model: str) -> ModelReport:
        entry = _entry(self.listed, model)
        return ModelReport(model, params=params_from_name(str(entry.get("root") or model)),
                           n_ctx=_int(entry.get("max_model_len")), version=self.version)

    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        body = self._grammar_body(model, messages, max_tokens, s)
        body.update(repetition_penalty=s.repeat_penalty, chat_template_kwargs=_NO_THINKING)
        if constraint is not None:
            if self._old():
                body["guided_grammar"] = _gbnf(constraint)
            else:
                body["structured_outputs"] = {"grammar": _gbnf(constraint)}
        return body

    def count_tokens(self, model: str, text: str) -> int | None:
        out = self.t.ask("/tokenize", {"model": model, "prompt": text,
                                       "add_special_tokens": False})
        return _int(out.get("count")) if isinstance(out, dict) else None


class Sglang(_Grammar):
    """SGLang: EBNF in ``ebnf`` (its default grammar backend, xgrammar, reads GBNF)."""

    kind = "sglang"
    label = "SGLang"
    field = "ebnf (GBNF read by xgrammar)"
    fix = ("start SGLang with --grammar-backend xgrammar or llguidance (outlines takes no "
           "EBNF)")

    def report(self, model: str) -> ModelReport:
        entry = _entry(self.listed, model)
        info = self.t.ask("/get_model_info") or {}
        path = str(info.get("model_path") or entry.get("root") or model)
        return ModelReport(model, params=params_from_name(model) or params_from_name(path),
                           n_ctx=_int(entry.get("max_model_len")))

    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        body = self._grammar_body(model, messages, max_tokens, s)
        body.update(repetition_penalty=s.repeat_penalty, chat_template_kwargs=_NO_THINKING)
        if constraint is not None:
            body["ebnf"] = _gbnf(constraint)
        return body


class Ollama(Server):
    """Ollama: its native ``/api/chat`` with the schema in ``format``, ``think: false`` and
    the context in ``options.num_ctx`` (its ``/v1`` cannot set the context, and Ollama cuts
    a longer prompt silently); its ``/v1`` with ``response_format`` when ``/api/chat`` is
    not there."""

    kind = "ollama"
    label = "Ollama"
    field = "format (JSON schema)"
    fix = ("Ollama ignores format for some models (MLX ones) and in old versions; serve a "
           "GGUF model with a current Ollama")

    def __init__(self, transport: Transport, listed: list[dict[str, Any]]) -> None:
        super().__init__(transport, listed)
        self.native = True
        out = self.t.ask("/api/version")
        self.version = str(out.get("version")) if isinstance(out, dict) and \
            out.get("version") else None

    def default_model(self) -> str:
        if self.listed:
            return _first_model(self.listed)
        tags = self.t.ask("/api/tags") or {}
        names = [str(m.get("name") or m.get("model") or "") for m in tags.get("models") or []
                 if isinstance(m, dict)]
        return next((n for n in names if n and "embed" not in n), names[0] if names else "")

    def report(self, model: str) -> ModelReport:
        show = self.t.ask("/api/show", {"model": model}) or {}
        info = show.get("model_info") or {}
        details = show.get("details") or {}
        params = _int(info.get("general.parameter_count")) or \
            parse_size_label(str(details.get("parameter_size") or "")) or params_from_name(model)
        n_ctx = next((_int(v) for k, v in info.items() if k.endswith(".context_length")), None)
        return ModelReport(model, params=params, n_ctx=n_ctx,
                           chat_template=show.get("template") or None, version=self.version)

    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        if not self.native:
            return super().body(model, messages, max_tokens, constraint, s, n_ctx)
        options: dict[str, Any] = {"temperature": s.temperature, "seed": s.seed,
                                   "num_predict": max_tokens, "top_p": s.top_p,
                                   "top_k": s.top_k, "min_p": s.min_p,
                                   "repeat_penalty": s.repeat_penalty}
        if n_ctx:
            options["num_ctx"] = n_ctx
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": False,
                                "think": False, "options": options}
        if constraint is not None:
            if not isinstance(constraint, dict):
                raise TypeError("Ollama needs the menu's schema, not grammar text")
            body["format"] = constraint
        return body

    def chat(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling, n_ctx: int) -> Reply:
        if self.native:
            body = self.body(model, messages, max_tokens, constraint, s, n_ctx)
            try:
                data = self.t.post("/api/chat", body, at_root=True)
            except HttpStatusError as e:
                if e.status not in (404, 405):
                    raise
                self.native = False  # no native API here: its OpenAI-compatible one
            else:
                return _ollama_reply(data, self.t.url("/api/chat", at_root=True))
        return super().chat(model, messages, max_tokens, constraint, s, n_ctx)


def _ollama_reply(data: Any, url: str) -> Reply:
    from ..errors import ModelError

    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(message, dict):
        raise ModelError(f"{url}: reply has no message")
    reason = str(data.get("done_reason") or "stop")
    return Reply(text=str(message.get("content") or ""),
                 prompt_tokens=_int(data.get("prompt_eval_count")),
                 completion_tokens=_int(data.get("eval_count")),
                 finish_reason="length" if reason == "length" else "stop")


class LmStudio(Server):
    """LM Studio: ``response_format`` json_schema (strict), and its sampler's fields."""

    kind = "lmstudio"
    label = "LM Studio"
    field = "response_format (json_schema, strict)"
    fix = ("LM Studio did not apply the schema; update LM Studio, or load a GGUF build of the "
           "model")

    def report(self, model: str) -> ModelReport:
        params = n_ctx = None
        v1 = self.t.ask("/api/v1/models") or {}
        for m in v1.get("models") or []:
            if isinstance(m, dict) and m.get("key") == model:
                params = parse_size_label(str(m.get("params_string") or ""))
                loaded = [i for i in m.get("loaded_instances") or [] if isinstance(i, dict)]
                n_ctx = (_int((loaded[0].get("config") or {}).get("context_length"))
                         if loaded else None) or _int(m.get("max_context_length"))
        if n_ctx is None:
            v0 = self.t.ask("/api/v0/models") or {}
            for m in v0.get("data") or []:
                if isinstance(m, dict) and m.get("id") == model:
                    n_ctx = _int(m.get("loaded_context_length")) or \
                        _int(m.get("max_context_length"))
        return ModelReport(model, params=params or params_from_name(model), n_ctx=n_ctx)

    def body(self, model: str, messages: list[dict[str, str]], max_tokens: int,
             constraint: str | dict[str, Any] | None, s: Sampling,
             n_ctx: int = 0) -> dict[str, Any]:
        body = super().body(model, messages, max_tokens, constraint, s, n_ctx)
        body.update(top_k=s.top_k, min_p=s.min_p, repeat_penalty=s.repeat_penalty)
        return body


KINDS: tuple[type[Server], ...] = (LlamaServer, LlamaCppPython, Vllm, Sglang, Ollama, LmStudio,
                                  Server)
_OWNERS: dict[str, type[Server]] = {"llamacpp": LlamaServer, "vllm": Vllm, "sglang": Sglang}


def identify(t: Transport) -> Server:
    """The kind of server at ``t``, from what it says about itself: the ``owned_by`` of its
    ``/v1/models`` first (llama-server, vLLM and SGLang write their own name there), then the
    endpoints only one kind has. Anything unrecognised is an OpenAI-compatible server.
    Raises ``ModelError`` when nothing answers at all."""
    try:
        data = t.get("/models", timeout=min(t.timeout, 30.0))
    except HttpStatusError:
        data = {}  # no model list: the endpoints below still tell
    listed = [d for d in (data.get("data") or []) if isinstance(d, dict)] \
        if isinstance(data, dict) else []
    owners = {str(d.get("owned_by", "")) for d in listed}
    for owner, cls in _OWNERS.items():
        if owner in owners:
            return cls(t, listed)

    def answers(path: str, key: str, body: dict[str, Any] | None = None) -> bool:
        out = t.ask(path, body)
        return isinstance(out, dict) and key in out

    if "me" in owners and answers("/extras/tokenize", "tokens", {"input": "a"}):
        return LlamaCppPython(t, listed)
    if answers("/api/version", "version") or ("library" in owners and
                                              answers("/api/tags", "models")):
        return Ollama(t, listed)
    if "organization_owner" in owners or answers("/api/v0/models", "data"):
        return LmStudio(t, listed)
    if answers("/get_model_info", "model_path"):
        return Sglang(t, listed)
    if answers("/props", "default_generation_settings"):
        return LlamaServer(t, listed)
    if answers("/version", "version"):
        return Vllm(t, listed)
    if answers("/extras/tokenize", "tokens", {"input": "a"}):
        return LlamaCppPython(t, listed)
    return Server(t, listed)


__all__ = ["KINDS", "ModelReport", "Reply", "Sampling", "Server", "identify",
           "params_from_name"]
