"""Questions that compare two things the question names.

"Was Ausaf Ali or Steven Perry born first?", "Which film came out earlier, X or Y?", "Were
Scott Derrickson and Ed Wood of the same nationality?", "Are Local H and For Against both from
the United States?": the answer is one of the question's own options, or yes or no, decided
from what was read about each. A 135M model cannot compare two dates, so the engine does,
from the text read about each option:

* ``subjects``: the two things compared, with the document read for each (the planner's
  search found them; ``documents_for``);
* ``value``: what is compared, read from an option's text: a date of birth ('born', 'older',
  'younger'), of death ('died'), or the first date it gives (released, founded, published),
  a nationality or a country (spaCy's NORP and GPE entities; a state or province stands for
  its country, a film's nationality for its country), or the words of a property ('both
  opera composers');
* ``decide``: the option whose value comes first or last, or yes / no for 'same' and 'both'
  ('no' for 'both' only when a text names another nation or state than the one asked), or
  the one value two openings share ('What occupation do A and B share?'); nothing when a
  value is missing on either side (no answer beats a guess).

Nothing here knows a collection or a data set: dates, demonyms and places are read from the
text with the same patterns and pipeline as ``read.py``; a country and its people's name
('United States', 'American') are one value, from countryinfo's table of countries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import QueryError
from ..words import words
from .queries import titled
from .question import MONTHS, STOPWORDS, Question, analyze

_MONTH = {**MONTHS, **{m[:3]: i for m, i in MONTHS.items()}, "sept": 9}
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{3,4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{3,4})\b")
_MONTH_YEAR = re.compile(r"\b([A-Za-z]{3,9})\s+(\d{4})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"(?<![\w.])(1[0-9]\d\d|20\d\d)(?![\w.])")

_BIRTH = ("born", "birth", "older", "oldest", "younger", "youngest", "age")
_DEATH = ("died", "death", "dead", "die")
_SAME = re.compile(r"\b(same|both|also|either)\b")


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


def _attribute(q: Question) -> str:
    """What the question compares: 'birth', 'death', 'date' (the first date a text gives),
    'nationality', 'country', or 'property' (the words after 'both' / 'same')."""
    ws = set(q.words)
    if ws & set(_DEATH):
        return "death"
    if ws & set(_BIRTH):
        return "birth"
    if ws & {"nationality", "citizenship", "citizen", "citizens", "nationalities"}:
        return "nationality"
    if ws & {"country", "countries"}:
        return "country"
    if q.order in ("first", "last"):
        return "date"
    return "property"


_COUNTED = re.compile(r"\b(?:more|fewer|less)\s+([a-z]{3,})\b")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}


def _counted(q: Question) -> str:
    """The plural noun a 'more' / 'fewer' question counts ('more acts' -> 'acts'); '' when
    it counts nothing ('more iconic', 'more recently')."""
    if q.order not in ("more", "less"):
        return ""
    m = _COUNTED.search(q.text.lower())
    return m.group(1) if m and m.group(1).endswith("s") and not m.group(1).endswith("ss") \
        else ""


def count_of(noun: str, text: str) -> int | None:
    """How many of ``noun`` a text says there are: the number written before its first
    mention ('an opera in five acts', 'about 1,600 species'); None when it gives none."""
    stem = re.escape(noun[:-1] if noun.endswith("s") else noun)
    m = re.search(rf"\b(\d[\d,]*|{'|'.join(_NUMBER_WORDS)})\s+(?:[a-z-]+\s+){{0,2}}?"
                  rf"{stem}(?:s|es)?\b", text, re.I)
    if m is None:
        return None
    n = m.group(1).lower().replace(",", "")
    return int(n) if n.isdigit() else _NUMBER_WORDS[n]


def value(q: Question | str, text: str, entities: Any = None) -> Any:
    """The compared value in one option's text (see ``_attribute``); None when the text does
    not give it. ``entities``: spaCy's pipeline (``read.nlp()``) for nationality and country."""
    q = analyze(q)
    what = _attribute(q)
    if what in ("birth", "death", "date"):
        found = dates_in(text)
        if not found:
            return None
        if what == "date":
            return found[0][1]
        # a life span '(5 May 1802 – 19 November 1879)': birth first, death second
        low = text.lower()
        cue = "born" if what == "birth" else "died"
        at = low.find(cue)
        if at >= 0:
            after = [w for a, w in found if a > at]
            if after:
                return after[0]
        span = re.search(r"\(([^()]{4,80})\)", text[:400])
        if span:
            inside = dates_in(span.group(1))
            if what == "birth" and inside:
                return inside[0][1]
            if what == "death" and len(inside) >= 2:
                return inside[1][1]
        return None
    if what in ("nationality", "country"):
        if entities is None:
            return None
        doc = entities(" ".join(text.split()[:80]))
        if what == "nationality":
            ents = [e.text for e in doc.ents if e.label_ == "NORP"] or \
                [e.text for e in doc.ents if e.label_ == "GPE"]
            return _nation(ents[0]) if ents else None
        # a place's country is named last ('a commune in the Vendée department in France'),
        # a state stands for its country ('New Mexico'); a film or a person with no place
        # is of its nationality ('a 1935 British drama film'); a town alone says no country
        first = len(_opening(text))

        def country(places: list[tuple[str, str]], last: bool) -> str | None:
            if not places:
                return None
            value, kind = places[-1] if last else places[0]
            return value if kind == "nation" else demonyms().get(kind, kind)

        # in the opening sentence: a place (the last), else a nationality (the first:
        # 'a 2019 French-Belgian drama film'); then a place anywhere in the opening words
        gpe = [(e.start_char, p) for e in doc.ents if e.label_ == "GPE"
               for p in [_place(e.text)] if p]
        norp = [(e.start_char, p) for e in doc.ents if e.label_ == "NORP"
                for part in re.split(r"[-\s]+(?=[A-Z])", e.text) for p in [_place(part)]
                if p and p[1] == "nation"]
        return (country([p for at, p in gpe if at < first], True)
                or country([p for at, p in norp if at < first], False)
                or country([p for _at, p in gpe], True))
    return None


