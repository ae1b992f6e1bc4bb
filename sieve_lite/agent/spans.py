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

from .question import NUMERIC_NOUNS as _NUMERIC
from .question import Target, analyze, relation_stems
from .roles import PERSON_NOUNS
from .syntax import gbnf_literal

# Punctuation taken off both ends of a chunk. Not '*' (``except*``), '_' (``__qname__``),
# '-', '+', '/', '@' or '.' inside a chunk (versions, identifiers).
_EDGE = "\"'`.,;:!?()[]{}<>|=~"
# reST and Markdown reference markers ('[2]_', 'foo`_', '[^1]'): never part of an answer
_MARKER = re.compile(r"\]_|`_|\[\^")
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
    source: int = -1                           # where: the source's index, and the span's
    first: int = 0                             # first and last chunk in it
    last: int = 0


def _chunks(text: str) -> list[tuple[str, int, int]]:
    """(core, start, end) of each chunk of ``text``: whitespace-separated, edge punctuation
    stripped, empty or overlong cores dropped. Offsets are into ``text``."""
    out = []
    for m in re.finditer(r"\S+", text):
        raw = m.group(0)
        lo = len(raw) - len(raw.lstrip(_EDGE))
        core = raw.strip(_EDGE)
        if core and len(core) <= MAX_CHUNK_CHARS and "\\" not in core and not _MARKER.search(core):
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
        if not self.succ:
            # Nothing quotable: an empty rule would not even parse. A lone dash can be
            # written, and is then refused as not grounded.
            return f'{root} ::= "-"\n'
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
                        labels=list(dict.fromkeys(labels)), source=si, first=first, last=last)

    def on_key_line(self, span: Grounded) -> bool:
        """Whether ``span`` is (part of) the value of a 'key: value' line."""
        if span.source < 0:
            return False
        text = self.sources[span.source].text
        start = self.chunked[span.source][span.first][1]
        line = text[text.rfind("\n", 0, start) + 1: start]
        return bool(re.match(r"\s*[\w][\w .-]{0,40}:\s", line))

    def item(self, span: Grounded) -> str:
        """The whole list item of a 'key: value' line that ``span`` falls in ('Tony' in
        'Author: Collin Winter, Tony Lownds' -> 'Tony Lownds'), or the span's text."""
        if not self.on_key_line(span):
            return span.text
        text = self.sources[span.source].text
        start = self.chunked[span.source][span.first][1]
        end = self.chunked[span.source][span.last][2]
        lo = text.rfind("\n", 0, start) + 1
        hi = text.find("\n", end)
        hi = len(text) if hi < 0 else hi
        colon = text.find(":", lo)
        value_lo = colon + 1 if 0 <= colon < start else lo
        a = max(text.rfind(",", value_lo, start), text.rfind(";", value_lo, start))
        b = [i for i in (text.find(",", end, hi), text.find(";", end, hi)) if i >= 0]
        item = text[(a + 1 if a >= 0 else value_lo): (min(b) if b else hi)]
        item = " ".join(item.split()).strip(_EDGE + " ")
        return item if span.text in item else span.text

    def support(self, span: Grounded, stems: set[str], window: int = 12) -> int:
        """How many of ``stems`` (the question's content words, on their first five letters)
        occur in ``span`` or within ``window`` chunks of it in its source: an
        answer is only as good as the words around it. A span on a 'key: value' line also
        counts its key."""
        from ..words import words

        if span.source < 0:
            return 0
        ch = self.chunked[span.source]
        near = ch[max(0, span.first - window): span.last + 1 + window]
        found = {w[:5] for c, _s, _e in near for w in words(c)} & stems
        return len(found)


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


# What a 'key: value' line's key must say for its value to answer the question, beyond the
# question's own words: who -> a person's role, when -> a moment. Plain English, no collection's
# vocabulary.
_AUTHORS = ("author", "authors", "by", "writer", "written")
# A header value that names other documents by number ('435', 'PEP 435', '3101, 3102').
_REFERENCE = re.compile(r"(?:[A-Za-z]{2,10}[ -]?)?\d{1,5}(?:\s*,\s*(?:[A-Za-z]{2,10}[ -]?)?"
                        r"\d{1,5})*")
