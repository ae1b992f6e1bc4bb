"""What a model file says about itself, and the episode budgets that fit it.

``model_facts(path)`` reads a GGUF's metadata without loading its weights (llama.cpp's
vocabulary-only load): the chat template, the parameter count (``general.size_label``, else
llama.cpp's count) and the context length it was trained for. ``LlamaBackbone`` uses it to
refuse a file without a chat template in one line, before the weights are read.

``budgets_for(params, n_ctx, capable=None)`` picks the harness for a model of that size (or,
when the size is unknown, for what a probe of the model showed). A model of a few
hundred million parameters cannot plan or write a useful query, so it gets short prompts and
cards, a handful of steps, reads cut to a few hundred tokens around the question's words,
searches offered as whole lines (no free query), and no thought line. A model of billions of
parameters gets the paper's budgets and the full query language, and the searches built from
the question besides. Every choice can be overridden on the command line.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import EnvironmentProblem, ModelError

SMALL_PARAMS = 1_000_000_000   # below this: the small-model harness


@dataclass(frozen=True)
class ModelFacts:
    """What the GGUF's metadata says."""

    path: Path
    name: str
    params: int | None          # parameter count (None: unknown)
    n_ctx_train: int | None     # trained context length (None: unknown)
    chat_template: bool


def parse_size_label(label: str) -> int | None:
    """'135M' -> 135e6, '1.7B' -> 1.7e9, '8x7B' -> 56e9; None when not a size."""
    m = re.fullmatch(r"\s*(?:(\d+)x)?(\d+(?:\.\d+)?)\s*([KMBT])\s*", label or "", re.I)
    if not m:
        return None
    scale = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[m.group(3).upper()]
    return int(float(m.group(2)) * scale * int(m.group(1) or 1))


def read_metadata(path: Path) -> tuple[dict[str, str], int]:
    """(metadata as strings, parameter count) of a GGUF, from a vocabulary-only load (no
    weights are read). llama.cpp's loader log is silenced."""
    try:
        import llama_cpp
        from llama_cpp._utils import suppress_stdout_stderr
    except ImportError:
        raise EnvironmentProblem("llama-cpp-python is not installed: "
                                 "pip install 'sieve-lite[agent]'") from None
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    with suppress_stdout_stderr(disable=False):
        model = llama_cpp.llama_model_load_from_file(str(path).encode("utf-8"), params)
    if not model:
        raise ModelError(f"cannot load {path}: not a GGUF model llama.cpp can read")
    out: dict[str, str] = {}
    try:
        buf = ctypes.create_string_buffer(1 << 17)
        for i in range(llama_cpp.llama_model_meta_count(model)):
            llama_cpp.llama_model_meta_key_by_index(model, i, buf, ctypes.sizeof(buf))
            key = buf.value.decode("utf-8", "replace")
            llama_cpp.llama_model_meta_val_str_by_index(model, i, buf, ctypes.sizeof(buf))
            out[key] = buf.value.decode("utf-8", "replace")
        n_params = int(llama_cpp.llama_model_n_params(model))
    finally:
        llama_cpp.llama_model_free(model)
    return out, n_params


