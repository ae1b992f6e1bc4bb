"""Typed answers: what a question asks for, and whether an answer is of that kind.

"What is its title" takes only the whole title of a document read, "who" a name, "when" a
date, "which version" a number; an answer made only of the question's words answers nothing.
The loop refuses an answer of the wrong kind (mid-episode the model is told why; as the final
answer it means no answer): no answer is better than one of the wrong kind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..words import words
from .question import analyze
from .spans import SpanIndex, chunk_words, header_starts


def focus_words(question: str) -> list[str]:
    """The question's content words (what reads and sections are ordered and cut by)."""
    from .question import STOPWORDS

    return [w for w in dict.fromkeys(words(question)) if w not in STOPWORDS]


CONNECTORS = {"van", "von", "de", "der", "da", "la", "le", "di", "del", "du", "bin", "al"}


ASKS_TITLE = re.compile(r"\b(what|which)( is| was)?( its| the| their)? (full )?title\b")


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
    # (as the analysis reads it: 'the method that says in which release ...' asks a method)
    if analyze(question).asks_version and not any(c.isdigit() for c in answer):
        return f"the question asks which version, and {answer!r} has no number"
    toks = answer.replace(",", " ").split()
    if re.match(r"(who|whom)\b", q):
        ok = toks and all((t[:1].isupper() and not any(c.isdigit() for c in t))
                          or t.lower() in CONNECTORS or t.lower() == "and" for t in toks)
        return "" if ok else f"the question asks who, and {answer!r} is not a name"
    # the question's asking word, as the analysis finds it: 'When X moved off CVS, which
    # host ...' asks which, not when
    if analyze(question).target.kind == "when" or \
            re.search(r"\b(what|which) (date|year|day)\b", q):
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
    from .question import STOPWORDS

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


def match_citations(cites: Sequence[Any], read: Sequence[tuple[str, str]],
                    rank_to_id: dict[int, str], cite_of: Any) -> tuple[list[Any], list[Any]]:
    """(valid citations, deduplicated, as read; citations of nothing read). A citation
    names a document (an id, or a rank of the last result) and a section read in the
    episode (case and spacing ignored); ``cite_of(doc, section)`` makes the kept one."""
    good: list[Any] = []
    bad: list[Any] = []
    for c in cites:
        doc = c.doc.strip()
        if doc.isdigit():  # a rank: resolve against the last result
            doc = rank_to_id.get(int(doc), doc)
        norm = " ".join(c.section.split()).casefold()
        hit = next((cite_of(d, s) for d, s in read
                    if d == doc and (s == c.section or " ".join(s.split()).casefold() == norm)),
                   None)
        if hit is None:
            bad.append(c)
        elif hit not in good:
            good.append(hit)
    return good, bad


class Refused(Exception):
    """An answer that fails its checks; the message says why (for the model, or as the
    episode's reason for having no answer)."""


@dataclass
class Checked:
    """An answer that passed: its text (the whole list item or title), its citations, and
    notes for the transcript."""

    text: str
    citations: list[Any]
    notes: dict[str, Any]
    grounded: bool


def check(text: str, cites: list[Any], question: str, titles: tuple[str, ...],
          spans: SpanIndex | None, cite_of: Any, prose_answers: bool = True) -> Checked:
    """Check an answer. Under the span rule (``spans`` given) it must be a span of shown
    text, supported where it was read (``unsupported``), and it is widened to the whole
    list item or title; its citations become the reads that hold it (``cite_of(doc,
    section)`` makes one). Then it must be of the asked type, say more than the question,
    and cite something. Raises ``Refused``."""
    from ..words import words

    text = text.strip()
    notes: dict[str, Any] = {}
    grounded_any = False
    if spans is not None:
        grounded = spans.ground(text)
        if grounded is None or 2 * grounded.chunks < len(chunk_words(text)):
            raise Refused("the answer is not a span of any text shown in this episode; "
                          "copy the answer from what you read")
        if grounded.trimmed:
            notes["answer_trimmed_from"] = text
        as_title = whole_title(grounded.text, question, titles)
        is_title = asks_title(question) and any(words(as_title) == words(t) for t in titles)
        # a whole title asked for is supported by being one (its first word may well be a
        # word of the question: 'Assignment Expressions' for a title mentioning it)
        why = "" if is_title else unsupported(spans, grounded, question,
                                               focus_words(question), prose_answers)
        if why:
            raise Refused(why)
        text = spans.item(grounded)  # 'Tony' -> 'Tony Lownds', the whole list item
        text = whole_title(text, question, titles)
        if text != grounded.text:
            notes["answer_item_of"] = grounded.text
        # Cite what really holds the span: the model's citations that do, else the read
        # sections that do (a span copied from a card only keeps the model's citations).
        holding = [cite_of(d, s) for d, s in grounded.labels]
        kept = [c for c in cites if c in holding]
        if holding and not kept:
            kept = holding[:1]
            notes["citation_from_span"] = True
        cites = kept or cites
        grounded_any = True
    mismatch = type_mismatch(text, question, titles)
    if mismatch:
        raise Refused(mismatch)
    if not says_more(text, question):
        raise Refused(f"the answer {text!r} only repeats words of the question; answer with "
                      "what you read")
    if not cites:
        raise Refused("the answer cites no section read in this episode")
    return Checked(text, list(cites), notes, grounded_any)


__all__ = ["ASKS_TITLE", "Checked", "Refused", "asks_title", "check", "focus_words",
           "match_citations",
           "says_more", "type_mismatch", "unsupported", "whole_title"]
