"""Reading prose: a section read is narrowed to what can answer the question.

A 135M model cannot find the answer in a page of prose, but it can choose among a few
candidates. So, after a read, the engine does the finding:

1. **Sentences.** The text is cut into sentences (blank lines, then sentence ends; a code or
   list line is a unit of its own). Each is scored against the question: BM25 of the
   question's content words (on their first five letters, with the collection's own
   document frequencies) and, when the collection's query embedder is at hand, the cosine of
   the question's and the sentence's embeddings; the two rankings are fused (RRF, k = 60).
   The best few, in the document's order, are what the model is shown.
2. **Candidates.** Spans of those sentences of the kind the question asks for
   (``question.Target``): a person's name for "who", a date for "when", a number with its
   unit for "how many", a place for "where", a code identifier, a quoted string, a named
   entity or a short noun phrase otherwise. A span made only of the question's words is
   never a candidate. Entities and noun phrases come from spaCy's small English pipeline
   (``en_core_web_sm``, loaded on the first prose read); code identifiers, quoted strings and
   numbers with units from patterns of our own.
3. **A prior.** Each candidate carries the engine's belief: how well its sentence matches,
   whether it has the asked type, and how near it stands to the question's words.

``choice.py`` then lets the model choose among the best candidates (or abstain). Nothing
here knows a collection.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from ..words import words
from .lives import asked_fact, life_date, life_place
from .pipeline import nlp
from .places import is_demonym, lookup, nation
from .question import MONTHS, STOPWORDS, Question, analyze
from .roles import PERSON_NOUNS, PERSON_ROLES

MAX_SENTENCE_CHARS = 400       # a longer 'sentence' (a table, a code block) is cut
SHOWN_SENTENCES = 4            # sentences the model is shown of one read
CANDIDATE_SENTENCES = 5        # ... candidates are taken from the best (and the sentence
#                                after each of the best two: an answer often follows)
MAX_CANDIDATES = 8             # candidates offered to the model
MAX_CANDIDATE_WORDS = 6
_RRF_K = 60
DENSE_WEIGHT = 0.3  # the embedding ranking only breaks ties of the lexical one (bench/read.py)

# Abbreviations after which a period does not end a sentence.
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|al|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|No|Nos|Vol|"
                     r"Fig|approx|ca|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|"
                     r"Nov|Dec|U\.S|a\.k\.a)|\b[A-Z])\.$")
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[`*]?[A-Z0-9])")
_LIST_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|[a-z][.)])\s+")
_CODE_LINE = re.compile(r"^(?: {4}|\t|>>> |\.\.\. )")
# Code: ``literal``, `literal`, dotted.names, names_with_underscores, calls(), CamelCase with
# two capitals, ALLCAPS of three letters or more, operators made of symbols.
_BACKTICK = re.compile(r"``([^`\n]{1,60})``|`([^`\n]{1,60})`")
# Letters between digits or a digit between letters: a name ('2to3', 'py3k'), no quantity
_MIXED = re.compile(r"^(?:\d+[A-Za-z]+\d|[A-Za-z]+\d+[A-Za-z])\w*$")
_IDENT = re.compile(r"(?<![\w])\.?(?:[A-Za-z_][\w-]*\.)*[A-Za-z_][\w-]*(?:\(\))?(?![\w])")
# A name and a number: 'IEEE 854', 'Python 3.13', 'PEP 572', 'C11'.
_NAMED_NUMBER = re.compile(r"\b[A-Z][A-Za-z]{0,15}[ -]?\d+(?:\.\d+)*\b")
# Runs of capitalised words, with 'of' / 'de' / 'van' inside ('Numeric Prelude').
_CAPS = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:(?:of|de|van|von|the|du|la|del)\s+)?[A-Z][\w'’-]*)*")
_EMPHASIS = re.compile(r"\*{1,2}([^*\s][^*]*?)\*{1,2}")  # reST emphasis around words
_MARKUP = re.compile(r"\s*\[[^\]]{1,12}\]_|\s*<[^<>\s]{1,80}>|`_$|(?<=[A-Za-z0-9])_$|"
                     r"\s*\[\^?\d+\]")
# A reST footnote or citation reference ('[1]_', '[#dead-parrot]_', '[PEP8]_') and the
# label that starts its target ('.. [#dead-parrot] ...'): they point elsewhere, and a label
# ('dead-parrot') was taken for an answer.
_FOOTNOTE_REF = re.compile(r"\s*\[#?[\w.-]{1,40}\]_(?!\w)|^[ \t]*\.\.[ \t]+\[#?[\w.-]{1,40}\]",
                           re.M)
# ... and a bare address: no candidate is an address, and words cut out of one
# ('Regular_Expressions' of '.../wiki/Regular_Expressions') are no answer either
_BARE_URL = re.compile(r"<?\bhttps?://[^\s<>]+>?")
# Links whose target is an address: the reader keeps their words ('`JavaScript tagged
# template literals <https://...>`_', '[the RFC](https://...)'); the address is noise to the
# model, and its length kept the words from ever being a candidate.
_LINK = re.compile(r"`([^`<>\n]+?)\s*<[^<>`\s]+>`__?|\[([^\[\]\n]+)\]\((?:https?://|\.{0,2}/)[^()\s]*\)")
# A reST role that points at a PEP or an RFC (':pep:`8010`', ':pep:`the trio <8011>`') reads
# as what it renders: 'PEP 8010', 'the trio'. ('pep:`8010' was answered as a leader's name.)
_DOC_ROLE = re.compile(r":(pep|rfc):`(?:([^`<>\n]*?)\s*<)?(\d+)>?`", re.I)
_URL = re.compile(r"://|^www\.|\.(?:com|org|net|io|html?)\b|/", re.I)
# ... but a file's path written as code is a thing ('/etc/shadow', 'Misc/stable_abi.txt'), if
# it is absolute or names a file ('encukou/cpython' is a repository's address)
_PATH = re.compile(r"^(?:(?:/|~/)[\w.+-]+(?:/[\w.+-]+)*/?|[\w.+-]+(?:/[\w.+-]+)*/[\w+-]+\.\w+)$")
# Words that cannot be a unit after a number ('5 years', but not '5 of').
_NOT_UNIT = frozenset("""a an and are as at be by for from if in into is it of on or so than that
the then to was were which with""".split())
_OPERATOR = re.compile(r"(?<![^\s(\[\"'`])([:=<>!@*/%&|^~+-]{1,3})(?=[\s)\]\"'`,.;]|$)")
_QUOTE = re.compile(r"\"([^\"\n]{1,60})\"|“([^”\n]{1,60})”|(?<![\w])'([^'\n]{2,60})'(?![\w])")
# A number: '1,200', '3.5', '20%', '2-3', and written in scientific notation ('1e-9').
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?[eE][-+]?\d+|"
                     r"\d[\d,]*(?:\.\d+)*(?:[-–]\w+)?%?)(?![\w.]*\w)")
# A number with its unit written on: '10ms', '512MB', '2x'.
_UNIT_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[munµ]?s|[kKMGT]i?B|[kKMG]|[xX]|px)\b")
# A span of time in words: spaCy calls 'five years' a date, but it answers 'how long'.
_TIME_UNITS = ("second", "minute", "hour", "day", "week", "month", "year", "decade", "century",
               "centuries")
_DURATION = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|"
    rf"twenty|thirty|forty|fifty|sixty|ninety|a hundred|several|a few)[ -]"
    # ('fourteen calendar days')
    rf"(?:(?:calendar|business|working|full|more|consecutive)\s+)?(?:"
    rf"{'|'.join(_TIME_UNITS)})s?\b", re.I)
_YEARISH = re.compile(r"^(1[5-9]\d\d|20\d\d)s?$")
_MONTH_RE = "|".join(m.title() for m in MONTHS)
_DATE = re.compile(
    rf"\b\d{{1,2}}[-\s](?:{_MONTH_RE}|{'|'.join(m[:3].title() for m in MONTHS)})[a-z]*[-\s,]+"
    rf"\d{{4}}\b|\b(?:{_MONTH_RE})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b|"
    rf"\b(?:{_MONTH_RE})\s+\d{{4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b(?:1[5-9]\d\d|20\d\d)\b|"
    # ... and written in figures alone, US style ('On 9/29/2005, Guido decided ...')
    rf"\b(?:1[0-2]|0?[1-9])/(?:3[01]|[12]\d|0?[1-9])/(?:1[5-9]|20)\d\d\b")
_VERSION = re.compile(r"\b(?:[A-Z][a-z]+ )?\d+\.\d+(?:\.\d+)?(?:[abc]\d+|rc\d+)?\b")

# Which spaCy entity labels fit which kind of question.
_ENTITY_KINDS = {
    "who": {"PERSON": 1.0, "ORG": 0.6, "NORP": 0.3},
    "when": {"DATE": 1.0, "TIME": 0.6},
    "where": {"GPE": 1.0, "LOC": 1.0, "FAC": 0.8, "ORG": 0.5, "NORP": 0.3},
    "number": {"CARDINAL": 1.0, "QUANTITY": 1.0, "PERCENT": 1.0, "MONEY": 1.0, "DATE": 0.3},
}
# Nouns after 'what' / 'which' that ask for code ('What exception ...', 'Which function ...').
CODE_NOUNS = frozenset({
    "exception", "error", "warning", "function", "method", "module", "attribute", "keyword",
    "variable", "class", "decorator", "operator", "syntax", "statement", "flag", "option",
    "command", "field", "type", "builtin", "built", "name", "identifier", "constant", "macro",
    "parameter", "argument", "token", "symbol", "notation", "character", "prefix", "suffix",
    "package", "library", "protocol", "hook", "environment", "value", "string",
    "literal", "expression", "extension", "opcode", "instruction", "format", "encoding",
    "file", "header", "directive", "tag", "marker", "trait", "crate", "lint",
    "feature", "API", "api", "call", "object", "abbreviation", "word", "term",
})

# Words before 'manager' or 'editor' that make it software, not a person
_SOFTWARE_QUALIFIERS = frozenset({"context", "package", "memory", "window", "resource", "task",
                                  "session", "dependency", "text", "code", "password",
                                  "display", "environment", "plugin", "layout"})

# ... and the callings that name a person ('what American civil rights leader'), but for
# those a company or a thing fills as well ('which publisher', 'the head of').
_PERSON_ASKED = PERSON_ROLES - {"publisher", "producer", "head", "member", "host", "chief",
                                "successor", "predecessor", "player"}


@dataclass(frozen=True)
class Sentence:
    """One sentence of a read, with its place in the text and its score for the question."""

    text: str
    index: int                  # position among the read's sentences
    score: float = 0.0          # fused rank score (higher is better)
    coverage: float = 0.0       # share of the question's content (idf-weighted) it holds


@dataclass(frozen=True)
class Candidate:
    """A span of a sentence that may answer the question."""

    text: str                   # as written in the read text
    kind: str                   # person, date, number, place, code, quote, entity, phrase,
    #                             value (a header line's), option, yes, no
    sentence: int               # the sentence's index in the read
    prior: float                # the engine's belief, 0..1 (see ``score_candidates``)
    label: tuple[str, str] | None = None   # (doc, section) it was read in
    coverage: float = 0.0       # how much of the question its sentence (and the one before)
    #                             holds: an answer in a sentence about something else is a guess
    placed: bool = False        # said where the question's words put the answer ('sprint
    #                             in Brno' for 'In which city was the sprint')


@dataclass
class Reading:
    """What a read comes down to for the question: the best sentences (in the text's order)
    and the candidate answers in them, best first."""

    label: tuple[str, str] | None
    sentences: list[Sentence]
    candidates: list[Candidate] = field(default_factory=list)

    def text(self, fits: Callable[[str], bool] | None = None) -> str:
        """The sentences shown, in the text's order, '…' where text was left out; with
        ``fits``, only the best ones whose text still fits (always the best one)."""
        keep = list(self.sentences)
        if fits is not None:
            while len(keep) > 1 and not fits(_joined(keep)):
                keep.pop()  # the worst of those left (sentences are best first)
        return _joined(keep)


def _joined(sentences: Sequence[Sentence]) -> str:
    out: list[str] = []
    last = -2
    for s in sorted(sentences, key=lambda s: s.index):
        if out and s.index != last + 1:
            out.append("…")
        out.append(s.text)
        last = s.index
    return "\n".join(out)


# ------------------------------------------------------------------------------ sentences
def split_sentences(text: str) -> list[str]:
    """The sentences of a read: blocks at blank lines; a block of list or code lines keeps
    each line apart; other blocks are joined and cut at sentence ends (not after an
    abbreviation or an initial). An indented block is code only after '::' or a directive
    (else a definition's body or a quote: prose), and a definition list's term starts its
    definition's first sentence ('build_command: A mandatory key, ...'). Overlong pieces are
    cut at ``MAX_SENTENCE_CHARS``."""
    out: list[str] = []
    blocks = [[ln for ln in b.split("\n") if ln.strip()] for b in re.split(r"\n\s*\n", text)]
    blocks = [b for b in blocks if b]
    literal = False  # the block before introduced a literal block ('::', a directive)
    term = ""        # a definition list's term, said in its definition's first sentence
    for n, lines in enumerate(blocks):
        after_literal, literal = literal, bool(
            lines[-1].rstrip().endswith("::") or re.match(r"\s*\.\. ", lines[0]))
        indented = [bool(re.match(r"\s", ln)) for ln in lines]
        if after_literal and all(indented):
            pass  # a literal block: code, line by line
        elif len(lines) > 1 and not indented[0] and all(indented[1:]) and _is_term(lines[0]):
            # a definition list item ('build_command' over its indented definition 'A
            # mandatory key, ...'): the term starts the definition's first sentence
            term, lines = _term(lines[0]), [ln.strip() for ln in lines[1:]]
        elif len(lines) == 1 and _is_term(lines[0]) and n + 1 < len(blocks) and \
                re.match(r"\s", blocks[n + 1][0]) and not literal:
            # ... or a term of its own block ('| ``hexdigest()``') over an indented one
            term = _term(lines[0])
            continue
        elif all(indented) and not any(_LIST_LINE.match(ln) or ln.lstrip().startswith(
                (">>>", "...")) for ln in lines):
            lines = [ln.strip() for ln in lines]  # a definition's body, a block quote: prose
        if any(_LIST_LINE.match(ln) or _CODE_LINE.match(ln) for ln in lines) or \
                all(re.match(r"\s*[\w][\w .-]{0,40}:\s", ln) for ln in lines):
            pieces: list[str] = []
            for ln in lines:
                # a list item that wraps onto an indented line continues it
                if pieces and not _LIST_LINE.match(ln) and ln.startswith(" ") \
                        and not _CODE_LINE.match(ln):
                    pieces[-1] += " " + ln.strip()
                else:
                    pieces.append(ln.strip())
        else:
            joined = " ".join(ln.strip() for ln in lines)
            pieces = []
            for part in _SENT_END.split(joined):
                if pieces and _ABBREV.search(pieces[-1]):
                    pieces[-1] += " " + part
                else:
                    pieces.append(part)
        if term:
            pieces[0] = f"{term}: {pieces[0].strip()}"
            term = ""
        for p in pieces:
            p = " ".join(p.split())
            while len(p) > MAX_SENTENCE_CHARS:
                cut = p.rfind(" ", 0, MAX_SENTENCE_CHARS)
                cut = cut if cut > 40 else MAX_SENTENCE_CHARS
                out.append(p[:cut])
                p = p[cut:].strip()
            if p and any(ch.isalnum() for ch in p):
                out.append(p)
    return out


def _term(line: str) -> str:
    """A definition list's term as written on its line ('| ``hexdigest()``' -> the code)."""
    return line.strip().lstrip("|").strip()


def _is_term(line: str) -> bool:
    """Whether a line can be a definition list's term: a few words, no sentence."""
    t = _term(line)
    return bool(t) and len(t.split()) <= 6 and not t.endswith(("::", ".", ",", ";", ":")) \
        and not _LIST_LINE.match(t) and not _CODE_LINE.match(line) and t[:1] not in "+=-~^#*"


def rank_sentences(q: Question, sentences: Sequence[str], idf: Callable[[str], float],
                   embed: Callable[[list[str]], Any] | None = None) -> list[Sentence]:
    """The read's sentences scored for the question, best first: BM25 of the question's
    content words (first five letters; ``idf`` of each word), fused with embedding cosine
    when ``embed`` (texts -> normalised vectors, question first) is given."""
    if not sentences:
        return []
    qstems = {w[:5]: idf(w) for w in q.content}
    toks = [[w[:5] for w in words(s)] for s in sentences]
    avg = sum(len(t) for t in toks) / len(toks) or 1.0
    k1, b = 0.9, 0.4
    lex = []
    for t in toks:
        if not t:
            lex.append(0.0)
            continue
        norm = k1 * (1 - b + b * len(t) / avg)
        score = 0.0
        for stem, weight in qstems.items():
            tf = t.count(stem)
            if tf:
                score += weight * tf * (k1 + 1) / (tf + norm)
        lex.append(score)
    order = {i: r for r, i in enumerate(sorted(range(len(sentences)),
                                                 key=lambda i: (-lex[i], i)))}
    fused = [1.0 / (_RRF_K + order[i]) if lex[i] > 0 else 0.0 for i in range(len(sentences))]
    if embed is not None and len(sentences) > 1:
        # only the lexically plausible ones are embedded (the cost grows with the read)
        pool = sorted(range(len(sentences)), key=lambda i: order[i])[:24]
        vecs = embed([q.text] + [sentences[i] for i in pool])
        qv = vecs[0]
        sims = {i: float(vecs[j + 1] @ qv) for j, i in enumerate(pool)}
        dense = {i: r for r, i in enumerate(sorted(pool, key=lambda i: (-sims[i], i)))}
        for i in pool:
            fused[i] += DENSE_WEIGHT / (_RRF_K + dense[i])
    total = sum(qstems.values()) or 1.0
    cover = [sum(w for stem, w in qstems.items() if stem in set(t)) / total for t in toks]
    out = [Sentence(s, i, fused[i], round(cover[i], 3)) for i, s in enumerate(sentences)]
    return sorted(out, key=lambda s: (-s.score, s.index))


# ------------------------------------------------------------------------------ candidates
def _kind_weights(q: Question) -> dict[str, float]:
    """How well each kind of candidate fits what the question asks (1 fits, 0 never)."""
    t = q.target
    nouns = set(t.nouns)
    if t.kind == "who":
        return {"person": 1.0, "entity": 0.5, "phrase": 0.2, "code": 0.1}
    if t.kind == "when" or t.head in ("year", "date", "day"):
        # ('what's the last year it can hold' asks a date as 'when' does)
        return {"date": 1.0, "number": 0.4, "version": 0.3}
    if t.kind == "where":
        if any(_inflects(w, n) for w in q.content for n in _CODE_PLACES):
            # 'where does the tracer get relocated to' in a question about a package, 'where
            # does the launcher read its settings' about a config file: a module or a file
            # named in code is a place there
            return {"place": 1.0, "code": 0.8, "entity": 0.6, "quote": 0.5, "phrase": 0.3}
        return {"place": 1.0, "entity": 0.6, "phrase": 0.3}
    if t.kind == "number":
        return {"number": 1.0, "date": 0.2}
    if q.asks_version or t.head in ("version", "release"):
        return {"version": 1.0, "number": 0.6, "date": 0.2}
    # 'which context manager', 'what package manager', 'which text editor': software
    thing = t.head in ("manager", "editor") and bool(nouns & _SOFTWARE_QUALIFIERS)
    if (nouns & PERSON_NOUNS or t.head in _PERSON_ASKED) and not thing:
        return {"person": 1.0, "entity": 0.5, "phrase": 0.2}
    if nouns & {"month"}:
        return {"date": 1.0, "entity": 0.3}
    if nouns & CODE_NOUNS or thing:
        return {"code": 1.0, "quote": 0.9, "entity": 0.5, "phrase": 0.5, "word": 0.5, "named": 0.7,
                "number": 0.2, "person": 0.1}
    if nouns & {"percentage", "percent", "number", "count", "size", "amount", "limit", "share",
                "fraction", "proportion", "ratio", "majority", "quorum", "threshold"}:
        return {"number": 1.0}
    return {"phrase": 0.8, "entity": 0.8, "named": 0.8, "code": 0.7, "quote": 0.7, "person": 0.6,
            "place": 0.6, "number": 0.5, "date": 0.5, "version": 0.5, "word": 0.4}


# Things software lives in: a question about one asks 'where' of a module, a path, a file
_CODE_PLACES = frozenset({"module", "package", "file", "directory", "folder", "path", "library",
                          "namespace", "repository"})
# Python's three constants are named in nearly every PEP; they answer a question about a value
# ('What does it return?'), seldom one about anything else ('Which use of generators ...').
_CONSTANTS = frozenset({"None", "True", "False"})
# Two dots or more: a version ('1.0.0') or an address, which spaCy may call a CARDINAL.
_DOTTED = re.compile(r"^\d+\.\d+\.\d+")
# 'How long ...' is answered by a span of time or a size with its unit ('24 hours', 'five
# years', '79 characters', '10ms'), hardly by a bare number ('2.7' is a version) or one with
# another noun ('3.7.8 issues'); 'how often' by a time between ('every two or three years'),
# not a year ('2015')
_HOW_LONG = re.compile(r"\bhow\s+(?:long|often)\b", re.I)
_LENGTH_UNITS = frozenset((*_TIME_UNITS, *"""ms ns us µs s character line byte bit kb mb gb
kib mib gib release cycle""".split()))
# 'How much memory / storage / disk space ...' is answered by a size with its unit ('4 bytes',
# '180 MB'), not a bare count ('72,395' objects) or a version
_HOW_MUCH_SPACE = re.compile(r"\bhow\s+(?:much|big|large)\b.*\b(?:memory|storage|space|disk|ram|"
                             r"footprint)\b", re.I)
_RELATIVE = re.compile(r"%|\bper\s*cent\b|\d\s*[x×](?!\w)|\btimes\b|\bhalf\b|\bthirds?\b",
                       re.I)
_HOW_MANY = re.compile(r"\bhow\s+many\b(?!\s+times\b)", re.I)
_BARE_DECIMAL = re.compile(r"^\d+\.\d+$")
_SIZE_UNITS = frozenset("""bit byte kb mb gb tb kib mib gib tib kilobyte megabyte gigabyte
terabyte""".split())
_VALUE_NOUNS = frozenset({"value", "values", "result", "default", "constant", "sentinel"})
_ASKS_RETURN = re.compile(r"\bwhat\b.*\b(?:return|returns|returned|evaluates? to|yields?)\b", re.I)
# What an exception, an error or a warning is called: 'ValueError', 'StopIteration'.
_EXCEPTION_NAME = re.compile(r"^[\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Iteration|"
                             r"Group)$")
# Things written in capitals by convention: an environment variable ('PYTHONGIL'), a C macro
# ('PY_SSIZE_T_CLEAN'), a bytecode instruction ('PRINT_EXPR'); a function or module in their
# place ('os.fsencode()') is another thing
_CAPS_NAME = re.compile(r"^\$?(?:[A-Z][a-z]*_)?[A-Z][A-Z0-9_]*$")  # 'Py_HASH_CUTOFF' too


_ENV_VARIABLE = re.compile(r"\benvironment\s+variables?\b", re.I)


def _asks_caps_name(q: Question) -> bool:
    nouns, head = q.target.nouns, q.target.head
    # ('... using an environment variable? Which variable ...': the question says which)
    return (head in ("variable", "variables") and ("environment" in nouns
                                                  or bool(_ENV_VARIABLE.search(q.text)))) \
        or head in ("macro", "macros", "opcode", "opcodes") \
        or (head in ("instruction", "instructions") and "bytecode" in nouns)


def _says_unit(text: str, units: frozenset[str]) -> bool:
    """Whether a span says one of ``units``, after its number or alone ('24 hours', '10ms',
    'five years')."""
    return any(u in units or u.removesuffix("s") in units
               for u in (re.sub(r"^[\d.,]+", "", x) for x in words(text)))


def _kind_fit(q: Question, text: str, kind: str, weights: dict[str, float]) -> float:
    """How well a candidate of ``kind`` fits the question: its kind's weight, less for one of
    Python's constants unless a value is asked, for code that is no exception's name when an
    exception is (nor anything but code in capitals when an environment variable, a macro or
    an opcode is), for a number without a unit of size when 'how much memory' is asked, for
    a bare decimal when 'how many' is, for a span of months when 'what month' is, and for a
    bare number when 'how long' or 'how often' is asked; a dotted triple ('1.0.0') fits as a
    version."""
    if kind == "defined":
        return 1.0
    if kind == "number" and _DOTTED.match(text):
        kind = "version"  # '1.0.0' is a version or an identifier, never a quantity
    w = weights.get(kind, 0.0)
    if text in _CONSTANTS and q.target.head not in _VALUE_NOUNS \
            and not _ASKS_RETURN.search(q.text):
        return min(w, 0.1)
    if (q.target.head in _EXCEPTION_NOUNS or q.target.head in ("name", "names")
            and q.target.nouns & _EXCEPTION_NOUNS) and kind == "code" \
            and not _EXCEPTION_NAME.match(text):
        return 0.4 * w
    if _asks_caps_name(q) and not (kind == "code" and _CAPS_NAME.match(text)):
        return 0.4 * w  # ... nor is a phrase ('command-line flag') such a name
    if kind == "code" and q.target.head in _IDENTIFIER_NOUNS and len(text.split()) > 1:
        # a module, a function or a class is named by one identifier: 'grep whrandom' is a
        # command that uses one (1 of the 100 dev answers to such a question has a space)
        return 0.4 * w
    if kind == "number" and _BARE_DECIMAL.match(text) and _HOW_MANY.search(q.text):
        return min(w, 0.3)  # a count is whole: a bare '1.0' is a version, not how many
    if kind in ("number", "version", "date") and _HOW_MUCH_SPACE.search(q.text):
        # ... or a share of it ('by how much did it cut memory use': '10% to 20%')
        if not _RELATIVE.search(text) and not _says_unit(text, _SIZE_UNITS):
            return min(w, 0.3)
        return max(w, weights.get("number", 0.0))
    if kind in ("number", "date") and q.target.head == "month" and q.target.kind != "number" \
            and not any(x in MONTHS for x in words(text)):
        # 'in what month' is answered by a month's name, not a span of months ('18-24 months')
        return min(w, 0.3)
    if kind in ("number", "version", "date") and _HOW_LONG.search(q.text):
        if not _says_unit(text, _LENGTH_UNITS):
            return min(w, 0.3)
        # a span of time with its unit is what is asked, whatever the tagger calls it ('two
        # or three years' is a DATE to spaCy)
        return max(w, weights.get("number", 0.0))
    return w


_EXCEPTION_NOUNS = frozenset({"exception", "exceptions", "error", "warning"})
_IDENTIFIER_NOUNS = frozenset({"module", "package", "function", "method", "class",
                               "attribute", "exception", "variable", "opcode", "decorator",
                               "macro", "constant", "builtin", "identifier"})


def _entity_kind(label: str) -> str:
    return {"PERSON": "person", "DATE": "date", "TIME": "date", "GPE": "place", "LOC": "place",
            "FAC": "place", "CARDINAL": "number", "QUANTITY": "number", "PERCENT": "number",
            "MONEY": "number"}.get(label, "entity")


# A label that numbers a document ('PEP ', 'RFC-', '#'); right before a number it makes the
# number part of a name ('PEP 13')
_LABEL = r"(?:\b[A-Z]{2,}[ -]?|#)"
_LABEL_BEFORE = re.compile(_LABEL + "$")

_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "cf", "vs", "viz", "al", "et.al"})


