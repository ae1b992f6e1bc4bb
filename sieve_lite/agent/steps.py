"""The agent's actions and the record of one step, as plain dataclasses.

An *action* is what the model asked for (parsed from its reply); a *step* is one model call
with its action, the observation that went back, and what it cost. Steps are what the
transcript stores and what the live view renders.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Citation:
    """A document and the section of it that was read (``(document)`` for a whole visit)."""

    doc: str
    section: str
    pages: str = ""  # where in the source, e.g. 'p. 4–6' (PDF sources; filled by the loop)

    def label(self) -> str:
        return f"{self.doc} | {self.section}"

    def where(self) -> str:
        """The label with the page range when there is one (for people, not the grammar)."""
        return f"{self.label()} ({self.pages})" if self.pages else self.label()


@dataclass(frozen=True)
class Search:
    """``search: QUERY`` -- a BQL query (sieve mode) or plain words (the other modes)."""

    query: str
    thought: str = ""

    @property
    def kind(self) -> str:
        return "search"


@dataclass(frozen=True)
class Fetch:
    """``fetch: DOC | SECTION`` -- DOC is a rank in the last search or a document id."""

    doc: str
    section: str
    thought: str = ""

    @property
    def kind(self) -> str:
        return "fetch"


@dataclass(frozen=True)
class Visit:
    """``visit: DOC`` -- read a whole document (search-visit mode)."""

    doc: str
    thought: str = ""

    @property
    def kind(self) -> str:
        return "visit"


@dataclass(frozen=True)
class Answer:
    """``answer: TEXT`` followed by ``cite: DOC | SECTION`` lines."""

    text: str
    citations: tuple[Citation, ...] = ()
    thought: str = ""

    @property
    def kind(self) -> str:
        return "answer"


Action = Search | Fetch | Visit | Answer


@dataclass
class Step:
    """One model call and what came of it."""

    index: int                      # 1-based; final-answer calls continue the numbering
    reply: str                      # the model's text as returned (after any prefill)
    action: Action | None           # None when the reply could not be read as an action
    observation: str                # what went back to the model ('' after an answer)
    error: str = ""                 # a model mistake (malformed action, bad query, ...)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    observation_tokens: int = 0
    model_seconds: float = 0.0
    engine_seconds: float = 0.0
    prefill: str = ""               # text we put in the model's mouth (forced answer)
    info: dict[str, Any] = field(default_factory=dict)  # search totals, fetch sizes, cards

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["action"] = action_to_json(self.action)
        return d


def action_to_json(action: Action | None) -> dict[str, Any] | None:
    """A JSON-ready dict with a ``kind`` key, or None."""
    if action is None:
        return None
    d = asdict(action)
    d["kind"] = action.kind
    return d


def action_from_json(d: dict[str, Any] | None) -> Action | None:
    """Inverse of ``action_to_json`` (used by transcript replay)."""
    if not d:
        return None
    d = dict(d)
    kind = d.pop("kind")
    if kind == "search":
        return Search(**d)
    if kind == "fetch":
        return Fetch(**d)
    if kind == "visit":
        return Visit(**d)
    if kind == "answer":
        cites = tuple(Citation(**c) for c in d.pop("citations", ()))
        return Answer(citations=cites, **d)
    raise ValueError(f"unknown action kind {kind!r}")


def render_action(action: Action) -> str:
    """The canonical text of an action, in the syntax the model writes."""
    lines = [f"thought: {action.thought}"] if action.thought else []
    if isinstance(action, Search):
        lines.append(f"search: {action.query}")
    elif isinstance(action, Fetch):
        lines.append(f"fetch: {action.doc} | {action.section}")
    elif isinstance(action, Visit):
        lines.append(f"visit: {action.doc}")
    else:
        lines.append(f"answer: {action.text}")
        lines.extend(f"cite: {c.label()}" for c in action.citations)
    return "\n".join(lines)


NO_ANSWER = "(no answer)"  # the answer of an episode that found none (null in JSON)


@dataclass
class Accounting:
    """What an episode cost. Distinct tokens count every prompt segment (manual, question,
    observation, instruction, stub) and every model output once, by the backbone's tokenizer;
    accumulated prompt tokens add up each call's whole prompt as the backbone reported it."""

    distinct_tokens: int = 0
    accumulated_prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    steps: int = 0
    searches: int = 0
    fetches: int = 0
    fallbacks: int = 0
    errors: int = 0
    repairs: int = 0
    trims: int = 0
    peak_prompt_tokens: int = 0
    operators: dict[str, int] = field(default_factory=dict)
    fields: dict[str, int] = field(default_factory=dict)
    model_seconds: float = 0.0
    engine_seconds: float = 0.0
    wall_seconds: float = 0.0
    stop_reason: str = ""         # answer, step-cap, context, no-progress, nothing-left
    forced: bool = False          # the answer had to be prefilled (the paper's forcing)
    seeded: bool = False          # step 0 ran (its search is in searches and engine time)
    repeats: int = 0              # actions that repeated an earlier one (refused)
    grounded: bool = False        # the answer is a span of text shown in the episode
    no_answer: str = ""           # why the episode ended without an answer

    @property
    def engine_share(self) -> float:
        return self.engine_seconds / self.wall_seconds if self.wall_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("model_seconds", "engine_seconds", "wall_seconds"):
            d[key] = round(d[key], 4)
        d["engine_share"] = round(self.engine_share, 4)
        return d


@dataclass
class Episode:
    """One question answered."""

    question: str
    mode: str
    answer: str
    citations: list[Citation]
    steps: list[Step]
    accounting: Accounting
    evidence: list[dict[str, str]] = field(default_factory=list)  # best text read, no answer

    @property
    def answered(self) -> bool:
        return self.answer != NO_ANSWER

    @property
    def parse_failures(self) -> int:
        """Model replies that could not be read as an action at all (what a constraint
        prevents; counted for runs on a server that ignores it)."""
        return sum(1 for s in self.steps if s.index > 0 and s.action is None)

    def to_json(self) -> dict[str, Any]:
        # No answer is null (with the reason in "no_answer"), never a string that could be
        # mistaken for one.
        accounting = self.accounting.to_json()
        accounting["parse_failures"] = self.parse_failures
        return {"question": self.question, "mode": self.mode,
                "answer": self.answer if self.answered else None,
                "answered": self.answered,
                "no_answer": None if self.answered else (self.accounting.no_answer
                                                         or "no answer"),
                "citations": [asdict(c) for c in self.citations],
                "evidence": self.evidence,
                "accounting": accounting}


class NothingLeft(Exception):
    """No action is possible any more (nothing to search, fetch or answer from)."""


class Mistake(Exception):
    """A model mistake found by the loop itself (unknown rank, repeat, bad citation)."""


def norm_query(query: str) -> str:
    """How two searches are compared for repeats: case and runs of whitespace ignored."""
    return " ".join(query.split()).casefold()