# Nations of the British Isles that countryinfo (a table of states) folds into one.
_NATIONS = {"england": "english", "scotland": "scottish", "wales": "welsh",
            "britain": "british", "great britain": "british"}


@lru_cache(maxsize=1)
def demonyms() -> dict[str, str]:
    """Folded country names (and their other spellings, 'USA') -> the folded demonym
    ('united states' -> 'american'); each demonym maps to itself. Empty when countryinfo
    is not installed (then 'American' and 'United States' stay different values)."""
    try:
        from countryinfo import CountryInfo
    except ImportError:
        return {}
    out: dict[str, str] = dict(_NATIONS)
    for key, info in CountryInfo.all().items():
        dem = " ".join(words(str(info.get("demonym") or "")))
        if not dem:
            continue
        for name in (key, info.get("name") or "", *(info.get("altSpellings") or [])):
            folded = " ".join(words(str(name)))
            # two-letter codes ('US', 'IN') are words of a sentence too
            if len(folded) > 3:
                out.setdefault(folded, dem)
    for dem in list(out.values()):
        out.setdefault(dem, dem)
    return out


def _nation(name: str) -> str:
    """A demonym or a country, folded so that the two compare: 'American', 'the United
    States' and 'USA' are one value; 'French' and 'french' too."""
    folded = " ".join(words(re.sub(r"^the\s+", "", name.strip(), flags=re.I)))
    return demonyms().get(folded, folded)


