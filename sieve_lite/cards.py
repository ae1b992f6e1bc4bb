"""Result cards (BQL.md section 9.4): one ``Card`` object, three renderings.

* ``Card.to_dict()`` - JSON: every field, every heading.
* ``Card.render_compact()`` - plain text for the agent: few tokens, but every section name is
  either shown or counted, and the outline (``fetch DOC`` without a section) lists them all.
* ``Card.render_rich()`` - a rich renderable for the terminal. Document text is escaped with
  ``rich.markup.escape`` so that ``[brackets]`` in titles or snippets are not read as markup.

What a card says:

* **matched fields** is attribution, not word overlap: a field is listed only when a positive
  atom of the query (a word, prefix, phrase or NEAR group not under NOT) really matches *this
  document* there, within the atom's scope (a phrase within one field value, as the selection
  requires). Phrases and NEAR run as FTS5 matches on the document's rows of each field; word
  and prefix atoms are read off the card's own values and the query's passage postings
  (``_attribute``), which the tests hold equal to the FTS5 matches (``matched_fields``).
* the **snippet** is at most ``SNIPPET_WORDS`` words copied from the original text of the
  document's best passage under passage-level BM25 (``rank.best_passage``: the same passages
  and scores as the ``bm25`` ranker, whatever ranker ordered the list), so the snippet and the
  ranking agree: a section (named by its fetchable name), the infobox (``Key: value`` entries,
  named ``infobox``) or the author list (named ``authors``). Within it, the window of that many
  words with the most distinct positive words (ties: more hits, then the earlier window),
  re-centred on the hits it holds. When no passage scores (a document admitted by a heading-only
  NOT, say), it is the opening of the first section with text. Only that passage's text is
  read and unpacked.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .bql.ast import Near, Term, expand_fields, positive_words
from .documents import INFOBOX, INTRO, format_pages
from .fetch import section_names
from .store import cards as sql
from .store import pages as store_pages
from .store.cards import FTS_TABLES
from .words import index_text, span_words, words_span

SNIPPET_WORDS = 25
HEADINGS_SHOWN = 24  # the compact and rich renderings list this many, then count the rest
AUTHORS = "authors"  # what a snippet from the author-list passage is named


@dataclass
class Card:
    """Everything a result card shows, independent of rendering."""

    rank: int
    id: str
    title: str
    score: float
    headings: list[str]  # every section's fetchable name, (intro) included, in order
    infobox_keys: list[str] = field(default_factory=list)
    date: str | None = None
    authors: list[str] = field(default_factory=list)
    url: str | None = None
    matched_fields: list[str] = field(default_factory=list)
    snippet: str = ""
    snippet_section: str | None = None
    # The page range of each heading (same order; None where a section has none): PDF sources.
    pages: list[tuple[int, int] | None] = field(default_factory=list)

    def _heading_label(self, i: int) -> str:
        p = self.pages[i] if i < len(self.pages) else None
        return f"{self.headings[i]} ({format_pages(p)})" if p else self.headings[i]

    def heading_labels(self) -> list[str]:
        """The headings as shown: each with its page range when it has one."""
        return [self._heading_label(i) for i in range(len(self.headings))]

    def snippet_pages(self) -> str:
        """The snippet's section's page range, ``'p. 4–6'``, or ``''``."""
        name = self.snippet_section or ""
        if name in self.headings and self.pages:
            i = self.headings.index(name)
            return format_pages(self.pages[i] if i < len(self.pages) else None)
        return ""

    def snippet_label(self) -> str:
        """The snippet's section as shown: with its page range when it has one."""
        pages = self.snippet_pages()
        return f"{self.snippet_section or ''}, {pages}" if pages else self.snippet_section or ""

    # -- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {"rank": self.rank, "id": self.id, "title": self.title,
                "score": round(self.score, 6), "headings": self.headings,
                "infobox_keys": self.infobox_keys, "date": self.date, "authors": self.authors,
                "url": self.url, "matched_fields": self.matched_fields,
                "snippet": self.snippet, "snippet_section": self.snippet_section}
        if any(self.pages):  # only collections with page ranges carry the key
            out["pages"] = [list(p) if p else None for p in self.pages]
        return out

    # -- compact text for the agent -----------------------------------------------------------
    def _headings_line(self, limit: int) -> str:
        shown = [self._heading_label(i) for i in range(min(limit, len(self.headings)))]
        line = " | ".join(shown)
        rest = len(self.headings) - len(shown)
        if rest > 0:
            line += f" | ... +{rest} more (fetch {self.id} with no section lists all)"
        return line

    def render_compact(self, max_headings: int = HEADINGS_SHOWN) -> str:
        lines = [f"[{self.rank}] {self.id} | {self.title}"]
        meta = []
        if self.date:
            meta.append(f"date {self.date}")
        if self.authors:
            meta.append("by " + ", ".join(self.authors))
        if meta:
            lines.append("  " + "; ".join(meta))
        lines.append("  matched: " + (", ".join(self.matched_fields) or "-"))
        if self.headings:
            lines.append(f"  sections ({len(self.headings)}): "
                         + self._headings_line(max_headings))
        if self.infobox_keys:
            lines.append("  infobox: " + ", ".join(self.infobox_keys))
        if self.snippet:
            lines.append(f"  snippet ({self.snippet_label()}): {self.snippet}")
        return "\n".join(lines)

    # -- rich for the terminal ------------------------------------------------------------------
    def render_rich(self, max_headings: int = HEADINGS_SHOWN) -> Any:
        from rich.panel import Panel

        from .display import for_rich as escape

        rows = []
        meta = []
        if self.date:
            meta.append(f"[bold]date[/bold] {escape(self.date)}")
        if self.authors:
            meta.append(f"[bold]by[/bold] {escape(', '.join(self.authors))}")
        if meta:
            rows.append("   ".join(meta))
        rows.append("[bold]matched[/bold] " + (escape(", ".join(self.matched_fields)) or "-"))
        if self.headings:
            rows.append(f"[bold]sections ({len(self.headings)})[/bold] "
                        + escape(self._headings_line(max_headings)))
        if self.infobox_keys:
            rows.append("[bold]infobox[/bold] " + escape(", ".join(self.infobox_keys)))
        if self.snippet:
            rows.append(f"[bold]{escape(self.snippet_label())}[/bold]: "
                        f"[italic]{escape(self.snippet)}[/italic]")
        name = escape(self.title or "(untitled)")
        title = f"[bold cyan]{self.rank}.[/bold cyan] [bold]{name}[/bold]"
        subtitle = f"{escape(self.id)}  score {self.score:.4g}"
        return Panel("\n".join(rows), title=title, title_align="left", subtitle=subtitle,
                     subtitle_align="right", expand=True)