def extract(q: Question, sentence: str, doc: Any = None) -> list[tuple[str, str, int]]:
    """(span, kind, character offset) of every candidate in one sentence, before filtering;
    ``doc``: spaCy's analysis of the sentence (entities and noun phrases), when at hand."""
    found: list[tuple[str, str, int]] = []
    for m in _BACKTICK.finditer(sentence):
        if re.search(r":[\w-]+:$", sentence[:m.start()]):
            continue  # a reST role (':pep:`8001`') points somewhere, it is not code
        g = 1 if m.group(1) is not None else 2
        found.append((m.group(g), "code", m.start(g)))
    for m in _QUOTE.finditer(sentence):
        g = next(i for i in (1, 2, 3) if m.group(i) is not None)
        found.append((m.group(g), "quote", m.start(g)))
    for m in _IDENT.finditer(sentence):
        tok = m.group(0).rstrip("-")
        core = tok.rstrip("()").lstrip(".")
        if core.lower() in _ABBREVIATIONS:
            continue  # 'e.g.' is no identifier
        if core.startswith("_") and "-" in core:
            continue  # a reST target ('.. _639-spec-field:'), not a name in any language
        caps = sum(1 for c in core if c.isupper())
        if ("_" in core or "." in tok.strip(".") or tok.endswith("()") or tok.startswith(".")
                or (caps >= 2 and core[1:] != core[1:].lower() and not core.isupper())
                or (core.isupper() and len(core.replace("-", "")) >= 3)
                or ("-" in core and len(core) > 4)):
            found.append((tok, "code", m.start()))
        elif core.isalpha() and core.islower() and len(core) > 2:
            # a plain lowercase word may be a name of a thing ('mypy', 'tomli', 'pyf')
            found.append((tok, "word", m.start()))
    for m in _NAMED_NUMBER.finditer(sentence):
        found.append((m.group(0), "version", m.start()))  # 'JDK 1.4', 'PEP 8001
    for m in _CAPS.finditer(sentence):
        if m.start() > 0 or " " in m.group(0):
            # a run of capitals is a constant's name ('CIRCLED TIMES', a Unicode name), as
            # one capitalised word is
            toks = m.group(0).split()
            caps = len(toks) > 1 and all(t.isupper() and len(t) > 1 for t in toks)
            found.append((m.group(0), "code" if caps else "entity", m.start()))
        # the owner of a possessive: "Cliff Wells' Python-DSV" -> 'Cliff Wells'
        owner = re.match(r"(.+?)['’]s?\s", m.group(0))
        if owner:
            found.append((owner.group(1), "entity", m.start()))
    for m in _OPERATOR.finditer(sentence):
        if m.group(1) not in ("-", "--", "*", "+", "/", "|", "&", "=", ":"):
            found.append((m.group(1), "code", m.start(1)))
    for m in _DATE.finditer(sentence):
        found.append((m.group(0), "date", m.start()))
    for m in _VERSION.finditer(sentence):
        found.append((m.group(0), "version", m.start()))
    for m in _UNIT_NUMBER.finditer(sentence):
        found.append((m.group(0), "number", m.start()))  # '10ms', '0.5MB', '2x'
    for m in _DURATION.finditer(sentence):
        found.append((m.group(0), "number", m.start()))  # 'five years' for 'how long'
    for m in _NUMBER.finditer(sentence):
        tok = m.group(0)
        kind = "date" if _YEARISH.match(tok) else "number"
        found.append((tok, kind, m.start()))
        # a number with its unit: '79 characters', '5-person committee'
        rest = sentence[m.end():]
        unit = re.match(r"\s?(?:[A-Za-z][a-z-]{1,20}|[kKMGT]i?B\b)", rest)
        if unit and unit.group(0).strip().lower() not in _NOT_UNIT:
            found.append((tok + unit.group(0), "number", m.start()))
    # 'Which JavaScript feature ...' -> 'JavaScript tagged template literals': the words
    # that follow a noun of the question's target name the thing of that kind
    for n in q.target.nouns - {q.target.head} if q.target.kind == "what" else ():
        for m in re.finditer(rf"(?i)\b{re.escape(n)}\w{{0,3}}((?:[ ][\w’'+.-]+){{1,4}})", sentence):
            said = sentence[m.start(): m.start(1)]   # the noun as the sentence writes it
            kept: list[str] = []
            for tok in m.group(1).split():
                if tok.lower() in STOPWORDS:
                    break
                if not tok[-1].isalnum():
                    # a phrase ends at a stop ('literals,'); other punctuation ends it unsaid
                    if tok[:-1] and tok[-1] in ",.;:)":
                        found.append((" ".join([said, *kept, tok[:-1]]), "named", m.start()))
                    break
                kept.append(tok)
                found.append((" ".join([said, *kept]), "named", m.start()))
    # 'Victoria Falls (...) is a waterfall in southern Africa': what a sentence defines as a
    # thing of the kind asked for is one (its place is the noun's, which the question says)
    head = q.target.head
    if q.target.kind in ("what", "where") and len(head) > 2:
        m = re.match(rf"\s*(?P<subject>[^\s(,][^(,]{{0,60}}?)\s*(?:\([^()]*\)\s*)?"
                     rf"(?:,[^,]{{0,60}},\s*)?(?:is|was|are|were)\s+(?:a|an|the|one of the)\s+"
                     rf"(?:[\w-]+\s+){{0,4}}?(?:\w+-)?(?P<head>{re.escape(head)}\w{{0,3}})\b",
                     sentence,
                     re.I)
        if m and len(m.group("subject").split()) <= MAX_CANDIDATE_WORDS:
            found.append((m.group("subject"), "defined", m.start("head")))
    if doc is not None:
        for ent in doc.ents:
            if ent.label_ == "ORDINAL":
                continue
            kind = _entity_kind(ent.label_)
            if kind in ("date", "number") and _MIXED.match(ent.text):
                kind = "code"  # '2to3', 'py3k': a name, whatever the tagger calls it
            found.append((ent.text, kind, ent.start_char))
        chunks = list(doc.noun_chunks)
        for i, nc in enumerate(chunks):
            toks = [t for t in nc if t.pos_ != "PRON"]
            while toks and (toks[0].pos_ == "DET" or toks[0].lower_ in STOPWORDS):
                toks = toks[1:]
            if not toks:
                continue
            span = doc[toks[0].i: nc.end]
            found.append((span.text, "phrase", span.start_char))
            # 'Chief of Protocol', 'University of Copenhagen': a phrase 'of' a phrase
            if i + 1 < len(chunks) and nc.end < len(doc) and doc[nc.end].lower_ == "of" \
                    and chunks[i + 1].start == nc.end + 1:
                whole = doc[toks[0].i: chunks[i + 1].end]
                found.append((whole.text, "phrase", whole.start_char))
            # the head noun alone, and a proper name inside ('the Python style guide')
            if len(toks) > 1 and toks[-1].pos_ in ("NOUN", "PROPN"):
                found.append((toks[-1].text, "phrase", toks[-1].idx))
    return found


