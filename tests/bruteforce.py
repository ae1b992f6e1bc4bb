"""A brute-force BQL evaluator written from ``shared/BQL.md`` alone.

It shares nothing with the engine's SQL: documents are read from their DOCUMENTS.md dicts, every
field value is split into words with ``sieve_lite.words.words`` (the word rule of BQL.md section
2, which the contract says indexing and matching share), and an AST (from the engine's parser, or
built by a test from the query it generated) is evaluated in pure Python:

* a word atom matches when some value of the scoped fields has the word;
* a phrase needs its words adjacent and in order within one value; a prefix is a word that
  starts with the stem (the stem itself included);
* ``NEAR/d`` needs every item within one value, with SQLite FTS5's rule for the distance (see
  ``near_match``);
* fields: ``title``; ``section`` = the headings except the ``(intro)`` label; ``body`` = the
  section texts; ``infobox`` = each entry read as ``key: value``; ``author`` = each name;
  ``tiab`` = title or body; ``all`` = every text field;
* a date atom admits a dated document whose span (a partial date covers its whole span)
  overlaps the range; an undated document never matches one;
* ``AND``/``OR``/``NOT`` combine sets of documents.

The module also holds small helpers the BQL tests share (running the engine on a query, building
a collection from a JSONL file).
"""

from __future__ import annotations

import bisect
import calendar
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sieve_lite.bql.ast import And, DateRange, Near, Node, Not, Or, Term
from sieve_lite.words import words

INTRO = "(intro)"
TEXT_FIELDS: tuple[str, ...] = ("title", "section", "body", "infobox", "author")
SCOPES: dict[str, tuple[str, ...]] = {
    "title": ("title",),
    "section": ("section",),
    "body": ("body",),
    "infobox": ("infobox",),
    "author": ("author",),
    "tiab": ("title", "body"),
    "all": TEXT_FIELDS,
}
FIELD_ORDER: tuple[str, ...] = ("title", "section", "body", "infobox", "author", "date", "tiab",
                                "all")
_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


# ----------------------------------------------------------------------------------- dates
def span_of(value: str) -> tuple[int, int]:
    """``YYYY``/``YYYY-MM``/``YYYY-MM-DD`` -> the inclusive span of days as YYYYMMDD ints."""
    m = _DATE.match(value)
    if not m:
        raise ValueError(f"not a date: {value!r}")
    y = int(m.group(1))
    if m.group(2) is None:
        return y * 10000 + 101, y * 10000 + 1231
    mo = int(m.group(2))
    if not 1 <= mo <= 12:
        raise ValueError(f"not a date: {value!r}")
    last = calendar.monthrange(y, mo)[1]
    if m.group(3) is None:
        return y * 10000 + mo * 100 + 1, y * 10000 + mo * 100 + last
    d = int(m.group(3))
    if not 1 <= d <= last:
        raise ValueError(f"not a date: {value!r}")
    day = y * 10000 + mo * 100 + d
    return day, day


# ---------------------------------------------------------------------------- documents
@dataclass
class Value:
    """One field value: its words, their positions, and its distinct words sorted."""

    words: tuple[str, ...]
    positions: dict[str, list[int]] = field(default_factory=dict)
    vocab: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, text: str) -> Value:
        ws = tuple(words(text))
        pos: dict[str, list[int]] = {}
        for i, w in enumerate(ws):
            pos.setdefault(w, []).append(i)
        return cls(ws, pos, sorted(pos))


@dataclass
class BruteDoc:
    id: str
    values: dict[str, list[Value]]  # text field -> its values
    vocab: dict[str, list[str]]  # text field -> sorted distinct words over all its values
    span: tuple[int, int] | None