# ------------------------------------------------------------------------------ attribution
def fts_match(atom: Term | Near) -> str:
    """The FTS5 MATCH string of one atom: the compiler's own, so that attribution and
    selection can never disagree on what an atom means. It is bound, never spliced."""
    from .bql.compiler import atom_match

    return atom_match(atom)


def matched_fields(conn: Any, rowid: int, atoms: Sequence[Term | Near],
                   fields: Sequence[str]) -> list[str]:
    """Fields (in BQL order) where at least one positive atom matches this very document.

    Word and prefix atoms are answered together by one statement on the document's
    ``fts_doc`` row (per field, the tagged tokens of the atoms searching it, ORed). Phrases
    and NEAR, which must hold within one field value, are run on the per-value tables, one
    field at a time, only for fields not yet found.
    """
    from .bql.compiler import doc_term

    found: set[str] = set()
    simple: dict[str, list[str]] = {}
    for atom in atoms:
        if isinstance(atom, Term) and not atom.is_phrase:
            for f in expand_fields(atom.fields, tuple(fields)):
                simple.setdefault(f, []).append(doc_term(atom, (f,)))
    if simple:
        found |= sql.doc_fields(conn, {f: " OR ".join(m) for f, m in simple.items()}, rowid)
    for atom in atoms:
        if isinstance(atom, Term) and not atom.is_phrase:
            continue
        expr = fts_match(atom)
        for f in expand_fields(atom.fields, tuple(fields)):
            if f not in found and sql.field_matches(conn, f, expr, rowid):
                found.add(f)
    return [f for f in FTS_TABLES if f in found]