def _inflects(word: str, other: str) -> bool:
    """Whether ``word`` is ``other`` or an inflection of it ('techniques', 'technique'), not
    a longer word that starts the same ('IndentationError', 'indented'): they agree but
    for the shorter one's last three letters ('RecursionError' is not 'RecursionOverflow')."""
    if word == other:
        return True
    if word[:5] != other[:5] or abs(len(word) - len(other)) > 3:
        return False
    short = min(len(word), len(other))
    return word[:short - 3] == other[:short - 3]


# A token written as code: a name joined with '_' or '.', or called ('raw_input', 'os.path',
# 'len()')
_CODE_TOKEN = re.compile(r"\w[_.]\w|\w\(\)")
_HYPHENED = re.compile(r"[a-z0-9]-[a-z0-9]", re.I)  # code joined by a hyphen ('pypi-explicit')


def _code_name(token: str) -> str:
    """A code token as the question's and a candidate's are compared: case-folded, a call's
    '()' left off ('os.fspath()' and 'os.fspath' are one name)."""
    return token.casefold().removesuffix("()")


def _tokens(q: Question) -> list[str]:
    """The question's whitespace-separated tokens, punctuation and a possessive left off."""
    return [tok.strip("?!,;:\"'()[]`").removesuffix("'s").removesuffix("’s")
            for tok in q.text.split()]