def _sections(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    if obj.get("sections") is not None:
        return [(s["heading"], s.get("text", "")) for s in obj["sections"]]
    return [(INTRO, obj.get("text", ""))]


def _infobox(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    raw = obj.get("infobox") or []
    items = raw.items() if isinstance(raw, Mapping) else raw
    return [(str(k), str(v)) for k, v in items]


def _authors(obj: Mapping[str, Any]) -> list[str]:
    raw = obj.get("author") or []
    return [raw] if isinstance(raw, str) else list(raw)


def load_document(obj: Mapping[str, Any]) -> BruteDoc:
    """A DOCUMENTS.md dict read the BQL.md way (section 1)."""
    sections = _sections(obj)
    texts: dict[str, list[str]] = {
        "title": [obj.get("title") or ""],
        # '(intro)' is a label, not a heading (BQL.md section 2).
        "section": [h for h, _ in sections if h != INTRO],
        "body": [t for _, t in sections],
        "infobox": [f"{k}: {v}" for k, v in _infobox(obj)],
        "author": _authors(obj),
    }
    values = {f: [Value.of(t) for t in ts] for f, ts in texts.items()}
    vocab = {f: sorted({w for v in vs for w in v.positions}) for f, vs in values.items()}
    date = obj.get("date")
    return BruteDoc(str(obj["id"]), values, vocab, span_of(date) if date else None)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ------------------------------------------------------------------------------ matching
def _has_prefix(sorted_words: Sequence[str], stem: str) -> bool:
    i = bisect.bisect_left(sorted_words, stem)
    return i < len(sorted_words) and sorted_words[i].startswith(stem)


def _prefixed(sorted_words: Sequence[str], stem: str) -> list[str]:
    out = []
    i = bisect.bisect_left(sorted_words, stem)
    while i < len(sorted_words) and sorted_words[i].startswith(stem):
        out.append(sorted_words[i])
        i += 1
    return out


def term_positions(term: Term, value: Value) -> list[int]:
    """Start positions in ``value`` where ``term`` (word, prefix or phrase) matches."""
    ws = term.words
    n = len(ws)
    if n == 0:
        raise ValueError("a term without words")

    def ok_at(j: int, pos: int) -> bool:
        w = value.words[pos]
        if j == n - 1 and term.prefix:
            return w.startswith(ws[j])
        return w == ws[j]

    if n == 1:
        if term.prefix:
            return sorted(p for w in _prefixed(value.vocab, ws[0]) for p in value.positions[w])
        return list(value.positions.get(ws[0], ()))
    out = []
    for s in value.positions.get(ws[0], ()):
        if s + n <= len(value.words) and all(ok_at(j, s + j) for j in range(1, n)):
            out.append(s)
    return out


def near_match(items: Sequence[tuple[Sequence[int], int]], distance: int) -> bool:
    """SQLite FTS5's NEAR rule for one value.

    ``items`` are (start positions, phrase length) per NEAR item. FTS5
    (``fts5ExprNearIsMatch``) accepts a choice of one instance per item when, with ``M`` the
    largest chosen start, every item ``i`` satisfies ``M - (start_i + len_i) <= distance``: at
    most ``distance`` words lie between the end of each item and the start of the one that starts
    last. For two single words that is ``|p - q| - 1 <= d``; instances may overlap or coincide
    (``NEAR(a a)`` is satisfied by one ``a``). Equivalently: some ``M`` has, for every item, an
    instance starting in ``[M - len_i - distance, M]``; ``M`` can be taken among the starts.
    """
    if any(not pos for pos, _ in items):
        return False
    candidates = sorted({p for pos, _ in items for p in pos})
    sorted_items = [(sorted(pos), n) for pos, n in items]
    for m in candidates:
        for pos, n in sorted_items:
            lo = m - n - distance
            i = bisect.bisect_left(pos, lo)
            if i >= len(pos) or pos[i] > m:
                break
        else:
            return True
    return False


class BruteForce:
    """Evaluate BQL ASTs over a list of DOCUMENTS.md dicts."""

    def __init__(self, documents: Iterable[Mapping[str, Any]]) -> None:
        self.docs = [load_document(d) for d in documents]
        self.ids = frozenset(d.id for d in self.docs)
        if len(self.ids) != len(self.docs):
            raise ValueError("repeated document ids")

    def fields(self) -> tuple[str, ...]:
        """The BQL fields the collection supports (BQL.md section 1)."""
        have = {"title", "body", "tiab", "all"}
        if any(d.values["section"] for d in self.docs):
            have.add("section")
        for f in ("infobox", "author"):
            if any(d.values[f] for d in self.docs):
                have.add(f)
        if any(d.span for d in self.docs):
            have.add("date")
        return tuple(f for f in FIELD_ORDER if f in have)

    # -- atoms ---------------------------------------------------------------------------
    @staticmethod
    def concrete(fields: Sequence[str]) -> tuple[str, ...]:
        out: list[str] = []
        for f in fields:
            for c in SCOPES[f]:
                if c not in out:
                    out.append(c)
        return tuple(out)

    @staticmethod
    def _may_have(doc: BruteDoc, f: str, term: Term) -> bool:
        """Cheap filter: every word of ``term`` occurs somewhere in field ``f``."""
        vocab = doc.vocab[f]
        for j, w in enumerate(term.words):
            if term.prefix and j == len(term.words) - 1:
                if not _has_prefix(vocab, w):
                    return False
            else:
                i = bisect.bisect_left(vocab, w)
                if i >= len(vocab) or vocab[i] != w:
                    return False
        return True

    def term_matches(self, doc: BruteDoc, term: Term, fields: Sequence[str]) -> bool:
        for f in self.concrete(fields):
            if not self._may_have(doc, f, term):
                continue
            if len(term.words) == 1:
                return True  # one word needs no adjacency: the field has it
            if any(term_positions(term, v) for v in doc.values[f]):
                return True
        return False

    def near_matches(self, doc: BruteDoc, near: Near) -> bool:
        for f in self.concrete(near.fields):
            if not all(self._may_have(doc, f, t) for t in near.items):
                continue
            for v in doc.values[f]:
                items = [(term_positions(t, v), len(t.words)) for t in near.items]
                if near_match(items, near.distance):
                    return True
        return False

    @staticmethod
    def date_matches(doc: BruteDoc, rng: DateRange) -> bool:
        if doc.span is None:
            return False
        lo, hi = doc.span
        return (rng.lo is None or hi >= rng.lo) and (rng.hi is None or lo <= rng.hi)

    # -- documents -----------------------------------------------------------------------
    def evaluate(self, node: Node) -> set[str]:
        """The ids of the documents ``node`` admits."""
        if isinstance(node, Term):
            return {d.id for d in self.docs if self.term_matches(d, node, node.fields)}
        if isinstance(node, Near):
            return {d.id for d in self.docs if self.near_matches(d, node)}
        if isinstance(node, DateRange):
            return {d.id for d in self.docs if self.date_matches(d, node)}
        if isinstance(node, And):
            out: set[str] = set(self.ids)
            for c in node.children:
                out &= self.evaluate(c)
            return out
        if isinstance(node, Or):
            out = set()
            for c in node.children:
                out |= self.evaluate(c)
            return out
        if isinstance(node, Not):
            return set(self.ids) - self.evaluate(node.child)
        raise TypeError(f"not a BQL node: {node!r}")


# ------------------------------------------------------------------ engine-side helpers
def build_collection_from_jsonl(src: Path, out: Path) -> Path:
    """Build a lexical-only collection from a DOCUMENTS.md JSONL file (the engine's path)."""
    from sieve_lite.build import build_collection
    from sieve_lite.sources.jsonl import read_jsonl as engine_read_jsonl

    build_collection(engine_read_jsonl(src), out, embed=False, strict=True)
    return out


class Engine:
    """Runs BQL through the engine: parse -> compile -> execute the SQL -> document ids."""

    def __init__(self, path: Path) -> None:
        import sieve_lite

        self.coll = sieve_lite.open(path)
        self.fields: tuple[str, ...] = tuple(self.coll.fields)
        self.id_of = dict(self.coll.conn.execute("SELECT rowid, id FROM documents").fetchall())

    def parse(self, query: str) -> Node:
        from sieve_lite.bql import parse

        return parse(query, self.fields)

    def run_node(self, node: Node, **variant: Any) -> set[str]:
        """``variant``: keyword options of ``compile_query`` (e.g. ``optimize=False``)."""
        from sieve_lite.bql import compile_query

        compiled = compile_query(node, self.fields, **variant)
        cursor = self.coll.conn.execute(compiled.sql, tuple(compiled.params))
        rows = cursor.fetchall()
        rowids = []
        for row in rows:
            assert len(row) == 1, f"the selection must yield one column, got {row!r}"
            rowids.append(row[0])
        assert len(rowids) == len(set(rowids)), "the selection must yield distinct rowids"
        unknown = [r for r in rowids if r not in self.id_of]
        assert not unknown, f"the selection yielded rowids that are not documents: {unknown[:5]}"
        return {self.id_of[r] for r in rowids}

    def run(self, query: str) -> set[str]:
        return self.run_node(self.parse(query))

    def close(self) -> None:
        self.coll.close()


def engine_available() -> bool:
    try:
        from sieve_lite.bql import compile_query, parse  # noqa: F401
    except ImportError:
        return False
    return True
