"""The typed AST of BQL (frozen dataclasses). The parser produces it; the compiler, the
explainer, the rankers (positive words) and the cards (attribution) consume it.

Fields are canonical names after alias resolution: ``title``, ``section``, ``body``,
``infobox``, ``author``, ``tiab``, ``all``. ``expand_fields`` turns ``tiab``/``all`` into the
concrete per-field FTS tables of a collection.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Union

# Concrete searchable text fields, in the order BQL.md lists them (and error messages use).
TEXT_FIELDS: tuple[str, ...] = ("title", "section", "body", "infobox", "author")
ALL_FIELDS_ORDER: tuple[str, ...] = ("title", "section", "body", "infobox", "author", "date",
                                     "tiab", "all")
ALIASES: dict[str, str] = {
    "title": "title", "ti": "title",
    "section": "section", "sec": "section", "heading": "section",
    "body": "body", "ab": "body", "text": "body",
    "infobox": "infobox", "ib": "infobox",
    "author": "author", "au": "author", "by": "author",
    "tiab": "tiab",
    "all": "all", "any": "all",
    "date": "date",
}


@lru_cache(maxsize=1024)  # cards ask it for every atom of every hit
def expand_fields(fields: tuple[str, ...], available: tuple[str, ...]) -> tuple[str, ...]:
    """Concrete text fields searched by a scope, restricted to those the collection has."""
    out: list[str] = []
    for f in fields:
        if f == "tiab":
            cand: tuple[str, ...] = ("title", "body")
        elif f == "all":
            cand = TEXT_FIELDS
        else:
            cand = (f,)
        for c in cand:
            if c in available and c not in out:
                out.append(c)
    return tuple(sorted(out, key=TEXT_FIELDS.index))


@dataclass(frozen=True)
class Span:
    """1-based column and length of the source text a node came from."""

    column: int
    length: int


@dataclass(frozen=True)
class Term:
    """A word, a prefix, or a phrase (quoted, or a bare term with separators).

    ``words`` are normalised BQL words. ``prefix`` applies to the last word. A single-word,
    non-prefix term is a plain word atom.
    """

    words: tuple[str, ...]
    prefix: bool
    fields: tuple[str, ...]  # canonical, unexpanded; ("all",) when unscoped
    span: Span
    quoted: bool = False

    @property
    def is_phrase(self) -> bool:
        return len(self.words) > 1


@dataclass(frozen=True)
class Near:
    """NEAR/d(items): every item within one field value, at most d words apart (FTS5 rule)."""

    items: tuple[Term, ...]
    distance: int
    fields: tuple[str, ...]
    span: Span


@dataclass(frozen=True)
class DateRange:
    """Inclusive range of days as YYYYMMDD ints; None is an open bound."""

    lo: int | None
    hi: int | None
    span: Span
    text: str = ""


@dataclass(frozen=True)
class And:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    child: Node
    span: Span


Node = Union[Term, Near, DateRange, And, Or, Not]  # noqa: UP007
Atom = Union[Term, Near, DateRange]  # noqa: UP007


def positive_atoms(node: Node) -> list[Term | Near]:
    """Word atoms not under a NOT (what ranks, attributes and falls back)."""
    out: list[Term | Near] = []

    def walk(n: Node) -> None:
        if isinstance(n, (Term, Near)):
            out.append(n)
        elif isinstance(n, (And, Or)):
            for c in n.children:
                walk(c)
        # Not and DateRange contribute nothing

    walk(node)
    return out


def required_atoms(node: Node) -> list[Term | Near]:
    """Atoms that every document the query admits matches: the query itself when it is one
    atom, else the atoms joined to it by AND alone (not under an OR or a NOT)."""
    if isinstance(node, (Term, Near)):
        return [node]
    if isinstance(node, And):
        return [a for c in node.children for a in required_atoms(c)]
    return []


def positive_words(node: Node) -> list[tuple[str, bool]]:
    """(word, is_prefix) for every positive word, in query order, repeats kept."""
    out: list[tuple[str, bool]] = []
    for atom in positive_atoms(node):
        terms = atom.items if isinstance(atom, Near) else (atom,)
        for t in terms:
            for i, w in enumerate(t.words):
                out.append((w, t.prefix and i == len(t.words) - 1))
    return out


def top_level_and_clauses(node: Node) -> tuple[Node, ...]:
    """The clauses of the top-level AND (the node itself when it is not an AND)."""
    return node.children if isinstance(node, And) else (node,)
