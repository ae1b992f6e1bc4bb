"""What a text says of a life: dates, and when and where a person was born or died.

A biography opens with its life span, '(8 October 1876 – 30 March 1949)', or says 'born 11
May 1982 in Edmond'. Choosing among such a read's dates, the shipped 135M model took the
death for the birth as readily as not, so the engine reads them (like a header line's
value): ``life_date`` and ``life_place`` for the text, ``asked_fact`` for the question ('When
was Prince Harald of Denmark born?', 'Where did J. Charles Haydon die?', 'What is the date of
death of Z?'); comparisons read their dates here too.

Dates are read with patterns only ('11 May 1982', 'September 7, 1988', '2010-03-04', 'May
1990', a bare year); places as the capitalised words after 'in' or 'at' ('Frederick,
Maryland'). Nothing here knows a collection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .question import MONTHS, Question

_MONTH = {**MONTHS, **{m[:3]: i for m, i in MONTHS.items()}, "sept": 9}
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{3,4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{3,4})\b")
_MONTH_YEAR = re.compile(r"\b([A-Za-z]{3,9})\s+(\d{4})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"(?<![\w.])(1[0-9]\d\d|20\d\d)(?![\w.])")


@dataclass(frozen=True)
class When:
    """A date read from text, comparable (year, month, day; 0 for unknown parts)."""

    year: int
    month: int = 0
    day: int = 0
    text: str = ""


_GLUED = re.compile(r"\b(1[5-9]\d\d|20\d\d)(\d{1,2})(?= (?:January|February|March|April|May|"
                    r"June|July|August|September|October|November|December)\b)")


def dates_in(text: str) -> list[tuple[int, When]]:
    """(offset, date) of every date the text gives, in order: '11 May 1982', 'September 7,
    1988', '2010-03-04', 'May 1990', a bare year."""
    found: list[tuple[int, int, When]] = []
    taken: list[tuple[int, int]] = []
    # a year run into the next date's day, its dash lost ('21 March 192011 January 2010');
    # the space put back moves later offsets by one, which no caller's cue notices
    text = _GLUED.sub(r"\1 \2", text)

    def add(m: re.Match[str], y: str, mo: int, d: str) -> None:
        if any(a <= m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        found.append((m.start(), m.end(), When(int(y), mo, int(d or 0), m.group(0))))

    for m in _ISO.finditer(text):
        add(m, m.group(1), int(m.group(2)), m.group(3))
    for m in _DAY_MONTH_YEAR.finditer(text):
        mo = _MONTH.get(m.group(2).lower())
        if mo:
            add(m, m.group(3), mo, m.group(1))
    for m in _MONTH_DAY_YEAR.finditer(text):
        mo = _MONTH.get(m.group(1).lower())
        if mo:
            add(m, m.group(3), mo, m.group(2))
    for m in _MONTH_YEAR.finditer(text):
        mo = _MONTH.get(m.group(1).lower())
        if mo:
            add(m, m.group(2), mo, "")
    for m in _YEAR.finditer(text):
        add(m, m.group(1), 0, "")
    return [(a, w) for a, _b, w in sorted(found)]


def life_date(text: str, which: str, span: bool = True) -> When | None:
    """The date of birth (``which`` 'birth') or death ('death') a text gives: the first date
    after 'born' / 'died', else (``span``: the text opens about the person) the first or
    second date of a life span in parentheses near the start; None when it gives none."""
    found = dates_in(text)
    if not found:
        return None
    cue = re.search(r"\bborn\b" if which == "birth" else r"\bdied\b", text, re.I)
    if cue:
        after = [w for a, w in found if a > cue.start()]
        if after:
            return after[0]
    paren = re.search(r"\(([^()]{4,80})\)", text[:400]) if span else None
    if paren:
        inside = dates_in(paren.group(1))
        if which == "birth" and inside:
            return inside[0][1]
        if which == "death" and len(inside) >= 2:
            return inside[1][1]
    return None


# A place: capitalised words ('Mrauk U', 'Stratford-upon-Avon'), a particle between them
# ('Frankfurt am Main'), then ', Region' parts ('Frederick, Maryland')
_PLACE_WORD = r"[A-Z][\w'’.-]*"
_PLACE = (rf"{_PLACE_WORD}(?:\s+(?:(?:am|an|de|del|der|di|la|le|upon|on|of)\s+)?{_PLACE_WORD})*"
          rf"(?:,\s+{_PLACE_WORD}(?:\s+{_PLACE_WORD})*)*")
_CUE = {"birth": r"\bborn\b", "death": r"\b(?:died|death)\b"}


def life_place(text: str, which: str) -> tuple[str, int] | None:
    """Where a text says its person was born (``which`` 'birth') or died ('death'), and
    where in the text that is: the place after 'in' or 'at' within the clause after 'born'
    / 'died' (dates and parentheses may stand between: 'born 8 October 1876 in Frederick,
    Maryland'); None when it says none."""
    for cue in re.finditer(_CUE[which], text, re.I):
        clause = re.split(r"[;]|\.\s|\band\b|\bdied\b|\bborn\b",
                          text[cue.end():cue.end() + 120])[0]
        m = re.search(rf"\b(?:in|at)\s+(?:the\s+)?({_PLACE})", clause)
        if m:
            place = m.group(1).rstrip(".,")
            if not re.fullmatch(r"\d.*|(?:January|February|March|April|May|June|July|August|"
                                r"September|October|November|December)\b.*", place):
                return place, cue.end() + m.start(1)
    return None


# 'When was X born?', 'Where did X die?', 'What is the date of birth of X?', 'What is the
# place of death of X?' ('Where was the place of burial ...' is not a life fact)
_WHEN_WHERE = re.compile(r"^\s*(when|where)\s+(?:was|is|did|does)\s+(?:the\s+place\s+of\s+"
                         r"(birth|death)\s+of\s+)?(.+?)\s+(born|died|die)?\s*\??\s*$", re.I)
_OF_LIFE = re.compile(r"^\s*(?:what|when|where|which)\b.*?\b(?:(date|year|place|city|town|"
                      r"country)\s+of\s+(birth|death)|(birth)(place))\s+of\s+(.+?)\s*\??\s*$",
                      re.I)
# words a person's name may hold in lower case ('Prince Harald of Denmark')
_PARTICLES = frozenset("of the de del der di da von van la le du al bin".split())


@dataclass(frozen=True)
class Fact:
    """What a question asks of a life: ``which`` ('birth' or 'death'), ``what`` ('date' or
    'place'), and ``who`` (the person, as the question names them)."""

    which: str
    what: str
    who: str

    def named(self) -> bool:
        """Whether ``who`` is a name ('Prince Harald of Denmark'), not a role still to go
        through ('Bill Patterson's father', 'the director of film Dawn')."""
        ws = self.who.split()
        return bool(ws) and ws[0][:1].isupper() and not re.search(r"['’]s?\b", self.who) \
            and all(w[:1].isupper() or w[:1].isdigit() or w[:1] in "(\"'" or
                    w.lower() in _PARTICLES for w in ws)

    def said_in(self, sentence: str) -> bool:
        """Whether a sentence names the person (one of the name's own words: 'Harald')."""
        own = [w for w in re.findall(r"\w+", self.who) if len(w) > 2 and w[0].isupper()]
        low = sentence.lower()
        return any(re.search(rf"\b{re.escape(w.lower())}\b", low) for w in own)


def asked_fact(q: Question) -> Fact | None:
    """What the question asks when it asks when or where someone was born or died; None
    for any other question."""
    m = _WHEN_WHERE.match(q.text)
    if m and (m.group(2) or m.group(4)):
        if m.group(2):   # 'Where was the place of death of X?'
            return Fact(m.group(2).lower(), "place", m.group(3))
        which = "birth" if m.group(4).lower() == "born" else "death"
        return Fact(which, "date" if m.group(1).lower() == "when" else "place", m.group(3))
    m = _OF_LIFE.match(q.text)
    if m:
        noun, which = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        what = "date" if noun.lower() in ("date", "year") else "place"
        return Fact(which.lower(), what, m.group(5))
    return None


__all__ = ["Fact", "When", "asked_fact", "dates_in", "life_date", "life_place"]