def _property_words(q: Question) -> list[str]:
    """'Are Local H and For Against both from the United States?' -> the words after 'both'
    (or 'same') that are not the options' own: what each text must say. 'Which writer was
    from England, A or B?' -> the question's words but the options and the kind asked
    ('writer')."""
    low = q.text.lower()
    m = _SAME.search(low)
    opts = {w for o in (*q.options, *subjects(q)) for w in words(o)}
    if m:
        tail = low[m.end():]
    elif q.options and not q.order:  # 'which is bigger, A or B' compares, no property
        head = re.sub(r"^\s*(?:which|what|who)\s+\w+", "", low)
        tail = head.split(",")[0] if "," in head else head
    else:
        tail = ""
    return [_IRREGULAR.get(w, w) for w in words(tail)
            if w not in STOPWORDS and w not in opts and w not in _HEDGES and len(w) > 1]


# Words that say how a thing is described, not what it is ('Are both X and Y described as a
# genus?', '... considered types of plant?'): a text need not say them.
_HEDGES = frozenset("""described considered classified known called regarded referred labeled
labelled named type types kind kinds sort sorts""".split())
# Plurals that do not share their singular's first five letters ('genera' of 'genus')
_IRREGULAR = {"genera": "genus", "phenomena": "phenomenon", "criteria": "criterion",
              "media": "medium", "women": "woman", "men": "man", "children": "child",
              "people": "person"}


def holds(q: Question | str, text: str) -> bool | None:
    """For 'both X' questions: whether ``text`` says X (every property word, on its first
    five letters; a country named in X is said by its demonym too: 'from the United
    States' by 'an American band'); None when the question names no property."""
    q = analyze(q)
    props = _property_words(q)
    if not props:
        return None
    ws = [_IRREGULAR.get(w, w) for w in words(text)]
    have = {w[:5] for w in ws}
    said = " " + " ".join(ws) + " "
    table = demonyms()
    rest = list(props)
    for n in (3, 2, 1):
        i = 0
        while i + n <= len(rest):
            name = " ".join(rest[i:i + n])
            dem = table.get(name)
            if dem and dem != name:   # a country the property names
                if f" {name} " not in said and f" {dem} " not in said:
                    return False
                del rest[i:i + n]
            else:
                i += 1
    return all(w[:5] in have for w in rest)


@lru_cache(maxsize=1)
def provinces() -> dict[str, str]:
    """Folded names of states and provinces -> their folded country ('michigan' -> 'united
    states'), from countryinfo's table; empty without it."""
    try:
        from countryinfo import CountryInfo
    except ImportError:
        return {}
    out: dict[str, str] = {}
    for key, info in CountryInfo.all().items():
        for name in info.get("provinces") or []:
            folded = " ".join(words(str(name)))
            if len(folded) > 3:
                out.setdefault(folded, key)
    return out


# The nations of Britain are British too: 'English' does not deny 'British'.
_WITHIN = {"british": frozenset({"english", "scottish", "welsh", "british"})}


def _lookup(name: str) -> tuple[str, str] | None:
    """A folded name as a nation, ('american', 'nation') for 'united states', or a state,
    ('nevada', 'united states'); None for anything else."""
    nations, states = demonyms(), provinces()
    if name in nations:
        return nations[name], "nation"
    return (name, states[name]) if name in states else None


def _places(ws: list[str]) -> list[tuple[str, str]]:
    """The nations and states a run of folded words names, in order (``_lookup`` of its
    longest runs of three words or fewer)."""
    out, i = [], 0
    while i < len(ws):
        for n in (3, 2, 1):
            found = _lookup(" ".join(ws[i:i + n])) if len(ws[i:i + n]) == n else None
            if found:
                out.append(found)
                break
        else:
            n = 1
        i += n
    return out


_DIVISIONS = frozenset({"county", "province", "state", "region", "department", "oblast",
                        "prefecture", "district", "governorate"})


def _place(name: str) -> tuple[str, str] | None:
    """What a whole place name is (``_lookup``): 'Tulcea County' a province of Romania,
    'Romania' a nation; None for anything else ('Lake Golovița', 'Paris')."""
    ws = words(re.sub(r"^the\s+", "", name.strip(), flags=re.I))
    if len(ws) > 1 and ws[-1] in _DIVISIONS:
        ws = ws[:-1]
    return _lookup(" ".join(ws))