_WRITING = ("wrote", "write", "writes", "written", "writer", "author", "authored", "authors",
            "co-authored", "coauthored", "proposed", "proposes", "propose", "created",
            "creates", "drafted", "submitted", "penned", "behind", "by", "invented",
            "introduced", "conceived", "devised", "came",  # 'who came up with'
            "filed", "designed")  # 'Who designed the Unicode integration ...'
# Phrases of making a proposal one's own that no single word of ``_WRITING`` says: 'put
# together', 'put forward', 'drew up', 'pushed for', 'championed', 'Whose idea was ...', and
# 'file' before a determiner ('When did Daniel Stutzbach file his proposal': 'file' is a noun
# more often than not), and starting one ('Larry Hastings started the Python 3.4 release
# schedule PEP'; 'When did the beta phase start' is not)
_MADE_IT = re.compile(r"\b(?:put|puts|putting)\s+(?:together|forward)\b|\bpush(?:ed|es)?\s+for\b|"
                      r"\b(?:draw|draws|drew|drawn)\s+up\b|"
                      r"\bchampion(?:ed|s)?\b|\bwhose\s+(?:idea|proposal|pep|rfc|brainchild)\b|"
                      r"\bfile\s+(?:his|her|their|its|the|a|an|this|that)\b|"
                      r"\b(?:start(?:ed|s)?|began|begun|kick(?:ed|s)?\s+off)\s+(?:the|this|that|"
                      r"his|her|their|its|a|an)\s+(?:[\w.-]+\s+){0,6}?(?:pep|rfc|proposal|"
                      r"document|draft)\b", re.I)
_ROLES = ("author", "authors", "by", "owner", "editor", "writer", "sponsor",
          "delegate", "manager", "maintainer", "contact", "lead", "chair", "founder",
          "director", "inventor", "designer")
_MOMENTS = ("created", "date", "dated", "published", "released", "release", "posted",
            "updated", "accepted", "resolved", "year", "born", "died", "founded", "opened",
            "started", "ended", "time", "day", "month")


# What a writing verb has as its object when the question asks about a part of a document or
# about something else written, not about the document: 'Who wrote the rationale of the ABC
# proposal' (one of two authors, named in its Acknowledgements), 'ways to read and write CSV
# files' (a module's purpose).
_WRITE_VERBS = "|".join(re.escape(w) for w in _WRITING if w != "by")
_PARTS = ("rationale|implementation|patch|patches|code|module|modules|library|libraries|"
          "package|packages|test|tests|benchmark|benchmarks|script|scripts|tool|tools|section|"
          "sections|example|examples|documentation|docs|prototype|file|files|function|"
          "functions|name|names|term")  # not 'book' or 'essay': a page may be the book ('Who
# wrote the book'); 'name' and 'term': 'Who came up with the name "generator expressions"'
# asks who coined it (the Acknowledgements say), not who wrote the proposal
# ('Who proposed that the standard library's clients verify ...': 'that' before an article
# starts what was proposed, not the thing written)
_WRITES_A_PART = re.compile(rf"\b(?:{_WRITE_VERBS})\s+(?:up\s+with\s+)?"
                            rf"(?!that\s+(?:the|a|an|its|their)\b)"
                            # 'Who proposed putting parameter documentation inside ...':
                            # a gerund object is the act proposed, not a part written
                            rf"(?!\w+ing\s)"
                            rf"(?:(?:the|a|an|its|their|this|that)\s+)?"
                            rf"(?:[\w.'-]+\s+){{0,2}}?(?:{_PARTS})\b", re.I)