# ---------------------------------------------------------------------------------- snippet
class _WordTest:
    """Which positive word (exact, or prefix stem) a text word is, if any."""

    def __init__(self, words: Sequence[tuple[str, bool]]) -> None:
        self.exact = {w: w for w, p in words if not p}  # word -> its key (itself)
        self.stems = sorted({w for w, p in words if p})

    def __call__(self, word: str) -> str | None:
        if word in self.exact:
            return word
        for s in self.stems:
            if word.startswith(s):
                return s + "*"
        return None

    def keys(self, words: list[str]) -> list[str | None]:
        """``self(w)`` for each word; without prefixes, one dict lookup per word."""
        if self.stems:
            return [self(w) for w in words]
        return list(map(self.exact.get, words))


@lru_cache(maxsize=64)  # a result list's snippets share the query's words
def _word_test(words: tuple[tuple[str, bool], ...]) -> _WordTest:
    return _WordTest(words)


def _best_window(keys: list[str | None], size: int) -> tuple[int, int, int]:
    """(start, distinct, hits) of the ``size``-word window with the most distinct positive
    words, then the most hits, then the earliest start."""
    n = len(keys)
    size = min(size, n)
    counts: Counter[str] = Counter(k for k in keys[:size] if k)
    hits = sum(counts.values())
    best = (0, len(counts), hits)
    for start in range(1, n - size + 1):
        out, inn = keys[start - 1], keys[start + size - 1]
        if out:
            counts[out] -= 1
            hits -= 1
            if not counts[out]:
                del counts[out]
        if inn:
            counts[inn] += 1
            hits += 1
        if (len(counts), hits) > best[1:]:
            best = (start, len(counts), hits)
    return best


