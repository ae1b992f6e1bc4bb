"""The query planner: the question becomes BQL before the model is called (sieve mode).

A careful searcher turns "In March 2019, Guido van Rossum created a PEP whose title mentions
'typing'; what is its title?" into ``"guido van rossum"[author] AND date[2019-03] AND
typing[title]``. A 135M model cannot, so the harness does, from the question and the
collection's own fields and index (nothing here knows any collection):

* quoted strings become phrases (in ``[title]`` or ``[section]`` when that field holds them);
* a word the question says a title "mentions" / "contains" becomes ``word[title]``;
* runs of capitalised words become ``"..."[author]`` phrases, only when the collection has
  authors and the phrase admits a document there (checked with the index, never a list);
* a month and year, a year, "before/after/since/until YEAR" and "between A and B" become
  ``date[..]`` ranges (when the collection has dates);
* a document number (a capitalised word and a number: "PEP 572", "RFC 2119") becomes an
  ``[infobox]`` or ``[title]`` phrase, whichever field admits it;
* everything else only ranks.

These are the *hard* clauses: what the question states. ``plan`` runs conjunctions of them,
most clauses first (a subset only when the whole admits nothing), keeps those that admit
something, and returns the best: the most clauses, then the fewest documents. The question's
other words are added as an OR group that only ranks (kept only when it loses no document).
When no clause admits anything, or the question states none, there is no plan and step 0
ranks the question's words as in the other modes.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..words import words
from .queries import MONTHS, STOPWORDS, _names

# A word right after one of these names what a title holds ("whose title mentions typing").
_TITLE_CUE = re.compile(
    r"\btitle[ds]?\s+(?:mentions?|contains?|includes?|has|with)\s+(?:the\s+words?\s+)?"
    r"[\"'“‘]?([\w][\w.-]*)", re.I)
_QUOTED = re.compile(r"\"([^\"]{2,80})\"|“([^”]{2,80})”"
                     r"|(?:(?<=\s)|^)'([^']{2,80})'(?=[\s,.;:?!)]|$)")
_DOCNUM = re.compile(r"\b([A-Z][A-Za-z]{1,9})[ -]?(\d{1,5})\b(?![.,]?\d)")
_YEAR = r"(1[6-9]\d\d|20\d\d)"


# How sure a kind of clause is to hold for the document asked about (ties between plans).
_WEIGHT = {"id": 5, "author": 4, "date": 3, "title": 2, "section": 2, "phrase": 1}


@dataclass(frozen=True)
class Clause:
    """One constraint the question states, as BQL."""

    bql: str
    kind: str     # phrase, title, author, date, id
    why: str


@dataclass(frozen=True)
class Plan:
    """The planned query, how many documents it admits, and the clauses it is made of."""

    query: str
    admitted: int
    clauses: tuple[Clause, ...]
    why: str
    alternatives: tuple[str, ...] = ()  # looser conjunctions that admit something


def _admits(coll: Any, query: str) -> int:
    """Documents a query admits (strict: no fallback; bm25, k = 1: cheap); -1 if refused."""
    try:
        return int(coll.search(query, k=1, ranker="bm25", strict=True).total)
    except QueryError:
        return -1


def _phrase(ws: list[str]) -> str:
    return f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]


def date_clauses(question: str) -> list[Clause]:
    """The dates a question names, as BQL date atoms."""
    out: list[Clause] = []
    low = question.lower()
    used: set[str] = set()
    m = re.search(rf"\bbetween\s+{_YEAR}\s+and\s+{_YEAR}\b", low)
    if m and m.group(1) <= m.group(2):
        out.append(Clause(f"date[{m.group(1)}..{m.group(2)}]", "date",
                          f"between {m.group(1)} and {m.group(2)}"))
        used.update(m.groups())
    for m in re.finditer(r"\b(" + "|".join(MONTHS) + rf")\s+(?:of\s+)?{_YEAR}\b", low):
        d = f"{m.group(2)}-{MONTHS[m.group(1)]:02d}"
        out.append(Clause(f"date[{d}]", "date", f"in {m.group(1).title()} {m.group(2)}"))
        used.add(m.group(2))
    for m in re.finditer(rf"\b(before|after|since|until|by)\s+{_YEAR}\b", low):
        word, year = m.groups()
        if year in used:
            continue
        rng = {"before": f"<{year}", "after": f">{year}", "since": f">={year}",
               "until": f"<={year}", "by": f"<={year}"}[word]
        out.append(Clause(f"date[{rng}]", "date", f"{word} {year}"))
        used.add(year)
    for m in re.finditer(rf"(?<![\w.-]){_YEAR}(?![\w.-])", question):
        if m.group(1) not in used:
            out.append(Clause(f"date[{m.group(1)}]", "date", f"in {m.group(1)}"))
            used.add(m.group(1))
    return out


def clauses(coll: Any, question: str) -> list[Clause]:
    """The hard clauses of a question (see the module docstring), each checked on the
    collection: it parses and admits at least one document."""
    fields = set(coll.fields)
    out: list[Clause] = []
    taken: set[str] = set()   # name runs already turned into a clause

    def add(c: Clause, most: int = 1 << 30) -> bool:
        if c.bql not in {x.bql for x in out} and 0 < _admits(coll, c.bql) <= most:
            out.append(c)
            return True
        return False

    for m in _QUOTED.finditer(question):
        text = next(g for g in m.groups() if g)
        ws = words(text)
        if not ws or all(w in STOPWORDS for w in ws):
            continue
        ph = _phrase(ws)
        # a quoted title or heading where the field holds it, else the phrase anywhere
        tries = [Clause(f"{ph}[{f}]", f, f"'{text}' in a {f}")
                 for f in ("title", "section") if f in fields]
        # every field that holds it (the conjunctions keep the one that fits the rest)
        if [c for c in tries if add(c)] or add(Clause(ph, "phrase", f"the quoted '{text}'")):
            taken.add(" ".join(ws))
    for m in _TITLE_CUE.finditer(question):
        ws = words(m.group(1))
        if ws and "title" in fields:
            add(Clause(f"{_phrase(ws)}[title]", "title", f"a title mentioning {m.group(1)}"))
            taken.add(" ".join(ws))
    for m in _DOCNUM.finditer(question):
        prefix, num = m.group(1), m.group(2)
        ident = f"{prefix.lower()} {int(num)}"
        if prefix.lower() in STOPWORDS or prefix.lower() in MONTHS or ident in taken:
            continue
        taken.add(ident)
        # An identifier names one document: a phrase that admits several ('Python 3000',
        # 'UTF-8') is a name of something else and only ranks.
        tries = [(f'"{ident}"[{f}]', f) for f in ("infobox", "title") if f in fields]
        if "infobox" in fields:  # 'RFC PR: rust-lang/rfcs#1644': the number alone
            tries.append((f"{int(num)}[infobox]", "infobox"))
        for bql, field in tries:
            if add(Clause(bql, "id", f"the document {prefix} {num} ({field})"), most=1):
                break
    if "author" in fields:
        for name in _person_names(question):
            ws = words(name)
            if len(ws) < 2 or any(w.isdigit() for w in ws) or " ".join(ws) in taken:
                continue
            if all(w in STOPWORDS for w in ws):
                continue
            # Only a name the index holds among authors (checked, never guessed).
            if add(Clause(f"{_phrase(ws)}[author]", "author", f"{name} as an author")):
                taken.add(" ".join(ws))
    if "date" in fields:
        for c in date_clauses(question):
            add(c)
    return out


def _person_names(question: str) -> list[str]:
    """Runs of capitalised words that may name a person: split at a possessive ('Lennart
    Regebro's 2012 PEP' -> 'Lennart Regebro') and a month name, numbers dropped."""
    out: list[str] = []
    for run in _names(question):
        for part in re.split(r"['’]s\b", run):
            toks = [t for t in part.split() if not t.isdigit()]
            cut: list[str] = []
            for t in toks:
                if t.lower() in MONTHS:
                    break
                cut.append(t)
            if len(cut) >= 2:
                out.append(" ".join(cut))
    return list(dict.fromkeys(out))


def plan(coll: Any, question: str, max_clauses: int = 4) -> Plan | None:
    """The best conjunction of the question's hard clauses that admits something, with the
    question's other words as a ranking group; ``None`` when there is none. Every
    conjunction is run (at most 15 strict bm25 searches of k = 1); the looser ones that admit
    something are kept as ``alternatives``, most selective first."""
    found = sorted(clauses(coll, question), key=lambda c: -_WEIGHT.get(c.kind, 1))
    found = found[:max_clauses]
    if not found:
        return None
    best: tuple[int, int, int, tuple[Clause, ...]] | None = None
    admitted: list[tuple[int, int, str]] = []
    for size in range(len(found), 0, -1):
        for combo in itertools.combinations(found, size):
            q = " AND ".join(c.bql for c in combo)
            n = _admits(coll, q)
            if n <= 0:
                continue
            admitted.append((n, -size, q))
            # the most clauses that admit something (a smaller subset loses a stated fact),
            # the surest kinds (an identifier, a name the index holds, a date), the fewest
            # documents
            weight = sum(_WEIGHT.get(c.kind, 1) for c in combo)
            if best is None or (size, weight, -n) > (best[0], best[1], -best[2]):
                best = (size, weight, n, combo)
    if best is None:
        return None
    _size, _weight, n, combo = best
    query = " AND ".join(c.bql for c in combo)
    why = "; ".join(c.why for c in combo)
    rank = _ranking_words(question, combo)
    if n > 1 and rank:
        # Date and field clauses do not score: the question's other words must rank. As an
        # OR group they also select, and drop documents sharing no word with the question
        # (those would rank last anyway); kept unless that leaves nothing.
        ranked = f"{query} AND ({' OR '.join(rank)})"
        if _admits(coll, ranked) > 0:
            query = ranked
    chosen = " AND ".join(c.bql for c in combo)
    alts = tuple(q for _n, _s, q in sorted(admitted) if q != chosen)
    return Plan(query=query, admitted=n, clauses=combo, why=why, alternatives=alts)


def planned_search(tools: Any, question: str, k: int, planned: Plan | None = None
                   ) -> tuple[Any, str, dict[str, Any]] | None:
    """Step 0 of sieve mode: the plan's search through the episode's tools (its ranker, its
    cards), the observation's head line naming the BQL, and what goes in the transcript.
    ``None`` when there is no plan or it admits nothing (step 0 then ranks the words).
    ``planned``: the plan when the caller already made it."""
    coll = getattr(tools, "coll", None)
    if coll is None:
        return None
    p = planned or plan(coll, question)
    if p is None:
        return None
    try:
        res = tools.search(p.query, k)
    except QueryError:
        return None
    if not res.hits or res.fallback:
        return None
    head = f"Results of the search planned from the question ({p.why}): {p.query}"
    return res, head, {"plan": p.query, "plan_why": p.why, "plan_admitted": p.admitted}


def _ranking_words(question: str, combo: tuple[Clause, ...], limit: int = 12) -> list[str]:
    """The question's content words not already in a clause (they rank, never select)."""
    inside = set(words(" ".join(c.bql for c in combo)))
    out = [w for w in dict.fromkeys(words(question))
           if w not in STOPWORDS and w not in inside and not w.isdigit()
           and w not in ("and", "or", "not")]
    return out[:limit]


__all__ = ["Clause", "Plan", "clauses", "date_clauses", "plan", "planned_search"]