# A name right after a writing verb ('Who wrote Heapy?')
_WROTE_A_NAME = re.compile(rf"\b(?:{_WRITE_VERBS})\s+([A-Z][\w+-]*)")
# ... and a 'who' question's writer is the one asked for: 'Who (first) wrote ...', '... written
# by whom', not the verb of another clause ('who helped with the module behind the iterator')
_WHO_WRITES = re.compile(rf"\b(?:who(?:m|se)?|which|what)\s+(?:\S+\s+){{0,4}}?"
                         rf"(?:co-?)?(?:{_WRITE_VERBS})\b|\b(?:{_WRITE_VERBS})\s+by\b|\bby\s+whom?\b|"
                         rf"\bby\s*\?$|"
                         # '... someone proposed it as an operator. Who was that?'
                         rf"\b(?:someone|somebody)\s+(?:\w+\s+)?(?:co-?)?(?:{_WRITE_VERBS})\b"
                         rf"(?=.*\bwho\s+(?:was|is)\s+(?:that|it|this|he|she|they)\b)", re.I)


def question_target(question: str) -> Target:
    """What ``question`` asks for (``question.analyze``: read once, shared)."""
    return analyze(question).target


def _stems(ws: Iterable[str]) -> set[str]:
    return {w[:5] for w in ws}


def _qualified_apart(key_words: list[str], nouns: set[str], asked: set[str], value: str,
                     kind: str, whole: list[str]) -> bool:
    """Whether a key shares the noun asked for but qualifies it otherwise: 'Python-Version:
    3.7' does not answer 'from which pip version ...'. The key's last word is one of the
    asked nouns, the key has a word the question never says ('Python') and the question
    qualifies the noun with one the key does not ('pip'), which the value does not say
    either ('Rust-Issue: rust-lang/cargo#9069' does answer 'Which Cargo issue ...'). A bare
    key ('Type: Standards Track') is another thing than the noun the question qualifies
    ('what content type ...'), unless the qualifier only says which one ('the current
    status') or names the document's kind (``kind``, 'pep' for 'the PEP type'; '' for none).
    ``whole``: all the words of the line's key ('Rust Issue', where ``key_words`` may be only
    its last chunk)."""
    from ..words import words

    if not key_words or key_words[-1][:5] not in nouns:
        return False
    key = _stems(key_words)
    theirs, ours = key - nouns - asked, nouns - key
    # ... nor do the words that name the line itself ('its Type header', 'the Status
    # field') or the kind of its value ('the creation date' of 'Created: 30-Dec-2009')
    ours -= _stems(_LINE_NOUNS)
    if _DATE.search(value):
        ours -= {"date"}
    if len(whole) == 1:
        ours -= _stems((*_PLAIN_QUALIFIERS, *_DOCUMENT_NOUNS, *([kind] if kind else [])))
        return bool(ours and not ours & _stems(words(value)))
    return bool(theirs and ours and not ours & _stems(words(value)))


# Nouns a version number answers ('which Python 2 release' -> 'Python-Version: 2.7')
_VERSION_NOUNS = frozenset({"version", "versions", "release", "releases"})
# Words a question calls a header line by ('What is its Type header?')
_LINE_NOUNS = ("header", "headers", "field", "fields", "line", "entry", "metadata")
# Words that qualify a noun without making it another thing ('the current status'): plain
# adjectives of time and standing
_PLAIN_QUALIFIERS = ("current", "final", "official", "exact", "original", "latest",
                     "present", "actual", "overall")


# 'which 2.x release', 'Which Python 2 release': the series the version asked is in
_SERIES = re.compile(r"(?i)(?<![\d.])(\d+)(?:\.x)?\s+(?:release|version)s?\b")
_VERSION_VALUE = re.compile(r"^(\d+)\.\d+")


def _other_series(question: str, value: str) -> bool:
    """Whether the question asks a version of one series and ``value`` is a version of
    another ('Python-Version: 3.0' for 'which 2.x release would warn first'): the line is the
    document's own target, not the release the question asks about."""
    asked = _SERIES.search(question)
    got = _VERSION_VALUE.match(value.strip())
    return bool(asked and got) and asked.group(1) != got.group(1)


