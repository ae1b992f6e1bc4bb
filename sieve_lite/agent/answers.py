"""Typed answers: what a question asks for, and whether an answer is of that kind.

"What is its title" takes only the whole title of a document read, "who" a name, "when" a
date, "which version" a number; an answer made only of the question's words answers nothing.
The loop refuses an answer of the wrong kind (mid-episode the model is told why; as the final
answer it means no answer): no answer is better than one of the wrong kind.
"""

from __future__ import annotations

import re
from typing import Any

from ..words import words
from .spans import SpanIndex, chunk_words, header_starts


def focus_words(question: str) -> list[str]:
    """The question's content words (what reads and sections are ordered and cut by)."""
    from .queries import STOPWORDS

    return [w for w in dict.fromkeys(words(question)) if w not in STOPWORDS]


CONNECTORS = {"van", "von", "de", "der", "da", "la", "le", "di", "del", "du", "bin", "al"}


ASKS_TITLE = re.compile(r"\b(what|which)( is| was)?( its| the| their)? (full )?title\b")
ASKS_VERSION = re.compile(r"\b(what|which) (python )?(version|release)\b")


def asks_title(question: str) -> bool:
    """'What is its title?': the answer must be the whole title of a document read."""
    return bool(ASKS_TITLE.search(" ".join(words(question))))


def whole_title(answer: str, question: str, titles: tuple[str, ...]) -> str:
    """For 'what is its title': a span inside one read document's title is that whole title
    (a small model stops early: 'Postfix' for 'Postfix type declarations')."""
    if not asks_title(question):
        return answer
    norm = f" {' '.join(words(answer))} "
    hits = [t for t in dict.fromkeys(titles) if norm.strip() and norm in f" {' '.join(words(t))} "]
    return hits[0] if len(hits) == 1 else answer


def type_mismatch(answer: str, question: str, titles: tuple[str, ...] = ()) -> str:
    """Why an answer is not of the type the question asks for ('' when it is): a 'who'
    answer is a name (capitalised words, no digits); a 'when' answer has a number or a
    month; a 'what is its title' answer is the whole title of a document read (``titles``);
    a 'which version' answer has a number. Prefer no answer to one of the wrong kind."""
    q = " ".join(words(question))
    if asks_title(question):
        norm = " ".join(words(answer))
        ok = any(norm == " ".join(words(t)) for t in titles)
        return "" if ok else f"the question asks for a title, and {answer!r} is not one"
    if ASKS_VERSION.search(q) and not any(c.isdigit() for c in answer):
        return f"the question asks which version, and {answer!r} has no number"
    toks = answer.replace(",", " ").split()
    if re.match(r"(who|whom)\b", q):
        ok = toks and all((t[:1].isupper() and not any(c.isdigit() for c in t))
                          or t.lower() in CONNECTORS or t.lower() == "and" for t in toks)
        return "" if ok else f"the question asks who, and {answer!r} is not a name"
    if re.match(r"when\b", q) or re.search(r"\b(what|which) (date|year|day)\b", q):
        months = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                  "dec")
        ok = any(c.isdigit() for c in answer) or any(w[:3] in months for w in words(answer))
        return "" if ok else f"the question asks when, and {answer!r} is not a date"
    return ""


def says_more(answer: str, question: str) -> bool:
    """True when the answer holds a word that the question does not (an answer made only
    of the question's words answers nothing)."""
    asked = set(words(question))
    return any(w not in asked for w in words(answer))


def unsupported(spans: SpanIndex, grounded: Any, question: str, focus: list[str],
                prose_answers: bool = True) -> str:
    """Why a grounded span does not answer the question ('' when it may): it must be the
    value of a 'key: value' line whose key names what is asked, or have some of the
    question's words (``focus``) near it where it was read. A span with nothing of the
    question around it is a guess: no answer is better. Without ``prose_answers`` (small
    models) only the header line's value is accepted."""
    from .queries import STOPWORDS

    src = spans.sources[grounded.source] if grounded.source >= 0 else None
    if src is None:
        return ""
    one = SpanIndex([src], max_chunks=1 << 30)
    first = chunk_words(grounded.text)[:1]
    if first and first[0] in header_starts(one, question, STOPWORDS):
        return ""
    if not prose_answers:
        return ("only the value of a header line that names what the question asks for "
                "is accepted from a model this small")
    if spans.on_key_line(grounded):
        return "that is the value of a header line that is not what the question asks for"
    if spans.support(grounded, {w[:5] for w in focus}) >= 1:
        return ""
    return ("nothing the question asks about is near that text; answer with the words "
            "next to the question's own words in what you read")


__all__ = ["ASKS_TITLE", "asks_title", "focus_words", "says_more", "type_mismatch", "unsupported",
           "whole_title"]
