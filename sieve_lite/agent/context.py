"""The conversation an episode builds, and the policy that keeps it inside the context window.

Never trimmed: the manual, the question, every action the model wrote, and the newest
observation. When the prompt passes ``trim_at`` of the window (75%), the oldest observations
are replaced by one-line stubs (a read keeps its id, section and size; a result list keeps
its ranks, ids and titles) until the prompt is back under ``trim_to`` (50%): the hysteresis
keeps trims rare, which matters because a trim invalidates the model's KV cache from that
point on. The final-answer request may stub the newest observation too, so that it always
fits. Every text added is counted once into the episode's distinct tokens.

A read longer than the read budget is cut to the excerpt richest in the question's words
(``cap``); prose sections are narrowed to their sentences instead (``read.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .backbones import Backbone, Message
from .profile import Budgets
from .steps import Accounting, Step
from .tools import excerpt


@dataclass
class Turn:
    """One message of the conversation, with what trimming needs to know."""

    role: str
    content: str
    kind: str                      # system | question | action | observation | instruction
    step: int = 0
    stub: str = ""                 # what replaces the content when trimmed ('' = never)
    read_key: tuple[str, str] | None = None
    trimmed: bool = False


class Conversation:
    """The turns of one episode, counted into its accounting as they are added."""

    def __init__(self, backbone: Backbone, budgets: Budgets, acc: Accounting,
                 emit: Callable[[dict[str, Any]], None]) -> None:
        self.backbone = backbone
        self.budgets = budgets
        self.acc = acc
        self.emit = emit
        self.turns: list[Turn] = []

    def add(self, role: str, content: str, kind: str, **extra: Any) -> None:
        self.turns.append(Turn(role, content, kind, **extra))
        self.count(content)

    def count(self, text: str) -> None:
        self.acc.distinct_tokens += self.backbone.count_tokens(text)

    def record(self, step: Step, observation: str, stub: str = "",
               read_key: tuple[str, str] | None = None, in_conversation: bool = True) -> None:
        """A step's reply and observation as turns. The reply is already counted (as
        completion tokens) and is added without recounting; step 0 is the engine's: no
        reply, and its observation joins the question's message."""
        if in_conversation and step.index > 0:
            self.turns.append(Turn("assistant", step.reply or "(empty)", "action", step.index))
        if observation:
            content = observation if step.index == 0 else \
                f"Observation (step {step.index}):\n{observation}"
            step.observation_tokens = self.backbone.count_tokens(content)
            self.add("user", content, "observation", step=step.index, stub=stub,
                     read_key=read_key)

    def messages(self) -> list[Message]:
        """The conversation; consecutive turns of one role are joined into one message, so
        that chat templates that insist on alternating roles accept it."""
        out: list[Message] = []
        for t in self.turns:
            if out and out[-1]["role"] == t.role and t.role == "user":
                out[-1] = {"role": "user", "content": out[-1]["content"] + "\n\n" + t.content}
            else:
                out.append({"role": t.role, "content": t.content})
        return out

    def visible(self) -> set[tuple[str, str]]:
        """The reads whose text is still in the conversation (not stubbed)."""
        return {t.read_key for t in self.turns if t.read_key is not None and not t.trimmed}

    def fit(self, force_room: int = 0) -> int:
        """Apply the trimming policy; returns the prompt's tokens. ``force_room`` > 0 means
        the next call needs that many free tokens whatever it takes (the final answer)."""
        n_ctx = self.backbone.n_ctx
        prompt = self.backbone.prompt_tokens(self.messages())
        need_trim = prompt > self.budgets.trim_at * n_ctx or (
            force_room and prompt + force_room > n_ctx)
        if not need_trim:
            return prompt
        target = self.budgets.trim_to * n_ctx
        if force_room:
            target = min(target, n_ctx - force_room) if prompt + force_room > n_ctx else target
        observations = [t for t in self.turns if t.kind == "observation" and t.stub
                        and not t.trimmed]
        protected = observations[-1:] if not force_room else []
        trimmed = []
        for t in observations:
            if prompt <= target:
                break
            if t in protected:
                continue
            t.content, t.trimmed = t.stub, True
            self.count(t.stub)
            trimmed.append(t.step)
            prompt = self.backbone.prompt_tokens(self.messages())
        if trimmed:
            self.acc.trims += 1
            self.emit({"event": "trim", "steps": trimmed, "prompt_tokens": prompt})
        return prompt


def read_cap(budgets: Budgets, n_ctx: int) -> int:
    """Tokens one read may show: the read budget, and at most ``read_share`` of the window."""
    return max(64, min(budgets.read_tokens, int(budgets.read_share * n_ctx)))


def cap(text: str, limit: int, count: Callable[[str], int], focus: list[str]
        ) -> tuple[str, int, bool]:
    """Cut a read at ``limit`` tokens: the excerpt richest in the question's words, on word
    boundaries; returns (text, tokens, was_cut)."""
    n = count(text)
    if n <= limit:
        return text, n, False
    words_cap = max(16, int(len(text.split()) * limit / n))
    while True:
        cut, _ = excerpt(text, focus, words_cap)
        n = count(cut)
        if n <= limit or words_cap <= 16:
            return cut, n, True
        words_cap = max(16, int(words_cap * limit / n * 0.95))


__all__ = ["Conversation", "Turn", "cap", "read_cap"]