def _doc_number(label: tuple[str, str] | None) -> str:
    """The number inside a document id ('pep-0322' -> '322'): a value that only repeats it
    names the document, not a fact about it."""
    if label is None:
        return ""
    m = re.search(r"(\d+)\D*$", label[0])
    return m.group(1).lstrip("0") if m else ""


_DATE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b|\b\d{1,2}[-/ .]\d{1,2}[-/ .]\d{2,4}\b|"
                   rf"\b({'|'.join(_MONTHS)})[a-z]*\b", re.I)


def _says_role(word: str) -> bool:
    """Whether a word of the question names a role or its act ('sponsor', 'sponsored',
    'delegates', 'maintained', 'edited'), by its whole stem: 'directory' is no 'director'."""
    bases = {word} | {word[:-len(x)] for x in ("s", "es", "d", "ed", "ing")
                      if word.endswith(x) and len(word) > len(x) + 2}
    return any(b + end in _ROLES for b in bases for end in ("", "r", "er", "or"))


def _typed_value(kind: str, value: str) -> bool:
    """Whether a value can answer a question of ``kind``: a date for 'when', a capitalised
    name for 'who', no bare number for 'where'."""
    if kind == "where":
        return not re.fullmatch(r"[\d.,\s]+", value)
    if kind == "when":
        return bool(_DATE.search(value))
    if kind == "who":
        return any(w[:1].isupper() for w in value.split())
    return True


# What a question calls the document itself when it does not say the collection's word for
# it ('Which proposal ...' for 'Which PEP ...').
_DOCUMENT_NOUNS = ("proposal", "document", "specification", "spec")


# 'Who does the PEP thank for ...', 'Whom did it credit': the document (or its author) does
# the verb to a person it names; the 'Author:' line is not that person
_ITS_ACTS = re.compile(r"\bwho(?:m)?\s+(?:did|does|do)\b[^?]{0,80}?\b(?:thank|credit|acknowledg|"
                       r"cite|quote|mention|blame|consult|prais)\w*\b", re.I)
# 'Which one does it list as required?', 'Which PEP did the proposal replace?': the question
# word is the object of a verb whose subject is the document
_OBJECT_ASKED = re.compile(r"\b(?:which|what)\b[^?,.;]{0,40}?\b(?:does|did|do)\s+(?:it|this|that|"
                           r"the\s+(?:pep|rfc|proposal|document))\b", re.I)
_AUTHOR_ACTS = re.compile(r"\bwho(?:m)?\s+(?:did|does|do|has|had|have|would|will|could|might)"
                          r"\s+(?:the|its|this|that|his|her|their)\s+(?:\w+\s+)?(?:co-?)?authors?\b",
                          re.I)