def _opening(text: str) -> str:
    """The first sentence of ``text`` (of its first 80 words; 'St. Mary's School' is one)."""
    from .read import split_sentences

    found = split_sentences(" ".join(text.split()[:80]))
    return found[0] if found else ""


def contradicts(q: Question | str, text: str, entities: Any = None) -> str:
    """For 'both X' questions whose property names a nation or a state ('both American',
    'located in Michigan'): another one of the same kind that the opening sentence of
    ``text`` names (spaCy's NORP and GPE entities: 'Jordan' in 'Michael Jordan' is none),
    when the text never names the asked one; '' otherwise."""
    q = analyze(q)
    asked = _places(_property_words(q))
    if not asked or entities is None:
        return ""
    said = _places([_IRREGULAR.get(w, w) for w in words(text)])
    opening = [p for e in entities(_opening(text)).ents if e.label_ in ("NORP", "GPE")
               for p in [_place(e.text)] if p]
    for value, kind in asked:
        same = _WITHIN.get(value, frozenset({value}))
        if any(v in same for v, k in said if k == kind):
            continue
        other = next((v for v, k in opening if k == kind and v not in same), "")
        if other:
            return other
    return ""


# 'Do both Possession (1922 Film) and La Boum films have the directors from the same
# country?': the two things joined by 'and' after the opening verb.
_PAIR = re.compile(r"^(?:are|were|is|was|do|does|did|have|has|had)\s+(?:both\s+)?(?:the\s+)?"
                   r"(?:[a-z]+\s*:\s*|(?:movies|films|bands|songs|books|people|cities|towns|"
                   r"places|companies)\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)\s+"
                   r"(?:both|of|from|located|share|have|has|had|in|on|are|were|is|was|born|"
                   r"described|considered|used|types?|kinds?)\b", re.I)


# 'What occupation do Chris Menges and Aram Avakian share?', 'What nationality were social
# anthropologists Alfred Gell and Edmund Leach?': what the two have in common.
_SHARED = re.compile(r"^(?i:what|which)\s+(?:(?i:kind|type|sort)\s+of\s+)?([a-z]+)\s+"
                     r"(?:do|did|does|were|are|was|is)\s+(?:both\s+)?(?:the\s+)?"
                     r"(?:[a-z]+\s+){0,2}?([A-Z][^?]*?)\s+and\s+(?:the\s+)?([A-Z][^?]*?)\s*"
                     r"(?:\b(?:share|shared|have\s+in\s+common|both)\b[^?]*)?\?\s*$")


def shared(q: Question | str) -> tuple[str, str, str] | None:
    """(the noun asked, one subject, the other) for a question about what two things have
    in common; None for any other question."""
    q = analyze(q)
    m = _SHARED.match(q.text.strip())
    if not m or any(len(m.group(i).split()) > 6 for i in (2, 3)):
        return None   # a clause, not a name ('What chef is the owner of a Japanese ...')
    return (m.group(1).lower(), m.group(2).strip(" ,"), m.group(3).strip(" ,"))


def subjects(q: Question | str) -> tuple[str, ...]:
    """The two things a question compares: its options ('A or B'), else for a yes-or-no
    question the two things it joins with 'and' ('Were Scott Derrickson and Ed Wood of the
    same nationality?'), else the first two names it spells."""
    q = analyze(q)
    if q.options:
        return q.options
    common = shared(q)
    if common:
        return common[1:]
    if q.target.kind != "yesno":
        return ()
    m = _PAIR.match(q.text)
    if m:
        a = m.group(1).strip(" ,")
        # a trailing plural common noun is the kind, not the name ('La Boum films')
        b = re.sub(r"\s+(?:films?|movies?|bands?|songs?|books?|albums?)$", "",
                   m.group(2).strip(" ,"), flags=re.I)
        if a[:1].isupper() and b[:1].isupper():
            return (a, b)
    if len(q.names) >= 2:
        return q.names[:2]
    return ()


