"""Two hops: the documents a read names, as searches the model can run next.

A read often names another document: a header line ``Superseded-By: 3333``, a mention such
as ``PEP 3156`` or ``RFC 2119`` in the prose, a value that is another document's title. Each
such name that resolves to a document of the collection becomes a ``Reference``: the BQL that
finds it (``"pep 3333"[infobox]``, ``"..."[title]``), checked to admit that document, and
whether the question asks about that link (a word of the line's key shares its first five
letters with a word of the question: "superseded" and ``Superseded-By``; a few relation words
stand for each other: "successor" for superseded, "earlier" for replaces).

When a read does not answer, the document it names that the question's other words find is
where the question goes on (``named_next``).

Nothing here knows a collection: a number becomes a document id by the shape of the id of
the document just read (``pep-0333`` -> ``pep-3333``; ``0002-rfc-process`` has no such shape
and is resolved by title or infobox phrases only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..words import words
from .queries import search_words, titled, unqualified_words
from .question import Question, relation_stems

_KEYLINE = re.compile(r"^[ \t]*([A-Za-z][\w -]{0,40}):[ \t]*(.+?)[ \t]*$", re.M)
_MENTION = re.compile(r"\b([A-Za-z]{2,10})[\s:`-]{1,3}(\d{1,5})\b")


@dataclass(frozen=True)
class Reference:
    """A document a read names."""

    doc: str          # its id in the collection
    query: str        # BQL that admits it
    key: str          # the 'key:' of the line that names it ('' for a mention in prose)
    related: bool     # the question asks about this link


def _id_shape(doc_id: str) -> tuple[str, int] | None:
    """('pep-', 4) for 'pep-0333': a prefix then a zero-padded number, nothing after."""
    m = re.fullmatch(r"([A-Za-z]+[-_]?)(\d+)", doc_id)
    return (m.group(1), len(m.group(2))) if m else None


def _stems(text: str) -> set[str]:
    return {w[:5] for w in words(text) if len(w) > 2}


def _asks_about(key: str, question: str) -> bool:
    return bool(relation_stems(question) & _stems(key))


def references(coll: Any, text: str, source_doc: str, question: str, limit: int = 4
               ) -> list[Reference]:
    """The documents ``text`` (read from ``source_doc``) names, each with a checked query;
    those the question asks about first, then in the order named."""
    shape = _id_shape(source_doc)
    prefix_word = re.sub(r"[-_]$", "", shape[0]).lower() if shape else ""
    found: list[tuple[str, str]] = []  # (number or title, key)
    for m in _KEYLINE.finditer(text):
        key, value = m.group(1).strip(), m.group(2)
        if shape:
            # a list of numbers only ('3333', '234, 252'): dates, versions and URLs are not
            if re.fullmatch(r"\d{1,5}(?:\s*,\s*\d{1,5})*", value):
                found.extend((num, key) for num in re.findall(r"\d+", value))
        else:
            found.append((value, key))
    if shape:
        for m in _MENTION.finditer(text):
            if m.group(1).lower() == prefix_word:
                found.append((m.group(2), ""))
    out: dict[str, Reference] = {}
    for value, key in found:
        ref = _resolve(coll, value, key, shape, prefix_word, question)
        if ref is None or ref.doc == source_doc:
            continue
        old = out.get(ref.doc)
        if old is None or (ref.related and not old.related):
            out[ref.doc] = ref
    refs = sorted(out.values(), key=lambda r: not r.related)
    return refs[:limit]


def _resolve(coll: Any, value: str, key: str, shape: tuple[str, int] | None,
             prefix_word: str, question: str) -> Reference | None:
    related = bool(key) and _asks_about(key, question)
    if shape and value.isdigit():
        doc = f"{shape[0]}{int(value):0{shape[1]}d}"
        if coll.document(doc) is None:
            return None
        for query in (f'"{prefix_word} {int(value)}"[infobox]',
                      f'"{prefix_word} {int(value)}"[title]', f'"{prefix_word} {int(value)}"'):
            if _admits_doc(coll, query, doc):
                return Reference(doc, query, key, related)
        return None
    ws = words(value)
    if not 2 <= len(ws) <= 8 or "title" not in coll.fields:
        return None
    query = f'"{" ".join(ws)}"[title]'
    try:
        res = coll.search(query, k=1, ranker="bm25", strict=True)
    except QueryError:
        return None
    if res.total and words(res.results[0].title) == ws:
        return Reference(str(res.results[0].id), query, key, related)
    return None


def _admits_doc(coll: Any, query: str, doc: str) -> bool:
    """The query admits ``doc`` among its first few documents."""
    try:
        res = coll.search(query, k=5, ranker="bm25", strict=True)
    except QueryError:
        return False
    return any(str(h.id) == doc for h in res.results)


def named_next(coll: Any, q: Question, source_doc: str, source_title: str, text: str,
               read: set[str], k: int = 5) -> Reference | None:
    """The document a question reaches through the one just read, when that read did not
    answer it: of the ``k`` documents the question's other words rank first (bm25, the words
    of the read document's title left out), the first whose title the read text names.
    "The ghetto that George Kadish documented held how many people?" read 'George Kadish',
    which names the Kovno Ghetto; 'ghetto', 'documented', 'held' and 'people' rank it among
    the first. A document the read does not name is only a coincidence of words; None when
    there is none."""
    own = set(words(source_title))
    ws = search_words(q, leave=own)
    if not ws:
        return None
    query = " OR ".join(ws)
    try:
        res = coll.search(query, k=k + len(read), ranker="bm25")
    except QueryError:
        return None
    said = f" {' '.join(words(text))} "
    others = [h for h in res.results if str(h.id) != source_doc and str(h.id) not in read]
    for hit in others[:k]:
        doc = str(hit.id)
        tw = unqualified_words(hit.title)
        if tw and f" {' '.join(tw)} " in said:
            return Reference(doc, query, "", True)
    return None


# Kinds of candidate that may name a document of their own (not a date, number or code)
_NAMING_KINDS = frozenset({"entity", "person", "place", "phrase", "defined"})


def named_candidate(coll: Any, text: str, kind: str, source_doc: str, read: set[str]
                    ) -> Reference | None:
    """The document the likeliest candidate of a read that did not answer names, when it
    has one: its title, a '(...)' qualifier left off, is the candidate's words ("Forever
    Living Products" for "What company did Rex Maughan acquire?", read on *Rex Maughan*:
    the answer is on the company's own page). None for a date, a number or code, a name
    with no document of its own, or one already read."""
    ws = words(text)
    if kind not in _NAMING_KINDS or not 1 <= len(ws) <= 8 or "title" not in coll.fields:
        return None
    doc = titled(coll, ws)
    if doc is None or doc == source_doc or doc in read:
        return None
    return Reference(doc, f'"{" ".join(ws)}"[title]', "", True)


def asks_for_link(q: Question, doc_id: str) -> bool:
    """Whether the question asks which document a link names ('Which PEP did it list as a
    prerequisite?', 'Which proposal superseded it?'): the number on the line read is the
    answer, not a document to read next."""
    kind = re.match(r"[a-z]*", doc_id).group(0)
    return q.target.kind == "what" and bool(
        set(q.target.nouns) & {kind, "proposal", "document", "specification", "spec"} - {""})


def link_text(hop: Reference, hits: list[Any]) -> str:
    """What follows a read whose link the question asks about: the linked document's card
    (from the engine's search for it) and the instruction to read it next."""
    cards = "\n".join(h.card for h in hits if h.id == hop.doc) or "\n".join(
        h.card for h in hits)
    what = f"{hop.key}: " if hop.key else ""
    return (f"\n\nThe question asks about the document this names ({what}{hop.doc}). "
            f"search: {hop.query}\n{cards}\nRead it next.")


__all__ = ["Reference", "asks_for_link", "link_text", "named_candidate", "named_next", "references"]