def snippet(sections: Sequence[tuple[str, str]], words: Sequence[tuple[str, bool]],
            size: int = SNIPPET_WORDS) -> tuple[str, str | None]:
    """(snippet, section name) per the module docstring; ("", None) for a document without
    any text. ``sections`` are (fetchable name, original text)."""
    test = _word_test(tuple(words))
    best: tuple[int, int, int] | None = None  # (distinct, hits, -index)
    chosen: tuple[int, list[str], list[str | None]] | None = None
    for i, (_, text) in enumerate(sections):
        ws = span_words(text)  # spans only for the two ends of the chosen window, below
        if not ws:
            continue
        keys = test.keys(ws)
        hit = [k for k in keys if k]
        score = (len(set(hit)), len(hit), -i)
        if best is None or score > best:
            best, chosen = score, (i, ws, keys)
    if chosen is None:
        return "", None
    i, ws, keys = chosen
    start = 0
    if best and best[0]:
        start = _best_window(keys, size)[0]
        # Centre the window on its hits (it keeps every one of them): context on both sides
        # reads better than hits at the very end of the earliest best window.
        hits = [j for j in range(start, min(start + size, len(keys))) if keys[j]]
        slack = size - (hits[-1] - hits[0] + 1)
        start = max(0, min(hits[0] - slack // 2, len(keys) - size))
    end = min(start + size, len(ws))
    text = sections[i][1]
    lo, hi = words_span(text, start, end - 1)
    body = " ".join(text[lo:hi].split())
    if start > 0:
        body = "... " + body
    if end < len(ws):
        body += " ..."
    return body, sections[i][0]


# -------------------------------------------------------------------------------- building
def _snippet_source(coll: Any, rowid: int, best: tuple[str, int] | None, best_text: str | None,
                    names: list[str], infobox: list[tuple[str, str]], authors: list[str]
                    ) -> list[tuple[str, str]]:
    """(name, original text) of the passage the snippet comes from: the best one under
    passage-level BM25 (a section's text came with the card's rows), or every section when
    none scores (the opening of the first with text is then taken)."""
    if best is None or best[0] == "title":
        # No passage holds a snippet word, so no section text does: the snippet is the
        # opening of the first section with a word, and only that one is needed.
        for pos, text in sql.section_texts(coll.conn, rowid, coll.meta.max_section_bytes):
            if span_words(text):
                return [(names[pos], text)]
        return []
    kind, pos = best
    if kind == "section":
        return [(names[pos], best_text or "")]
    if kind == "infobox":
        return [(INFOBOX, "; ".join(f"{k}: {v}" for k, v in infobox))]
    return [(AUTHORS, ", ".join(authors))]


def body_words(atoms: Sequence[Term | Near], fields: Sequence[str]) -> list[tuple[str, bool]]:
    """The positive words of the atoms that search section text (``body``, ``tiab``, ``all``).

    A snippet is section text, so these choose it: in ``"assignment expression"[title] OR
    walrus`` the snippet must show ``walrus``, not a section that happens to say
    "assignment". With no such atom (``fort[title]``) the caller uses every positive word."""
    return [w for a in atoms if "body" in expand_fields(a.fields, tuple(fields))
            for w in positive_words(a)]


def _attribute(coll: Any, rowid: int, atoms: Sequence[Term | Near], title: str,
               headings: list[str], where: dict[tuple[str, bool], list],
               known: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """``matched_fields`` without an FTS5 query for word and prefix atoms, from the passages
    of this document holding the word (``where``: (word, prefix) -> ``rank.term_passages``,
    from the postings the ranking decoded). Every passage holds the title's words, a section
    passage also its heading's and its text's, the infobox passage every entry's, the author
    passage every name's. So with ``t`` the word's count in the title: the title holds it
    when ``t > 0``; a heading when that section's passage holds it and the heading's words
    do; the body when a section passage's tf exceeds ``t`` plus its heading's count; the
    infobox (authors) when that passage's tf exceeds ``t``. Only the title and the headings
    of passages holding the word are normalised. Phrases and NEAR go to the per-value tables
    as before. ``known``: fields matched already (``build_cards``' ``required``); an atom
    whose every field is among the found ones needs no look."""
    fields = tuple(coll.text_fields)
    title_w: list[str] | None = None
    head_w: dict[int, list[str]] = {}
    found: set[str] = set(known)
    rest: list[Term | Near] = []
    for atom in atoms:
        scope = set(expand_fields(atom.fields, fields)) - found
        if not scope:
            continue
        if not isinstance(atom, Term) or atom.is_phrase:
            rest.append(atom)
            continue
        w, prefix = atom.words[0], atom.prefix
        held = where.get((w, prefix))
        if not held:
            continue

        def count(ws: list[str], w: str = w, prefix: bool = prefix) -> int:
            return sum(1 for x in ws if (x.startswith(w) if prefix else x == w))

        if title_w is None:
            title_w = index_text(title).split()
        in_title = count(title_w)
        if in_title and "title" in scope:
            found.add("title")
        for (kind, pos), tf in held:
            if kind == "section":
                if not {"section", "body"} & scope:
                    continue
                if pos not in head_w:
                    h = headings[pos] if pos < len(headings) else INTRO
                    head_w[pos] = [] if h == INTRO else index_text(h).split()
                in_head = count(head_w[pos])
                if in_head and "section" in scope:
                    found.add("section")
                if tf > in_title + in_head and "body" in scope:
                    found.add("body")
            elif kind in ("infobox", "author") and kind in scope and tf > in_title:
                found.add(kind)
    if rest:
        found |= set(matched_fields(coll.conn, rowid, rest, fields))
    return [f for f in FTS_TABLES if f in found]


_PAGED: weakref.WeakKeyDictionary[Any, tuple[int, bool]] = weakref.WeakKeyDictionary()


def _has_pages(coll: Any) -> bool:
    """Whether any section of the collection has a page range (once per open collection and
    update generation): page-less collections skip the per-card lookup."""
    gen = getattr(coll, "generation", 0)
    hit = _PAGED.get(coll)
    if hit is None or hit[0] != gen:
        hit = _PAGED[coll] = (gen, store_pages.has_pages(coll.conn))
    return hit[1]


def build_cards(coll: Any, hits: Sequence[tuple[int, float]], atoms: Sequence[Term | Near],
                words: Sequence[tuple[str, bool]], first_rank: int = 1,
                required: Sequence[Term | Near] = ()) -> list[Card]:
    """The cards of ranked documents ``hits`` ((rowid, score), best first), ranks from
    ``first_rank``: their best passages and where each word atom occurs come from the
    decoded postings for all of them at once, their rows from one query. ``required``: atoms
    every hit is known to match (the selection admitted it through them), so an atom of one
    field among them attributes that field without a lookup."""
    # Here, not at the top: the terminal renderer imports this module for ``Card``, and
    # ``fetch`` must not pay for the ranking stack (numpy) it never uses.
    from . import rank as rk

    if not hits:
        return []
    conn = coll.conn
    docs = [int(r) for r, _ in hits]
    # The snippet is section text: the words of atoms that search it choose the passage,
    # which is known before the cards' one query (that also reads a best section's text).
    snippet_words = body_words(atoms, coll.text_fields) or words
    bests = rk.best_passages(coll, rk.scoring_terms(snippet_words), docs) if snippet_words \
        else [None] * len(docs)
    # the build's bound on a section's text: a crafted blob inflates no more
    rows = sql.cards_rows(conn, docs, [b[1] if b is not None and b[0] == "section" else None
                                       for b in bests], coll.meta.max_section_bytes)
    where: dict[tuple[str, bool], list] = {}
    for atom in atoms:
        if isinstance(atom, Term) and not atom.is_phrase:
            key = (atom.words[0], atom.prefix)
            if key not in where:
                where[key] = rk.term_passages_of(coll, key[0], key[1], docs)
    paged = _has_pages(coll)
    known: set[str] = set()
    for atom in required:
        scope = expand_fields(atom.fields, tuple(coll.text_fields))
        if len(scope) == 1:
            known |= set(scope)
    cards = []
    for i, ((rowid, score), best, row) in enumerate(zip(hits, bests, rows, strict=True)):
        (doc_id, title, date, url), headings, infobox, authors, best_text = row
        names = section_names(headings)
        text, section = snippet(_snippet_source(coll, rowid, best, best_text, names, infobox,
                                                authors), snippet_words)
        by_pos = store_pages.of_document(conn, rowid) if paged else {}
        pages = [by_pos.get(j) for j in range(len(names))] if by_pos else []
        held = {key: per_doc[i] for key, per_doc in where.items()}
        cards.append(Card(
            rank=first_rank + i, id=doc_id, title=title, score=score, headings=names,
            pages=pages, infobox_keys=list(dict.fromkeys(k for k, _ in infobox)), date=date,
            authors=authors, url=url,
            matched_fields=_attribute(coll, rowid, atoms, title, headings, held, known),
            snippet=text, snippet_section=section))
    return cards


def build_card(coll: Any, rank: int, rowid: int, score: float,
               atoms: Sequence[Term | Near], words: Sequence[tuple[str, bool]]) -> Card:
    """The card of one ranked document."""
    return build_cards(coll, [(rowid, score)], atoms, words, rank)[0]


__all__ = ["AUTHORS", "Card", "HEADINGS_SHOWN", "INTRO", "SNIPPET_WORDS", "body_words",
           "build_card", "build_cards", "fts_match", "matched_fields", "snippet"]