def keyed_lines(index: SpanIndex, question: str, stopwords: Iterable[str]
                ) -> tuple[int, set[str], set[str]]:
    """(score, value chunks, key chunks) of the shown 'key: value' lines whose key best names
    what ``question`` asks for. Scores: 4, an '...-By' key says the question's verb and its
    value names other documents by number ('Superseded-By: 435' for 'Which PEP superseded
    ...'); 3, the key is a noun the question asks for ('What
    status' -> 'Status:'); 2, the key is a role for 'who' or a moment for 'when', or shares a
    word with the question besides, or, for 'where', a word the question says that names no
    person ('Discussions-To:' for 'Where was it discussed?'); 1, the key only shares a word
    with the question (on its first five letters); 0, no key does. A value that only repeats
    its document's number is left out unless the key is the asked noun ('Which PEP' -> 'PEP:
    572')."""
    from ..words import words

    q = analyze(question)
    target = q.target
    stop = set(stopwords)
    said = [w for w in words(question) if w not in stop]
    said_all = set(q.words)
    asked = _stems(said)
    nouns = _stems(target.nouns)
    roles, authors, moments = _stems(_ROLES), _stems(_AUTHORS), _stems(_MOMENTS)
    writing = _stems(_WRITING)
    # 'Who is the release manager ...' (not 'Who designed ...': a writing verb, though its
    # stem is the designer's)
    # (a role said as a word: 'directory' and 'contains' share their first five letters with
    # 'director' and 'contact', and say no role)
    said_roles = _stems(w for w in said if _says_role(w))
    other_role = bool(said_roles & (roles - authors - writing))
    # 'Who wrote / proposed ...': the author; 'Whose essay is cited ...' asks about a person
    # the text names, not the document's author
    # ... about the document: not a part of it or something else written
    # (``_WRITES_A_PART``), and for 'who' the question's own verb (``_WHO_WRITES``); nor
    # does 'co-authorship' make the author the answer to who wrote a part of it
    # (not in a clause that only says which document: 'the proposal that introduced the
    # package index' names it, it does not ask who wrote a package)
    described = set(q.described)
    part = any(m.group(0).split()[0].lower() not in described
               for m in _WRITES_A_PART.finditer(question))
    # 'In the proposal to stop egg uploads, in what year ...': a document noun names the
    # document, it is not the act of proposing (their first five letters are the same)
    # ... nor is the verb of a clause saying which document ('On what date did Guido accept
    # the proposal that introduced X' asks of accepting, not of the 'Created:' line)
    acts = _stems(w for w in said if w not in _DOCUMENT_NOUNS and w != "proposals"
                  and w not in described)
    made = bool(_MADE_IT.search(question))
    writes = bool(acts & writing or made) and not part and \
        (target.kind != "who" or bool(_WHO_WRITES.search(question)) or made)
    # 'Who wrote Heapy?': a name written after the verb, when the document's title does not
    # say it, is another work; its author is not the document's
    work = _WROTE_A_NAME.search(question)
    passive = bool(re.search(r"\b(?:is|was|are|were|been|be)\s+\w+ed\s+by\b", question, re.I))
    doc_asked = bool(nouns & _stems(_DOCUMENT_NOUNS)) and target.kind == "what"
    # 'Who did the author talk with ...': the author does the asking verb; another is asked
    acting = bool(_AUTHOR_ACTS.search(question) or _ITS_ACTS.search(question))
    # header words the question's relation words stand for ('prerequisite': 'Requires'); its
    # own words too when the document read is the verb's subject and the one asked its
    # object ('Which one does it list as required?'), not 'Which PEP requires it?'
    related = relation_stems(question)
    if not _OBJECT_ASKED.search(question):
        related -= _stems(words(question))

    # 'Which core developer sponsored ...' asks a person as 'who' does
    person = target.kind == "what" and target.head in PERSON_NOUNS

    # 'which Python 2 builtin' asks a builtin: the name before it only says which one, and
    # 'Python-Version:' does not answer it (a release does: 'Which Python 2 release'; and
    # 'its Type header' names the line)
    head = _stems([target.head]) if target.head and target.head not in _VERSION_NOUNS \
        and target.head not in _LINE_NOUNS else set()
    named = _stems(w.lower() for w in re.findall(r"\b[A-Z]\w*", question)) if head else set()

    def key_score(key: set[str]) -> int:
        if key & nouns and not (head and head <= nouns and not key & head
                                and key & nouns <= named):
            return 3
        if target.kind == "who" or person:
            if (key & asked & roles and not ((part or acting) and key & authors)) or \
                    (key & authors and not other_role and writes and not acting):
                return 2  # the role it names, else the author
        elif target.kind == "where":
            # 'Where was discussion of it supposed to take place?': the key that says the
            # question's word is the place ('Discussions-To:')
            if key & asked and not key & (roles | authors):
                return 2
        elif target.kind == "when":
            # a moment the question names ('created'), else a plain 'Date:'; 'When was it
            # written / proposed' asks when the document was made: 'Created:', 'Start Date:'
            if key & asked or (key & {"date", "dated"} and not asked & moments) or \
                    (writes and key & {"creat", "date", "dated"}):
                return 2
        return 1 if key & asked else 0
    best = 0
    values: set[str] = set()
    labels: set[str] = set()
    for src, ch in zip(index.sources, index.chunked, strict=True):
        number = _doc_number(src.label)
        doc_kind = re.match(r"[a-z]*", src.label[0]).group(0) if src.label else ""
        title = re.search(r"^Title:(.*)$", src.text, re.M)
        other_work = bool(work) and work.group(1).lower() not in words(
            title.group(1) if title else "") and work.group(1).upper() not in ("PEP", "RFC")
        i = 0
        while i < len(ch) - 1:
            core, _s, end = ch[i]
            if src.text[end:end + 1] != ":":
                i += 1
                continue
            labels.add(core)  # 'Author:' is a label, not an answer
            key_words = words(core)
            key = _stems(key_words)
            score = key_score(key)
            if other_work and score == 2 and key & authors:
                score = 1 if key & asked else 0
            # the value: the chunks up to the line's end
            line_end = src.text.find("\n", end)
            line_end = len(src.text) if line_end < 0 else line_end
            j = i + 1
            vals = []
            while j < len(ch) and ch[j][1] < line_end:
                vals.append(ch[j][0])
                j += 1
            value = " ".join(vals)
            named_by = bool(number) and value == number and doc_asked
            if score < 3 and number and value == number:
                # ... unless the question asks which document ('Which proposal made ...'):
                # the key that numbers the one read names it, key and all ('PEP 703')
                score = 3 if named_by else 0
                if named_by:
                    vals = [core, *vals]
            if score == 3 and _qualified_apart(
                    key_words, nouns, asked, value, doc_kind,
                    words(src.text[src.text.rfind("\n", 0, end) + 1:end])):
                score = 1 if key & asked else 0
            # (a relation in other words only when the question asks which document)
            linked = bool(key & related - nouns) and (
                doc_asked or (target.kind == "what" and doc_kind[:5] in nouns))
            if (("by" in key and key & asked - nouns - {"by"}) or linked) \
                    and not passive and _REFERENCE.fullmatch(value) and value != number:
                # 'Which PEP superseded X?' read in X: 'Superseded-By: 435' says the verb
                # and names the other document, where 'PEP: 354' is X's own number (not for
                # 'Which PEP was superseded by X?', nor 'Replaces:', whose value is the other
                # side of the verb); so do 'Requires: 495' for '... list as a prerequisite'
                # and 'Superseded-By: 566' for 'Which PEP took its place?' in other words
                score = 4
            if score == 3 and _other_series(question, value):
                score = 1 if key & asked else 0
            if score == 2 and not _typed_value(target.kind, value):
                score = 1  # 'Python-Version: 3.10' does not say when
            if score == 2 and vals and all(w in said_all for w in words(value)):
                # the question says who it is ('Alyssa Coghlan withdrew her idea ... in favour
                # of a simpler proposal. Whose proposal was that?'): it asks another
                score = 1 if key & asked else 0
            if score and vals:
                if score > best:
                    best, values = score, set()
                if score == best:
                    values.update(vals)
            i = max(j, i + 1)
    return best, values, labels