def _coded(q: Question) -> set[str]:
    """The code names the question writes ('dataclass_transform', 'os.fspath()'), compared
    as ``_code_name`` compares them."""
    return {_code_name(tok) for tok in _tokens(q) if _CODE_TOKEN.search(tok)}


def _said(q: Question) -> set[str]:
    """The question's words as it writes them: a code name is one word ('raw_input', so
    that 'input' is not a word of the question), stopwords left out."""
    out: set[str] = set()
    for tok in _tokens(q):
        if _CODE_TOKEN.search(tok):
            out.add(_code_name(tok))
        else:
            if _HYPHENED.search(tok):
                out.add(_code_name(tok))  # 'License-Expression', written whole
            out |= {w for w in words(tok) if w not in STOPWORDS}
    # a term the question quotes is said in any of its code spellings: 'disjoint_base' for
    # "Before settling on 'disjoint base', what term ..." repeats it
    for quoted in q.quotes:
        ws = words(quoted)
        if 1 < len(ws) <= 4:
            out |= {_code_name(sep.join(ws)) for sep in ("_", "-", "")}
    return out


def written_whole(q: Question, text: str) -> bool:
    """Whether the question writes the code name ``text`` as one word ('raw_input'), not
    only the words it is joined from ('external hosting' for 'EXTERNAL-HOSTING.json')."""
    return _code_name(text) in _said(q)


