"""One reading of the question, shared by the planner, the searches offered, the reader and
the answer checks.

``analyze`` reads a question once: its words and content words, the names it spells with
capitals, the quoted strings, the document numbers ("PEP 572"), the dates it states, and what
it asks for (``Target``: a person, a date, a number, a title, a yes or no, one of two options
it names, or a thing named by the nouns after "what"/"which"). Every agent module takes this
``Question`` instead of parsing the text again; ``analyze`` is cached, so a module handed a
plain string (a test, a caller outside the loop) gets the same object.

Nothing here knows a collection: the vocabulary is plain English (question words, months,
name connectors, comparison words).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from ..words import unmarked
from ..words import words as _words
from .pipeline import nlp

# Function words and question words: never a query on their own, never an answer alone.
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers him his how i if in into is it its itself just
me more most my no nor not now of off on once only or other our out over own same she should
so some such than that the their them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your
whose give gave named called name says say said one two first new kind type year years
""".split())

MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december"
    .split(), start=1)}
CONNECTORS = frozenset({"van", "von", "de", "der", "da", "la", "le", "di", "del", "du", "bin",
                        "al"})
QUESTION_WORDS = ("what", "which", "who", "whom", "whose", "when", "where", "how", "why")
# A yes-or-no question starts with one of these (and names no options).
_POLAR = frozenset({"is", "are", "was", "were", "do", "does", "did", "can", "could", "has",
                    "have", "had", "will", "would", "should", "shall", "may", "might"})
_HOW_MUCH = frozenset({"many", "much", "big", "long", "large", "old", "far", "tall", "high",
                       "wide", "heavy", "often", "fast"})
_AFTER_WH = frozenset({"of", "the", "a", "an", "is", "was", "are", "were", "did", "does", "do",
                       "has", "had", "have", "in", "on", "for", "at", "by"})
# Nouns and adjectives that end like a past tense ('Which speed', 'which embedded device').
_ED_NOUNS = frozenset({"speed", "breed", "steed", "creed", "greed", "seed", "embedded",
                       "named", "based", "related", "advanced", "limited", "united",
                       "detailed", "dedicated", "extended", "supported", "deprecated",
                       "hundred"})
_ADVERBS = frozenset({"first", "last", "also", "ever", "still", "now", "then", "most",
                      "best", "originally", "later", "actually", "really", "usually", "often",
                      "finally", "initially", "eventually"})
# Nouns whose value is a number ('What percentage ...', 'Which port ...').
NUMERIC_NOUNS = frozenset({"number", "percentage", "percent", "port", "size", "count",
                           "amount", "width", "length", "height", "age", "price", "score",
                           "rank", "population", "capacity", "limit", "maximum", "minimum"})
_PLACE_NOUNS = frozenset({"city", "country", "place", "town", "state", "county", "region",
                          "continent", "island", "river", "village", "location", "nationality",
                          "birthplace"})
_YEAR = r"(1[6-9]\d\d|20\d\d)"
# A term one of whose two hyphenated parts is a single letter: 'f-strings', 't-strings',
# 'C-like' ('x86-64' and 'co-authored' are not)
_LETTERED = re.compile(r"(?<![\w-])(?:[A-Za-z]-[A-Za-z]\w+|[A-Za-z]\w+-[A-Za-z])(?![\w-])")
_QUOTED = re.compile(r"\"([^\"]{2,80})\"|“([^”]{2,80})”"
                     r"|(?:(?<=\s)|^)'([^']{2,80})'(?=[\s,.;:?!)]|$)")
_TITLE_CUE = re.compile(
    r"\btitle[ds]?\s+(?:mentions?|contains?|includes?|has|with)\s+(?:the\s+words?\s+)?"
    r"[\"'“‘]?([\w][\w.-]*)", re.I)
_DOCNUM = re.compile(r"\b([A-Z][A-Za-z]{1,9})[ -]?(\d{1,5})\b(?![.,]?\d)")
# Words that order two things: the earlier / smaller one, or the later / larger one.
_FIRST = frozenset({"first", "earlier", "earliest", "older", "oldest", "before", "sooner",
                    "previously"})
_LAST = frozenset({"later", "latest", "last", "younger", "youngest", "after", "recently",
                   "recent", "newer", "newest"})
_MORE = frozenset({"more", "most", "larger", "largest", "bigger", "biggest", "longer",
                   "longest", "higher", "highest", "taller", "greater", "greatest", "many"})
_LESS = frozenset({"less", "least", "fewer", "fewest", "smaller", "smallest", "shorter",
                   "shortest", "lower", "lowest"})


@dataclass(frozen=True)
class Target:
    """What a question asks for.

    ``kind``: 'who' (a person), 'when' (a date), 'where' (a place), 'number', 'yesno', 'choice'
    (one of the options the question names), 'why' (an explanation: no short span answers
    it), or 'what' (a thing named by ``nouns``: 'status' in 'What status does ...', 'python'
    and 'version' in 'Which Python version ...')."""

    kind: str
    nouns: frozenset[str]
    head: str = ""          # the noun asked for ('feature' in 'which JavaScript feature')
    asks_kind: bool = False  # 'what kind / type / sort of ...': a kind, not a name
    counted: str = ""       # the noun 'how many / how much' counts ('bytes'): an answer's unit


@dataclass(frozen=True)
class DateRef:
    """A date the question states, as the inside of a BQL date atom (``2019-03``, ``<2010``,
    ``2001..2005``) and in words; ``of_document``: the question dates the document itself
    ('the 2024 proposal', 'created in March 2019'), not something it talks about ('the
    Python released in 2026')."""

    value: str
    why: str
    of_document: bool = True


