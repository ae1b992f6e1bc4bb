"""Fetch: one named section of one document (BQL.md section 9.5).

``fetch(coll, doc, section=None)``

* ``doc`` names the document. An ``int`` is a rank in the collection's last search listing
  (``coll._session``). A string is tried as a document id first (ids are exact, and some
  collections have ids made of digits); only when no document has that id and the string is
  all digits is it read as a rank in the last listing. The command line has no session, so
  there a number is an id or an error that says so.
* ``section`` is a heading as the cards list it, ``(intro)`` (also ``intro`` when no heading
  is called that), or ``infobox`` (the entries as ``key: value`` lines; a document without an
  infobox may still have a section called that). Names match ignoring case and runs of spaces;
  failing an exact match, a prefix that fits exactly one section is taken; a prefix that fits
  several is refused with the candidates; anything else is refused with the document's
  sections. Repeated headings are told apart as ``Heading (2)``, ``Heading (3)``... (the cards
  use the same names), so every section has a name of its own.
* Without a section the result is the document's **outline**: every section name with its
  length in tokens (and the infobox size), so a cut heading list on a card stays reachable.

Text is cut at ``MAX_TOKENS`` tokens, counted as BQL words (``sieve_lite.words``: a word is a
run of letters and digits, so ``3.14`` is two). This is an approximation of a model's tokens
(subword tokenisers give roughly 1.3 tokens per English word); it is the same count the ranking
and the cards use, and it is exact and tokenizer-free. A cut ends after a whole word and
carries a note saying how many tokens were left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .documents import INFOBOX, INTRO, format_pages
from .errors import SectionError
from .store import pages as store_pages
from .store import reads
from .store.packing import MAX_SECTION_BYTES, unpack
from .words import word_spans, words

MAX_TOKENS = 12_000
FIRST_WORDS = 12  # words of each section an outline shows


@dataclass
class OutlineEntry:
    """One line of a document's outline: a section's name, its length, how it begins."""

    name: str
    tokens: int
    first_words: str
    pages: tuple[int, int] | None = None  # the section's page range (PDF sources)


@dataclass
class FetchResult:
    """What a fetch returns: one section's text, or the document's outline."""

    id: str
    title: str
    section: str | None  # the section's name; None for the outline
    text: str
    tokens: int  # tokens (BQL words) in ``text`` as returned
    total_tokens: int  # tokens before any cut
    truncated: bool
    note: str = ""
    sections: list[str] = field(default_factory=list)  # the document's section names
    outline: list[OutlineEntry] = field(default_factory=list)  # filled for the outline only
    pages: tuple[int, int] | None = None  # the section's page range (PDF sources)

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "title": self.title, "section": self.section, "text": self.text,
               "tokens": self.tokens, "total_tokens": self.total_tokens,
               "truncated": self.truncated, "note": self.note or None,
               "sections": self.sections}
        if self.pages:  # only sections with a page range carry the key
            out["pages"] = list(self.pages)
        return out

    def render(self) -> str:
        """Plain text for an agent or a terminal: a header line, the text, the note."""
        head = f"{self.id} | {self.title}"
        head += f" | {self.section}" if self.section else " | sections"
        if self.pages:
            head += f" | {format_pages(self.pages)}"
        parts = [head, "", self.text]
        if self.note:
            parts += ["", f"[{self.note}]"]
        return "\n".join(parts)


def section_names(headings: list[str]) -> list[str]:
    """Unique, fetchable names for a document's headings, in order.

    The first occurrence keeps its heading; a repeat (ignoring case and spacing) becomes
    ``Heading (2)``, ``Heading (3)``, ... skipping any name already taken.
    """
    keys = list(map(_key, headings))
    if len(set(keys)) == len(keys):  # most headings are distinct (cards ask for every hit)
        return list(headings)
    taken: set[str] = set()
    out: list[str] = []
    for h, key in zip(headings, keys, strict=True):
        name, n = h, 1
        while key in taken:
            n += 1
            name = f"{h} ({n})"
            key = _key(name)
        taken.add(key)
        out.append(name)
    return out


def _key(name: str) -> str:
    """How section names compare: case folded, runs of whitespace as one space."""
    return " ".join(name.split()).casefold()


def count_tokens(text: str) -> int:
    return len(words(text))


def first_words(text: str, n: int = FIRST_WORDS) -> str:
    """The original text up to the end of its ``n``-th word, on one line ("..." when cut)."""
    spans = word_spans(text)
    if len(spans) <= n:
        return " ".join(text.split())
    return " ".join(text[: spans[n - 1][1]].split()) + " ..."


def cut(text: str, limit: int = MAX_TOKENS) -> tuple[str, int, int]:
    """``text`` cut after its ``limit``-th word: (text, tokens kept, tokens in all)."""
    spans = word_spans(text)
    total = len(spans)
    if total <= limit:
        return text, total, total
    return text[: spans[limit - 1][1]], limit, total


# ----------------------------------------------------------------------------- documents
def listed_ids(coll: Any) -> list[str]:
    """The ids of ``coll``'s last search listing, in rank order (none before a search)."""
    session = getattr(coll, "_session", None)
    if session is None:
        return []
    return [h.id for h in session.results]


