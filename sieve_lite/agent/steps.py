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