@dataclass(frozen=True)
class Question:
    """The question, read once (``analyze``)."""

    text: str                           # whitespace-normalised
    words: tuple[str, ...]              # every word, in order (BQL's word rule)
    content: tuple[str, ...]            # distinct words that are not stopwords, in order
    names: tuple[str, ...]              # runs of capitalised words ('Guido van Rossum')
    people: tuple[str, ...]             # names that may be a person's (2+ words, no month)
    authors: tuple[str, ...]            # ... of them, those the question says wrote it
    quotes: tuple[str, ...]             # quoted strings
    title_cues: tuple[str, ...]         # a word a title is said to mention / contain
    docnums: tuple[tuple[str, str], ...]  # ('PEP', '572')
    dates: tuple[DateRef, ...]
    target: Target
    keywords: tuple[str, ...] = ()      # words written as names or code ('Executor',
    #                                     'concurrent.futures', 'PYTHONGIL'), folded
    options: tuple[str, ...] = ()       # 'A or B': the two things a choice is between
    order: str = ""                     # 'first' / 'last' / 'more' / 'less': how to choose
    asks_title: bool = False            # 'what is its title'
    asks_version: bool = False          # 'which (Python) version / release'
    lead_in: tuple[str, ...] = ()       # the words right before a question word in place
    #                                     ('based', 'in' of '... is based in what city?')
    lettered: tuple[str, ...] = ()      # terms with a one-letter part ('f-strings'): no
    #                                     word alone says the letter, the whole term does
    described: tuple[str, ...] = ()     # the verb of a clause that says which document
    #                                     ('introduced' in 'the proposal that introduced
    #                                     X'): it names the document, it is not what is asked

    @property
    def stems(self) -> frozenset[str]:
        """The content words on their first five letters (no stemmer: a crude, fast match)."""
        return frozenset(w[:5] for w in self.content)

    def __str__(self) -> str:
        return self.text


def analyze(question: str | Question) -> Question:
    """The ``Question`` of a text (cached: every module that reads the same question gets the
    same object); a ``Question`` is returned as it is."""
    if isinstance(question, Question):
        return question
    return _analyze(" ".join(question.split()))


@lru_cache(maxsize=256)
def _analyze(text: str) -> Question:
    ws = tuple(_words(text))
    code = _code_words(text)
    content = tuple(dict.fromkeys(w for w in ws if w not in STOPWORDS or w in code))
    found_names = tuple(names(text))
    people = _person_names(found_names)
    options = _options(text)
    target = _target(text, options)
    order = ""
    if options or target.kind in ("choice", "yesno"):
        order = _order(ws)
    asks_title = bool(re.search(r"\b(what|which)( is| was)?( its| the| their)? (full )?title\b",
                                " ".join(ws)))
    # 'which version control system' asks for a system, 'which release manager' for a person
    asks_version = bool(re.search(r"\b(what|which) (python )?(version|release)\b",
                                  " ".join(ws))) and target.head in ("version", "release")
    quotes = tuple(next(g for g in m.groups() if g) for m in _QUOTED.finditer(text))
    return Question(
        text=text, words=ws, content=content, names=found_names,
        people=tuple(people), authors=_authors(text, people, found_names),
        quotes=quotes,
        title_cues=tuple(m.group(1) for m in _TITLE_CUE.finditer(text)),
        docnums=_docnums(text),
        dates=tuple(_dates(text)), target=target,
        keywords=tuple(dict.fromkeys([*_keywords(text), *(w for x in quotes if len(_words(x)) == 1
                                                         for w in _words(x))])),
        options=options, order=order,
        asks_title=asks_title, asks_version=asks_version, lead_in=_lead_in(text),
        lettered=tuple(dict.fromkeys(m.group(0) for m in _LETTERED.finditer(text))),
        described=tuple(dict.fromkeys(m.group(1).lower() for m in _DESCRIBED.finditer(text))))


# A question word in place: after a verb or a preposition, not first and not after a comma
# ('Data classes can be thought of as what', 'Tysons Galleria is located in what county?').
# 'which' and 'who' after a noun start a relative clause ('an industrialist who became'):
# in place only after a preposition ('a mission with which tribe', 'formed by who').
_WH_IN_PLACE = re.compile(r"(?<=[\w'])\s+(what|which|who|whom)\b", re.I)
_PREPOSITIONS = frozenset("""in on of by as with from at for to into during than about after
before under over between against near""".split())
_NOT_LEAD = frozenset({"and", "or", "but", "is", "was", "are", "were", "did", "does", "do",
                       "the", "a", "an", "that", "this", "s"})


def _lead_in(text: str) -> tuple[str, ...]:
    """The last two words (folded) before a question word that stands in place: a sentence
    that says them right before a span says the span in its place. Empty when the question
    word opens the question or a clause."""
    for m in _WH_IN_PLACE.finditer(text):
        # the clause the question word stands in ('For type stubs ..., from which pip
        # version' has only 'from')
        ws = [w.lower() for w in _words(re.split(r"[,;:]", text[:m.start()])[-1])]
        if len(ws) == 1 and ws[0] in _PREPOSITIONS:
            fronted = _fronted_lead(ws[0], text[m.end():])
            if fronted:
                return fronted
        if len(ws) < 2 or ws[-1] in _NOT_LEAD:
            continue
        if m.group(1).lower() != "what" and ws[-1] not in _PREPOSITIONS:
            continue
        return tuple(ws[-2:])
    return ()


_AUX = _POLAR | {"must"}  # the verbs that open a yes/no question, and 'must'
_CLAUSE_ENDS = frozenset({"where", "which", "that", "who", "whom", "whose", "when", "while",
                          "because", "before", "after", "if", "according"})


def _fronted_lead(prep: str, rest: str) -> tuple[str, ...]:
    """A fronted preposition ('In which city was the 2023 sprint held?'): the text says the
    answer after the clause's last word and the preposition ('held in Brno', 'the 2023
    sprint in Brno'), so those two lead in. Empty unless the question word's noun is followed
    by is/was/did/can ... and a clause."""
    ws = [w.lower() for w in _words(re.split(r"[,;:?]", rest)[0])]
    aux = next((i for i, w in enumerate(ws[:8]) if w in _AUX), None)
    if aux is None:
        return ()
    clause: list[str] = []
    for w in ws[aux + 1:]:
        if w in _CLAUSE_ENDS:
            break
        clause.append(w)
    while clause and clause[-1] in STOPWORDS:
        clause.pop()
    return (clause[-1], prep) if clause else ()


# Nouns for a document itself: 'What kind of PEP is ...' asks the document's type
_DOC_KINDS = frozenset({"pep", "peps", "rfc", "rfcs", "proposal", "proposals", "document",
                        "documents"})