def answer_starts(index: SpanIndex, question: str, stopwords: Iterable[str]) -> set[str]:
    """Chunks an answer to ``question`` may start with. An answer starts with something the
    question does not say (not one of its words, not a stopword), of the type it asks for:
    a capitalised word for 'who', a number or a month for 'when', 'what year' or 'which
    version', a number for 'how many/much/big/long'. Where the shown text has 'key: value'
    lines whose key names what the question asks for (``keyed_lines``), their values come
    first. Each rule is dropped when it would leave nothing."""
    from ..words import words

    asked = set(words(question))
    stop = set(stopwords)
    cands = {c for c in index.succ
             if not (set(words(c)) <= asked | stop) and any(ch.isalnum() for ch in c)}
    if not cands:
        return set()
    q = " ".join(words(question))
    target = question_target(question)
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
    elif target.kind == "who":
        typed = {c for c in cands if c[:1].isupper()}
    elif target.kind == "when" or target.nouns & {"version", "release"}:
        typed = {c for c in cands if any(ch.isdigit() for ch in c)
                 or c.lower()[:3] in _MONTHS}
    elif target.kind == "number" or target.nouns & _NUMERIC:
        typed = {c for c in cands if any(ch.isdigit() for ch in c)}
    else:
        # 'What exception ...', 'Which name ...': words, not a footnote's number
        typed = {c for c in cands if any(ch.isalpha() for ch in c)}
    score, keyed, labels = keyed_lines(index, question, stop)
    if score >= 4 and keyed & cands:
        return keyed & cands  # another document's number, whatever the type rule says
    cands = typed or cands
    cands = (cands - (labels - keyed)) or cands  # a keyed label: 'PEP' of 'PEP: 703'
    return (keyed & cands) or cands


