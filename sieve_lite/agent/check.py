"""``sieve-lite model check PATH|NAME|URL``: what a model is and how it will be run, before a
long run: its chat template, its context, the constraint it honours (checked, as before a
run), prompt and generation speed, and the profile it gets.

The speed is two requests (after one that warms the model up) with fresh prompts (a nonce
in front, so no server reuses a cached prefix): one that generates a single token (prompt
tokens over its seconds is the prompt speed), and one that generates up to 64 (the extra
tokens over the extra seconds is the generation speed). Both are unconstrained: they time
the model, not a grammar.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from typing import Any

from .backbones import DEFAULT_N_CTX, HttpBackbone, LlamaBackbone
from .probe import check_capability, check_constraint
from .profile import budgets_for, profile_name

SPEED_TOKENS = 64
_FILLER = ("The river runs past the mill and the old stone bridge, under the willows, "
           "to the sea. ") * 12


@dataclass
class ModelCheck:
    """What ``check_model`` found."""

    target: str
    runs: str                    # 'in process' or the server kind
    model: str
    params: int | None
    context: int | None          # the context window a run gets
    trained_context: int | None  # what the model was trained for (when known)
    chat_template: str           # 'yes', 'no', or that the server does not show it
    constraint: str              # how replies are constrained
    honoured: bool               # the check's reply fitted the constraint
    probe_reply: str
    capable: bool | None         # the capability probe (run when the size is unknown)
    prompt_tokens_per_second: float | None
    generation_tokens_per_second: float | None
    profile: str
    budgets: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure_speed(backbone: Any) -> tuple[float | None, float | None]:
    """(prompt tokens/s, generation tokens/s) of a backbone, from two unconstrained requests
    (see the module docstring); None where the timing says nothing."""
    def ask(max_tokens: int, call: int) -> Any:
        text = (f"[{secrets.token_hex(4)}] {_FILLER}\nNow count from 1 to 200, one number "
                "after another, separated by spaces.")
        return backbone.complete([{"role": "user", "content": text}], max_tokens=max_tokens,
                                 call=call)

    ask(1, 89)  # a first call pays for warming up (threads, buffers): not timed
    one = ask(1, 90)
    more = ask(SPEED_TOKENS, 91)
    prompt = one.prompt_tokens / one.seconds if one.seconds > 0 and one.prompt_tokens else None
    extra = more.completion_tokens - one.completion_tokens
    spent = more.seconds - one.seconds * (more.prompt_tokens / max(1, one.prompt_tokens))
    generation = extra / spent if extra > 0 and spent > 0 else None
    return prompt, generation


def check_model(target: str, *, n_ctx: int = DEFAULT_N_CTX, timeout: float = 300.0,
                speed: bool = True) -> ModelCheck:
    """Check the model at ``target``: a server's URL, or a GGUF (a path, or a name in the
    model folder) run in process."""
    if target.startswith(("http://", "https://")):
        bb: Any = HttpBackbone(target, n_ctx=n_ctx, timeout=timeout)
        shown = "yes" if bb.report.chat_template else "not shown by the server"
        runs, model = bb.kind.label, bb.model
        trained = None
        constraint = bb.kind.field
    else:
        bb = LlamaBackbone(target, n_ctx=n_ctx)
        shown = "yes"  # a GGUF without one is refused on loading
        runs, model = "in process (llama-cpp-python)", str(bb.path)
        trained = bb.facts.n_ctx_train
        constraint = "GBNF grammar (in process)"
    proof = check_constraint(bb)
    capable = None
    if bb.params is None and proof.honoured:
        capable = check_capability(bb)
    prompt_tps, gen_tps = measure_speed(bb) if speed else (None, None)
    bud = budgets_for(bb.params, bb.n_ctx, capable=capable)
    budgets = {"k": bud.k, "max_steps": bud.max_steps, "read_tokens": bud.read_tokens,
               "free_search": bud.free_search, "thought_chars": bud.thought_chars,
               "compact": bud.compact}
    return ModelCheck(target=target, runs=runs, model=model, params=bb.params,
                      context=bb.n_ctx, trained_context=trained, chat_template=shown,
                      constraint=constraint, honoured=proof.honoured,
                      probe_reply=proof.reply, capable=capable,
                      prompt_tokens_per_second=prompt_tps,
                      generation_tokens_per_second=gen_tps,
                      profile=profile_name(bb.params, capable), budgets=budgets)


__all__ = ["ModelCheck", "check_model", "measure_speed"]
