"""Questions that compare two things the question names.

"Was Ausaf Ali or Steven Perry born first?", "Which film came out earlier, X or Y?", "Were
Scott Derrickson and Ed Wood of the same nationality?", "Are Local H and For Against both from
the United States?": the answer is one of the question's own options, or yes or no, decided
from what was read about each. A 135M model cannot compare two dates, so the engine does,
from the text read about each option:

* ``subjects``: the two things compared, with the document read for each (the planner's
  search found them; ``documents_for``);
* ``value``: what is compared, read from an option's text: a date of birth ('born', 'older',
  'younger'), of death ('died'), or the first date it gives (released, founded, published:
  ``lives.py``), a height, length or population ('higher', 'longer', 'more populous': a
  number in one unit), a nationality or a country (spaCy's NORP and GPE entities; a state or
  province stands for its country, a film's nationality for its country: ``places.py``), or
  the words of a property ('both opera composers');
* ``decide``: the option whose value comes first or last, or yes / no for 'same' and 'both'
  ('no' for 'both' only when a text names another nation or state than the one asked), or
  the one value two openings share ('What occupation do A and B share?'), else the one
  name both texts say ('Which NFL team did both A and B play for?', 'What do A and B have
  in common?'); nothing when a value is missing on either side or two could answer (no
  answer beats a guess).

Nothing here knows a collection or a data set: dates, demonyms and places are read from the
text with the same patterns and pipeline as ``read.py``; a country and its people's name
('United States', 'American') are one value, from countryinfo's table of countries. A
compared thing whose document gives no date or number is read under another title with its
name, once ('Keith Bostic', then 'Keith Bostic (American football)').
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..words import words
from .lives import When, dates_in, life_date
from .places import WITHIN, demonyms, nation, place, places_in, provinces
from .queries import search_words, titled
from .question import STOPWORDS, Question, analyze, singular
from .roles import said_in_role

_BIRTH = ("born", "birth", "older", "oldest", "younger", "youngest", "age")
_DEATH = ("died", "death", "dead", "die")
_SAME = re.compile(r"\b(same|both|also|either)\b")
MORE_HELD = 1   # words of the property one option's text must say more than the other's


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
    if q.options and ws & _POPULATION:
        return "population"
    if q.options and ws & set(_EXTENT):
        return "extent"
    return "property"


# 'Which town has a greater population, A or B?', 'Which mountain is higher, A or B?': a
# number each text gives, compared in one unit.
_POPULATION = frozenset({"population", "populous", "populated", "inhabitants", "residents"})
# the question's word -> the words that mark that measure in a text
_HEIGHT_CUES = ("elevation", "height", "tall", "high", "summit", "altitude", "rises")
_EXTENT = {**{w: _HEIGHT_CUES for w in ("higher", "highest", "taller", "tallest", "height",
                                          "elevation")},
           **{w: ("long", "length", "runs", "flows", "span") for w in ("longer", "longest",
                                                                        "length")},
           **{w: ("deep", "depth") for w in ("deeper", "deepest", "depth")}}
_METRES = {"m": 1.0, "metre": 1.0, "meter": 1.0, "ft": 0.3048, "feet": 0.3048,
           "foot": 0.3048, "km": 1000.0, "kilometre": 1000.0, "kilometer": 1000.0,
           "mi": 1609.344, "mile": 1609.344}
# a number and its unit of length; not money ('$5 m') nor part of a larger number
_LENGTH = re.compile(r"(?<![$£€\d.,])(\d[\d,]*(?:\.\d+)?)\s*(?:-\s*)?"
                     r"(km|kilomet(?:re|er)s?|mi|miles?|m|met(?:re|er)s?|ft|feet|foot)\b(?![²³])")
_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\d.,])\d+(?![\d,.])")


def _number(digits: str) -> float:
    return float(digits.replace(",", ""))


def extent_of(text: str, cues: tuple[str, ...] = _HEIGHT_CUES) -> float | None:
    """A height or length a text gives, in metres ('7,885 m', '25,869 ft', '1,200
    kilometres'): the largest one said next to a word of the measure ('an elevation of
    7295 m'), else the largest of all (a mountain's page also gives its ridges and
    prominence, which are smaller); None when it gives none."""
    found, cued = [], []
    for m in _LENGTH.finditer(text):
        unit = m.group(2).lower()
        unit = "feet" if unit == "feet" else unit.rstrip("s")
        metres = _number(m.group(1)) * _METRES.get(unit, 1.0)
        found.append(metres)
        near = " ".join(words(text[max(0, m.start() - 40):m.end() + 20]))
        if any(re.search(rf"\b{c}", near) for c in cues):
            cued.append(metres)
    return max(cued or found) if found else None


def population_of(text: str) -> float | None:
    """The population a text gives: the first number after 'population' in its sentence
    that is not a year ('As of the 2010 census, the population was 3,001'), else a number
    of 'inhabitants' or 'residents'; None when it gives none."""
    for m in re.finditer(r"\bpopulation\b", text, re.I):
        stretch = re.split(r"(?<=[a-z)])\.\s", text[m.end():m.end() + 120])[0]
        for n in _NUMBER.finditer(stretch):
            d = n.group(0)
            if "," not in d and len(d) == 4 and 1600 <= int(d) <= 2100:
                continue   # a census year
            return _number(d)
    m = re.search(r"(\d{1,3}(?:,\d{3})+|\d+)\s+(?:inhabitants|residents)\b", text)
    return _number(m.group(1)) if m else None


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
    # ('more residents' is a population, 'more populous' no count at all)
    return m.group(1) if m and m.group(1).endswith("s") and m.group(1) not in _POPULATION \
        and not m.group(1).endswith(("ss", "ous")) else ""


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
        return life_date(text, what)
    if what == "population":
        return population_of(text)
    if what == "extent":
        cues = next(_EXTENT[w] for w in q.words if w in _EXTENT)
        return extent_of(text, cues)
    if what in ("nationality", "country"):
        if entities is None:
            return None
        # a compound whose hyphen lost its word ('a 2007 Italian- American film') is one
        text = re.sub(r"(?<=[a-z])- (?=[A-Z])", "-", text)
        doc = entities(" ".join(text.split()[:80]))
        if what == "nationality":
            ents = [e.text for e in doc.ents if e.label_ == "NORP"] or \
                [e.text for e in doc.ents if e.label_ == "GPE"]
            return nation(ents[0]) if ents else None
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
               for p in [place(e.text)] if p]
        norp = [(e.start_char, p) for e in doc.ents if e.label_ == "NORP"
                for part in re.split(r"[-\s]+(?=[A-Z])", e.text) for p in [place(part)]
                if p and p[1] == "nation"]
        return (country([p for at, p in gpe if at < first], True)
                or country([p for at, p in norp if at < first], False)
                or country([p for _at, p in gpe], True))
    return None


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
        parts = head.split(",")
        # the property before the options ('Which writer was from England, A or B?'), or
        # after them ('Which director, A or B, is known for writing ...?')
        tail = parts[0] if parts[0].strip() else " ".join(parts[2:])
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


def held(q: Question | str, text: str) -> tuple[int, int] | None:
    """How many of the question's property words ``text`` says, of how many (on their first
    five letters; a country named in the property is said by its demonym too: 'from the
    United States' by 'an American band'); None when the question names no property."""
    q = analyze(q)
    props = _property_words(q)
    if not props:
        return None
    ws = [_IRREGULAR.get(w, w) for w in words(text)]
    have = {w[:5] for w in ws}
    said = " " + " ".join(ws) + " "
    table = demonyms()
    rest = list(props)
    total = got = 0
    for n in (3, 2, 1):
        i = 0
        while i + n <= len(rest):
            name = " ".join(rest[i:i + n])
            dem = table.get(name)
            if dem and dem != name:   # a country the property names: one thing said
                total += 1
                got += f" {name} " in said or f" {dem} " in said
                del rest[i:i + n]
            else:
                i += 1
    return got + sum(w[:5] in have for w in rest), total + len(rest)


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
    asked = places_in(_property_words(q))
    if not asked or entities is None:
        return ""
    said = places_in([_IRREGULAR.get(w, w) for w in words(text)])
    opening = [p for e in entities(_opening(text)).ents if e.label_ in ("NORP", "GPE")
               for p in [place(e.text)] if p]
    for value, kind in asked:
        same = WITHIN.get(value, frozenset({value}))
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