def is_comparison(q: Question | str) -> bool:
    """A question decided by comparing what two documents say."""
    q = analyze(q)
    if q.options or shared(q):
        return True
    return q.target.kind == "yesno" and len(subjects(q)) >= 2 and \
        bool(_SAME.search(q.text.lower()))


def documents_for(coll: Any, q: Question | str) -> list[tuple[str, str, str]]:
    """(subject, document id, BQL) for each compared thing: the document titled with its
    name (a '(...)' after it allowed), of several the one that best matches the question's
    other words ('Inside Job (2010 film)' for 'Which is a black-and-white film, ...'); else
    its name as a title phrase, else as a phrase anywhere, the best-ranked document
    admitted. Subjects with no document are left out."""
    q = analyze(q)
    out = []
    for name in subjects(q):
        ws = words(name)
        if not ws:
            continue
        phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
        if "title" in coll.fields:
            about = [w for w in q.content if w not in ws and w not in ("and", "or", "not")]
            doc = titled(coll, ws, about, set(q.words) - STOPWORDS)
            if doc is not None:
                out.append((name, doc, f"{phrase}[title]"))
                continue
        for query in ([f"{phrase}[title]"] if "title" in coll.fields else []) + [phrase]:
            try:
                res = coll.search(query, k=5, ranker="bm25", strict=True)
            except QueryError:
                continue
            if res.results:
                # the document titled exactly so, else the best ranked
                exact = [r for r in res.results if words(r.title) == ws]
                out.append((name, str((exact or res.results)[0].id), query))
                break
    return out


# 'Which film has the director who was born later, X or Y?': the compared thing is each
# option's director, one hop away.
_RELATION = re.compile(r"\b(?:has|have|had|whose|with|of|do|did|does)\s+(?:the\s+|a\s+|their\s+)?"
                       r"([a-z]+?)s?\s+(?:who\s+|that\s+)?(?:is\s+|was\s+|were\s+|are\s+)?"
                       r"(?:born|died|younger|older|from|of|share)", re.I)
_NOT_RELATIONS = frozenset({"one", "film", "movie", "song", "album", "band", "book", "person",
                            "people", "same", "both", "it", "they", "he", "she", "who"})


def relation(q: Question | str) -> str:
    """The role a comparison goes through ('director' in 'Which film has the director who
    was born later, X or Y?'); '' when it compares the options themselves."""
    q = analyze(q)
    m = _RELATION.search(q.text)
    if m and m.group(1).lower() not in _NOT_RELATIONS and m.group(1).lower() not in STOPWORDS:
        return m.group(1).lower()
    return ""


def related_name(text: str, role: str, entities: Any) -> str:
    """The person ``text`` names in ``role`` ('directed by Marcos Siega' for 'director'):
    the name nearest after a word sharing the role's first five letters, else the nearest
    before it; '' when there is none."""
    if entities is None or not role:
        return ""
    doc = entities(" ".join(text.split()[:150]))
    stem = role[:5].lower()
    cues = [t.idx for t in doc if t.lower_.startswith(stem)]
    people = [(e.start_char, e.text) for e in doc.ents if e.label_ == "PERSON"]
    if not cues or not people:
        return ""
    cue = cues[0]
    after = [p for p in people if p[0] > cue]
    if after:
        return after[0][1]
    return min(people, key=lambda p: cue - p[0])[1]