# 'the proposal that introduced X', 'the PEP which added Y': the clause's verb (an adverb
# before it skipped) says which document, not what is asked of it
_DESCRIBED = re.compile(rf"(?i)\b(?:{'|'.join(sorted(_DOC_KINDS))})\s+(?:that|which)\s+"
                        r"(?:\w+ly\s+)?(\w+)")
# Words that open a sentence before a name without being part of it ('Besides Barry Warsaw,
# who ...', 'Unlike Python 2, ...'): prepositions and conjunctions the stopwords leave out
_OPENERS = frozenset("""besides beside unlike like since although though aside apart except
unless despite given according following among beyond without within alongside instead
regarding concerning along once whereas whether per via""".split())


def names(text: str) -> list[str]:
    """Runs of capitalised tokens (and numbers right after one, as in 'PEP 557'), allowing
    name connectors inside ('Guido van Rossum'); the first word counts only when it is not a
    question word, another stopword or a word that opens a sentence (``_OPENERS``)."""
    matches = list(re.finditer(r"[\w][\w.'’-]*", text))
    toks = [m.group(0) for m in matches]
    # a comma, a colon or a bracket between two tokens ends a name ('from England, Henry')
    breaks = {i for i in range(1, len(matches))
              if re.search(r"[,;:()\[\]?!\"“”]", text[matches[i - 1].end():matches[i].start()])}
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        while run and run[-1].lower() in CONNECTORS:
            run.pop()
        if run:
            out.append(" ".join(run))
        run.clear()

    for i, t in enumerate(toks):
        if i in breaks:
            flush()
        t = t.rstrip(".'’-")
        if not t:
            flush()
            continue
        cap = t[0].isupper() and not (i == 0 and (t.lower() in STOPWORDS
                                                  or t.lower() in _OPENERS))
        if cap and not (len(t) == 1 and i == 0):
            run.append(t)
        elif run and t.isdigit():
            run.append(t)
            flush()
        elif run and t.lower() in CONNECTORS:
            run.append(t)
        else:
            flush()
    flush()
    return list(dict.fromkeys(out))


def _docnums(text: str) -> tuple[tuple[str, str], ...]:
    """The document numbers the question names ('PEP 572'). When it quotes a passage with a
    blank to fill, a number inside the passage is the passage's own word, not the document
    asked about: those before the first quotation mark are kept, when there are any."""
    found = list(_DOCNUM.finditer(text))
    if "__" in text:
        first = min((i for i in (text.find('"'), text.find("“")) if i >= 0), default=-1)
        outside = [m for m in found if first < 0 or m.start() < first]
        found = outside or found
    return tuple((m.group(1), m.group(2)) for m in found)


# A function word that is also a statement or operator of code is a content word when it is
# written as one: quoted or in backticks alone ('the 'with' statement', '`is`'), or before the
# noun that says so ('the with statement', 'an else clause'). 'the PEP introducing the with
# statement' searched without 'with' reads the PEP of another statement.
_CODE_STOPWORDS = frozenset({"with", "if", "for", "while", "is", "not", "and", "or", "in", "as",
                             "from"})
_CODE_NOUNS = r"(?:statements?|keywords?|clauses?|blocks?|loops?|expressions?|operators?)"
_CODE_WORD = re.compile(r"(?:[`'\"“]{1,2}(\w+)[`'\"”]{1,2}|\b(\w+)(?=\s+" + _CODE_NOUNS + r"\b))",
                        re.I)


def _code_words(text: str) -> frozenset[str]:
    """The function words ``text`` writes as code (``_CODE_STOPWORDS``)."""
    return frozenset(w for m in _CODE_WORD.finditer(text)
                     if (w := (m.group(1) or m.group(2)).lower()) in _CODE_STOPWORDS)


def _keywords(text: str) -> list[str]:
    """The words of tokens written as names or code: capitalised (not the question's first
    word), all capitals, or holding a digit, an underscore, a dot or parentheses inside.
    A searcher keeps these; a plain lowercase word may be the asker's paraphrase."""
    out: list[str] = []
    for i, m in enumerate(re.finditer(r"[\w][\w.’'()-]*[\w)]|\w", text)):
        tok = m.group(0)
        codey = any(c in tok.strip(".") for c in "_.()") or (
            any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok))
        cap = tok[:1].isupper() and i > 0  # the first word is capitalised anyway
        if codey or cap or (tok.isupper() and len(tok) > 1):
            out.extend(w for w in _words(tok) if w not in STOPWORDS)
    return list(dict.fromkeys(out))


def _authors(text: str, people: list[str], found: tuple[str, ...]) -> tuple[str, ...]:
    """The names the question says wrote the document: a person's, or a lone surname
    ('When Dubner proposed ...', "Stein's PEP"; the planner keeps it only when the index
    holds it among authors) that does not open the question."""
    low = " ".join(text.lower().split())
    # ... said right before the verb or as the owner of the document, not after 'of' ('the
    # Zen of Python created') or as 'by Python tooling'
    lone = [n for n in found if len(n.split()) == 1 and len(n) >= 3 and n[:1].isupper()
            and not n.isupper() and n.lower() not in STOPWORDS and n.lower() not in MONTHS
            and not text.startswith(n) and not any(n in p.split() for p in people)
            and re.search(rf"(?<!\bof )\b{re.escape(n.lower())}(?:\s+{_WRITING}|['’]s\s+"
                          rf"(?:[\w-]+\s+){{0,3}}{_DOC_NOUNS})\b", low)]
    return (*(p for p in people if _authored(text, p)), *lone)


def _person_names(runs: tuple[str, ...]) -> list[str]:
    """Runs of capitalised words that may name a person: split at a possessive ('Lennart
    Regebro's 2012 PEP' -> 'Lennart Regebro') and a month name, numbers dropped."""
    out: list[str] = []
    for run in runs:
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


# Words that make a name the document's author, or a date the document's own.
_WRITING = r"(?:created|create|creates|wrote|write|writes|written|proposed|propose|proposes|" \
    r"authored|co-authored|coauthored|submitted|drafted|filed|published|penned)"
