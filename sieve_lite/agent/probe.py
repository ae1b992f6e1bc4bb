"""Two short checks of a model behind a server, before a run.

* ``check_constraint``: a request whose unconstrained reply would not fit its constraint
  (asked for two sentences of prose, under a menu of a few fixed actions, with a bounded
  thought line and a non-ASCII section name). The reply must be one of those actions exactly.
  A server that ignores the constraint (Ollama with an MLX model, llama-server with a grammar
  it cannot parse) answers in prose, and the run stops before it starts.
* ``check_capability``: three small questions, each answered under a constraint by one of a
  few choices, that a model of a few hundred million parameters gets wrong and a capable one
  does not. Used when the server does not say how big its model is: a model that fails gets
  the small-model profile (``profile.budgets_for``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .steps import Answer, Fetch, Search
from .syntax import ActionError, Menu, parse_action

PROBE_PROMPT = "Write two sentences about the sea."
PROBE_THOUGHT = 40
PROBE_MENU = Menu.of("sieve", ("title",), [("1", ("Introduction", "Résumé"))], [],
                     queries=["sea[title]"], free_search=False, choices=["alpha", "beta"],
                     thought_chars=PROBE_THOUGHT)
PROBE_TOKENS = 48

# (question, choices, the right one): a 135M model picks among them at about chance.
CAPABILITY_ITEMS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Tom is older than Ann, and Ann is older than Bob. Who is the youngest of the three?",
     ("Tom", "Ann", "Bob"), "Bob"),
    ("A meeting set for Monday is moved two days later. On which day is it now?",
     ("Monday", "Tuesday", "Wednesday", "Thursday"), "Wednesday"),
    ("Which of these words does not name an animal: horse, lamp, tiger, sheep?",
     ("horse", "lamp", "tiger", "sheep"), "lamp"),
)


@dataclass
class Proof:
    """The outcome of ``check_constraint``."""

    honoured: bool
    reply: str              # the reply as the backbone returned it
    seconds: float
    prompt_tokens: int
    completion_tokens: int


def fits_menu(text: str, menu: Menu) -> bool:
    """Whether ``text`` is exactly an action the (fixed-choice) probe menu allows: written
    as the grammar writes it (no repair), a thought within bounds, a listed search, fetch
    or answer."""
    try:
        action, repair = parse_action(text, menu.mode)
    except ActionError:
        return False
    if repair or len(action.thought) > menu.thought_chars or \
            (action.thought and not text.startswith("thought: ")):
        return False
    if isinstance(action, Search):
        return action.query in (menu.queries or ())
    if isinstance(action, Fetch):
        return any(action.doc == label and action.section in secs
                   for label, secs in menu.fetchable)
    if isinstance(action, Answer):
        return action.text in (menu.choices or ()) and not action.citations
    return False


def check_constraint(backbone: Any) -> Proof:
    """Send the probe (see the module docstring) and say whether the reply fits it."""
    t0 = time.perf_counter()
    comp = backbone.complete([{"role": "user", "content": PROBE_PROMPT}],
                             max_tokens=PROBE_TOKENS, grammar=PROBE_MENU, call=0)
    return Proof(fits_menu(comp.text.strip(), PROBE_MENU), comp.text,
                 time.perf_counter() - t0, comp.prompt_tokens, comp.completion_tokens)


def check_capability(backbone: Any) -> bool:
    """Whether the model answers every ``CAPABILITY_ITEMS`` question right (each under a
    constraint that allows only its choices); stops at the first wrong one."""
    for i, (question, choices, right) in enumerate(CAPABILITY_ITEMS):
        menu = Menu.of("sieve", answer_only=True, choices=choices, thought_chars=0)
        prompt = f"{question}\nAnswer with one of: {', '.join(choices)}."
        comp = backbone.complete([{"role": "user", "content": prompt}], max_tokens=16,
                                 grammar=menu, call=i + 1)
        try:
            action, _ = parse_action(comp.text, "sieve")
        except ActionError:
            return False
        if not (isinstance(action, Answer) and action.text.strip() == right):
            return False
    return True


__all__ = ["CAPABILITY_ITEMS", "PROBE_MENU", "PROBE_PROMPT", "Proof", "check_capability",
           "check_constraint", "fits_menu"]
