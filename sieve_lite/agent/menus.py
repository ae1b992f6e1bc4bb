"""What the model may write next: the menu (``syntax.Menu``) of each reply. Only actions that
are new and useful can be written; a small model is told when its next reply must be the
answer (a keyed header line) or a choice among candidates.

A mixin of ``loop.Agent``: it reads the episode's state, budgets and tools that the agent
holds."""

from __future__ import annotations

from typing import Any

from .spans import Source, SpanIndex, keyed_values, span_rules
from .steps import NothingLeft, norm_query
from .syntax import Menu
from .tools import WHOLE_DOCUMENT


def has_fetch_now(fetchable: list[tuple[str, list[str]]]) -> bool:
    """Whether any listed document still has something to read."""
    return any(secs for _label, secs in fetchable)


class Menus:
    """The menus of the agent's replies."""

    # set by loop.Agent
    route: Any
    tools: Any
    budgets: Any
    st: Any
    acc: Any
    mode: str
    question: str

    def _hop_grammar(self) -> Menu:
        """The next reply while a link is being followed: its search, then a read of the
        linked document; no answer yet (the question asks about the linked document)."""
        hop = self.st.hop
        if ("search", norm_query(hop.query)) not in self.st.done:
            return Menu.of(self.mode, self.tools.fields, [], [], uncited_answer=False,
                           queries=[hop.query], free_search=False,
                           thought_chars=self.budgets.thought_chars)
        secs = self.st.unread(hop.doc, self.tools.sections(hop.doc), self.mode)
        if self.budgets.sections_shown and hasattr(self.tools, "rank_sections"):
            secs = self.tools.rank_sections(hop.doc, secs)[: self.budgets.sections_shown]
        label = next((str(h.rank) for h in self.st.last_hits if h.id == hop.doc), hop.doc)
        if hop.doc not in self.st.seen:
            self.st.seen[hop.doc] = secs
        return Menu.of(self.mode, self.tools.fields, [(label, secs)], [],
                       uncited_answer=False, queries=[], free_search=False,
                       thought_chars=self.budgets.thought_chars)

    def _queries_left(self) -> list[str]:
        return [q for q in self.st.suggested if ("search", norm_query(q)) not in self.st.done]

    def _grammar(self, uncited_answer: bool = True) -> Menu:
        """The grammar of the next reply: only actions that are new and useful. A search
        already run and a section already read cannot be written; an answer only once
        something was read (and, under the span rule, only as a span of shown text)."""
        if self.st.hop_pending() and self.budgets.max_steps - self.acc.steps >= 1:
            return self._hop_grammar()
        fetchable: list[tuple[str, list[str]]] = []
        for h in self.st.last_hits:
            fetchable.append((str(h.rank), self.st.unread(h.id, h.sections, self.mode)))
        last_ids = {h.id for h in self.st.last_hits}
        # ids of documents seen earlier (newest 40): fetchable by id
        for doc_id in list(self.st.seen)[-40:]:
            if doc_id not in last_ids:
                fetchable.append((doc_id, self.st.unread(doc_id, self.st.seen[doc_id],
                                                         self.mode)))
        if self.mode == "search-visit":
            fetchable = [(lab, [WHOLE_DOCUMENT]) for lab, secs in fetchable if secs]
        queries = self._queries_left() if self.budgets.suggest else None
        free = self.budgets.free_search or not self.budgets.suggest
        # A search whose results can no longer be read is wasted: none on the last step,
        # and none on the last two while nothing has been read.
        left = self.budgets.max_steps - self.acc.steps
        first_read = self.budgets.read_before_search and not self.st.read and self.acc.seeded
        if left <= 1 or (left <= 2 and not self.st.read) or first_read:
            if has_fetch_now(fetchable):
                queries, free = [], False
        span_rules = self._span_grammar() if (self._span_rule() and self.st.read) else None
        has_fetch = any(secs for _lab, secs in fetchable)
        if not (queries or free or has_fetch or self.st.read):
            raise NothingLeft()
        return Menu.of(self.mode, self.tools.fields, fetchable, self.st.citable(),
                       uncited_answer=uncited_answer, queries=queries,
                       free_search=free, span_rules=span_rules,
                       thought_chars=self.budgets.thought_chars)

    def _answer_now(self) -> str:
        """What the next reply must be, for small models: 'keyed' once a read shows a 'key:
        value' line whose key names a word of the question ('Created:' for 'when was it
        created', ``answer_when_keyed``): the next reply can only be the answer, since a
        small model otherwise wanders off to read more; 'choice' once a prose read has
        candidate answers not chosen from yet (``choose``); '' otherwise."""
        if self.route is not None and not self.route.answer_doc:
            return "" if self._lead() or self.st.chosen else "choice"
        if not self.st.read or self.st.hop_pending():
            return ""
        newest = max(self.st.read, key=lambda k: self.st.read[k])
        # header lines: an infobox, or a whole document's (a prose section's 'x: y' lines
        # are prose)
        header = newest[1] in ("infobox", WHOLE_DOCUMENT)
        if self.budgets.answer_when_keyed and self._span_rule() and header:
            from .question import STOPWORDS

            idx = SpanIndex([Source(self.st.read_text[newest], newest)])
            if keyed_values(idx, self.question, STOPWORDS):
                return "keyed"
        reading = self.st.readings.get(newest)
        if self.budgets.choice and reading is not None and reading.candidates \
                and newest not in self.st.chosen:
            return "choice"
        return ""

    def _span_grammar(self) -> str:
        from .question import STOPWORDS

        keys = self.st.answer_keys()
        titles = list(dict.fromkeys(self.st.titles[d] for d, _s in keys if d in self.st.titles))
        return span_rules(self._spans(), self.question, STOPWORDS, titles)

    def _answer_grammar(self) -> Menu:
        span_rules = self._span_grammar() if self._span_rule() else None
        return Menu.of(self.mode, (), (), self.st.citable(), answer_only=True,
                       span_rules=span_rules, thought_chars=0)


__all__ = ["Menus", "has_fetch_now"]