_DOC_NOUNS = r"(?:pep|peps|rfc|rfcs|proposal|proposals|document|draft|spec|specification|" \
    r"article|paper|post|report|idea|ideas|write-up|writeup|plan|design)"


def _authored(text: str, name: str) -> bool:
    """Whether the question says ``name`` wrote the document: 'by NAME', 'NAME wrote /
    created / proposed ...', "NAME's PEP", 'NAME, the author'."""
    low = " ".join(text.lower().split())
    n = re.escape(" ".join(name.lower().split()))
    return bool(re.search(rf"\bby\s+{n}\b|\b{n}\s+(?:\w+\s+){{0,2}}{_WRITING}\b|"
                          rf"\b{n}(?:\s+and\s+[\w .'’-]{{2,40}}?)?['’]s\s+(?:[\w-]+,?\s+){{0,3}}"
                          rf"{_DOC_NOUNS}\b|"
                          rf"\b{_WRITING}\s+by\s+{n}\b|\b{n}\b[^.?;]{{0,20}}\bauthor", low))


def _of_document(low: str, start: int, end: int) -> bool:
    """Whether the date at low[start:end] dates the document: a writing verb or a document
    noun next to it ('the 2024 proposal', 'a PEP from 2005', 'created in March 2019'), or
    the question's opening 'In March 2019, ...' before a writing verb."""
    before = low[max(0, start - 40):start]
    after = low[end:end + 30]
    if re.search(rf"\b{_DOC_NOUNS}\s*(?:from|of|in|dated)?\s*$", before) or \
            re.match(rf"\s*(?:\w+\s+)?{_DOC_NOUNS}\b", after):
        return True
    if re.search(rf"\b{_WRITING}\s+(?:\w+\s+)?(?:in|on|during|around)?\s*$", before):
        return True
    return bool(re.match(r"\s*(?:in|on|during)\s*$", low[:start]) and
                re.search(rf"\b{_WRITING}\b", low))


def _dates(question: str) -> list[DateRef]:
    """The dates a question states: between two years, a month and year, before / after /
    since / until a year, a year."""
    out: list[DateRef] = []
    low = question.lower()
    used: set[str] = set()
    m = re.search(rf"\bbetween\s+{_YEAR}\s+and\s+{_YEAR}\b", low)
    if m and m.group(1) <= m.group(2):
        out.append(DateRef(f"{m.group(1)}..{m.group(2)}",
                           f"between {m.group(1)} and {m.group(2)}",
                           _of_document(low, m.start(), m.end())))
        used.update(m.groups())
    for m in re.finditer(r"\b(" + "|".join(MONTHS) + rf")\s+(?:of\s+)?{_YEAR}\b", low):
        out.append(DateRef(f"{m.group(2)}-{MONTHS[m.group(1)]:02d}",
                           f"in {m.group(1).title()} {m.group(2)}",
                           _of_document(low, m.start(), m.end())))
        used.add(m.group(2))
    for m in re.finditer(rf"\b(before|after|since|until|by)\s+{_YEAR}\b", low):
        word, year = m.groups()
        if year in used:
            continue
        rng = {"before": f"<{year}", "after": f">{year}", "since": f">={year}",
               "until": f"<={year}", "by": f"<={year}"}[word]
        out.append(DateRef(rng, f"{word} {year}", _of_document(low, m.start(), m.end())))
        used.add(year)
    for m in re.finditer(rf"(?<![\w.-]){_YEAR}(?![\w.-])", question):
        if m.group(1) not in used:
            out.append(DateRef(m.group(1), f"in {m.group(1)}",
                               _of_document(low, m.start(), m.end())))
            used.add(m.group(1))
    return out


def _asking_clause(text: str) -> str:
    """The clause that asks: 'In 2007, X created a PEP whose title mentions Y; what is its
    title?' asks what, not who ('whose' there is a relative pronoun)."""
    # a question of two questions asks the last ('How does the launcher tell ...? Which
    # environment variable does it check?'); a quoted title's '?' ends nothing ('the "Who?
    # Who?" ministry')
    # ... and a dash sets off the question from what it is about ('what happens if f is None
    # — where does the output end up?')
    masked = _QUOTED.sub(lambda m: "x" * len(m.group(0)), text)
    cuts = [0, *(m.end() for m in re.finditer(r"[;.:?]\s+|\s[—–]\s*|—\s|\s--\s", masked)),
            len(text)]
    clauses = [text[a:b] for a, b in itertools.pairwise(cuts)]
    for clause in reversed(clauses):
        first = _words(clause)[:1]
        if first and first[0] in QUESTION_WORDS:
            # 'When a variant was turned down, which function ...': a leading 'when' clause
            # says when, the question word after its comma asks
            later = _AFTER_WHEN.match(clause) or _LAST_AFTER_WHEN.match(clause) or \
                _MAIN_AFTER_WHEN.match(clause)
            return clause[later.start(1):] if later else clause
    # ... else the last that asks after a conjunction or preposition ('The proposal about
    # translations — is it Standards Track, Informational, or which type?')
    for clause in reversed(clauses[1:] if len(clauses) > 1 else []):
        ws = _words(clause)
        if any(w in _WH and i and ws[i - 1] in _ASKING_AFTER for i, w in enumerate(ws)):
            return clause
    return text


_AFTER_WHEN = re.compile(r"(?i)\s*when\b[^?,]*,\s*((?:which|what|who|whom|whose|where|how)\b.*)$")
# ... or in its last part, after a preposition ('When it was turned down, Guido said that was
# the whole point, years earlier, of which builtin?')
_LAST_AFTER_WHEN = re.compile(r"(?i)\s*when\b[^?]*,\s*((?:(?:in|of|by|for|from|with|at|on|to)"
                              r"\s+)?(?:which|what|who|whom|whose)\b[^,;?]*\??\s*)$")
# ... or in the main clause after it, the 'when' opening a clause of its own, not asking
# ('When the slot initially returned a Py_ssize_t, len() of a huge string got clipped at what
# number?'; not 'When did the vote end, and who ran it?', which asks when)
_MAIN_AFTER_WHEN = re.compile(r"(?i)\s*when\s+(?!(?:is|was|are|were|do|does|did|can|could|would|"
                              r"should|will|has|have|had|may|might|must)\b)[^?,]*,\s*"
                              r"([^,?]*\b(?:which|what|who|whom|whose|where)\b[^?]*\??\s*)$")