def header_starts(index: SpanIndex, question: str, stopwords: Iterable[str]) -> set[str]:
    """Chunks an answer taken from a header line may start with: the values of the lines
    whose key names what is asked (``keyed_values``), and the key itself when it is the very
    noun the question asks for ('Which PEP ...' and 'PEP: 572' -> 'PEP 572')."""
    from ..words import words

    stop = set(stopwords)
    score, values, labels = keyed_lines(index, question, stop)
    out = _answering(values, score, question, stop)
    if score == 3:  # (4: another document's number, not this one's key)
        nouns = _stems(question_target(question).nouns)
        out |= {k for k in labels if _stems(words(k)) & nouns}
    return out


def _answering(values: set[str], score: int, question: str, stop: set[str]) -> set[str]:
    """The value chunks of a ``keyed_lines`` result that can start an answer: only when the
    key names what is asked (score 2 or more), and not the question's own words."""
    from ..words import words

    if score < 2:
        return set()
    asked = set(words(question))
    return {c for c in values if not set(words(c)) <= asked | stop}


def keyed_values(index: SpanIndex, question: str, stopwords: Iterable[str]) -> set[str]:
    """Chunks of the values of 'key: value' lines whose key names what the question asks for
    (a noun it asks for, or a role for 'who' / a moment for 'when'): the strongest sign that
    the answer is on screen. A key that only shares some word with the question is not
    enough ('PEP:' for any question that says 'PEP')."""
    stop = set(stopwords)
    score, keyed, _labels = keyed_lines(index, question, stop)
    return _answering(keyed, score, question, stop)


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


def shown(reads: Sequence[Source], cards: Sequence[Source], max_chunks: int) -> SpanIndex:
    """The text an answer may copy: the sections read, newest first (with a cap, what was
    read last is what the answer most likely comes from). Cards' titles and bylines only
    while nothing was read: an answer cites what it was read in, and a byline copied from a
    card ('2017-09-05 by ...') was the commonest wrong answer of small models."""
    index = SpanIndex(reads, max_chunks=max_chunks)
    return index if index else SpanIndex([*reads, *cards], max_chunks=max_chunks)


def span_rules(index: SpanIndex, question: str, stopwords: Iterable[str],
               titles: Sequence[str] = ()) -> str:
    """The GBNF of answers copied from shown text, starting where an answer to ``question``
    may start (``answer_starts``); for 'what is its title' (``titles``: of the documents
    read), only one of those whole titles."""
    if titles and analyze(question).asks_title:
        tidx = SpanIndex([Source(t, None) for t in titles], max_chunks=1 << 30)
        firsts = {c[0] for c in (chunk_words(t) for t in titles) if c}
        if tidx:
            return tidx.grammar(starts=firsts)
    return index.grammar(starts=answer_starts(index, question, stopwords))


__all__ = ["Grounded", "Source", "SpanIndex", "Target", "answer_starts", "chunk_words",
           "header_starts", "keyed_lines", "keyed_values", "question_target", "shown",
           "span_rules"]
