"""What the loop needs from a collection, as a small protocol, and its implementation over a
``sieve_lite.Collection`` for the three access modes.

The loop resolves ranks to ids itself (it keeps the last result), so a read here always names
a document id. Engine errors a model can cause (``QueryError``, ``SectionError``) propagate to
the loop, which turns them into observations; anything else is our bug and propagates further.

Modes (the same loop, for fair comparison):

* ``sieve``: the BQL query as written; cards; one section per fetch.
* ``search-fetch``: the query's words only, joined with OR so that nothing is *selected* by
  Boolean logic or fields and everything that shares a word is *ranked* (the same ranker as
  sieve); the same cards; one section per fetch.
* ``search-visit``: the same ranked search; a plain result list (rank, id, title, snippet);
  a visit reads the whole document.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..documents import format_pages
from ..errors import QueryError, SectionError
from ..words import stem5, words

WHOLE_DOCUMENT = "(document)"


@dataclass
class Hit:
    """One search result as the agent sees it."""

    rank: int
    id: str
    title: str
    sections: list[str] = field(default_factory=list)  # every fetchable section name
    card: str = ""                                      # the compact text shown to the model
    snippet_section: str = ""                           # where the card's snippet comes from
    byline: str = ""                                    # date and authors, as shown
    data: dict[str, Any] = field(default_factory=dict)  # the card as data (people's view)


@dataclass
class SearchOutcome:
    """One search: what ran, how many matched, the top k."""

    query: str            # what the model wrote
    engine_query: str     # what the engine ran (differs outside sieve mode)
    total: int
    fallback: bool
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)
    clause_counts: list[Any] = field(default_factory=list)


@dataclass
class ReadOutcome:
    """One fetch or visit."""

    doc: str
    title: str
    section: str
    text: str
    truncated: bool = False   # cut by the engine (its 12,000-token cap)
    pages: str = ""           # the section's page range, 'p. 4–6' (PDF sources)


class Tools(Protocol):
    """The engine as the loop uses it."""

    mode: str
    fields: tuple[str, ...]

    def search(self, query: str, k: int, asked: str = "") -> SearchOutcome:
        """Run a search; raises ``QueryError`` for a query the engine refuses. ``asked``: the
        question the query was planned from, for the dense ranker to read with it."""
        ...

    def read(self, doc_id: str, section: str | None) -> ReadOutcome:
        """Read one section; ``None`` reads the whole document (visit) and ``""`` lists the
        document's sections (its outline). Raises ``SectionError``."""
        ...

    def sections(self, doc_id: str) -> list[str]:
        """Every section name of a document that a fetch accepts ([] when unknown)."""
        ...


def or_words(query: str, limit: int = 64) -> str:
    """The query's distinct words joined with OR: ranked retrieval without selection.

    Words come out casefolded, so ``and``/``or``/``not`` are plain words, never operators.
    """
    ws = list(dict.fromkeys(words(query)))[:limit]
    if not ws:
        raise QueryError("the search has no words; write a few distinctive words", 1)
    return " OR ".join(ws)


# Syntax features a query used (accounting). Reads the written query; quoted text is blanked
# first so a phrase like "x AND y" counts as a phrase, not an AND.
_QUOTED = re.compile(r'"[^"]*"?')
_SCOPE = re.compile(r"\[([^\]]*)\]")