def score_candidates(q: Question, ranked: list[Sentence], label: tuple[str, str] | None,
                     use_nlp: bool = True, top: int = CANDIDATE_SENTENCES,
                     persons: Callable[[str], bool] | None = None) -> list[Candidate]:
    """Candidates from the best ``top`` sentences, best first. The prior of a candidate is
    its sentence's score relative to the best sentence, times how well its kind fits the
    question (``_kind_weights``), times its nearness to the question's words in the sentence
    (1 when next to one, falling with distance), times 0.6 when it shares words with the
    question. Candidates made only of the question's words or stopwords are left out.
    ``persons`` (a name -> whether the collection knows it as a person's) makes a name the
    tagger did not call a person one ('Christian Heimes', an author here, is no company)."""
    if not ranked or ranked[0].score <= 0:
        return []
    weights = _kind_weights(q)
    asked = _said(q)
    coded = _coded(q)
    split = set(q.words)
    counted = q.target.counted  # 'how many bytes': '8 bytes' says the count with its unit
    qstems = q.stems
    best = ranked[0].score
    by_index = {s.index: s for s in ranked}
    pool: dict[int, float] = {}
    for s in ranked[:top]:
        if s.score > 0:
            pool.setdefault(s.index, s.score / best)
    for s in ranked[:2]:
        after = by_index.get(s.index + 1)
        if s.score > 0 and after is not None and after.index not in pool:
            pool[after.index] = 0.8 * s.score / best  # the answer often follows the match
    out: dict[str, Candidate] = {}
    pipeline = nlp() if use_nlp else None
    docs = dict(zip(pool, pipeline.pipe(by_index[i].text for i in pool), strict=True)) \
        if pipeline is not None else {}
    for index, rel in pool.items():
        s = by_index[index]
        # where the question's words are in the sentence (character offsets)
        marks = [m.start() for m in re.finditer(r"\w+", s.text)
                 if m.group(0).lower()[:5] in qstems and m.group(0).lower() not in STOPWORDS]
        for text, kind, at in extract(q, s.text, docs.get(index)):
            # markup is not part of an answer: reST references ('[1]_', '<mypy_>', 'name`_')
            text = _MARKUP.sub("", text).strip(" ,;:.`")
            if kind != "code":
                text = _EMPHASIS.sub(r"\1", text)  # '*executable* permission'
            if kind == "quote":
                text = text.replace("`", "")  # 'missing ``zlib``': a message, quoted
            if _URL.search(text) and not (kind == "code" and _PATH.match(text)) \
                    and not (kind == "date" and _DATE.fullmatch(text)):  # '9/29/2005'
                continue  # an address is where something is, not what it is
            if persons is not None and kind in _PERSON_LIKE and \
                    weights.get("person", 0.0) > weights.get(kind, 0.0) and \
                    text[:1].isupper() and persons(text):
                kind = "person"
            w = 1.0 if _names_asked(q, text) else _kind_fit(q, text, kind, weights)
            if q.target.asks_kind and _name_of(text, q.target.head):
                # 'What kind of university ...' asks for a kind ('a land-grant university'),
                # which no name of one ('Rutgers University') is ('Standards Track' may be
                # the type of a PEP)
                w *= NOT_A_KIND
            if not text or w <= 0:
                continue
            if kind in ("number", "date") and text.isdigit() and \
                    _LABEL_BEFORE.search(s.text[max(0, at - 12):at]):
                continue  # 'PEP 13', 'RFC 2119', '#42': a number that names, not a count
            ws = words(text)
            # an initial alone ('T' of 'T. R. M. Howard') is no answer, nor is markup, nor
            # the rest of a reference a span cut in two ('8]_' of '[8]_')
            if (len(text) == 1 and text.isalpha()) or "`" in text or "]_" in text or \
                    text.count("[") != text.count("]"):
                continue
            # made only of the question's words ('techniques' for 'What technique'): no
            # answer; a quantity of more than one word is news even in common words ('two
            # years': both are search stopwords)
            if not ws or len(ws) > MAX_CANDIDATE_WORDS:
                continue
            common = STOPWORDS if len(ws) == 1 or kind not in ("number", "date") else ()
            # ... but a code name joined from them is news when the question does not write
            # it ('NEXT_BUFFER' for 'which opcode ... the next buffer'): compared whole
            # ('os.fsencode()' is not 'os.fspath()': code names are not inflected); a name of
            # one word and stopwords ('__all__', 'abi3t.so' for 'the abi3t tag') is not news
            # (joined by a hyphen only when written as code: 'third-party' is two words)
            joined = kind == "code" and sum(w not in STOPWORDS for w in ws) >= 2 and bool(
                _CODE_TOKEN.search(text)
                or (_HYPHENED.search(text) and s.text[max(0, at - 1):at] == "`"))
            if _code_name(text) in asked if joined else all(
                    w in common or any(_inflects(w, a) for a in asked) for w in ws):
                continue
            if kind == "code" and "." in text.strip(".") and \
                    _code_name(text.strip(".").rsplit(".", 1)[-1]) in coded:
                # the question's own code name in a namespace ('typing.dataclass_transform'
                # for 'dataclass_transform has no cmp option; which library ...') repeats it
                continue
            # sharing a word with the question, as BQL splits it ('raw' of 'raw_input'),
            # makes a candidate less likely the answer; but not the noun asked for: 'What
            # kind of quotes ...' is answered by 'triple double quotes', and such a
            # phrase names a thing of the asked kind, as does a name that holds the noun
            # ('World War II' for 'which war')
            headed = (len(ws) > 1 and any(_inflects(ws[-1], n) for n in q.target.nouns)) or \
                any(_inflects(ws[0], n) for n in q.target.nouns - {q.target.head}) or \
                (len(ws) > 1 and text[:1].isupper() and text.split()[-1][:1].isupper()
                 and any(_inflects(w, q.target.head) for w in ws[1:]))
            shared = set(ws) & split - STOPWORDS
            if headed:
                shared = {x for x in shared if not any(_inflects(x, n) for n in q.target.nouns)}
            if kind == "code" and shared and _qualifies_head(q, text):
                # 'dict.get()' for 'which dict method': the word the question puts before the
                # noun asked is the namespace the name is written in; its news is the rest
                shared = set()
            if counted and kind == "number" and len(ws) > 1 and _inflects(ws[-1], counted):
                shared.discard(ws[-1])  # the unit counted ('8 bytes'), not a word repeated
            # ... but not a version that names what it versions ('Python 3.16' for 'By which
            # release ... the python.org installer'): its news is the number
            if kind == "version" and all(w in shared or any(ch.isdigit() for ch in w)
                                         for w in ws):
                shared = set()
            overlap = 0.6 if shared else 1.0
            if marks:
                dist = min(abs(at - m) for m in marks) / 40.0
                near = 1.0 / (1.0 + dist)
            else:
                near = 0.3
            placed = False
            if (kind in _NAMING_KINDS and _names_the_noun(q, s.text[at + len(text):])
                    and not is_demonym(text)) or _named_after(
                        q, s.text[:at], kind, text, s.text[at + len(text):]):
                # said as the thing asked, by name: right before the noun asked ('Which
                # cookbook recipe ...' and 'the ``execmodule`` cookbook recipe'), or after
                # it and 'like' ('an extensible allocator like mimalloc'), or after
                # 'called' when a name is asked ('the type should be called rat')
                near, placed = 1.0, True
                w = max(w, IN_PLACE_FIT)
            elif q.lead_in and _in_place(q.lead_in, s.text[:at]):
                # 'located in what county' and '... is located in Avery County': the span
                # stands where the question word stands, and is of the kind it asks for
                near, placed = 1.0, kind != "word"
                w = max(w, IN_PLACE_FIT) if kind != "word" else w
            if placed and set(ws) - split - STOPWORDS:
                # said as the thing asked ('the ``importlib.eager_imports()`` context
                # manager' for 'what context manager in importlib'): the words it shares
                # with the question qualify it, and it says more
                overlap = 1.0
            prior = rel * w * (0.4 + 0.6 * near) * overlap
            key = " ".join(ws)
            old = out.get(key)
            before = by_index.get(s.index - 1)
            cover = max(s.coverage, min(1.0, s.coverage + 0.5 * (before.coverage
                                                                  if before else 0.0)))
            if old is None or prior > old.prior:
                out[key] = Candidate(text.strip("`'\""), kind, s.index, round(prior, 4), label,
                                     round(cover, 3), placed)
    return sorted(_named_as_asked(q, out.values()), key=lambda c: (-c.prior, len(c.text)))