def model_facts(path: str | os.PathLike[str]) -> ModelFacts:
    """The facts of one GGUF file (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"model file not found: {p}")
    meta, n_params = read_metadata(p)
    params = parse_size_label(meta.get("general.size_label", "")) or n_params or None
    arch = meta.get("general.architecture", "")
    ctx = meta.get(f"{arch}.context_length", "")
    return ModelFacts(path=p, name=meta.get("general.name") or p.name, params=params,
                      n_ctx_train=int(ctx) if ctx.isdigit() else None,
                      chat_template=bool(meta.get("tokenizer.chat_template")))


@dataclass
class Budgets:
    """The paper's budgets and our context policy."""

    k: int = 5
    max_steps: int = 100
    read_tokens: int = 12_000     # per read (fetch or visit)
    read_share: float = 0.5       # ... and at most this share of the context window
    context_stop: float = 0.90    # ask for the final answer at this share of the window
    trim_at: float = 0.75         # start stubbing old observations here
    trim_to: float = 0.50         # ... until the prompt is under this share
    action_tokens: int = 256      # max tokens of one action reply
    answer_tokens: int = 160      # max tokens of a forced answer
    # The harness (issue 8): what a small model needs to be useful.
    seed: bool = True             # step 0: the engine ranks the question's words
    span_answer: bool = True      # in-process: an answer can only copy shown text
    paper_forced_answer: bool = False  # the paper's prefilled answer at the cap (mode study)
    suggest: bool = True          # offer searches built from the question (queries.py)
    free_search: bool = True      # ... and any well-formed query besides them
    compact: bool = False         # short manual and cards (small models)
    sections_shown: int = 0       # sections offered per card, best first (0: all)
    thought_chars: int = 160      # 0: no thought line
    stall_limit: int = 3          # stop after this many actions in a row without progress
    max_answer_chunks: int = 1500  # shown text offered to the answer grammar, in chunks
    answer_when_keyed: bool = False  # answer right after a read with a 'key: value' match
    # Small models: answer only with the value of a header line that names what is asked
    # (bench/ask.py: SmolLM2-135M copied a right answer out of prose 1 time in 20).
    prose_answers: bool = True
    read_before_search: bool = False  # the first action is a read of step 0's cards
    plan: bool = True             # sieve mode: step 0 runs the planner's BQL (plan.py)
    follow_links: bool = False    # small models: a read naming the linked document the
    #                               question asks about leads to it next (hops.py)
    narrow: bool = True           # a prose read shows its sentences that match (read.py)
    shown_sentences: int = 8      # ... this many of them
    # Small models choose a prose answer among the reader's candidates (choice.py):
    # 'likelihood' (in process; 'grammar' over a server), '' to answer freely.
    choice: str = ""
    # Small models, sieve mode: the first read is the engine's, the best-ranked section of
    # step 0's first card (bench/ask.py: SmolLM2-135M fetched another of the three sections
    # shown in 12 of the 14 natural questions it read the right PEP but the wrong section of,
    # and in 12 of them the engine had ranked the right one first).
    engine_first_read: bool = False


def budgets_for(params: int | None, n_ctx: int, base: Budgets | None = None, *,
                capable: bool | None = None) -> Budgets:
    """Budgets that fit a model of ``params`` parameters and an ``n_ctx`` window: what the
    model does, not where it runs (a GGUF's metadata, or what its server reports). When the
    size is unknown, ``capable`` is the verdict of a short probe of the model
    (``probe.check_capability``): a model that failed it gets the small-model harness; one
    that passed, or was not probed, the large-model budgets."""
    b = base or Budgets()
    if params is None and capable is False:
        params = SMALL_PARAMS // 2  # behaves like a small model: held to small menus
    if params is not None and params < SMALL_PARAMS:
        return replace(b, k=3, max_steps=3, read_tokens=min(240, n_ctx // 8), compact=True,
                       sections_shown=3, thought_chars=0, free_search=False, stall_limit=2,
                       action_tokens=40, answer_tokens=24, max_answer_chunks=1200,
                       answer_when_keyed=True, prose_answers=False, read_before_search=True,
                       follow_links=True, shown_sentences=4, choice="likelihood",
                       engine_first_read=True)
    if params is not None and params < 10 * SMALL_PARAMS:
        return replace(b, k=5, max_steps=30, read_tokens=min(4000, n_ctx // 4),
                       thought_chars=160)
    return replace(b, k=5, max_steps=100, read_tokens=12_000, thought_chars=160)


def profile_name(params: int | None, capable: bool | None = None) -> str:
    """The profile ``budgets_for`` picks, in words (``sieve-lite model check``)."""
    if params is None and capable is False:
        return "small (size unknown; failed the capability probe)"
    if params is None:
        return ("large (size unknown; passed the capability probe)" if capable else
                "large (size unknown)")
    if params < SMALL_PARAMS:
        return "small (under 1B parameters)"
    if params < 10 * SMALL_PARAMS:
        return "medium (1B to 10B parameters)"
    return "large (10B parameters or more)"


__all__ = ["ModelFacts", "SMALL_PARAMS", "budgets_for", "model_facts", "parse_size_label",
           "profile_name", "read_metadata"]
