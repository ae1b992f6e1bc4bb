"""Searches built from the question itself, for models too small to write good ones.

A careful person searching a collection writes a few kinds of query: a name from the question
as a phrase (``"Guido van Rossum"[author]``, ``"PEP 557"``), a distinctive pair of words as a
title phrase, the rarest words together, or a word with the month or year the question names
(``android AND date[2023-12]``). ``suggest`` writes those candidates for one question, keeps
the ones that parse on the collection and admit at least one document (and not most of it),
and orders them from the most to the least selective. The grammar then offers exactly these
(minus those already run), so a small model *chooses* a good query instead of inventing one.

Nothing here knows about any particular collection: fields come from the collection, rarity
from its own vocabulary (document frequencies), and names from capitalisation.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..words import words
from .question import MONTHS, STOPWORDS, Question, analyze


@dataclass(frozen=True)
class Suggestion:
    """A query the harness offers, and how many documents it admits."""

    query: str
    admitted: int
    why: str


def _dates(question: str) -> list[str]:
    """BQL date values the question names: 'December 2023' -> 2023-12, '2012' -> 2012 (the
    months and years of ``Question.dates``; ranges are the planner's)."""
    return [d.value for d in analyze(question).dates if re.fullmatch(r"\d{4}(-\d\d)?", d.value)]


# BQL's own operators: a question's 'and' / 'or' / 'not' cannot be searched as words.
OPERATORS = frozenset({"and", "or", "not"})


def search_words(q: Question | str, leave: Collection[str] = ()) -> list[str]:
    """The question's content words a query can hold, in order: not BQL's operators, nor
    the words in ``leave`` (a name already searched for, say)."""
    return [w for w in analyze(q).content if w not in OPERATORS and w not in leave]


def admits(coll: Any, query: str) -> int:
    """Documents a query admits (strict: no fallback; bm25, k = 1: cheap); -1 if refused."""
    try:
        return int(coll.search(query, k=1, ranker="bm25", strict=True).total)
    except QueryError:
        return -1


def doc_freq(coll: Any, word: str) -> int:
    """How common the word is: the number of titles or of section texts holding it, whichever
    is larger (the collection's own FTS5 vocabularies; 0 when none holds it)."""
    from ..store import reads

    return max(reads.term_rows(coll.conn, field, word) for field in ("title", "body"))


def unqualified(title: str) -> str:
    """A title without a '(...)' qualifier at its end ('Wild (2014 film)' -> 'Wild')."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title)


def unqualified_words(title: str) -> list[str]:
    """A title's words without a '(...)' qualifier at its end ('Wild (2014 film)')."""
    return words(unqualified(title))


def titled(coll: Any, ws: list[str], about: list[str] = (),
           said: set[str] | None = None) -> str | None:
    """The document whose title's words are exactly ``ws``, ignoring a '(...)' at its end;
    of several so titled ('Guyana' and 'Guyana'), the one that best matches the words
    ``about``. Titles that hold ``about``'s words are all that is looked at when there are
    any: None then means a page about them only names the thing ('Kansas's congressional
    districts' for how many districts Kansas has), which the caller may read instead.

    With ``said`` (the question's words: a compared thing, which must be the thing itself),
    every title holding the name is looked at, and the plain title comes before a qualified
    one ('Ed Wood' before 'Ed Wood (film)') unless the question says a word of its qualifier
    ('Inside Job (2010 film)' for 'Which is a black-and-white film')."""
    phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
    results: list[Any] = []
    for query in ([f"{phrase}[title] AND ({' OR '.join(about)})"] if about else []) + \
            [f"{phrase}[title]"]:
        try:
            res = coll.search(query, k=8, ranker="bm25", strict=True)
        except QueryError:
            continue
        seen = {r.id for r in results}
        results += [r for r in res.results if r.id not in seen]
        if results and said is None:
            break
    named = [r for r in results
             if unqualified_words(str(r.title)) == ws
             or words(str(r.title)) == ws]
    if said is not None:
        def rank(r: Any) -> int:
            qualifier = set(words(str(r.title))) - set(ws)
            return 0 if qualifier & said else 1 if not qualifier else 2
        named.sort(key=rank)
    if named:
        return str(named[0].id)
    # ... else a place's title with its region after a comma ('Black Hawk Township,
    # Jefferson County, Iowa'), when only one is
    placed = [r for r in results if words(str(r.title).split(",")[0]) == ws]
    return str(placed[0].id) if len(placed) == 1 else None


def content_words(coll: Any, question: str) -> list[str]:
    """The question's words that are not stopwords, rarest in the collection first (words
    the collection lacks are dropped: they cannot select anything)."""
    seen = list(dict.fromkeys(w for w in words(question)
                              if w not in STOPWORDS and (len(w) > 1 or w.isdigit())))
    freq = {w: doc_freq(coll, w) for w in seen}
    kept = [w for w in seen if freq[w] > 0]
    return sorted(kept, key=lambda w: (freq[w], seen.index(w)))


def candidates(coll: Any, question: str) -> list[tuple[str, str]]:
    """(query, why) pairs in the order we would offer them, before checking."""
    fields = set(coll.fields)
    out: list[tuple[str, str]] = []
    rare = content_words(coll, question)
    names = list(analyze(question).names)
    dates = _dates(question) if "date" in fields else []
    rare_set = set(rare[: max(3, len(rare) // 2 + 1)])
    for name in names:
        ws = words(name)
        if not ws or all(w in STOPWORDS for w in ws):
            continue
        phrase = " ".join(ws)
        quoted = f'"{phrase}"' if len(ws) > 1 else phrase
        if len(ws) > 1 and ws[-1].isdigit() and "infobox" in fields:
            # 'PEP 557', 'RFC 2616': a name with a number is how a document identifies
            # itself in its infobox.
            out.append((f"{quoted}[infobox]", f"the identifier {name} in an infobox"))
        if len(ws) > 1 and "author" in fields and not any(w.isdigit() for w in ws):
            out.append((f"{quoted}[author]", f"the name {name} as an author"))
        if len(ws) > 1:
            out.append((quoted, f"the name {name} anywhere"))
        if len(ws) > 1 or ws[0] in rare_set:  # 'Python', 'PEP': too common alone
            out.append((f"{quoted}[title]", f"the name {name} in a title"))
    # Adjacent distinctive words of the question, as a title phrase.
    qwords = words(question)
    for a, b in zip(qwords, qwords[1:], strict=False):
        if a in rare_set and b in rare_set and a != b:
            out.append((f'"{a} {b}"[title]', "two adjacent words of the question in a title"))
            out.append((f'"{a} {b}"', "two adjacent words of the question"))
    if rare:
        out.append((f"{rare[0]}[title]", "the rarest word of the question in a title"))
    if len(rare) >= 2:
        out.append((f"{rare[0]} {rare[1]}", "the two rarest words of the question"))
        out.append((f"{rare[0]}[title] {rare[1]}", "the rarest word in a title, the next "
                                                   "anywhere"))
    if len(rare) >= 3:
        out.append((" ".join(rare[:3]), "the three rarest words of the question"))
    for d in dates:
        for w in [x for x in rare if not x.isdigit()][:2]:  # not the year itself
            out.append((f"{w} date[{d}]", f"a rare word of the question, dated {d}"))
    return list(dict.fromkeys(out))


def suggest(coll: Any, question: str, limit: int = 6, max_share: float = 0.5
            ) -> list[Suggestion]:
    """Checked candidates: each parses and admits 1 to ``max_share`` of the collection;
    most selective first (ties: the order they were written in). Runs each selection once
    (bm25, k = 1, strict: cheap, no embedding)."""
    cap = max(1, int(max_share * max(1, getattr(coll, "documents", 0))))
    good: list[tuple[int, int, Suggestion]] = []
    seen_sets: set[tuple[int, str]] = set()
    for i, (q, why) in enumerate(candidates(coll, question)):
        try:
            res = coll.search(q, k=1, ranker="bm25", strict=True)
        except QueryError:
            continue
        if not 1 <= res.total <= cap:
            continue
        top = res.results[0].id if res.results else ""
        if (res.total, top) in seen_sets:  # the same selection under another spelling
            continue
        seen_sets.add((res.total, top))
        good.append((res.total, i, Suggestion(q, res.total, why)))
    good.sort(key=lambda t: (t[0], t[1]))
    return [s for _, _, s in good[:limit]]


def plain(query: str) -> str:
    """The words of a query only (for the modes without Boolean search)."""
    return " ".join(words(query))


__all__ = ["MONTHS", "OPERATORS", "STOPWORDS", "Suggestion", "admits", "candidates",
           "content_words",
           "doc_freq", "plain", "search_words", "suggest", "titled", "unqualified",
           "unqualified_words"]