def _qualifies_head(q: Question, text: str) -> bool:
    """Whether a dotted code name's namespace is the word the question puts right before
    the noun it asks for, and its name is news: 'dict.get()' for 'which dict method',
    'os.fsencode' for 'which os function' (not 'distutils.version' for 'what should I use
    instead of distutils.spawn': there the question does not ask for a distutils thing)."""
    qualifier, dot, name = text.rstrip("()").rpartition(".")
    head = q.target.head
    if not dot or not head or not set(words(name)) - set(q.words):
        return False
    last = words(qualifier)[-1:]
    return bool(last) and any(_inflects(q.words[i], head) and q.words[i - 1] == last[0]
                              for i in range(1, len(q.words)))


# Kinds the tagger gives a person's name it does not know ('Christian Heimes': an ORG)
_PERSON_LIKE = frozenset({"entity", "phrase", "named"})
NOT_NAMED = 0.3   # the prior's factor for another name when one is named as asked
NOT_A_KIND = 0.5  # ... for a name of the noun asked when the question asks what kind
IN_PLACE_FIT = 0.9  # the kind's fit of a span said where the question word stands
_ARTICLES = frozenset({"the", "a", "an"})


def _in_place(lead: tuple[str, ...], before: str) -> bool:
    """Whether the text right before a span ends with the question's two lead-in words
    (first five letters each): the second right before it (an article between is skipped),
    the first right before that or one word earlier ('keynote presentation at PyCon' for
    'his keynote at which conference')."""
    ws = words(before)[-4:]
    while ws and ws[-1] in _ARTICLES:
        ws.pop()
    return len(lead) == 2 and len(ws) >= 2 and ws[-1][:5] == lead[1][:5] and \
        any(w[:5] == lead[0][:5] for w in ws[-3:-1])