# 'Which NFL team did both Don Looney and DeSean Jackson play for?', 'What do Susan Stafford
# and Vanna White have in common?', 'What country of origin does The Late Late Show and Craig
# Kilborn have in common?': a noun of any length, or none, and any verb after the two names,
# when the question says that the two have it in common.
_COMMON = re.compile(r"^(?i:what|which)\s+(?:(?i:kind|type|sort)\s+of\s+)?"
                     r"((?:[A-Za-z]+\s+){0,3}?)(?:do|did|does|were|are|was|is)\s+"
                     r"(?:both\s+)?(?:the\s+)?([A-Z0-9][^?]*?)\s+and\s+(?:the\s+)?"
                     r"([A-Z0-9+][^?]*?)\s*\?\s*$")
_COMMON_CUE = re.compile(r"\b(?:both|in\s+common|share|shared)\b", re.I)


def _a_name(name: str) -> bool:
    """Whether ``name`` reads as a name, not a clause ('the owner of a Japanese restaurant
    in the Tribeca neighborhood'): six words at most, or up to nine of which at most two
    are lower-case ('Dan Law Field at Rip Griffin Park')."""
    ws = name.split()
    return len(ws) <= 6 or (len(ws) <= 9 and sum(w[:1].islower() for w in ws) <= 2)