def query_features(query: str, fields: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(operators, fields) used by a BQL query, in a fixed order, each once."""
    from ..bql.ast import ALIASES

    ops: list[str] = []
    if '"' in query:
        ops.append("phrase")
    bare = _QUOTED.sub(" ", query)
    for op in ("AND", "OR", "NOT"):
        if re.search(rf"(?<![\w-]){op}(?![\w-])", bare):
            ops.append(op)
    if re.search(r"\bNEAR(/\d+)?\(", bare):
        ops.append("NEAR")
    if re.search(r"(^|[\s(])-", bare):
        ops.append("-")
    if "*" in query:
        ops.append("prefix")
    if "(" in bare.replace("NEAR(", ""):
        ops.append("group")
    used: list[str] = []
    for m in _SCOPE.finditer(bare):
        inner = m.group(1)
        if re.match(r"\s*[0-9<>.]", inner):  # 2018..2023[date]-style range
            continue
        for name in inner.split(","):
            canon = ALIASES.get(name.strip().lower())
            if canon and canon not in used:
                used.append(canon)
    if re.search(r"\bdate\s*\[|\]\s*\[\s*date", bare) or re.search(r"\[\s*date\s*\]", bare):
        if "date" not in used:
            used.append("date")
        ops.append("date")
    return ops, used


RRF_K = 60  # the rank offset of the fused section rankings (reciprocal rank fusion)
ONE_PLACE = 1 / RRF_K - 1 / (RRF_K + 1)  # one place at the top of one of them


def _heading_said(names: list[str], question: str, idf: Callable[[str], float],
                  stopwords: frozenset[str]) -> dict[str, float]:
    """Each section's share of its heading's words (idf-weighted, on crude stems, so
    'Acceptance' is said by 'accept' and 'Line' by 'lines') that the question says; 0 for a
    heading of none."""
    said = {stem5(w) for w in words(question) if w not in stopwords}
    out: dict[str, float] = {}
    for name in names:
        content = [w for w in words(name) if w not in stopwords and not w.isdigit()]
        total = sum(idf(w) for w in content)
        out[name] = sum(idf(w) for w in content if stem5(w) in said) / total if total else 0.0
    return out


class CollectionTools:
    """``Tools`` over an open collection, in one of the three modes."""

    def __init__(self, coll: Any, mode: str = "sieve", ranker: str | None = None,
                 compact: bool = False, sections_shown: int = 0) -> None:
        from .syntax import MODES

        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.coll = coll
        self.mode = mode
        # compact: short cards for small models (title line, the offered sections, snippet);
        # sections_shown > 0: offer only that many sections per card, best first.
        self.compact = compact
        self.sections_shown = sections_shown
        self.focus: list[str] = []  # the question's content words: orders sections, cuts reads
        self.question_text = ""     # the question itself: what it asks for orders sections
        # Outside sieve mode the words are all there is: the model sees no fields.
        self.fields = tuple(coll.fields) if mode == "sieve" else ()
        self.ranker = ranker or ("hybrid" if getattr(coll, "has_vectors", False) else "bm25")
        self._sections: dict[str, list[str]] = {}
        self._idf: Any = None       # the collection's word idf (read.collection_idf), lazily
        self._scores: dict[tuple[str, tuple[str, ...]], Any] = {}  # _scored's, per question

    # -- search ----------------------------------------------------------------------------
    def seed(self, question: str, k: int) -> SearchOutcome:
        """Step 0: the question's words, ranked (no selection), in every mode alike."""
        return self._run(question, or_words(question), k)

    def search(self, query: str, k: int, asked: str = "") -> SearchOutcome:
        engine_query = query if self.mode == "sieve" else or_words(query)
        return self._run(query, engine_query, k, asked)

    def _run(self, query: str, engine_query: str, k: int, asked: str = "") -> SearchOutcome:
        extra: dict[str, Any] = {}
        if asked and self.ranker in ("dense", "hybrid"):
            # A plan keeps the question's words and loses its sentence; the embedder was
            # trained on sentences. So it reads the question with the query's words. The
            # plan's three cards held the gold document for 35 -> 38 of the 40 held-out PEP
            # questions, +1 on the PEP and on the RFC dev sets; first cards +1 on held-out,
            # one dev question gained and one lost (not the words alone, nor the question
            # alone: that lost a first card more).
            from ..rank import embed_query

            coll = self.coll
            extra["embed"] = lambda text: embed_query(coll, f"{asked} {text}")
        res = self.coll.search(engine_query, k=k, ranker=self.ranker, **extra)
        hits = []
        for h in list(res.results)[:k]:
            card = h.card  # every search hit carries its card (sieve_lite.cards.Card)
            if card.headings:
                # The card's names are the fetchable ones (repeats told apart as 'X (2)').
                secs = list(card.headings) + (["infobox"] if card.infobox_keys else [])
                self._sections[str(h.id)] = secs
            else:
                secs = self.sections(h.id)
            snip = str(_attr(card, "snippet_section", "") or "")
            if self.sections_shown:
                secs = self.rank_sections(str(h.id), secs, snip)[: self.sections_shown]
            meta = [str(_attr(card, "date", "") or "")]
            authors = _attr(card, "authors", None) or []
            if authors:
                meta.append("by " + ", ".join(_strip_mail(a) for a in authors))
            hits.append(Hit(rank=int(h.rank), id=str(h.id), title=str(h.title), sections=secs,
                            card=self._card_text(h, secs), snippet_section=snip,
                            byline="; ".join(m for m in meta if m),
                            data=card.to_dict()))
        return SearchOutcome(query=query, engine_query=engine_query, total=int(res.total),
                             fallback=bool(getattr(res, "fallback", False)), hits=hits,
                             notes=[str(n) for n in (getattr(res, "notes", None) or [])],
                             clause_counts=_plain(getattr(res, "clause_counts", None) or []))

    def rank_sections(self, doc_id: str, names: list[str], first: str = "") -> list[str]:
        """A document's sections, the likeliest to hold the answer first.

        The infobox leads when one of its keys names what the question asks for ('Status:'
        for 'What status ...', 'Author:' for 'Who ...', 'Created:' for 'When ...').
        The rest are ordered by the ranker's own passage-level BM25 of the question's words
        (each section with the title and its heading; the infobox with its keys and values),
        then by the snippet's section and the order in the document; an infobox that names
        nothing asked for comes last."""
        if not self.focus:
            return ([first] if first in names else []) + [n for n in names if n != first]
        scored = self._scored(doc_id)
        if scored is None:
            return names
        doc, passages, best_sentences = scored
        from ..fetch import section_names
        from .question import STOPWORDS
        from .read import reader_for
        from .spans import Source, SpanIndex, keyed_lines

        pos_names = section_names([s["heading"] for s in doc["sections"]])
        targeted = False
        if doc.get("infobox"):
            box = "\n".join(f"{k}: {v}" for k, v in doc["infobox"])
            idx = SpanIndex([Source(box, (doc_id, "infobox"))], max_chunks=1 << 30)
            question = self.question_text or " ".join(self.focus)
            targeted = keyed_lines(idx, question, STOPWORDS)[0] >= 2
            # ... but not for 'Who is the main author of Reticulated Python?' when
            # 'Reticulated Python' is a heading here, not the title: the question asks about
            # the thing that section is about (the 'Author:' line is the document's)
            said = f" {' '.join(words(question))} "
            title = f" {' '.join(words(doc.get('title') or ''))} "
            targeted = targeted and not any(
                h and f" of {h} " in said and f" {h} " not in title
                and not all(w in STOPWORDS for w in h.split())
                for h in (" ".join(words(sec["heading"])) for sec in doc["sections"]))
        scores: dict[str, float] = {}
        for (kind, pos), value in passages:
            name = pos_names[pos] if kind == "section" and pos < len(pos_names) else kind
            scores[name] = max(scores.get(name, 0.0), value)

        # ... and by its best sentence: the most of the question's words (idf-weighted) one
        # sentence holds. Fused with the passage score by rank (RRF): a long section that
        # mentions every word somewhere loses to one with a sentence that says the thing.
        # Measured on the natural PEP dev set's prose questions (gold document): the gold
        # section first 38 of 49 by the passage score alone, 40 fused.
        sentence = dict(zip(pos_names, best_sentences, strict=True))
        by_passage = {n: i for i, n in enumerate(sorted(
            names, key=lambda n: (-scores.get(n, 0.0), names.index(n))))}
        by_sentence = {n: i for i, n in enumerate(sorted(
            names, key=lambda n: (-sentence.get(n, 0.0), names.index(n))))}

        asked = f" {' '.join(words(self.question_text))} "
        # ... and by how much of its heading the question says (idf-weighted; 'What's the
        # default relative tolerance ...' and 'Relative Tolerance Default'): worth up to one
        # place in one ranking, a tie-break. Measured on the PEP and RFC dev sets' prose
        # questions whose gold document is read first (366; fresh10 left out): the gold
        # section first 8 times more and 2 fewer; at four places 13 more and 8 fewer.
        said = _heading_said(names, self.question_text, reader_for(self)[0], STOPWORDS)

        def score(name: str) -> tuple[int, int, float, float, int, int]:
            # the infobox: first when it names what is asked, else last (its title's words
            # make any infobox look relevant, and a small model then copies a date from it)
            box = 1 if targeted else -1
            # a heading of two words or more that the question says ('In the section
            # "Active Python core developers", ...') is the section asked about
            heading = words(name)
            named = int(len(heading) > 1 and f" {' '.join(heading)} " in asked)
            fused = 1 / (RRF_K + by_passage[name]) + 1 / (RRF_K + by_sentence[name])
            fused += ONE_PLACE * said[name]
            return (box if name == "infobox" else 0, named, fused, scores.get(name, 0.0),
                    int(name == first), -names.index(name))

        return sorted(names, key=score, reverse=True)

    def first_to_read(self, ids: list[str]) -> tuple[str, str]:
        """Of step 0's cards (``ids``, in rank order), the document to read first, and why
        when it is not the first card ('' then).

        A later card is read first when its best passage (the ranker's passage-level BM25
        of the question's words) or its best sentence (``_best_sentence``) scores half as
        much again as the first card's: the ranker orders whole documents, and a document
        that mentions the words everywhere can outrank the one with the passage that says
        the thing."""
        # Measured on the plan's three cards of every PEP and RFC dev question (238): the
        # gold document is read first 6 times more and never less (x1.3 lost one, x1.8
        # gained 4). Of 225 QA questions without a route, 2 change.
        if len(ids) < 2 or not self.focus:
            return (ids[0] if ids else ""), ""
        scores = [self._match(d) for d in ids]
        first = scores[0]
        for rank, (doc, (passage, sentence)) in enumerate(zip(ids, scores, strict=True)):
            if rank and (passage > 1.5 * first[0] or sentence > 1.5 * first[1]):
                return doc, (f"card {rank + 1}'s best passage scores {passage:.1f} and its "
                             f"best sentence {sentence:.1f} for the question's words, "
                             f"card 1's {first[0]:.1f} and {first[1]:.1f}")
        return ids[0], ""

    def _match(self, doc_id: str) -> tuple[float, float]:
        """(best passage, best sentence) of a document for the question's words."""
        scored = self._scored(doc_id)
        if scored is None:
            return 0.0, 0.0
        _doc, passages, sentences = scored
        return max((v for _k, v in passages), default=0.0), max(sentences, default=0.0)

    def _scored(self, doc_id: str) -> tuple[dict[str, Any], list[Any], list[float]] | None:
        """(the document, the ranker's passage scores of the question's words, the best
        sentence's score of each section); None for an unknown id. Kept for the question:
        the first read's card is scored to be chosen (``first_to_read``), then read
        (``rank_sections``)."""
        from ..rank import passage_scores, scoring_terms

        key = (doc_id, tuple(self.focus))
        if key in self._scores:
            return self._scores[key]
        doc = self.coll.document(doc_id)
        rowid = self.coll.doc_rowid(doc_id) if doc is not None else None
        if doc is None or rowid is None:
            return None
        terms = scoring_terms([(w, False) for w in self.focus])
        own = getattr(self.coll, "passage_scores_of", None)  # sharded: on the doc's shard
        passages = list(own(terms, doc_id) if own is not None
                        else passage_scores(self.coll, terms, rowid))
        got = (doc, passages, [self._best_sentence(sec["text"]) for sec in doc["sections"]])
        if len(self._scores) >= 16 or any(k[1] != key[1] for k in self._scores):
            self._scores.clear()  # another question's, or enough for one episode
        self._scores[key] = got
        return got

    def _best_sentence(self, text: str) -> float:
        """The idf-weighted share of the question's content words (first five letters) that
        the best sentence of ``text`` holds."""
        from ..words import words
        from .read import collection_idf, split_sentences

        if self._idf is None:
            self._idf = collection_idf(self.coll)
        weights = {w[:5]: self._idf(w) for w in self.focus}
        best = 0.0
        for sent in split_sentences(text):
            have = {w[:5] for w in words(sent)}
            best = max(best, sum(v for k, v in weights.items() if k in have))
        return best

    def _card_text(self, hit: Any, secs: list[str]) -> str:
        """The engine's compact card (sieve, search-fetch), a short card for small models,
        or a plain list entry (visit)."""
        card = hit.card
        if self.mode == "search-visit":
            snippet = _one_line(_attr(card, "snippet", "") or "")
            line = f"[{hit.rank}] {hit.id}: {hit.title}"
            return line + (f"\n    {snippet}" if snippet else "")
        if self.compact:
            return _short_card(hit, card, secs)
        return card.render_compact().rstrip()

    # -- read ------------------------------------------------------------------------------
    def sections(self, doc_id: str) -> list[str]:
        if doc_id not in self._sections:
            doc = self.coll.document(doc_id)
            if doc is None:
                self._sections[doc_id] = []
            else:
                from ..fetch import section_names

                names = section_names([s["heading"] for s in doc["sections"]])
                if doc.get("infobox"):
                    names.append("infobox")
                self._sections[doc_id] = names
        return self._sections[doc_id]

    def read(self, doc_id: str, section: str | None) -> ReadOutcome:
        if section is None or self.mode == "search-visit":
            return self._visit(doc_id)
        res = self.coll.fetch(doc_id, section or None)
        text = _attr(res, "text", None)
        if text is None:
            text = str(res)
        return ReadOutcome(doc=str(_attr(res, "id", doc_id) or doc_id),
                           title=str(_attr(res, "title", "") or ""),
                           section=str(_attr(res, "section", section) or section or ""),
                           text=str(text), truncated=bool(_attr(res, "truncated", False)),
                           pages=format_pages(_attr(res, "pages", None)))

    def _visit(self, doc_id: str) -> ReadOutcome:
        """The whole document as one text (the loop applies the token cap)."""
        doc = self.coll.document(doc_id)
        if doc is None:
            raise SectionError(f"no document with id {doc_id!r} in this collection")
        parts = [doc["title"]]
        if doc.get("date"):
            parts.append(f"date: {doc['date']}")
        if doc.get("author"):
            parts.append("author: " + ", ".join(doc["author"]))
        for k, v in doc.get("infobox") or []:
            parts.append(f"{k}: {v}")
        for s in doc["sections"]:
            parts.append(s["text"] if s["heading"] == "(intro)" else f"## {s['heading']}\n"
                         f"{s['text']}")
        return ReadOutcome(doc=doc_id, title=doc["title"], section=WHOLE_DOCUMENT,
                           text="\n\n".join(p for p in parts if p))


# -- card rendering helpers ----------------------------------------------------------------
def _attr(obj: Any, name: str, default: Any) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _plain(x: Any) -> Any:
    """JSON-ready copy of engine values (tuples, dataclasses) for the transcript."""
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if hasattr(x, "__dataclass_fields__"):
        from dataclasses import asdict

        return _plain(asdict(x))
    return x if isinstance(x, (str, int, float, bool)) or x is None else str(x)


def _one_line(s: str) -> str:
    return " ".join(str(s).split())


def _strip_mail(name: str) -> str:
    """'Carl Meyer <carl at example.org>' -> 'Carl Meyer'."""
    return re.sub(r"\s*[<(][^>)]*[>)]\s*", " ", str(name)).strip()


def _short_card(hit: Any, card: Any, secs: list[str]) -> str:
    """A card for a small model: title line with date and authors, the sections it may
    fetch (best first), the snippet with its section."""
    meta = []
    date = _attr(card, "date", "")
    if date:
        meta.append(str(date))
    authors = _attr(card, "authors", None) or []
    if authors:
        meta.append("by " + ", ".join(_strip_mail(a) for a in authors[:3]))
    head = f"[{hit.rank}] {hit.id} | {hit.title}" + (f" ({'; '.join(meta)})" if meta else "")
    lines = [head]
    if secs:
        lines.append("  sections: " + " | ".join(secs))
    snippet = _attr(card, "snippet", "")
    if snippet:
        lines.append(f"  snippet ({_attr(card, 'snippet_section', '')}): {_one_line(snippet)}")
    return "\n".join(lines)


MAX_HEADER_VALUE = 60    # characters of a header line's value shown when a header is cut


def short_values(text: str, limit: int = MAX_HEADER_VALUE) -> str:
    """A header ('Key: value' lines) with each long value cut at ``limit`` characters: lists
    of links ('Post-History: ...') would otherwise fill a cut read and push out the short
    lines a question asks about ('Author:')."""
    out = []
    for line in text.split("\n"):
        key, sep, value = line.partition(": ")
        if sep and len(value) > limit:
            cut = value[:limit].rsplit(" ", 1)[0] if " " in value[:limit] else value[:limit]
            line = f"{key}: {cut} …"
        out.append(line)
    return "\n".join(out)


def excerpt(text: str, focus: list[str], max_words: int) -> tuple[str, bool]:
    """At most ``max_words`` words of ``text``: the whole text when it fits, else the window
    with the most distinct focus words (on their first five letters), from a line start when
    one is near. Returns (text, was_cut)."""
    from ..words import word_spans

    spans = word_spans(text)
    if len(spans) <= max_words:
        return text, False
    stems = {w[:5] for w in focus}
    keys = [w[:5] if w[:5] in stems else None for _, _, w in spans]
    best, best_score = 0, (-1, 0)
    counts: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k:
            counts[k] = counts.get(k, 0) + 1
        if i >= max_words:
            old = keys[i - max_words]
            if old:
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
        start = max(0, i - max_words + 1)
        score = (len(counts), -start)
        if i >= max_words - 1 and score > best_score:
            best, best_score = start, score
    # Centre the window on the focus words it holds: context on both sides.
    hits = [j for j in range(best, min(best + max_words, len(keys))) if keys[j]]
    start = 0
    if hits:
        slack = max_words - (hits[-1] - hits[0] + 1)
        start = max(0, min(hits[0] - slack // 2, len(spans) - max_words))
    end = min(len(spans), start + max_words)
    lo = spans[start][0]
    nl = text.rfind("\n", 0, lo)
    if start and nl >= 0 and lo - nl < 200:
        lo = nl + 1
    # ends at whitespace: the window's words are BQL's (runs of letters and digits), and a
    # cut between them would show 'Python-Version: 3' for '3.11'
    hi = spans[end - 1][1]
    while hi < len(text) and not text[hi].isspace():
        hi += 1
    while lo > 0 and not text[lo - 1].isspace():
        lo -= 1
    body = text[lo:hi]
    return ("... " if start else "") + body + (" ..." if end < len(spans) else ""), True


def clause_counts_text(counts: Any) -> str:
    """'clause: n; ...' from whatever shape the engine reports."""
    parts = []
    for c in counts or []:
        if isinstance(c, dict):
            label = c.get("clause") or c.get("text") or c.get("query") or ""
            n = c.get("count", c.get("documents", c.get("n", "")))
        elif isinstance(c, (list, tuple)) and len(c) == 2:
            label, n = c
        else:
            continue
        parts.append(f"{label}: {n}")
    return "; ".join(parts)


def results_text(res: SearchOutcome, mode: str, offered: list[str]) -> str:
    """A search's observation: how many documents it admitted, the cards, and (for small
    models) the searches still offered. A query that admitted nothing says which clause
    emptied it, so the model can loosen that one."""
    shown = f"ranks 1-{len(res.hits)}" if res.hits else "nothing"
    if mode == "sieve":
        head = f"{res.total} documents match; showing {shown}."
    else:
        head = f"{res.total} documents share a word with the query; showing {shown}."
    lines = [head]
    if res.fallback:
        counts = clause_counts_text(res.clause_counts)
        lines = ["No document matches the whole query"
                 + (f" (documents per clause: {counts})" if counts else "")
                 + ". Showing the best matches for its words instead; loosen or drop the "
                   "clause with 0 documents."]
    if not res.hits:
        lines.append("Try fewer or other words, a prefix (word*) or a wider field.")
    lines.extend(h.card for h in res.hits)
    if offered:
        lines.append("Searches you can run: " + " | ".join(offered))
    return "\n".join(lines)