# Words after which a question word still asks ('in which language', 'and who'); after
# another word it is a relative pronoun ('Users who turn it on ... what kind of problems?').
_ASKING_AFTER = frozenset("""in of by to for from with at on about as under into during after
before since through than and but or so""".split())
_WH = frozenset({"who", "whom", "whose", "which", "what", "when", "where", "how", "why"})


def _relative(q: list[str], i: int) -> bool:
    """Whether ``q[i]`` is a relative pronoun, not the question word: it follows a word that
    is no preposition or conjunction, and another question word that asks comes later."""
    return (q[i] in ("who", "whom", "whose", "which", "when", "where") and i > 0
            and q[i - 1] not in _ASKING_AFTER and q[i - 1] not in _WH
            and any(w in _WH and not _embedded(q, j) for j, w in enumerate(q[i + 1:], i + 1)))


def _embedded(q: list[str], i: int) -> bool:
    """Whether ``q[i]`` is a 'why' or 'how' that opens a clause the question is about, not the
    asking word: it follows a word that is no preposition or conjunction ('Explaining why
    Python 3000 would evolve ..., he shares his views with whom?', 'which git mechanism
    remembers how you resolved a conflict?')."""
    return q[i] in ("why", "how") and i > 0 and q[i - 1] not in _ASKING_AFTER \
        and q[i - 1] not in _WH and q[i + 1:i + 2] != [] and q[i + 1] not in _HOW_MUCH \
        and q[i + 1] not in _INVERTED  # 'In the spec, how was a module ...' asks how


# Auxiliaries a direct question puts before its subject ('how was it', 'why does it'); an
# embedded clause keeps its subject first ('how you resolved', 'why Python would').
_INVERTED = frozenset("""is was are were do does did can could would should will shall
has have had may might must""".split())


# Words that end the noun phrase a question word opens: 'What screenwriter with credits ...',
# 'which library that translates ...', 'Which French ace pilot and adventurer ...'.
_RUN_STOP = frozenset("""with that who whom whose which from through into to as than where
when while besides and or these those nowadays""".split())
_PRONOUNS = frozenset("i you he she it we they".split())
_CASED = re.compile(r"([^\W_]+)([^\w]*)")
_RUN_END = re.compile(r"[,;:?!()]")


def _plain(text: str) -> str:
    """``text`` as the word rule reads it (``words.unmarked``), '_' a space: its words, their
    case kept."""
    return unmarked(text).replace("_", " ")


def _cased(text: str) -> list[tuple[str, str]]:
    """Each word of ``text`` as written (its case kept), with what follows it up to the next
    word; aligned with ``words(text)``."""
    return [(m.group(1), m.group(2)) for m in _CASED.finditer(_plain(text))]


_VERB_TAGS = frozenset({"VB", "VBD", "VBZ", "VBP", "MD"})
_PARTICIPLE_TAGS = frozenset({"VBN", "VBG"})


def _tags(text: str) -> list[str]:
    """spaCy's part-of-speech tag of each word of ``text`` (aligned with ``_cased``; a word
    split by spaCy takes its first piece's tag); [] without spaCy."""
    pipeline = nlp()
    if pipeline is None:
        return []
    plain = _plain(text)
    doc = pipeline(plain)
    at = {t.idx: t.tag_ for t in doc}
    out = []
    for m in _CASED.finditer(plain):
        tag = at.get(m.start())
        if tag is None:  # inside a token spaCy kept whole ('0.8', "Wolf's")
            tag = next((t.tag_ for t in doc if t.idx <= m.start() < t.idx + len(t)), "")
        out.append(tag)
    return out


def _ends_run(k: int, x: str, run: list[str], tags: list[str], after: str,
              low: str) -> bool:
    """Whether ``x`` (the k-th word after the question word) starts the predicate rather
    than naming more of the thing asked: a verb by its tag ('What marker file tells pip',
    'Which county shares a border'), a participle before no common noun ('Which movie
    starring Tony Longo'; 'retired footballer' and 'jet-powered bomber' go on); without
    tags, a word ending like a verb or an adverb past the second word."""
    nxt_tag = tags[k + 1] if k + 1 < len(tags) else ""
    if tags:
        tag = tags[k] if k < len(tags) else ""
        if tag in _VERB_TAGS:
            return True
        if tag in _PARTICIPLE_TAGS and f"-{x}" not in low:
            return nxt_tag not in ("NN", "NNS", "JJ")
        return len(run) >= 2 and x in _ADVERBS
    if len(run) >= 2 and (x.endswith(("s", "ed")) or x in _ADVERBS) \
            and not _RUN_END.search(after):
        return True
    # ... and right after the noun, a past tense ('Which PEP moved f-strings')
    return len(x) > 4 and x.endswith("ed") and x not in _ED_NOUNS and f"-{x}" not in low


