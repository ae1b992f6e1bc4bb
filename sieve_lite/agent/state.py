"""What an episode has seen and read so far: the state the loop's decisions are made from.

The loop (``loop.py``) changes it as actions run; the menus of the next reply, the citations
an answer may give, the text an answer may copy and the evidence of an episode without an
answer are all read from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .read import Reading
from .steps import Citation
from .tools import WHOLE_DOCUMENT, Hit


@dataclass
class EpisodeState:
    """Everything shown and read in one episode."""

    last_hits: list[Hit] = field(default_factory=list)   # the last result's cards
    cards: dict[str, Hit] = field(default_factory=dict)  # every card shown, by document id
    seen: dict[str, list[str]] = field(default_factory=dict)  # doc -> sections, newest last
    # (doc, section) -> the step it was read at: everything read in this episode, trimmed
    # or not, is citable and is never read again
    read: dict[tuple[str, str], int] = field(default_factory=dict)
    read_pages: dict[tuple[str, str], str] = field(default_factory=dict)  # 'p. 4–6'
    read_text: dict[tuple[str, str], str] = field(default_factory=dict)   # what was shown
    full_text: dict[tuple[str, str], str] = field(default_factory=dict)   # the whole read
    readings: dict[tuple[str, str], Reading] = field(default_factory=dict)  # prose, narrowed
    chosen: set[tuple[str, str]] = field(default_factory=set)  # reads chosen from already
    done: dict[tuple[str, ...], int] = field(default_factory=dict)  # call key -> its step
    suggested: list[str] = field(default_factory=list)  # searches offered (queries.py)
    titles: dict[str, str] = field(default_factory=dict)  # doc -> title, of documents read
    hop: Any = None                                     # the link followed (hops.Reference)

    def show(self, hits: list[Hit]) -> None:
        """Cards now on screen: the last result, and every document seen (newest last)."""
        self.last_hits = hits
        for h in hits:
            self.seen.pop(h.id, None)
            self.seen[h.id] = h.sections
            self.cards[h.id] = h

    def was_read(self, doc: str) -> bool:
        return any(d == doc for d, _s in self.read)

    def hop_pending(self) -> bool:
        """A link the question asks about was found and its document is not read yet."""
        return self.hop is not None and not self.was_read(self.hop.doc)

    def newest(self) -> tuple[str, str] | None:
        return max(self.read, key=lambda k: self.read[k]) if self.read else None

    def full(self, doc: str) -> str:
        """Everything read of one document, whole."""
        return "\n".join(t for (d, _s), t in self.full_text.items() if d == doc)

    def cite(self, doc: str, section: str) -> Citation:
        return Citation(doc, section, self.read_pages.get((doc, section), ""))

    def citable(self) -> list[Citation]:
        return [self.cite(d, s) for d, s in self.read]

    def unread(self, doc: str, sections: list[str], mode: str) -> list[str]:
        """Sections not read yet: the grammar makes a repeated read unwritable."""
        if mode == "search-visit":
            return [] if ("read", doc, WHOLE_DOCUMENT) in self.done else [WHOLE_DOCUMENT]
        return [s for s in sections if ("read", doc, s) not in self.done]

    def answer_keys(self) -> list[tuple[str, str]]:
        """The reads an answer may come from, newest first: all of them, or only those of
        the linked document once a followed link was read (what was read of the first
        document answers another question)."""
        keys = sorted(self.read, key=lambda k: -self.read[k])
        if self.hop is not None and self.was_read(self.hop.doc):
            keys = [k for k in keys if k[0] == self.hop.doc]
        return keys

    def evidence(self) -> list[dict[str, str]]:
        """The best text read, for a user left without an answer: each section read (newest
        first), its first lines."""
        out = []
        for (doc, sec), _i in sorted(self.read.items(), key=lambda kv: -kv[1])[:3]:
            text = " ".join(self.read_text.get((doc, sec), "").split())
            out.append({"doc": doc, "section": sec,
                        "text": text if len(text) <= 400 else text[:399] + "…"})
        return out


__all__ = ["EpisodeState"]