_NAMING_KINDS = frozenset({"code", "quote", "entity", "place", "person", "version"})
_AFTER_NAME = re.compile(r"^[`'\"*”’]*\s+((?:[\w-]+\s+){0,2}[\w-]+)")


def _names_the_noun(q: Question, after: str) -> bool:
    """Whether the text right after a span is the noun the question asks for, alone or with
    the other nouns it names ('`` cookbook recipe' for 'Which cookbook recipe ...')."""
    head = q.target.head
    if q.target.kind != "what" or len(head) < 3 or q.target.asks_kind:
        return False
    m = _AFTER_NAME.match(after)
    if not m:
        return False
    ws = m.group(1).lower().split()
    for i, w in enumerate(ws):
        if _inflects(w, head):
            return all(any(_inflects(x, n) for n in q.target.nouns) for x in ws[:i])
    return False


_NAME_NOUNS = frozenset({"name", "names", "term", "word", "alias", "nickname", "spelling"})
_CALLED = re.compile(r"\b(?:called|named|dubbed|renamed(?:\s+to)?|(?:known|referred\s+to)\s+as|"
                     r"(?:under|by|with)\s+the\s+name)"
                     r"(?:\s+(?:the|a|an))?[\s`'\"*“‘]*$", re.I)
# a label and a number ('PEP 293', 'RFC 2119', '#123'): a reference to a document, not a
# name of the thing asked
_CITED = re.compile(_LABEL + r"\d+")
_QUOTED_AFTER = re.compile(r"([\w-]+)\s*:?\s*[\"“'‘]$")
_IN_PARENS = re.compile(r"([\w-]+)\s*\([\s`'\"*“‘]*$")
_EXAMPLE_OF = re.compile(r"([\w-]+)\s+(?:like|such\s+as|namely|e\.g\.,?|including)[\s`'\"*“‘]*$",
                         re.I)


def _named_after(q: Question, before: str, kind: str, text: str = "", after: str = ""
                 ) -> bool:
    """Whether the text right before a span says the span is the thing asked, by name: the
    noun asked then 'like' or 'such as' ('an extensible allocator like mimalloc' for
    'which extensible allocator'), or, when a name is asked ('what shorter name', 'what
    was it called') or code, 'called', 'named' or 'under the name' ('should be called
    rat')."""
    t = q.target
    if t.kind != "what" or t.asks_kind or len(t.head) < 3:
        return False
    if _CALLED.search(before[-40:]):
        # a name is asked, or code (a function, an option: things known by their names)
        return t.head in _NAME_NOUNS or t.head in CODE_NOUNS or \
            bool({"called", "named"} & set(q.words))
    m = _EXAMPLE_OF.search(before[-60:])
    # the noun asked, then the name alone in brackets ('utilities (``ctlint``)') or quoted ('a
    # message "missing zlib"'); not when a name is asked: every candidate of 'which name' is
    # introduced so ('The name "time.try_monotonic()" was also proposed')
    apposed = t.head not in _NAME_NOUNS and kind in _NAMING_KINDS
    if m is None and apposed and re.match(r"[`'\"*”’]*\)", after) and \
            not _CITED.fullmatch(text):
        m = _IN_PARENS.search(before[-60:])
    if m is None and apposed and kind == "quote":
        m = _QUOTED_AFTER.search(before[-60:])
    return bool(m) and _inflects(m.group(1).lower(), t.head)


def _named_as_asked(q: Question, cands: Iterable[Candidate]) -> list[Candidate]:
    """'Which county ...' is answered by a name that ends in 'County' ('Avery County') when
    the sentences hold one: then other names and phrases fit less, unless said where the
    question puts the answer (``Candidate.placed``). Not for 'What kind of university ...',
    which asks for a kind, not a name."""
    cands = list(cands)
    named = [_names_asked(q, c.text) for c in cands]
    if not any(named):
        return cands
    return [c if is_named or c.placed or c.kind not in ("entity", "place", "phrase", "person",
                                                        "named")
            else _fits_less(c) for c, is_named in zip(cands, named, strict=True)]


def _fits_less(c: Candidate) -> Candidate:
    """A candidate beside one the engine knows is of the kind asked (a name that ends in the
    noun asked, a life fact): its prior times ``NOT_NAMED``."""
    return replace(c, prior=round(c.prior * NOT_NAMED, 4))


def _names_asked(q: Question, text: str) -> bool:
    """Whether ``text`` is a name that ends in the noun asked for ('Sangre de Cristo Range'
    for 'what mountain range'), or a state or country known to be one ('Minnesota' for 'in
    what state', ``places``); such a name fits the question fully, whatever its kind."""
    head = q.target.head
    if q.target.kind not in ("what", "where") or len(head) < 3 or q.target.asks_kind:
        return False
    if text[:1].isupper() and head in ("state", "province", "country"):
        # 'In what state ...': 'Minnesota' is a state, 'Golden Valley' is not known to be
        # one, and 'United States' is a country ('American' its people, not a country)
        found = lookup(" ".join(words(text)))
        if found is not None:
            return (found[1] == "nation") == (head == "country") and \
                (head != "country" or nation(text) != " ".join(words(text)))
    return _name_of(text, head)


def _name_of(text: str, noun: str) -> bool:
    """Whether ``text`` is a name of a ``noun``: its last word, or the word before 'of' in a
    name built on it, is that noun, capitalised ('Sangre de Cristo Range', 'Anglican Church
    of Canada' for 'church', 'University of Chicago')."""
    toks = text.split()
    if len(toks) < 2:
        return False
    heads = [toks[-1]] + [toks[i - 1] for i in range(1, len(toks) - 1)
                          if toks[i] == "of" and toks[i + 1][:1].isupper()]
    return any(h[:1].isupper() and _inflects(h.lower(), noun) for h in heads)


_BLANK = re.compile(r"_{2,}")
_WORD = re.compile(r"\w+")
MIN_BLANK_CONTEXT = 4   # words around a blank that must match the text, on both sides at once
MAX_BLANK_WORDS = 4     # words a blank may stand for