def _noun_run(rest: list[str], cased: list[tuple[str, str]], tags: list[str],
              low: str) -> list[str]:
    """The words of the noun phrase after 'what' / 'which' (``rest``: the question's words
    from there; ``cased``: the same words as written, with what follows each; ``tags``:
    their parts of speech): 'what American civil rights leader, ...' -> american civil
    rights leader. It ends at a function word, a comma, a verb (``_ends_run``), or a name
    that owns something after lowercase words ('Which country Konrad Wolf's father ...')."""
    run: list[str] = []
    tagged: list[str] = []
    k = 0
    while k < min(len(rest), 8):
        x = rest[k]
        as_written, after = cased[k] if k < len(cased) else (x, " ")
        before = cased[k - 1][1] if 0 < k <= len(cased) else " "
        if x == "and" and run and as_written.islower() and 0 < k <= len(cased) \
                and cased[k - 1][0][:1].isupper():
            pass  # 'which Lewis and Clark Expedition': 'and' inside a name
        elif x in _AFTER_WH or x in _POLAR or x in _RUN_STOP or (run and x in _PRONOUNS):
            break  # ('what's the last year you can represent': 'you' starts the clause)
        # no verb: a word joined by a hyphen ('stand-up', 'jet-powered') or capitalised
        # ('"Virtual Choir"-noted conductor')
        verbless = after.startswith("-") or before.endswith("-") or as_written[:1].isupper()
        if run and not verbless and _ends_run(k, x, run, tags, after, low):
            break
        if run and as_written[:1].isupper() and all(c[0][:1].islower() for c in cased[:k]):
            caps = []
            for word, sep in cased[k:k + 7]:
                if not word[:1].isupper():
                    break
                caps.append(sep)
            # "Lucius Antonius (Grandson Of Mark Antony)'s father": the name owns it
            if any("'" in sep or "’" in sep for sep in caps):
                break
        if after[:1] in "'’" and k + 1 < len(rest) and rest[k + 1] == "s":
            # 'Richard Connell's best known work': what the name owns is asked
            run, tagged = [], []
            k += 2
            continue
        run.append(x)
        tagged.append(tags[k] if k < len(tags) else "")
        nxt = cased[k + 1][0] if k + 1 < len(cased) else ""
        # a comma ends the phrase, but not inside a place ('Fayette County, Kentucky airport')
        if _RUN_END.search(after) and not (
                "," in after and as_written[:1].isupper() and nxt[:1].isupper()):
            break
        k += 1
    # 'which American singer-songwriter active mainly in ...': the noun, not a trailing
    # adjective
    while len(run) > 2 and tagged[-1] in ("JJ", "JJR", "RB"):
        run.pop()
        tagged.pop()
    return run


def _target(text: str, options: tuple[str, ...]) -> Target:
    """The kind and the naming nouns of a question (see ``Target``); the kind comes from the
    first question word of the asking clause ('In PEP 618, what exception does it raise
    when ...' asks what, not when)."""
    clause = _asking_clause(text)
    q = _words(clause)
    cased = _cased(clause)
    if len(cased) != len(q):
        cased = []
    low = text.lower()
    if options:
        return Target("choice", frozenset())
    kind, nouns, counted, asked_at = "", [], "", 0
    for i, w in enumerate(q):
        if _relative(q, i) or _embedded(q, i) and any(
                x in _WH and not _embedded(q, j) and not _relative(q, j)
                for j, x in enumerate(q) if j != i):
            continue
        if w in ("who", "whom", "whose"):
            kind = "who"
        elif w == "when":
            kind = "when"
        elif w == "where":
            kind = "where"
        elif w == "why":
            kind = "why"
        elif w == "how" and i + 1 < len(q) and q[i + 1] in _HOW_MUCH:
            kind = "number"
            if q[i + 1] in ("many", "much") and i + 2 < len(q):
                counted = q[i + 2]
        elif w == "how":
            kind = "why"  # 'how does X work': a way, not a span
        elif w in ("what", "which"):
            kind, asked_at = "what", i
            # the words right after it, up to a function word: 'What type of PEP' -> type
            rest = q[i + 1:]
            # 'What would the new module ... be called?' asks for the module's name
            called = bool(_BE_CALLED.search(clause))
            skip = _SKIPPED + _MODALS if called else _SKIPPED
            while rest and rest[0] in skip:
                rest = rest[1:]  # 'What is (What's) the status of ...' -> status
            if len(rest) > 2 and rest[0] in ("kind", "sort", "kinds", "sorts") \
                    and rest[1] == "of" and rest[2] not in _DOC_KINDS:
                rest = rest[2:]  # 'What kind of quotes ...' asks for quotes
            elif len(rest) > 2 and rest[0] in ("name", "names", "title") and rest[1] == "of" \
                    and not re.match(r"(?:the\s+)?(?:pep|rfc|document|proposal)\b",
                                     " ".join(rest[2:4])):
                # 'What is the name of the waterfall ...' asks for a waterfall, 'the title of
                # 1988 American historical drama film' for a film ('the title of PEP 8' is
                # a title)
                rest = rest[2:]
                while rest and rest[0] in ("the", "a", "an", "this", "that", "its", "their"):
                    rest = rest[1:]
            off = len(q) - len(rest)
            tags = _tags(clause) if cased else []
            run = _noun_run(rest, cased[off:] if cased else [], tags[off:] if tags else [], low)
            if len(run) == 2 and run[1] in _ADVERBS:
                run = run[:1]
            if called and tags:
                # '... the new module holding bind_all() be called': the thing named ends
                # where a participle starts what is said of it
                cut = next((j for j, t in enumerate(tags[off:off + len(run)])
                            if j and t in ("VBG", "VBN")), len(run))
                run = run[:cut]
            # 'What county shares a border ...': a word before an article is a verb
            if len(run) == 2 and rest[2:3] and rest[2] in ("a", "an", "the", "its", "his",
                                                          "her", "their"):
                run = run[:1]
            # a number inside the run qualifies ('which Python 2 release': python release)
            if len(run) > 2 and any(w.isdigit() for w in run[1:-1]):
                run = [w for w in run if not w.isdigit()]
            # the head of 'which new type slot' is 'slot'; 'which python version' keeps
            # both ('Python-Version:'), a run of two names one thing
            # ('what dedicated exception name' asks an exception's name)
            nouns = run[-2:] if len(run) <= 2 or run[-1] in ("name", "names") and run[-2] in (
                "exception", "error", "warning") else run[-1:]
            # 'What kind of PEP is ...' asks its type, as 'What type of PEP' does
            nouns = ["type" if n in ("kind", "sort", "kinds", "sorts") else n for n in nouns]
            if nouns and nouns[0] in ("date", "year", "month", "day", "decade", "century"):
                kind = "when"
            elif nouns and nouns[0] in _PLACE_NOUNS:
                kind = "where"
            elif nouns and (nouns[0] in NUMERIC_NOUNS or nouns[0] in ("many", "much")):
                kind = "number"
        else:
            continue
        break
    if not kind:
        first = _words(text)[:1]
        kind = "yesno" if first and first[0] in _POLAR else "what"
        other = _OTHER_THING.search(clause)
        if other and (other.group(1) or other.group(2)):
            thing = (other.group(1) or other.group(2)).lower()
            kind, nouns = "what", ["type" if thing in ("kind", "sort", "kinds", "sorts")
                                   else thing]
    if kind == "what" and re.search(
            r"\bwhat(?:ever)?\s+(?:(?:ended|ends)\s+up\s+)?(?:became|becomes|happened|happens|"
            r"happening)\s+(?:of|to|with)\b|"
            r"\bwhat\s+came\s+of\b|\b(?:fate|outcome)\s+of\b",
            " ".join(q)) or (kind in ("where", "yesno") or kind == "what" and not nouns) \
            and _FATE.search(" ".join(q)):
        # 'What became of / Whatever happened to / the outcome of the proposal ...?' asks how
        # it ended, and so do 'Where does it stand now?', 'Did it go anywhere?', 'Did it
        # ever get accepted?', 'What is the state of the proposal?' and 'Is it still a
        # draft?'
        kind, nouns = "what", ["status"]
    if kind == "what" and nouns and set(nouns) <= _PRONOUN_HEADS:
        # 'PEP 550 notes a popular framework that depends on greenlet. Which one?' asks for
        # a framework: the pronoun stands for the first thing the question introduces ('a
        # term for a set of files ... What is it?' -> term, 'one brand new module ... What
        # is it called?' -> module); 'one' for one of several ('adds two opcodes; which
        # one ...' -> opcodes)
        before = _words(text[:text.rfind(clause)]) + q[:asked_at]
        at = -1
        if set(nouns) <= {"one", "ones"}:
            at = max((i for i, w in enumerate(before) if w in _SEVERAL), default=-1)
        if at < 0:
            at = next((i for i, w in enumerate(before) if w in ("a", "an", "one")), -1)
        if at >= 0:
            run = _noun_run(before[at + 1:], [], [], low)
            if len(run) == 2 and run[1] in _ADVERBS:
                run = run[:1]
            if run:
                nouns = run[-2:] if len(run) <= 2 else run[-1:]
    wise = _WISE.search(clause)
    if wise and kind in ("what", "where", "why", "yesno") and not nouns:
        # 'Where did it end up, status-wise?' asks its status; 'date-wise' a date
        noun = wise.group(1).lower()
        kind, nouns = ("when" if noun in ("date", "year", "time") else "what"), [noun]
    return Target(kind, frozenset(nouns), nouns[-1] if nouns else "",
                  bool(_ASKS_KIND.search(text)), counted)