def shared(q: Question | str) -> tuple[str, str, str] | None:
    """(the noun asked, one subject, the other) for a question about what two things have
    in common; None for any other question. The noun is the head of the phrase asked
    ('team' of 'NFL team', 'country' of 'country of origin'), '' when the question names
    none ('What do A and B have in common?')."""
    q = analyze(q)
    text = q.text.strip()
    cue = bool(_COMMON_CUE.search(text))
    m = _SHARED.match(text)
    # ('What year did A and B marry?' asks when, not what the two share)
    if m and all(len(m.group(i).split()) <= 6 for i in (2, 3)) and \
            (cue or all(_bare(m.group(i)) == m.group(i).strip(" ,") for i in (2, 3))):
        return (m.group(1).lower(), _bare(m.group(2)), _bare(m.group(3)))
    m = _COMMON.match(text)
    if not m or not cue:
        return None
    a, b = _bare(m.group(2)), _bare(m.group(3))
    if not (_a_name(a) and _a_name(b)):
        return None   # a clause, not a name ('What chef is the owner of a Japanese ...')
    noun = m.group(1).split(" of ")[0].split()
    return (noun[-1].lower() if noun else "", a, b)


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
        a = _bare(m.group(1))
        # a trailing plural common noun is the kind, not the name ('La Boum films')
        b = _bare(re.sub(r"\s+(?:films?|movies?|bands?|songs?|books?|albums?)$", "",
                         m.group(2).strip(" ,"), flags=re.I))
        if a[:1].isupper() and (b[:1].isupper() or b[:1].isdigit()):
            return (a, b)
    if len(q.names) >= 2:
        return q.names[:2]
    return ()


def _bare(name: str) -> str:
    """A subject's name without what the question says about it: trailing lower-case words
    ('Fuding the same level', 'Affiliated Managers Group based'), a place it is from
    ('Ruggero Deodato from Italy') and a nationality before it ('Mexican Alejandro
    Springall')."""
    ws = name.strip(" ,").split()
    while len(ws) > 1 and not (ws[-1][:1].isupper() or ws[-1][:1].isdigit()
                               or ws[-1][:1] in "(\"'"):
        ws.pop()
    if "from" in ws[1:-1]:
        at = ws.index("from", 1)
        if place(" ".join(ws[at + 1:])):
            ws = ws[:at]
    if len(ws) >= 3 and " ".join(words(ws[0])) in set(demonyms().values()):
        ws = ws[1:]
    return " ".join(ws).strip(" ,")


def is_comparison(q: Question | str) -> bool:
    """A question decided by comparing what two documents say."""
    q = analyze(q)
    if q.options or shared(q):
        return True
    return q.target.kind == "yesno" and len(subjects(q)) >= 2 and \
        bool(_SAME.search(q.text.lower()))


def documents_for(coll: Any, q: Question | str) -> list[tuple[str, str, str]]:
    """(subject, document id, BQL) for each compared thing: the one document carrying its
    number ('PEP 8'); else the document titled with its name (a '(...)' after it allowed),
    of several the one that best matches the question's other words ('Inside Job (2010
    film)' for 'Which is a black-and-white film, ...'); else its name as a title phrase,
    else as a phrase anywhere, the best-ranked document admitted. Subjects with no document
    are left out."""
    return [(name, doc, query) for name, doc, query, _numbered in _found(coll, analyze(q))]


