"""Grounded answers: a grammar that only lets the model copy a span of text it was shown.

The text shown in an episode (the sections it read, the titles and bylines of the cards it
saw) is cut into *chunks* at whitespace; each chunk keeps its inner punctuation
(``08-Mar-2002``, ``LL(1)-based``, ``__qname__``) but loses the punctuation around it
(``Smith,`` -> ``Smith``, ````PYTHONBREAKPOINT```` -> ``PYTHONBREAKPOINT``). The grammar is an
automaton over those chunks: it may start with any chunk, and after a chunk it may stop or go
on, after one space, with any chunk that follows it *somewhere* in the shown text. Every rule is
a character trie (alternatives never share a first character), so llama.cpp keeps one grammar
stack per position and sampling stays fast however much text is offered.

An automaton over successor pairs can still stitch pieces of two places together ("Guido van
Rossum" then "Rossum wrote ..."), so the decoded answer is checked afterwards: ``ground`` finds
the longest run of its chunks that is contiguous in one shown text and returns that text as it
was written there (inner punctuation and all, except a label's colon: ``PEP: 572`` reads
``PEP 572``), with where it came from. An answer with no such run is not grounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .syntax import gbnf_literal

# Punctuation taken off both ends of a chunk. Not '*' (``except*``), '_' (``__qname__``),
# '-', '+', '/', '@' or '.' inside a chunk (versions, identifiers).
_EDGE = "\"'`.,;:!?()[]{}<>|=~"
MAX_CHUNK_CHARS = 48          # longer chunks (URLs, base64) are not offered
DEFAULT_MAX_CHUNKS = 1500     # chunks offered in one grammar: see bench/ask.py for the cost


@dataclass(frozen=True)
class Source:
    """One text shown in the episode. ``label`` names a section read ((doc, section)); cards'
    lines have ``label`` None (shown, so quotable, but not citable)."""

    text: str
    label: tuple[str, str] | None = None


@dataclass
class Grounded:
    """An answer checked against the shown text."""

    text: str                                  # the span as written in the source
    label: tuple[str, str] | None              # the source it was found in
    chunks: int                                # its length in chunks
    trimmed: bool                              # the model wrote more than the span
    labels: list[tuple[str, str]] = field(default_factory=list)  # every read source with it


def _chunks(text: str) -> list[tuple[str, int, int]]:
    """(core, start, end) of each chunk of ``text``: whitespace-separated, edge punctuation
    stripped, empty or overlong cores dropped. Offsets are into ``text``."""
    out = []
    for m in re.finditer(r"\S+", text):
        raw = m.group(0)
        lo = len(raw) - len(raw.lstrip(_EDGE))
        core = raw.strip(_EDGE)
        if core and len(core) <= MAX_CHUNK_CHARS and "\\" not in core:
            start = m.start() + lo
            out.append((core, start, start + len(core)))
    return out


def chunk_words(text: str) -> list[str]:
    """The chunk cores of a text, in order (the unit the answer grammar is made of)."""
    return [c for c, _, _ in _chunks(text)]


class SpanIndex:
    """The chunks of every shown text, and the successor relation the grammar encodes."""

    def __init__(self, sources: Iterable[Source], max_chunks: int = DEFAULT_MAX_CHUNKS) -> None:
        self.sources: list[Source] = []
        self.chunked: list[list[tuple[str, int, int]]] = []
        total = 0
        for src in sources:
            ch = _chunks(src.text)
            if not ch:
                continue
            if total + len(ch) > max_chunks:
                ch = ch[: max(0, max_chunks - total)]
                if not ch:
                    break
            self.sources.append(src)
            self.chunked.append(ch)
            total += len(ch)
        self.size = total
        self.succ: dict[str, set[str]] = {}
        for ch in self.chunked:
            cores = [c for c, _, _ in ch]
            for a, b in zip(cores, cores[1:], strict=False):
                self.succ.setdefault(a, set()).add(b)
            for c in cores:
                self.succ.setdefault(c, set())

    def __bool__(self) -> bool:
        return self.size > 0

    # -- the grammar -------------------------------------------------------------------------
    def grammar(self, root: str = "span", starts: Iterable[str] | None = None) -> str:
        """GBNF rules: ``root`` is any chunk path of the successor automaton (starting only
        at ``starts`` when given and not empty). Rule names are ``{root}N``: after chunk N."""
        names = {c: i for i, c in enumerate(sorted(self.succ))}
        first = sorted(set(starts or ()) & set(self.succ)) or sorted(self.succ)
        rules = [f"{root} ::= {_trie(first, names, root)}"]
        for core, i in names.items():
            nxt = sorted(self.succ[core])
            if nxt:
                rules.append(f"{root}{i} ::= (\" \" ({_trie(nxt, names, root)}))?")
            else:
                rules.append(f"{root}{i} ::= \"\"")
        return "\n".join(rules) + "\n"

    # -- checking ------------------------------------------------------------------------------
    def ground(self, answer: str) -> Grounded | None:
        """The longest run of the answer's chunks that is contiguous in one shown text, as
        written there; None when not even one chunk was shown."""
        want = chunk_words(answer)
        if not want:
            return None
        best: tuple[int, int, int, int] | None = None  # (length, -source, start in source, end)
        for si, ch in enumerate(self.chunked):
            cores = [c for c, _, _ in ch]
            n, m = len(want), len(cores)
            prev = [0] * (m + 1)
            for i in range(1, n + 1):
                cur = [0] * (m + 1)
                for j in range(1, m + 1):
                    if want[i - 1] == cores[j - 1]:
                        cur[j] = prev[j - 1] + 1
                        cand = (cur[j], -si, j - cur[j], j - 1)
                        if best is None or cand[:2] > best[:2]:
                            best = cand
                prev = cur
        if best is None:
            return None
        length, neg_si, first, last = best
        si = -neg_si
        ch = self.chunked[si]
        text = self.sources[si].text[ch[first][1]: ch[last][2]]
        # A colon that ends a chunk inside the span is a label's ('PEP: 572' -> 'PEP 572').
        text = re.sub(r":(?=\s)", "", " ".join(text.split()))
        cores = [c for c, _, _ in ch[first: last + 1]]
        labels = [s.label for s, c in zip(self.sources, self.chunked, strict=True)
                  if s.label is not None and _contains([x for x, _, _ in c], cores)]
        label = self.sources[si].label or (labels[0] if labels else None)
        return Grounded(text=text, label=label, chunks=length, trimmed=length < len(want),
                        labels=list(dict.fromkeys(labels)))


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def answer_starts(index: SpanIndex, question: str, stopwords: Iterable[str]) -> set[str]:
    """Chunks an answer to ``question`` may start with. An answer starts with something the
    question does not say (not one of its words, not a stopword), of the type it asks for:
    a capitalised word for 'who', a number or a month for 'when', 'what year' or 'which
    version', a number for 'how many/much/big/long'. Where the shown text has 'key: value'
    lines whose key shares a word with the question ('Created:' for 'when was it created'),
    their values come first. Each rule is dropped when it would leave nothing."""
    from ..words import words

    asked = set(words(question))
    stems = {w[:5] for w in asked if w not in set(stopwords)}
    stop = set(stopwords)
    cands = {c for c in index.succ
             if not (set(words(c)) <= asked | stop) and any(ch.isalnum() for ch in c)}
    if not cands:
        return set()
    q = " ".join(words(question))
    # 'Which PEP ...?': the answer may be 'PEP 572', the question's noun and a number.
    m = re.match(r"(?:which|what) (\w+)", q)
    named: set[str] = set()
    if m:
        named = {a for ch in index.chunked
                 for (a, _s, _e), (b, _s2, _e2) in zip(ch, ch[1:], strict=False)
                 if a.casefold() == m.group(1) and any(x.isdigit() for x in b)}
        cands |= named
    typed = cands
    if named:
        typed = named
    elif re.match(r"(who|whom|whose)\b", q) or " who " in f" {q} ":
        typed = {c for c in cands if c[:1].isupper()}
    elif re.search(r"\b(when|what date|which date|what year|which year|which month|"
                   r"what month|version|release)\b", q):
        typed = {c for c in cands if any(ch.isdigit() for ch in c)
                 or c.lower()[:3] in _MONTHS}
    elif re.search(r"\bhow (many|much|big|long|large|old)\b", q):
        typed = {c for c in cands if any(ch.isdigit() for ch in c)}
    cands = typed or cands
    keyed, labels = _keyed(index, stems)
    cands = (cands - labels) or cands
    return (keyed & cands) or cands


def keyed_values(index: SpanIndex, question: str, stopwords: Iterable[str]) -> set[str]:
    """First chunks of the values of 'key: value' lines whose key shares a word (on its
    first five letters) with the question: the strongest sign that the answer is on screen."""
    from ..words import words

    stop = set(stopwords)
    stems = {w[:5] for w in words(question) if w not in stop}
    asked = set(words(question))
    keyed, _labels = _keyed(index, stems)
    return {c for c in keyed if not set(words(c)) <= asked | stop}


def _keyed(index: SpanIndex, stems: set[str]) -> tuple[set[str], set[str]]:
    """(values of keys naming a stem, every key) over the 'key: value' lines shown."""
    from ..words import words

    keyed: set[str] = set()
    labels: set[str] = set()
    for src, ch in zip(index.sources, index.chunked, strict=True):
        for i, (core, _s, end) in enumerate(ch[:-1]):
            if src.text[end:end + 1] == ":":
                labels.add(core)  # 'Author:' is a label, not an answer
                if {w[:5] for w in words(core)} & stems:
                    keyed.add(ch[i + 1][0])
    return keyed, labels


def _contains(hay: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return any(list(hay[i:i + n]) == list(needle) for i in range(len(hay) - n + 1))


def _trie(words: Sequence[str], names: dict[str, int], root: str) -> str:
    """A GBNF alternation of ``words`` factored as a character trie; each word is followed by
    its continuation rule. Alternatives at any node start with different characters."""
    return _node(sorted(set(words)), 0, names, root)


def _node(words: list[str], depth: int, names: dict[str, int], root: str) -> str:
    alts = []
    ends = [w for w in words if len(w) == depth]
    if ends:
        alts.append(f"{root}{names[ends[0]]}")
    groups: dict[str, list[str]] = {}
    for w in words:
        if len(w) > depth:
            groups.setdefault(w[depth], []).append(w)
    for ch in sorted(groups):
        group = groups[ch]
        # Follow a run of characters shared by the whole group in one literal.
        prefix_end = depth + 1
        while all(len(w) > prefix_end for w in group) and \
                len({w[prefix_end] for w in group}) == 1:
            prefix_end += 1
        lit = gbnf_literal(group[0][depth:prefix_end])
        rest = _node(group, prefix_end, names, root)
        alts.append(f"{lit} {rest}" if " | " not in rest else f"{lit} ({rest})")
    return alts[0] if len(alts) == 1 else " | ".join(alts)


__all__ = ["Grounded", "Source", "SpanIndex", "answer_starts", "chunk_words", "keyed_values"]