_PRONOUN_HEADS = frozenset({"one", "ones", "it", "they", "them", "that", "this", "those"})
_SEVERAL = frozenset({"two", "three", "four", "five", "six", "several", "multiple", "both"})
# skipped right after 'what' / 'which' on the way to the noun asked for
_SKIPPED = ("is", "s", "was", "are", "were", "the", "a", "an", "its", "their", "that", "this",
            "these", "those", "other", "another")
_MODALS = ("would", "will", "might", "should", "could", "must", "shall", "can", "may")
_BE_CALLED = re.compile(r"\bbe\s+(?:called|named)\b", re.I)
_WISE = re.compile(r"\b([A-Za-z]{3,})-wise\b")
_ASKS_KIND = re.compile(r"\b(?:kind|type|sort)s?\s+of\b", re.I)
# How people ask where a proposal ended up, beyond 'what became of' (over folded words)
_FATE = re.compile(r"\bwhere\s+(?:does|do|did|is|was|has|have)\b.{0,80}\bstands?\b|"
                   r"\b(?:go|goes|went|gone|get|gets|got)\s+anywhere\b|"
                   r"\bever\s+(?:\w+\s+)?(?:accepted|adopted|approved|rejected|withdrawn)$|"
                   r"\bstate\s+of\s+(?:the|this|that|his|her|their|its)\s+(?:\w+\s+){0,4}?"
                   r"(?:proposal|pep|rfc|idea|plan|document)\b|"
                   r"^(?:is|was|were|has|have|had|did|does|do)\b.{0,120}\b(?:accepted|adopted|approved|"
                   r"rejected|withdrawn|deferred|superseded|final|finali[sz]ed|draft)$")


# Relation words a question uses for a link that a header line names in other words
# ('successor' for Superseded-By, 'prerequisite' for Requires), on first five letters.
_RELATED = {
    "succe": ("super", "repla"), "later": ("super",), "newer": ("super",),
    "earli": ("repla",), "prede": ("repla",), "older": ("repla",), "requi": ("requi",),
    "depen": ("requi",), "prere": ("requi",),
}
# "replaced by" / "superseded by" / "took its place" asks for the newer document (its old one
# names it in ``Superseded-By``); "replaced" / "supersedes" with no "by" asks for the older one
# (``Replaces``). Without this, "was replaced by" matched no header of the old document.
_NEWER = re.compile(r"\b(?:replac|supersed)\w*\s+by\b|\breplacement\b|"
                    r"\b(?:took|take|takes|taken|taking)\s+(?:its|their|his|her|the)\s+place\b")
_OLDER = re.compile(r"\b(?:replac|supersed)(?:e|es|ed)\b(?!\s+by\b)")


def relation_stems(text: str) -> frozenset[str]:
    """The question's words (longer than two letters) on their first five letters, with the
    words of header keys its relation words stand for: 'replaced by' and 'took its place'
    say 'super' (``Superseded-By``), 'prerequisite' says 'requi' (``Requires``)."""
    # 'dependency' names a thing ('the external dependency registry'); 'depends' a link
    q = {w[:5] for w in _words(text) if len(w) > 2 and not w.startswith("dependenc")}
    low = " ".join(text.lower().split())
    if _NEWER.search(low):
        q = (q - {"repla"}) | {"super"}
    elif _OLDER.search(low):
        q = (q - {"super"}) | {"repla"}
    for stem, alts in _RELATED.items():
        if stem in q:
            q.update(alts)
    return frozenset(q)