def _found(coll: Any, q: Question) -> list[tuple[str, str, str, bool]]:
    """``documents_for``, each with whether its document was found by its number."""
    out = []
    for name in subjects(q):
        ws = words(name)
        if not ws:
            continue
        numbered = _numbered(coll, name)
        if numbered is not None:
            out.append((name, *numbered, True))
            continue
        phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
        if "title" in coll.fields:
            about = search_words(q, ws)
            doc = titled(coll, ws, about, set(q.words) - STOPWORDS)
            if doc is not None:
                out.append((name, doc, f"{phrase}[title]", False))
                continue
        for query in ([f"{phrase}[title]"] if "title" in coll.fields else []) + [phrase]:
            try:
                res = coll.search(query, k=5, ranker="bm25", strict=True)
            except QueryError:
                continue
            if res.results:
                # the document titled exactly so, else the best ranked
                exact = [r for r in res.results if words(r.title) == ws]
                out.append((name, str((exact or res.results)[0].id), query, False))
                break
    return out


def _numbered(coll: Any, name: str) -> tuple[str, str] | None:
    """(document id, BQL) when ``name`` is a document's number ('PEP 8') that one document
    of the collection carries in its header or title, as the planner checks it; None
    otherwise."""
    nums = analyze(name).docnums
    if len(nums) != 1 or " ".join(words(name)) != f"{nums[0][0].lower()} {int(nums[0][1])}":
        return None
    ident = " ".join(words(name))
    for field in ("infobox", "title"):
        if field not in coll.fields:
            continue
        query = f'"{ident}"[{field}]'
        try:
            res = coll.search(query, k=2, ranker="bm25", strict=True)
        except QueryError:
            continue
        if len(res.results) == 1:   # a number that admits several names something else
            return str(res.results[0].id), query
    return None