def _opening_values(noun: str, text: str, entities: Any) -> list[str]:
    """What the opening sentence of ``text`` says that could answer 'what ``noun``': a
    nationality (NORP), a country, a city (GPE), else the nouns that head a phrase ('director'
    of 'film director'; not nations, which are said by nationality)."""
    doc = entities(_opening(text))
    nations = demonyms()
    if noun in ("nationality", "nationalities", "citizenship"):
        return [e.text for e in doc.ents if e.label_ == "NORP"]
    if noun in ("country", "countries"):
        return [e.text for e in doc.ents if e.label_ == "GPE"
                and " ".join(words(e.text)) in nations]
    if noun in ("city", "cities", "town", "state", "place", "region"):
        return [e.text for e in doc.ents if e.label_ == "GPE"
                and " ".join(words(e.text)) not in nations]
    return [t.lower_ for t in doc if t.pos_ == "NOUN" and t.dep_ != "compound"
            and t.lower_ not in nations]


def in_common(noun: str, text_a: str, text_b: str, entities: Any, asked: set[str]) -> str:
    """The one value of the kind ``noun`` names that both openings say ('director' for 'What
    occupation do Chris Menges and Aram Avakian share?'), not a word of the question; ''
    when there is none, or more than one (no answer beats a guess)."""
    if entities is None:
        return ""
    vb = {v.casefold() for v in _opening_values(noun, text_b, entities)}
    found = list(dict.fromkeys(
        v for v in _opening_values(noun, text_a, entities)
        if v.casefold() in vb and not set(words(v)) <= asked))
    return found[0] if len(found) == 1 else ""


@dataclass(frozen=True)
class Verdict:
    """The engine's answer to a comparison and how it got it."""

    answer: str
    why: str


def decide(q: Question | str, texts: dict[str, str], entities: Any = None) -> Verdict | None:
    """The answer from what was read about each subject (``texts``: subject -> text read):
    an option (first / last date), or 'yes' / 'no' (same value, or both hold a property).
    None when the texts do not settle it."""
    q = analyze(q)
    names = [s for s in subjects(q) if s in texts]
    if len(names) < 2:
        return None
    a, b = names[:2]
    common = shared(q)
    if common:
        found = in_common(common[0], texts[a], texts[b], entities, set(q.words))
        return Verdict(found, f"both {a} and {b} are said to be {found}") if found else None
    what = _attribute(q)
    counted = _counted(q)
    if counted and q.options:
        # 'Which opera has more acts, Don Quichotte or Tosca?': the number each text gives
        ca, cb = count_of(counted, texts[a]), count_of(counted, texts[b])
        if ca is None or cb is None or ca == cb:
            return None
        pick = a if (ca > cb) == (q.order == "more") else b
        return Verdict(pick, f"{a}: {ca} {counted}; {b}: {cb} {counted}")
    if what == "property" or (not q.options and what not in ("nationality", "country")):
        # 'the same level of city', 'the same director': that both texts say the words
        # says nothing of whether their values agree
        if "same" in q.words and not q.options:
            return None
        ha, hb = holds(q, texts[a]), holds(q, texts[b])
        if ha is None or hb is None:
            return None
        if q.options:  # 'Which writer was from England, A or B?': the one that holds
            if ha != hb:
                return Verdict(a if ha else b, f"only {a if ha else b} is said to be so")
            return None
        if ha and hb:
            return Verdict("yes", f"both {a} and {b} are said to be so")
        # a text that does not say it is no proof it is not so; one that names another
        # country or state where the question names one is ('Rémi Lange is a French
        # filmmaker' for 'both American')
        for name in (a, b):
            other = contradicts(q, texts[name], entities)
            if other:
                return Verdict("no", f"{name}: {other}")
        return None
    va, vb = value(q, texts[a], entities), value(q, texts[b], entities)
    if va is None or vb is None:
        return None
    if isinstance(va, When):
        assert isinstance(vb, When)
        ka, kb = _key(va, vb), _key(vb, va)
        if ka == kb:
            return None
        first = a if ka < kb else b
        last = b if first == a else a
        order = q.order or "first"
        if what == "birth" and q.words and {"older", "oldest"} & set(q.words):
            order = "first"
        elif what == "birth" and {"younger", "youngest"} & set(q.words):
            order = "last"
        pick = first if order in ("first", "less") else last
        return Verdict(pick, f"{a}: {va.text}; {b}: {vb.text}")
    same = va == vb
    if q.options:
        return None
    return Verdict("yes" if same else "no", f"{a}: {va}; {b}: {vb}")