# 'Which film came out first, Alpha or Beta?' / 'Was Ausaf Ali or Steven Perry born first?' /
# 'Who is older, Annie Morton or Terry Richardson?'
_TAIL_OPTIONS = re.compile(r"[,:]\s*(?:the\s+)?(.+?)\s*,?\s+or\s+(?:the\s+)?(.+?)\s*[?.!]*\s*$")
# 'who is younger Keith Bostic or Jerry Glanville ?': a comparative, then two names
_COMPARED_OPTIONS = re.compile(
    r"^(?i:who|which(?:\s+one)?)\s+(?i:is|was|are|were)\s+(?i:the\s+)?(?i:\w+er|more\s+\w+|"
    r"less\s+\w+)\s*,?\s+(?:the\s+)?([A-Z0-9\"'“][^?]*?)\s+or\s+(?:the\s+)?([A-Z0-9\"'“][^?]*?)"
    r"\s*[?.!]*\s*$")
_LEAD_OPTIONS = re.compile(
    r"^(?:is|are|was|were|did|does|do|has|have|had)\s+(?:the\s+)?(.+?)\s+or\s+(?:the\s+)?"
    r"((?:[A-Z0-9\"'“][^\s]*(?:\s+|$))+)", re.I)


# 'Which movie was filmed first "The Guest" or "You're Next"?': two quoted titles
_QUOTED_OPTIONS = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]\s*,?\s+or\s+[\"“]([^\"“”]{2,80})[\"”]")
# 'Which band, A or B, had more members?': the clause after the second option
_CLAUSE_AFTER = re.compile(r",\s+(?=[a-z])")


# 'Which genus has more species Eucryphia or Lepidozamia ?', 'Who was born first out of A
# and B?': a comparative, then two names ending the question ('and' only after 'out of' or
# 'between': 'the first President of Harvard and Yale' names no options)
_LAST_OPTIONS = re.compile(
    r"\b(?i:\w+er|more\s+\w+|less\s+\w+|first|last)\s+(?:(?P<of>(?i:out\s+of|between))\s+)?"
    r"(?:the\s+)?(?P<a>[A-Z0-9\"'“][^?,]*?)\s+(?P<join>or|and)\s+(?:the\s+)?"
    r"(?P<b>[A-Z0-9\"'“][^?,]*?)"
    r"\s*[?.!]*\s*$")


# 'Was it filed as a Standards Track PEP or as some other kind?': one option and an open
# other asks for the thing itself (a type here, 'some other version' a version)
# ... and so does one option and a question of its own: 'is it a process PEP, or what type
# is it?'
_OTHER_THING = re.compile(r"\bor\s+(?:as\s+|is\s+it\s+|was\s+it\s+)?(?:some|any|an)\s*other\s+"
                          r"([a-z]+)\b|\bor\s+something\s+else\b|"
                          r"\bor\s+(?:what|which)\s+([a-z]+)\s+(?:is|was|are|were)\s+(?:it|they)\b",
                          re.I)


def _options(text: str) -> tuple[str, ...]:
    """The two things a question asks to choose between ('A or B'), when it names them; not
    when one is a question word ('is it Standards Track, Informational, or which type?' asks
    which type)."""
    got = _named_options(text)
    if any(_words(o)[:1] and _words(o)[0] in _WH for o in got):
        return ()
    return got


def _named_options(text: str) -> tuple[str, ...]:
    t = text.strip()
    if _OTHER_THING.search(t):
        return ()
    m = _QUOTED_OPTIONS.search(t)
    if m:
        return (m.group(1).strip(), m.group(2).strip())
    m = _TAIL_OPTIONS.search(t)
    if m and " or " not in m.group(1):
        a = m.group(1).strip(" \"'“”")
        b = _CLAUSE_AFTER.split(m.group(2), maxsplit=1)[0].strip(" \"'“”")
        # a clause cut off the second option asks both to be names
        named = b == m.group(2).strip(" \"'“”") or (a[:1].isupper() and b[:1].isupper())
        if a and b and len(a) <= 80 and len(b) <= 80 and named:
            return (a, b)
    m = _COMPARED_OPTIONS.match(t)
    if m and " or " not in m.group(1):
        return (m.group(1).strip(" \"'“”"), m.group(2).strip(" \"'“”"))
    m = _LEAD_OPTIONS.match(t)
    if m:
        a = m.group(1).strip(" \"'“”")
        # the second option is the run of capitalised words after 'or'
        b_words: list[str] = []
        for tok in m.group(2).split():
            if not (tok[:1].isupper() or tok[:1].isdigit() or tok[:1] in "\"'“"
                    or tok.lower() in CONNECTORS or tok.lower() in ("of", "the", "and")):
                break
            b_words.append(tok)
        while b_words and b_words[-1].lower() in CONNECTORS | {"of", "the", "and"}:
            b_words.pop()
        b = " ".join(b_words).strip(" \"'“”?.,")
        if a and b and a[:1].isupper() and len(a) <= 80:
            return (a, b)
    m = _LAST_OPTIONS.search(t)
    if m and (m.group("join") == "or" or m.group("of")) and " or " not in m.group("a"):
        return (m.group("a").strip(" \"'“”"), m.group("b").strip(" \"'“”"))
    return ()


def _order(ws: tuple[str, ...]) -> str:
    """How a choice is made: 'first' (the earlier or older), 'last' (the later or younger),
    'more' or 'less' (a larger or smaller amount); '' when the question does not say."""
    for a, b in zip(ws, ws[1:], strict=False):
        if b in ("recent", "recently", "lately") and a in ("more", "most"):
            return "last"  # 'released more recently'
        if b in ("recent", "recently") and a in ("less", "least"):
            return "first"
    for w in ws:
        if w in _FIRST:
            return "first"
        if w in _LAST:
            return "last"
        if w in _MORE:
            return "more"
        if w in _LESS:
            return "less"
    return ""


def singular(word: str, known: Collection[str]) -> str:
    """``word``'s singular when that is one of ``known`` ('countries' -> 'country',
    'performers' -> 'performer'); ``word`` itself otherwise."""
    for cut, add in (("ies", "y"), ("s", "")):
        if word.endswith(cut) and word[: -len(cut)] + add in known:
            return word[: -len(cut)] + add
    return word


__all__ = ["CONNECTORS", "MONTHS", "NUMERIC_NOUNS", "QUESTION_WORDS", "STOPWORDS", "DateRef",
           "Question", "Target", "analyze", "names", "relation_stems", "singular"]