def fill_blank(question: str, text: str) -> tuple[str, int] | None:
    """The words of ``text`` that fill the blank ('___') of a passage the question quotes,
    and where they start: the place whose words before and after match the question's words
    around the blank for longest (at least ``MIN_BLANK_CONTEXT`` of them, with at least one
    on each side the blank has). None without a blank, or when no place matches well enough.
    The text decides: a blank filled by its own sentence needs no model."""
    m = _BLANK.search(question)
    if m is None:
        return None
    before, after = question[: m.start()], question[m.end():]
    # a blank that opens or closes the quoted passage has no passage words on that side
    # (an apostrophe is a quotation mark only away from a word: "Barry ___'s idea")
    left = [] if re.search(r"(?:[\"“]|(?<!\w)')\s*$", before) else \
        [w.lower() for w in _WORD.findall(before)]
    right = [] if re.match(r"\s*(?:[\"”]|'(?!\w))", after) else \
        [w.lower() for w in _WORD.findall(after)]
    toks = list(_WORD.finditer(text))
    low = [t.group(0).lower() for t in toks]
    best: tuple[int, int, int] | None = None   # (words matched, -words filled, start)
    for i in range(len(toks)):
        back = 0
        while back < len(left) and i - 1 - back >= 0 and low[i - 1 - back] == left[-1 - back]:
            back += 1
        if left and back == 0:
            continue
        for n in range(1, MAX_BLANK_WORDS + 1):
            if i + n > len(toks):
                break
            fwd = 0
            while fwd < len(right) and i + n + fwd < len(toks) and \
                    low[i + n + fwd] == right[fwd]:
                fwd += 1
            if right and fwd == 0:
                continue
            score = back + fwd
            if score >= MIN_BLANK_CONTEXT and (best is None or (score, -n) > best[:2]):
                best = (score, -n, i)
    if best is None:
        return None
    n, i = -best[1], best[2]
    start, end = toks[i].start(), toks[i + n - 1].end()
    return text[start:end], start


def read_for(q: Question | str, text: str, label: tuple[str, str] | None,
             idf: Callable[[str], float], embed: Callable[[list[str]], Any] | None = None,
             persons: Callable[[str], bool] | None = None,
             shown: int = SHOWN_SENTENCES, use_nlp: bool = True) -> Reading:
    """Narrow one read to the question: its best sentences and their candidates. A blank
    the question quotes, found in the text, is a candidate of its own (kind 'blank').
    ``persons``: see ``score_candidates``."""
    q = analyze(q)
    text = _DOC_ROLE.sub(lambda m: m.group(2) or f"{m.group(1).upper()} {m.group(3)}", text)
    plain = _LINK.sub(lambda m: m.group(1) or m.group(2), text)
    sentences = split_sentences(_BARE_URL.sub("", _FOOTNOTE_REF.sub("", plain)))
    ranked = rank_sentences(q, sentences, idf, embed)
    keep = [s for s in ranked[:shown] if s.score > 0] or ranked[:1]
    cands = score_candidates(q, ranked, label, use_nlp, persons=persons)
    filled = fill_blank(q.text, text)
    if filled is not None:
        fill, _at = filled
        where = next((s for s in ranked if fill in s.text), None)
        if where is not None and where not in keep:
            keep = [where, *keep[: max(0, shown - 1)]]
        cands = [Candidate(fill, "blank", where.index if where else 0, 1.0, label, 1.0),
                 *(c for c in cands if c.text != fill)]
    fact = life_fact(q, sorted(ranked, key=lambda s: s.index), label)
    if fact is not None:
        # 'When was X born?': the date the life span gives first is the one, not the other
        # dates the read holds; like a header line's value, the engine reads it
        where = next(s for s in ranked if s.index == fact.sentence)
        if where not in keep:
            keep = [where, *keep[: max(0, shown - 1)]]
        rivals = ("date", "number") if fact.kind == "date" else \
            ("place", "entity", "named", "phrase", "person")
        cands = [fact, *(_fits_less(c) if c.kind in rivals else c
                         for c in cands if c.text != fact.text)]
    return Reading(label, keep, cands[: MAX_CANDIDATES * 2])


def life_fact(q: Question, sentences: Sequence[Sentence],
              label: tuple[str, str] | None = None) -> Candidate | None:
    """For a question that asks when or where a named person was born or died (``lives``),
    the date or place a read about them gives (its first sentence names them), as a
    candidate the engine is sure of (prior 1): read from the text, ``sentences`` in the
    text's order, with the life-span patterns, in the sentence that says it. None
    otherwise."""
    asked = asked_fact(q)
    # the person must be named, and the read must open with them: 'X's father' is still a
    # role to go through, and a page that only mentions the person gives another's life
    if asked is None or not asked.named() or not sentences \
            or not asked.said_in(sentences[0].text):
        return None
    which, what = asked.which, asked.what
    for s in sentences:
        if what == "date":
            # a later sentence's parentheses are another thing's dates ('Pulse (1950)')
            when = life_date(s.text, which, span=s is sentences[0])
            found = when.text if when is not None else ""
        else:
            at = life_place(s.text, which)
            found = at[0] if at is not None else ""
        if found:
            return Candidate(found, what, s.index, 1.0, label, max(s.coverage, COVERED_FACT))
    return None


COVERED_FACT = 0.6   # a life fact's sentence answers the question whatever its words


def collection_idf(coll: Any) -> Callable[[str], float]:
    """A word's inverse document frequency in the collection (section texts), cached."""
    from ..store import reads

    n = max(1, int(getattr(coll, "sections", 0) or 0) or reads.section_count(coll.conn))

    @lru_cache(maxsize=4096)
    def idf(word: str) -> float:
        df = reads.term_rows(coll.conn, "body", word)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    return idf


def collection_persons(coll: Any) -> Callable[[str], bool] | None:
    """A name (two to four words of letters) -> whether the collection's author field holds
    it as a phrase, cached; None when the collection has no authors. The index says who is a
    person, as it does for the planner's names: no list of names."""
    if "author" not in (getattr(coll, "fields", None) or ()):
        return None
    from .queries import admits

    @lru_cache(maxsize=1024)
    def known(ws: tuple[str, ...]) -> bool:
        # a phrase of validated words (letters only), never the text as written
        return admits(coll, f'"{" ".join(ws)}"[author]') > 0

    def is_person(name: str) -> bool:
        ws = tuple(words(name))
        return 2 <= len(ws) <= 4 and all(w.isalpha() for w in ws) and known(ws)

    return is_person


_READERS: dict[int, tuple[Any, Callable[[str], float], Callable[[list[str]], Any] | None,
                          Callable[[str], bool] | None]] = {}


def reader_for(tools: Any) -> tuple[Callable[[str], float], Callable[[list[str]], Any] | None,
                                    Callable[[str], bool] | None]:
    """(idf, embed, persons) of the episode's collection, made once per open collection."""
    coll = getattr(tools, "coll", None)
    if coll is None:
        return (lambda _w: 1.0), None, None
    got = _READERS.get(id(coll))
    if got is None or got[0] is not coll:
        # No embedder: fused with the sentences' embeddings the gold sentence came first
        # less often than by its words alone (33-36 against 37 of 49 natural PEP questions,
        # bench/read.py), and embedding a read cost a second on a busy machine.
        got = (coll, collection_idf(coll), None, collection_persons(coll))
        _READERS.clear()  # one collection at a time: a closed one's entry is dropped
        _READERS[id(coll)] = got
    return got[1], got[2], got[3]


def collection_embedder(coll: Any) -> Callable[[list[str]], Any] | None:
    """Texts -> normalised vectors with the collection's query embedder; None when the
    collection has no vectors or the embedder cannot be loaded here."""
    if not getattr(coll, "has_vectors", False):
        return None
    try:
        from ..embed import get_query_embedder

        model = get_query_embedder(coll.embed_model)
    except Exception:  # no embedder installed: lexical sentences only
        return None
    return lambda texts: model.encode(texts)


__all__ = ["CODE_NOUNS", "Candidate", "Reading", "Sentence", "collection_embedder",
           "collection_idf", "collection_persons", "extract", "nlp", "rank_sentences",
           "read_for", "reader_for", "score_candidates", "split_sentences", "written_whole"]