def id_at_rank(coll: Any, rank: int) -> str:
    """The id at ``rank`` (1-based) of the last listing; ``SectionError`` when there is none."""
    ids = listed_ids(coll)
    if not ids:
        raise SectionError(f"no search listing to take rank {rank} from; search first, or "
                           "give the document id from a card")
    if not 1 <= rank <= len(ids):
        raise SectionError(f"rank {rank} is out of range: the last search listed ranks "
                           f"1..{len(ids)}")
    return ids[rank - 1]


def resolve_document(coll: Any, doc: str | int) -> tuple[int, str, str]:
    """(rowid, id, title) of the document ``doc`` names; ``SectionError`` when none."""
    if isinstance(doc, bool) or not isinstance(doc, (int, str)):
        raise SectionError(f"a document is named by its id or its rank, not {doc!r}")
    doc_id = id_at_rank(coll, doc) if isinstance(doc, int) else doc
    row = reads.document_row(coll.conn, doc_id)
    if row is None and isinstance(doc, str) and doc.strip().isdigit():
        if listed_ids(coll):
            return resolve_document(coll, int(doc.strip()))
        raise SectionError(f"no document has the id {doc!r}, and there is no search listing "
                           "to read it as a rank in; give the document id from a card")
    if row is None:
        near = reads.ids_ignoring_case(coll.conn, doc_id)
        hint = f"; did you mean {', '.join(repr(i) for i in near)}?" if near else \
            "; take the id from a search result card"
        raise SectionError(f"no document has the id {doc_id!r} in this collection{hint}")
    return row


# ------------------------------------------------------------------------------- sections
def _listing(names: list[str], has_infobox: bool) -> str:
    shown = names + ([INFOBOX] if has_infobox else [])
    return ", ".join(shown) if shown else "(none)"


def _pick(requested: str, names: list[str], has_infobox: bool, doc_id: str) -> int:
    """Index into ``names`` of the section ``requested`` names; -1 for the infobox."""
    want = _key(requested)
    keys = [_key(n) for n in names]
    if not want:
        raise SectionError(f"empty section name; {doc_id} has: {_listing(names, has_infobox)}")
    if want == INFOBOX and has_infobox:
        return -1
    if want in keys:
        return keys.index(want)
    if want == "intro" and _key(INTRO) in keys:
        return keys.index(_key(INTRO))
    candidates = [i for i, k in enumerate(keys) if k.startswith(want)]
    if has_infobox and INFOBOX.startswith(want):
        candidates.append(-1)
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        names_of = [INFOBOX if i < 0 else names[i] for i in candidates]
        raise SectionError(f"section {requested!r} is ambiguous in {doc_id}: it begins "
                           f"{', '.join(names_of)}; give more of the name")
    raise SectionError(f"{doc_id} has no section {requested!r}; its sections are: "
                       f"{_listing(names, has_infobox)}")


def fetch(coll: Any, doc: str | int, section: str | None = None,
          max_tokens: int = MAX_TOKENS) -> FetchResult:
    """One section of a document (or its outline when ``section`` is None). Only the section
    asked for is unpacked (the outline unpacks each, one at a time, to count its tokens)."""
    rowid, doc_id, title = resolve_document(coll, doc)
    secs = reads.sections(coll.conn, rowid)
    names = section_names([h for h, _ in secs])
    infobox = reads.infobox(coll.conn, rowid)
    limit = _unpack_limit(coll)
    pages = store_pages.of_document(coll.conn, rowid)
    if section is None:
        outline = []
        for i, (n, (_, stored)) in enumerate(zip(names, secs, strict=True)):
            t = unpack(stored, limit)  # one section at a time
            outline.append(OutlineEntry(n, count_tokens(t), first_words(t), pages.get(i)))
        lines = [f"{e.name} ({e.tokens} tokens"
                 + (f", {format_pages(e.pages)})" if e.pages else ")") for e in outline]
        if infobox:
            lines.append(f"{INFOBOX} ({len(infobox)} entries)")
            entries = "; ".join(f"{k}: {v}" for k, v in infobox)
            outline.append(OutlineEntry(INFOBOX, count_tokens(entries), first_words(entries)))
        text = "\n".join(lines)
        n = count_tokens(text)
        return FetchResult(doc_id, title, None, text, n, n, False,
                           note="fetch one of these sections by name", sections=names,
                           outline=outline)
    i = _pick(section, names, bool(infobox), doc_id)
    if i < 0:
        name, body = INFOBOX, "\n".join(f"{k}: {v}" for k, v in infobox)
    else:
        name, body = names[i], unpack(secs[i][1], limit)
    text, kept, total = cut(body, max_tokens)
    note = ""
    if kept < total:
        note = (f"cut at {kept:,} of {total:,} tokens (BQL words); {total - kept:,} tokens "
                "of this section are not shown")
    return FetchResult(doc_id, title, name, text, kept, total, kept < total, note, names,
                       pages=pages.get(i) if i >= 0 else None)


def _unpack_limit(coll: Any) -> int:
    """The collection's bound on a section's size (the ceiling for a stand-in without one)."""
    meta = getattr(coll, "meta", None)
    return getattr(meta, "max_section_bytes", MAX_SECTION_BYTES)