def dated(coll: Any, doc: str) -> When | None:
    """A document's own date (the collection's date column: a PEP's 'Created'), or None."""
    got = dates_in(str((coll.document(doc) or {}).get("date") or ""))
    return got[0][1] if got else None


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
    the name the text gives in that role (``roles.said_in_role``: 'directed by', 'a film
    by'), else (with spaCy's ``entities``) the person nearest after a word sharing the
    role's first five letters, else the nearest before it; '' when there is none."""
    if not role:
        return ""
    stem = role[:5].lower()
    # 'directed by Ertem Eğilmez' (a name the entity model may not know), 'a drama film by
    # Santosh Sivan' (a film's maker is its director), anywhere in the text
    said = said_in_role(text, role)
    if said:
        return said[0]
    if entities is None:
        return ""
    doc = entities(" ".join(text.split()[:150]))
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
    occupation do Chris Menges and Aram Avakian share?'), not a word of the question, else
    the one name both texts say (``_common_names``: 'Wheel of Fortune' for 'What do A and B
    have in common?'); '' when there is none, or more than one (no answer beats a guess)."""
    if entities is None:
        return ""
    found: list[str] = []
    if noun:
        vb = {v.casefold() for v in _opening_values(noun, text_b, entities)}
        found = list(dict.fromkeys(
            v for v in _opening_values(noun, text_a, entities)
            if v.casefold() in vb and not set(words(v)) <= asked and not _other_kind(noun, v)))
    if not found:
        found = _common_names(noun, text_a, text_b, entities, asked)
    return found[0] if len(found) == 1 else ""


# Entity kinds that count or date things: no name two things can have in common.
_AMOUNTS = frozenset({"CARDINAL", "ORDINAL", "DATE", "TIME", "QUANTITY", "PERCENT", "MONEY"})
# A run of capitalised words, with 'of' / 'the' / 'and' / 'de' inside ('Wheel of Fortune')
_CAPITALISED = re.compile(r"[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|and|de|for)\s+)*[A-Z][\w'’.&-]*)*")


# Words that end a name by saying what kind of thing it is.
_KINDS = frozenset("""county state city town province district region country university
college school church river lake mountain island""".split())


def _other_kind(noun: str, name: str) -> bool:
    """Whether ``name`` says it is another kind of place than ``noun`` asks for ('Albany
    County' for 'what city')."""
    kind = singular(noun, _KINDS)
    last = (words(name) or [""])[-1]
    return kind in _KINDS and last in _KINDS and last != kind


def _names_in(text: str, entities: Any) -> dict[str, str]:
    """The names ``text`` says (spaCy's entities that are not amounts, and runs of
    capitalised words), folded (no leading 'the') -> as written."""
    from .read import split_sentences

    doc = entities(" ".join(text.split()[:200]))
    spans = [e.text for e in doc.ents if e.label_ not in _AMOUNTS]
    spans += [m.group(0) for sentence in split_sentences(doc.text)
              for m in _CAPITALISED.finditer(sentence)]
    out: dict[str, str] = {}
    for span in spans:
        span = re.sub(r"^(?:the|The)\s+", "", span.strip(" .,;:'\"’"))
        key = " ".join(words(span))
        # ('He', 'In' open a sentence: capitalised, and no name)
        if key and not key.isdigit() and not set(key.split()) <= STOPWORDS:
            out.setdefault(key, span)
    return out


def _common_names(noun: str, text_a: str, text_b: str, entities: Any,
                  asked: set[str]) -> list[str]:
    """The names both texts say ('Wheel of Fortune' on two hostesses' pages, 'Philadelphia
    Eagles' on two players'), of the kind asked: a nationality for 'country' or
    'nationality', else no nationality. Not the question's own words, nor their letters
    spelled out ('National Football League' for 'NFL'), nor a part of a longer common name
    ('Eagles' of 'Philadelphia Eagles')."""
    names_b = _names_in(text_b, entities)
    nations = demonyms()
    peoples = set(nations.values())
    wants_nation = noun in ("country", "countries", "nationality", "nationalities", "origin")
    initials = {w for w in asked if len(w) > 1}
    common = []
    for key, span in _names_in(text_a, entities).items():
        ws = key.split()
        if key not in names_b or set(ws) <= asked:
            continue
        caps = [w for w in span.split() if w[:1].isupper()]
        if len(caps) > 1 and "".join(w[0] for w in caps).lower() in initials:
            continue
        if (key in nations or key in peoples) != wants_nation:
            continue
        if _other_kind(noun, span):
            continue
        common.append((key, span))
    keys = [k for k, _ in common]
    return [span for key, span in common
            if not any(other != key and f" {key} " in f" {other} " for other in keys)]


@dataclass(frozen=True)
class Verdict:
    """The engine's answer to a comparison and how it got it."""

    answer: str
    why: str


def decide(q: Question | str, texts: dict[str, str], entities: Any = None) -> Verdict | None:
    """The answer from what was read about each subject (``texts``: subject -> text read):
    an option (first / last date), or 'yes' / 'no' (same value, or both hold a property).
    None when the texts do not settle it. An option is answered without the place both
    options share ('Minden, Nevada or Gardnerville, Nevada': 'Gardnerville')."""
    q = analyze(q)
    got = _decide(q, texts, entities)
    if got is None or len(q.options) != 2 or got.answer not in q.options:
        return got
    tails = {o.rpartition(", ")[2] for o in q.options if ", " in o}
    if len(tails) == 1 and all(", " in o for o in q.options):
        return Verdict(got.answer.rpartition(", ")[0], got.why)
    return got


def _decide(q: Question, texts: dict[str, str], entities: Any) -> Verdict | None:
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
        counts = held(q, texts[a]), held(q, texts[b])
        if counts[0] is None or counts[1] is None:
            return None
        ha, hb = (got == total for got, total in counts)
        if q.options:  # 'Which writer was from England, A or B?': the one that holds
            if ha != hb:
                return Verdict(a if ha else b, f"only {a if ha else b} is said to be so")
            return _holds_more(a, counts[0], b, counts[1])
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
        return _in_order(q, a, va, b, vb)
    if isinstance(va, float):
        if not q.options or va == vb:
            return None
        pick = a if (va > vb) == (q.order != "less") else b
        return Verdict(pick, f"{a}: {va:g}; {b}: {vb:g} ({what})")
    same = va == vb
    if q.options:
        return None
    return Verdict("yes" if same else "no", f"{a}: {va}; {b}: {vb}")


def _holds_more(a: str, ha: tuple[int, int], b: str, hb: tuple[int, int]) -> Verdict | None:
    """'Which director, A or B, is known for writing, directing and starring in his
    movies?' when neither text says every word (``ha``, ``hb``: ``held`` of each): the
    option whose text says clearly more of them (``MORE_HELD`` more); None when neither
    does."""
    if abs(ha[0] - hb[0]) < MORE_HELD:
        return None
    pick = a if ha[0] > hb[0] else b
    return Verdict(pick, f"{a} is said to be {ha[0]} of {ha[1]} things asked, {b} {hb[0]}")


def _in_order(q: Question, a: str, va: When, b: str, vb: When) -> Verdict | None:
    """The option whose date comes first or last, as the question asks ('older' and
    'earlier' first, 'younger' and 'later' last); None for the same date."""
    ka, kb = _key(va, vb), _key(vb, va)
    if ka == kb:
        return None
    first = a if ka < kb else b
    last = b if first == a else a
    order = q.order or "first"
    if {"older", "oldest"} & set(q.words):
        order = "first"
    elif {"younger", "youngest"} & set(q.words):
        order = "last"
    pick = first if order in ("first", "less") else last
    return Verdict(pick, f"{a}: {va.text}; {b}: {vb.text}")


class Comparison:
    """One comparison question under way: each subject's document (found by the planner's
    search), the role it goes through when there is one ('the director of X'), what was
    read about each, and the verdict once every subject has been read."""

    def __init__(self, coll: Any, q: Question | str, entities: Any) -> None:
        self.coll = coll
        self.q = analyze(q)
        self.entities = entities
        self.role = relation(self.q)
        found = _found(coll, self.q)
        self.queries = [query for _s, _d, query, _n in found]
        self.doc_of = {name: doc for name, doc, _q, _n in found}  # subject -> document to read
        self.text_of: dict[str, str] = {}                          # subject -> what answers
        self.hopped: set[str] = set()
        # a document named by its number ('Which is older, PEP 8 or PEP 257?') is dated by
        # the collection's date column, not by a date its text happens to give
        self.numbered = {name for name, _d, _q, numbered in found if numbered}
        self.tried: set[str] = set(self.doc_of.values())
        self.switched: set[str] = set()                         # subjects read twice

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
            other = self._namesake(subject, text)
            if other:
                self.tried.add(other)
                self.switched.add(subject)
                self.doc_of[subject] = other   # read it instead
                continue
            self.text_of[subject] = text

    def _namesake(self, subject: str, text: str) -> str | None:
        """Another document titled with ``subject``'s name, when the one read gives no date
        or number to compare ('Keith Bostic' the programmer has no birth date; 'Keith Bostic
        (American football)' has): one more read, once a subject."""
        if _attribute(self.q) not in ("birth", "death", "date", "population", "extent") \
                or value(self.q, text, self.entities) is not None or subject in self.switched:
            return None
        ws = words(subject)
        return next((str(r.id) for r in _title_hits(self.coll, ws)
                     if str(r.id) not in self.tried and words(r.title)[:len(ws)] == ws), None)

    def verdict(self) -> Verdict | None:
        names = list(self.doc_of)
        if len(names) == 2 and set(names) <= self.numbered and self.q.options \
                and _attribute(self.q) in ("birth", "date"):
            when = [dated(self.coll, self.doc_of[n]) for n in names]
            if when[0] is not None and when[1] is not None:
                return _in_order(self.q, names[0], when[0], names[1], when[1])
        return decide(self.q, {s: t for s, t in self.text_of.items() if t}, self.entities)

    # -- the route interface the loop drives (shared with bridge.Bridge) -------------------
    stuck = ""        # a comparison never breaks: a side left unread is an unknown value
    answer_doc = ""   # ... and is not answered by choosing from one document

    def prefer(self, doc: str, sections: list[str]) -> list[str]:
        """A compared thing is read at its best section: ``sections`` unchanged; a numbered
        document compared by date at its header, which holds that date ('Created:')."""
        if "infobox" in sections and any(self.doc_of.get(n) == doc for n in self.numbered) \
                and _attribute(self.q) in ("birth", "date"):
            return ["infobox", *(s for s in sections if s != "infobox")]
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


def _title_hits(coll: Any, ws: list[str]) -> list[Any]:
    """The best five documents with the words ``ws`` as a phrase in their title (none when
    the collection has no title field)."""
    if not ws or "title" not in coll.fields:
        return []
    phrase = f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]
    try:
        return list(coll.search(f"{phrase}[title]", k=5, ranker="bm25", strict=True).results)
    except QueryError:
        return []


def _titled(coll: Any, name: str) -> str | None:
    """The document titled ``name`` (its words), else the best one with it in its title."""
    ws = words(name)
    hits = _title_hits(coll, ws)
    got = [r for r in hits if words(r.title) == ws] or hits
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
           "demonyms", "documents_for", "held", "in_common", "is_comparison", "provinces",
           "related_name", "relation", "shared", "subjects", "value"]