class Comparison:
    """One comparison question under way: each subject's document (found by the planner's
    search), the role it goes through when there is one ('the director of X'), what was
    read about each, and the verdict once every subject has been read."""

    def __init__(self, coll: Any, q: Question | str, entities: Any) -> None:
        self.coll = coll
        self.q = analyze(q)
        self.entities = entities
        self.role = relation(self.q)
        found = documents_for(coll, self.q)
        self.queries = [query for _s, _d, query in found]
        self.doc_of = {name: doc for name, doc, _q in found}   # subject -> document to read
        self.text_of: dict[str, str] = {}                       # subject -> what answers
        self.hopped: set[str] = set()

    def query(self) -> str:
        """One search that shows every subject's card (step 0)."""
        return " OR ".join(self.queries)

    def leads(self) -> list[str]:
        """Documents still to read, in the subjects' order."""
        return [d for s, d in self.doc_of.items() if s not in self.text_of]

    def on_read(self, doc: str, text: str) -> None:
        """What a read of ``doc`` says for its subject; through the role, the document of
        the person it names in that role becomes the subject's next read."""
        for subject, d in self.doc_of.items():
            if d != doc or subject in self.text_of:
                continue
            if self.role and subject not in self.hopped:
                self.hopped.add(subject)
                who = related_name(text, self.role, self.entities)
                target = _titled(self.coll, who) if who else None
                if target and target != doc:
                    self.doc_of[subject] = target
                else:
                    self.text_of[subject] = ""   # the role's person is not in the collection
                continue
            self.text_of[subject] = text

    def verdict(self) -> Verdict | None:
        return decide(self.q, {s: t for s, t in self.text_of.items() if t}, self.entities)

    # -- the route interface the loop drives (shared with bridge.Bridge) -------------------
    stuck = ""        # a comparison never breaks: a side left unread is an unknown value
    answer_doc = ""   # ... and is not answered by choosing from one document

    def prefer(self, doc: str, sections: list[str]) -> list[str]:
        """A compared thing is read at its best section: ``sections`` unchanged."""
        return sections

    def question(self) -> str:
        """What a read must answer: each compared thing is read for the question itself."""
        return self.q.text

    def why(self) -> str:
        return "it compares " + " and ".join(self.doc_of)

    def settled(self) -> Verdict | None:
        """The answer once every subject was read (None: not settled)."""
        return None if self.leads() else self.verdict()

    def sources(self) -> set[str]:
        """The documents the answer rests on (its citations)."""
        return set(self.doc_of.values())


def _titled(coll: Any, name: str) -> str | None:
    """The document titled ``name`` (its words), else the best one with it in its title."""
    ws = words(name)
    if not ws or "title" not in coll.fields:
        return None
    phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
    try:
        res = coll.search(f"{phrase}[title]", k=5, ranker="bm25", strict=True)
    except QueryError:
        return None
    exact = [r for r in res.results if words(r.title) == ws]
    got = exact or list(res.results)
    return str(got[0].id) if got else None


def _key(x: When, other: When) -> tuple[int, int, int]:
    """A date's sort key, as precise as both dates are (a bare year against a full date
    compares years only)."""
    if not (x.month and other.month):
        return (x.year, 0, 0)
    if not (x.day and other.day):
        return (x.year, x.month, 0)
    return (x.year, x.month, x.day)


__all__ = ["Comparison", "Verdict", "When", "contradicts", "count_of", "dates_in", "decide",
           "demonyms", "documents_for", "holds", "in_common", "is_comparison", "provinces",
           "related_name", "relation", "shared", "subjects", "value"]
