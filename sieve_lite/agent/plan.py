"""The query planner: every question becomes BQL before the model is called (sieve mode).

A careful searcher turns "In March 2019, Guido van Rossum created a PEP whose title mentions
'typing'; what is its title?" into ``"guido van rossum"[author] AND date[2019-03] AND
typing[title]``, and "Who wrote the Zen of Python?" into ``"zen of python"[title]``. A 135M
model cannot, so the harness does, from the question (``question.analyze``) and the
collection's own fields and index (nothing here knows any collection):

*Stated* clauses, what the question says outright:

* quoted strings become phrases (in ``[title]`` or ``[section]`` when that field holds them);
* a word the question says a title "mentions" / "contains" becomes ``word[title]``;
* runs of capitalised words become ``"..."[author]`` phrases, only when the collection has
  authors and the phrase admits a document there (checked with the index, never a list);
* a month and year, a year, "before/after/since/until YEAR" and "between A and B" become
  ``date[..]`` ranges (when the collection has dates);
* a document number (a capitalised word and a number: "PEP 572", "RFC 2119") becomes an
  ``[infobox]`` or ``[title]`` phrase, whichever field admits it (exactly one document).

*Found* clauses, what the index recognises in the question: a run of two to five of its words
that is a phrase of a title, a section heading or an infobox value in this collection becomes
that field phrase (``"zen of python"[title]``, ``"style guide"[title]``), longest first.
When nothing else names the document (no title phrase, no name or code word), the question's
words that together say more than half of one title select it, not as a phrase
(``none callable[title]`` for "Who proposed making None callable?": 'Make None Callable').

``plan`` runs conjunctions of these clauses, most clauses first, and keeps the best that admits
something: the most clauses, the surest kinds, the fewest documents. Then the question's other
content words, as word stems (``leak*`` for "leaking"), are ANDed to it while that selection
still admits more documents than a card list shows; when the conjunction admits nothing, the
least informative word (the commonest in the collection) is dropped, one at a time, until it
admits something. Never an OR of every word first: that is what the other modes rank, and it
puts a document sharing the commonest words first. With no content word at all there is no
plan, and step 0 ranks the question's words (the last fallback).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..words import stem5, words
from .queries import OPERATORS, admits, doc_freq, search_words
from .question import MONTHS, STOPWORDS, Question, analyze

# How sure a kind of clause is to hold for the document asked about (ties between plans).
_WEIGHT = {"id": 5, "author": 4, "date": 3, "title": 2, "section": 2, "phrase": 1,
           "found": 1}
# Words of a question's form rather than its subject: they select nothing worth selecting
# ('How long may a line be' selects on 'line', not on 'long' or 'may'). Plain English.
_FORM_WORDS = frozenset("""
may might must shall can could would should get gets got use used uses using make makes made
does did done like called known mean means meant happen happens happened exactly actually
really usually also instead still ever else way ways thing things something anything
many much long big large old far often tall high wide
""".split())
MAX_PHRASE = 5          # words in a found phrase
MAX_FOUND = 3           # found phrases kept (longest first)
MAX_FOUND_SHARE = 0.01  # ... each admitting at most this share of the documents
MAX_SELECT_SHARE = 0.2  # a keyword in more documents than this only ranks
MAX_TITLE_WORDS = 4     # question words tried together in a title
MAX_TITLE_DOCS = 3      # ... a combination of them names at most this many documents
MAX_TITLE_SHARE = 0.3   # ... and one of them is in at most this share of the documents
_SUFFIX = ("ings", "ing", "ions", "ion", "ed", "es", "s")


@dataclass(frozen=True)
class Clause:
    """One constraint on the documents, as BQL."""

    bql: str
    kind: str     # phrase, title, section, author, date, id (stated); found (from the index)
    why: str


@dataclass(frozen=True)
class Plan:
    """The planned query, how many documents it admits, and what it is made of."""

    query: str
    admitted: int
    clauses: tuple[Clause, ...]
    why: str
    alternatives: tuple[str, ...] = ()  # looser conjunctions that admit something
    words: tuple[str, ...] = ()          # content-word atoms ANDed in (``leak*``)
    dropped: tuple[str, ...] = ()        # content words dropped to admit something


def _phrase(ws: list[str] | tuple[str, ...]) -> str:
    return f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]


def date_clauses(question: str | Question) -> list[Clause]:
    """The dates a question names, as BQL date atoms."""
    return [Clause(f"date[{d.value}]", "date", d.why) for d in analyze(question).dates]


def clauses(coll: Any, question: str | Question) -> list[Clause]:
    """The stated clauses of a question (see the module docstring), each checked on the
    collection: it parses and admits at least one document."""
    q = analyze(question)
    fields = set(coll.fields)
    out: list[Clause] = []
    taken: set[str] = set()   # name runs already turned into a clause

    def add(c: Clause, most: int = 1 << 30) -> bool:
        if c.bql not in {x.bql for x in out} and 0 < admits(coll, c.bql) <= most:
            out.append(c)
            return True
        return False

    for text in q.quotes:
        ws = words(text)
        # one quoted word is emphasis ('the 'data' filter'), a keyword, not a title
        if len(ws) < 2 or all(w in STOPWORDS for w in ws):
            continue
        ph = _phrase(ws)
        # a quoted title or heading where the field holds it, else the phrase anywhere
        # ... but a short quoted value with a number ('v1.0', '-0.00') is an example of what
        # is asked about: a heading that happens to say it names another thing
        tries = [Clause(f"{ph}[{f}]", f, f"'{text}' in a {f}")
                 for f in ("title", "section") if f in fields
                 and not (len(ws) <= 2 and any(ch.isdigit() for ch in text))]
        # every field that holds it (the conjunctions keep the one that fits the rest)
        if [c for c in tries if add(c)] or add(Clause(ph, "phrase", f"the quoted '{text}'")):
            taken.add(" ".join(ws))
    for term in q.lettered:
        # 'the t-strings PEP': the letter is no word alone, so the term is searched whole,
        # as a phrase anywhere (a title that says it may be another PEP's: 'Safer
        # subprocess usage using t-strings', not 'Template Strings')
        ws = words(term)
        said = f" {' '.join(ws)} "
        if not any(said in f" {t} " for t in taken) and \
                add(Clause(_phrase(ws), "phrase", f"'{term}' as written")):
            taken.add(said.strip())
    for cue in q.title_cues:
        ws = words(cue)
        if ws and "title" in fields:
            add(Clause(f"{_phrase(ws)}[title]", "title", f"a title mentioning {cue}"))
            taken.add(" ".join(ws))
    for prefix, num in q.docnums:
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
        # only a name the question says wrote the document ('Barry Warsaw created a PEP',
        # 'by Ka-Ping Yee'): a name it merely mentions may be anyone the text talks about
        for name in q.authors:
            ws = words(name)
            if not ws or any(w.isdigit() for w in ws) or " ".join(ws) in taken:
                continue
            if all(w in STOPWORDS for w in ws):
                continue
            # Only a name the index holds among authors (checked, never guessed).
            if add(Clause(f"{_phrase(ws)}[author]", "author", f"{name} as an author")) or (
                    # 'Nathaniel Smith' for the author 'Nathaniel J. Smith': a middle name
                    # or initial the question leaves out
                    len(ws) > 1 and add(Clause(f"NEAR/1({' '.join(ws)})[author]", "author",
                                               f"{name} as an author"))):
                taken.add(" ".join(ws))
    if "date" in fields:
        # only a date of the document itself ('the 2024 proposal', 'created in May 2020'),
        # not one the question talks about ('the Python released in 2026')
        for c, d in zip(date_clauses(q), q.dates, strict=True):
            if d.of_document:
                add(c)
    return out


def ranked_ids(coll: Any, question: str | Question, k: int = 5, within: str = ""
               ) -> list[str]:
    """The documents a plain ranking of the question's content words puts first (bm25),
    best first, among those ``within`` admits (a BQL selection; '' for all): what the
    planner's selections are checked against. A selection none of whose documents the
    ranker rates is a coincidence of words, not the document asked about."""
    q = analyze(question)
    ws = search_words(q)
    if not ws:
        return []
    query = " OR ".join(ws)
    try:
        res = coll.search(f"{within} AND ({query})" if within else query, k=k,
                          ranker="bm25", strict=bool(within))
    except QueryError:
        return []
    return [str(r.id) for r in res.results]


def _meets(coll: Any, query: str, good: set[str]) -> int:
    """Documents ``query`` admits, or 0 when ``good`` is given and none of the ten it ranks
    first is in ``good``."""
    try:
        res = coll.search(query, k=10, ranker="bm25", strict=True)
    except QueryError:
        return 0
    if good and not {str(r.id) for r in res.results} & good:
        return 0
    return int(res.total)


def found_phrases(coll: Any, question: str | Question, inside: set[str] = frozenset(),
                  limit: int = MAX_FOUND, good: list[str] | None = None) -> list[Clause]:
    """Runs of the question's words that are a phrase of a title, a section heading or an
    infobox value in this collection, longest first (a run inside one already found, or
    inside ``inside``, is skipped). A run starts and ends with a content word of two letters
    or more; each is checked against the index: it admits a few documents (at most 5% of the
    collection), and, when ``good`` is given, one of those the ranker rates
    (``ranked_ids``): a title that happens to hold 'python version' names nothing asked."""
    q = analyze(question)
    good = good or []
    fields = [f for f in ("title", "section", "infobox") if f in coll.fields]
    ws = list(q.words)
    cap = max(3, int(MAX_FOUND_SHARE * max(1, getattr(coll, "documents", 0) or 0)))
    out: list[Clause] = []
    spans: list[tuple[int, int] | None] = []  # a title phrase's place among the words
    covered: list[str] = [f" {x} " for x in inside]
    # a second pass, when the first finds nothing: a run of three words or more that is a
    # whole title ('keyword only arguments') names it though the ranker puts others first
    for whole, n in [(False, n) for n in range(min(MAX_PHRASE, len(ws)), 1, -1)] + \
            [(True, n) for n in range(min(MAX_PHRASE, len(ws)), 2, -1)]:
        if whole and (out or not good):
            break
        for i in range(len(ws) - n + 1):
            run = ws[i:i + n]
            if run[0] in STOPWORDS or run[-1] in STOPWORDS or min(map(len, run)) < 2 \
                    and not any(w.isdigit() for w in run):
                continue
            text = " ".join(run)
            if any(f" {text} " in c for c in covered):
                continue
            if q.asks_version and set(run) <= q.target.nouns:
                continue  # 'which Python release': the answer's kind, not the document's
            for f in [x for x in fields if x == "title"] if whole else fields:
                bql = f'"{text}"[{f}]'
                # a title names what a document is about; a heading or a header value that
                # happens to hold the words must name the document the ranker rates first
                want = set(good[:2]) if f == "title" else set(good[:1])
                n_docs = _whole_title(coll, bql, run) if whole else \
                    _meets(coll, bql, want) if want or not good else 0
                # a phrase that many documents share names nothing in particular
                if 0 < n_docs <= cap:
                    out.append(Clause(bql, "found", f"'{text}' is a {_FIELD_NOUN[f]} here"))
                    spans.append((i, n) if f == "title" else None)
                    covered.append(f" {text} ")
                    break
            if len(out) >= limit:
                break
        if len(out) >= limit:
            break
    return [c if at is None else _numbered(coll, c, ws, *at, covered)
            for c, at in zip(out, spans, strict=True)]


def _whole_title(coll: Any, query: str, run: list[str]) -> int:
    """Documents a title phrase admits when one of their titles is the phrase and nothing
    more (its content words, in order: 'keyword only arguments' is *Keyword-Only Arguments*):
    the question names that document whatever the ranker makes of its other words; 0
    otherwise."""
    try:
        res = coll.search(query, k=10, ranker="bm25", strict=True)
    except QueryError:
        return 0
    want = [w for w in run if w not in STOPWORDS]
    for r in res.results:
        if [w for w in words(str(r.title)) if w not in STOPWORDS] == want:
            return int(res.total)
    return 0


_FIELD_NOUN = {"title": "title", "section": "section heading", "infobox": "header value"}


def _numbered(coll: Any, clause: Clause, ws: list[str], i: int, n: int,
              covered: list[str]) -> Clause:
    """A title phrase with the number the question writes beside it, when some of the
    phrase's titles hold that number too: 'pickle protocol 4' is 'Pickle protocol version 4'
    (the phrase alone admits protocol 5's title as well). Not a number another phrase holds."""
    for j in (i + n, i - 1):
        if 0 <= j < len(ws) and ws[j].isdigit() and \
                not any(f" {ws[j]} " in c for c in covered):
            both = f"{clause.bql} AND {ws[j]}[title]"
            if admits(coll, both) > 0:
                return Clause(both, clause.kind, f"{clause.why}, with {ws[j]}")
    return clause


def _title_term(coll: Any, word: str) -> tuple[str, int]:
    """``word`` as a title atom and the titles it is in: itself when a title holds it, else
    its stem as a prefix ('inlining' -> ``inlin*``, which 'Inlined' matches); ('', 0) when
    neither selects."""
    from ..store import reads

    df = reads.term_rows(coll.conn, "title", word)
    if df > 0:
        return word, df
    for suf in _SUFFIX:
        stem = word[: -len(suf)]
        if word.endswith(suf) and len(stem) >= 4:
            n = admits(coll, f"{stem}*[title]")
            return (f"{stem}*", n) if n > 0 else ("", 0)
    return "", 0


def _names_title(q: Question, title: str) -> bool:
    """Whether the question says more than half of a title's content words (on their crude
    stems: 'making' says 'Make'): it names that document, not just shares words with it."""
    tw = [w for w in words(title) if w not in STOPWORDS]
    if not tw:
        return False
    said = {stem5(w) for w in q.words}
    return sum(stem5(w) in said for w in tw) * 2 > len(tw)


def title_words(coll: Any, question: str | Question, inside: set[str] = frozenset()
                ) -> list[Clause]:
    """The most of the question's content words (two to ``MAX_TITLE_WORDS``) that one title
    holds together, not as a phrase: "Who proposed making None callable?" ->
    ``none callable[title]`` ('Make None Callable'). A combination must name at most
    ``MAX_TITLE_DOCS`` documents, one of whose titles the question says more than half of;
    among the largest such combinations the rarest words win; one of them must be a word
    at most ``MAX_TITLE_SHARE`` of the documents hold. Words of the question's form,
    words of a clause already made (``inside``) are left
    out."""
    if "title" not in coll.fields:
        return []
    q = analyze(question)
    terms: dict[str, float] = {}
    for w in q.content:
        if w in _FORM_WORDS or w in inside or w in OPERATORS or len(w) < 2 \
                or w.isdigit():
            continue
        t, df = _title_term(coll, w)
        if t and t not in terms:
            terms[t] = -df
    ranked = sorted(terms, key=lambda t: terms[t], reverse=True)[:7]  # rarest first
    # a word most documents hold ('python', 'version' among PEPs) may complete a title, not
    # make one; a word a quarter of them use may, since the titles check the combination
    # ('print', in 27% of PEPs' texts, with 'function' for 'Make print a function'; as
    # ``MAX_SELECT_SHARE`` it left that PEP third; measured on every dev and QA question:
    # two natural PEP questions gain their first card, no other first card changes)
    rare = {t for t in ranked if not _common(coll, t.rstrip("*"), MAX_TITLE_SHARE)}
    for size in range(min(MAX_TITLE_WORDS, len(ranked)), 1, -1):
        best: tuple[float, tuple[str, ...]] | None = None
        for combo in itertools.combinations(ranked, size):
            if not rare & set(combo):
                continue
            bql = f"{' '.join(combo)}[title]"
            try:
                res = coll.search(bql, k=MAX_TITLE_DOCS, ranker="bm25", strict=True)
            except QueryError:
                continue
            if not 0 < res.total <= MAX_TITLE_DOCS or \
                    not any(_names_title(q, str(r.title or "")) for r in res.results):
                continue
            rarity = sum(terms[t] for t in combo)
            if best is None or rarity > best[0]:
                best = (rarity, combo)
        if best is not None:
            combo = tuple(t for t in ranked if t in best[1])
            return [Clause(f"{' '.join(combo)}[title]", "found",
                           f"{', '.join(combo)} in one title here")]
    return []


def conjunction_words(coll: Any, question: str | Question, inside: set[str]
                      ) -> tuple[list[str], list[str]]:
    """(select, rank): the question's content words that select (those written as names or
    code: ``Question.keywords``) and those that only rank (the rest: an asker's own words
    for a thing are often not the document's). Neither has stopwords, words of the
    question's form ('how long', 'may'), words already in a clause, or words the collection
    lacks. In the question's order."""
    q = analyze(question)
    select, rank = [], []
    asked = q.target.nouns  # 'Which PEP ...': the kind of thing asked for selects nothing
    for w in q.content:
        if w in _FORM_WORDS or w in inside or w in OPERATORS:
            continue
        if not w.isdigit() and len(w) < 2:
            continue
        if doc_freq(coll, w) > 0:
            # a name many documents hold ('Python' among PEPs) selects nothing
            (select if w in q.keywords and w not in asked and not _common(coll, w)
             else rank).append(w)
    return select, rank


def _common(coll: Any, word: str, share: float = MAX_SELECT_SHARE) -> bool:
    """Whether more than ``share`` (``MAX_SELECT_SHARE``) of the documents hold ``word``."""
    docs = max(1, int(getattr(coll, "documents", 0) or 0))
    return admits(coll, word) > share * docs


def plan(coll: Any, question: str | Question, max_clauses: int = 4,
         enough: int = 3) -> Plan | None:
    """The question as BQL (see the module docstring); ``None`` only when the question has
    no content word the collection holds. ``enough``: a selection this small is not
    narrowed further by the question's other words (they only rank it)."""
    q = analyze(question)
    stated = sorted(clauses(coll, q), key=lambda c: -_WEIGHT.get(c.kind, 1))[:max_clauses]
    stated_words = set(words(" ".join(c.bql for c in stated)))
    good = ranked_ids(coll, q)
    found = found_phrases(coll, q, inside={" ".join(words(c.bql)) for c in stated}, good=good)
    said = set(words(" ".join(c.bql for c in stated + found)))
    # words of a title, when nothing else names the document: no title phrase, no name or
    # code word to select with (those say more than common words that meet in a title)
    if not any(c.bql.endswith("[title]") for c in stated + found) and \
            not conjunction_words(coll, q, said)[0]:
        found += title_words(coll, q, said)
    pool = (stated + found)[:max_clauses + 1]
    best: tuple[int, int, int, tuple[Clause, ...]] | None = None
    admitted: list[tuple[int, int, str]] = []
    for size in range(len(pool), 0, -1):
        for combo in itertools.combinations(pool, size):
            query = " AND ".join(c.bql for c in combo)
            n = admits(coll, query)
            if n <= 0:
                continue
            admitted.append((n, -size, query))
            # the most clauses that admit something (a smaller subset loses a stated fact),
            # the surest kinds (an identifier, a name the index holds, a date), the fewest
            # documents
            weight = sum(_WEIGHT.get(c.kind, 1) for c in combo)
            if best is None or (size, weight, -n) > (best[0], best[1], -best[2]):
                best = (size, weight, n, combo)
    combo: tuple[Clause, ...] = best[3] if best else ()
    n = best[2] if best else int(getattr(coll, "documents", 0) or 0)
    inside = set(words(" ".join(c.bql for c in combo))) | stated_words
    cwords, rank_words = conjunction_words(coll, q, inside)
    base = " AND ".join(c.bql for c in combo)
    chosen_words: list[str] = []
    dropped: list[str] = []
    if cwords and (not combo or n > enough):
        within = set(ranked_ids(coll, q, within=base)) if base else set(good)
        chosen_words, dropped, n2 = _relaxed(coll, base, cwords, within)
        if chosen_words:
            n = n2
    if not combo and not chosen_words:
        if not rank_words:
            return None
        # nothing names the document: the words rank the whole collection, as one OR group
        # of content words (no stopwords, no words of the question's form)
        query = " OR ".join(rank_words)
        return Plan(query=query, admitted=admits(coll, query), clauses=(),
                    why="the question's content words, ranked", words=(),
                    dropped=tuple(dropped))
    parts = [base] if base else []
    parts += chosen_words
    query = " AND ".join(parts)
    why = [c.why for c in combo]
    if chosen_words:
        why.append("the question's words " + ", ".join(chosen_words) + " together")
    if dropped:
        why.append("dropped the commonest: " + ", ".join(dropped))
    rank = [w for w in dict.fromkeys([*dropped, *rank_words]) if not w.isdigit()]
    if n > 1 and rank:
        # Date and field clauses do not score: the question's other words must rank. As an
        # OR group they also select, and drop documents sharing no word with the question
        # (those would rank last anyway); kept unless that leaves nothing. But a selection
        # whose own words score may rank first a document without any of them: PEP 3148,
        # first for `concurrent AND futures`, says neither 'wrote' nor 'proposal'. Then the
        # selection's last part joins the group, which then admits all it admits, and the
        # group's words still rank (BQL has no clause that only ranks).
        ranked = f"{query} AND ({' OR '.join(rank[:12])})"
        kept = admits(coll, ranked)
        if kept > 0:
            if kept < n and not _keeps_first(coll, query, ranked):
                ranked = f"{query} AND ({' OR '.join([*rank[:12], parts[-1]])})"
            query = ranked
    chosen = " AND ".join(c.bql for c in combo)
    alts = tuple(x for _n, _s, x in sorted(admitted) if x != chosen and x != query)
    return Plan(query=query, admitted=n, clauses=combo, why="; ".join(why),
                alternatives=alts, words=tuple(chosen_words),
                dropped=tuple(dropped))


def _keeps_first(coll: Any, query: str, ranked: str) -> bool:
    """Whether ``ranked`` still admits the document ``query`` ranks first (bm25); true when
    ``query`` has no word that ranks (dates, ids: its order is no ranking)."""
    from ..options import MAX_K

    try:
        first = coll.search(query, k=1, ranker="bm25", strict=True)
        if not first.results or first.ranker != "bm25":
            return True
        res = coll.search(ranked, k=MAX_K, ranker="bm25", strict=True)
    except QueryError:
        return True
    top = str(first.results[0].id)
    return res.total > MAX_K or any(str(h.id) == top for h in res.results)


def _relaxed(coll: Any, base: str, cwords: list[str], good: set[str]
             ) -> tuple[list[str], list[str], int]:
    """The question's words ANDed to ``base``: all of them, then without the commonest, one
    at a time, until the conjunction admits something (with ``good``: something the ranker
    rates, see ``ranked_ids``). Returns (kept, dropped, admitted); kept is empty when no
    word can be added to ``base``."""
    freq = {w: doc_freq(coll, w) for w in cwords}
    kept = list(cwords)
    dropped: list[str] = []
    while kept:
        parts = ([base] if base else []) + kept
        n = _meets(coll, " AND ".join(parts), good)
        if n > 0:
            return kept, dropped, n
        if len(kept) == 1 and not base:
            # one word admitting nothing (as a stem): nothing to select with
            return [], dropped + kept, 0
        commonest = max(kept, key=lambda w: (freq[w], kept.index(w)))
        kept.remove(commonest)
        dropped.append(commonest)
    return [], dropped, 0


def planned_search(tools: Any, question: str | Question, k: int, planned: Plan | None = None
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
        res = tools.search(p.query, k, asked=analyze(question).text)
    except QueryError:
        return None
    if not res.hits or res.fallback:
        return None
    head = f"Results of the search planned from the question ({p.why}): {p.query}"
    return res, head, {"plan": p.query, "plan_why": p.why, "plan_admitted": p.admitted}


__all__ = ["Clause", "Plan", "clauses", "conjunction_words", "date_clauses", "found_phrases",
           "plan", "planned_search", "ranked_ids", "title_words"]
