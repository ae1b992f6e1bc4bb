"""The steps the engine takes without asking the model for its next action: the route's
first search and the documents it leads to (``compare.py``, ``bridge.py``), a prose read
narrowed to the question (``read.py``), the choice among its candidate answers
(``choice.py``) and a route's own verdict.

A mixin of ``loop.Agent``: it works on the episode's state, budgets and tools that the agent
holds, and records its steps through the agent's ``_record``."""

from __future__ import annotations

import time
from typing import Any

from ..errors import QueryError, SectionError
from .bridge import Bridge
from .choice import choose
from .compare import Comparison, is_comparison
from .hops import named_candidate, named_next
from .question import Question, analyze
from .read import Reading, nlp, read_for, reader_for
from .steps import Answer, Citation, Fetch, Mistake, NothingLeft, Step, render_action
from .tools import SearchOutcome


def route_for(coll: Any, q: Question) -> Comparison | Bridge | None:
    """The engine's route for a question that compares two things it names, or reaches its
    answer through a role of a thing it names; None for every other question."""
    if is_comparison(q):
        comparison = Comparison(coll, q, nlp())
        return comparison if comparison.queries else None
    bridge = Bridge(coll, q, None)
    if bridge:
        bridge.entities = nlp()
        return bridge
    return None


class EngineSteps:
    """Steps of the engine's own (no model action is asked for)."""

    # set by loop.Agent
    route: Comparison | Bridge | None
    tools: Any
    budgets: Any
    st: Any
    acc: Any
    q: Question
    backbone: Any
    mode: str
    steps: list[Step]
    _lead_why: str = ""        # why the engine reads the document it reads next
    _lead_doc: str = ""        # the document ``_next_named`` led to
    _lead_seconds: float = 0.0

    def _route_search(self) -> tuple[SearchOutcome, str, dict[str, Any]] | None:
        """Step 0 of a route: one search that shows each compared thing's card, or the
        bridge's named entity."""
        assert self.route is not None
        query, why = self.route.query(), self.route.why()
        try:
            res = self.tools.search(query, self.budgets.k)
        except QueryError:
            return None
        head = f"Results of the search planned from the question ({why}): {query}"
        return res, head, {"plan": query, "plan_why": why}

    def _lead(self) -> str:
        """A document the engine reads next without asking the model: each compared thing
        and the person it names in the role compared; a bridge's entity and each document
        its roles lead to. The model has nothing to choose there."""
        task = self.route
        if task is None:
            return self._first_read() or self._next_named() or self._next_section()
        for _ in range(4):  # a read may add the next lead
            pending = [d for d in task.leads() if not self.st.was_read(d)]
            if pending:
                return pending[0]
            before = task.leads()
            for doc in before:
                task.on_read(doc, self.st.full(doc))
            if task.leads() == before:
                break
        return ""

    def _first_read(self) -> str:
        """With ``engine_first_read`` (small models, sieve mode): the card of step 0 to read
        at its best-ranked section before the model acts (the first, unless another matches
        the question's words much better: ``first_to_read``); '' otherwise."""
        # only as the first action: nothing but step 0's search came before it
        if not (self.budgets.engine_first_read and self.mode == "sieve" and self.acc.seeded
                and len(self.steps) == 1 and self.st.last_hits):
            return ""
        ids = [str(h.id) for h in self.st.last_hits]
        pick = getattr(self.tools, "first_to_read", None)
        if pick is None:
            return ids[0]
        doc, why = pick(ids)
        self._lead_why = why
        return doc

    def _next_named(self) -> str:
        """With ``engine_first_read``: once the engine's first read was chosen from and gave
        no answer, the document the question reaches through it (``hops.named_next``), or
        else the one its likeliest candidate is the title of (``hops.named_candidate``),
        read next as the link followed; '' when there is none. A small model's own next
        action there is most often the same search again (bench/ask.py, HotpotQA)."""
        coll = getattr(self.tools, "coll", None)
        newest = self.st.newest()
        if not (self.budgets.engine_first_read and self.mode == "sieve" and coll is not None
                and self.st.hop is None and newest is not None
                and newest in self.st.chosen):
            return ""
        read = {d for d, _s in self.st.read}
        if len(read) != 1:
            return ""
        doc = newest[0]
        t0 = time.perf_counter()
        ref = named_next(coll, self.q, doc, self.st.titles.get(doc, doc), self.st.full(doc),
                         read, self.budgets.k)
        if ref is not None:
            why = f"of what the question's other words find ({ref.query}), it names {ref.doc}"
        else:
            # the likeliest candidate of the choice just made was no answer, but it may
            # name where the answer is
            last = next((s.info["choice"] for s in reversed(self.steps)
                         if "choice" in s.info), None)
            best = last["scores"][0] if last and last["scores"] else None
            ref = named_candidate(coll, best["text"], best["kind"], doc, read) if best else None
            why = f"its likeliest candidate, {best['text']!r}, has a document of its own" \
                if best else ""
        self._lead_seconds = time.perf_counter() - t0
        if ref is None:
            return ""
        self.st.hop = ref
        self._lead_doc = ref.doc
        self._lead_why = f"{doc} did not answer; {why}"
        return ref.doc

    def _next_section(self) -> str:
        """With ``engine_first_read``: once the engine's first read was chosen from, gave no
        answer and led nowhere (``_next_named``), the same document again, at its next-ranked
        section not yet read; '' when it has none. The model's own next read there was the
        same section in 18 of 48 natural and held-out questions, and the gold section in 5 of
        21; the next-ranked section was in 6 of those 21 (``bench/ask.py``)."""
        coll = getattr(self.tools, "coll", None)
        newest = self.st.newest()
        if not (self.budgets.engine_first_read and self.mode == "sieve" and coll is not None
                and self.st.hop is None and newest is not None and newest in self.st.chosen
                and len(self.st.read) == 1):
            return ""
        doc = newest[0]
        if all((doc, name) in self.st.read for name in self.tools.sections(doc)):
            return ""
        self._lead_why = f"{doc} | {newest[1]} did not answer; its next section for the question"
        return doc

    def _engine_read(self, doc: str) -> None:
        """Read a document's best section as an engine step (no model call). A route's reads
        are the route's; the first read of a question without one counts as a step."""
        sections = self.tools.sections(doc)
        if not sections:
            raise NothingLeft()
        if self.route is None:
            self.acc.steps += 1
        if hasattr(self.tools, "rank_sections") and len(sections) > 1:
            sections = self.tools.rank_sections(doc, sections)
        if self.route is not None:
            sections = self.route.prefer(doc, sections)
        # a document read again (``_next_section``) is read at a section not read yet
        sections = [n for n in sections if (doc, n) not in self.st.read] or sections
        step = Step(index=self._next_index(), reply="", action=None, observation="",
                    info={"engine": True})
        if self.st.hop is not None and self.st.hop.doc == doc and self._lead_why:
            step.info["lead"] = self._lead_why
            step.engine_seconds += self._lead_seconds
            self._lead_why = ""
        elif self._lead_why and self.st.hop is None:
            # the first read of a later card (first_to_read), or a next section
            step.info["lead"] = self._lead_why
            self._lead_why = ""
        action = Fetch(doc, sections[0])
        step.action = action
        step.reply = render_action(action)
        try:
            obs, extra, _progress = self._act(action, step)
        except (Mistake, QueryError, SectionError) as e:
            obs, extra = self._mistake(e, step), {}
        self._record(step, obs, **extra)
        if self.route is not None:
            self.route.on_read(doc, self.st.full(doc))

    def _asked(self, doc: str) -> Question:
        """What a read of ``doc`` must answer: the question, or, at the end of a bridge,
        the question about where its roles led (``Bridge.question``)."""
        route = self.route
        if route is not None and doc and doc == route.answer_doc:
            return analyze(route.question())
        return self.q

    def _narrow(self, doc: str, section: str, text: str, step: Step) -> Reading | None:
        """A prose read narrowed to the question (``read.py``): its best sentences and the
        candidate answers in them. None for an infobox (its lines are the answers) or when
        narrowing is off or finds nothing."""
        if not self.budgets.narrow or section == "infobox":
            return None
        t0 = time.perf_counter()
        try:
            reader = reader_for(self.tools)
            reading = read_for(self._asked(doc), text, (doc, section), *reader,
                               shown=self.budgets.shown_sentences)
        finally:
            step.engine_seconds += time.perf_counter() - t0
        if not reading.sentences:
            return None
        self.st.readings[(doc, section)] = reading
        step.info["candidates"] = [c.text for c in reading.candidates[:8]]
        return reading

    def _choose(self, final: bool) -> Answer | None:
        """Small models answer prose by choosing among the candidates of what they read
        (``choice.py``): by likelihood in process, under a grammar of the candidates over a
        server. Abstaining mid-episode costs the step (the model may read on); at the end it
        means no answer."""
        if self.route is not None and not self.route.answer_doc:
            return self._settle()
        keys = sorted(self.st.readings, key=lambda k: -self.st.read.get(k, 0))
        if self.st.hop is not None and self.st.was_read(self.st.hop.doc):
            keys = [k for k in keys if k[0] == self.st.hop.doc]
        if self.route is not None:
            # the answer is about where the roles lead, not about the entity named
            keys = [k for k in keys if k[0] == self.route.answer_doc]
        if not final:
            keys = keys[:1]
        newest = max(self.st.read, key=lambda k: self.st.read[k]) if self.st.read else None
        self.st.chosen.update([*keys, *([newest] if newest else [])])
        t0 = time.perf_counter()
        asked = self._asked(keys[0][0]) if keys else self.q
        # a document reached through the one first read (``_next_named``)
        hop = bool(self._lead_doc) and bool(keys) and keys[0][0] == self._lead_doc
        if isinstance(self.route, Bridge) and self.route.open_end:
            # the last role's fillers, named where the question's words may not be
            doc = self.route.answer_doc
            key = next((k for k in self.st.read if k[0] == doc), None)
            readings = [self.route.fillers_reading(self.st.full(doc), key)] if key else []
        else:
            readings = [self.st.readings[k] for k in keys]
        choice = choose(self.backbone, asked, readings,
                        self.budgets.choice, self.mode, tuple(self.st.titles.values()),
                        hop=hop, hop_title=self.st.titles.get(self._lead_doc, self._lead_doc)
                        if hop else "")
        seconds = time.perf_counter() - t0
        self.acc.model_seconds += seconds
        if choice.method != "text" and (choice.scores or choice.completion_tokens):
            self.acc.llm_calls += 1  # no candidate: the model was not asked
        if not final:
            # like the final answer request, the final choice is not one of the capped steps
            self.acc.steps += 1
        self.acc.completion_tokens += choice.completion_tokens
        # the reading prompt the model scored or wrote under is a prompt it processed
        self.acc.accumulated_prompt_tokens += choice.prompt_tokens
        self.acc.peak_prompt_tokens = max(self.acc.peak_prompt_tokens, choice.prompt_tokens)
        step = Step(index=self._next_index(), reply="", action=None, observation="",
                    model_seconds=seconds, info={"choice": choice.to_json(), "final": final})
        answer = None
        if choice.answer is not None:
            c = choice.answer
            cites = (Citation(c.label[0], c.label[1], self.st.read_pages.get(c.label, "")),) \
                if c.label else ()
            answer = step.action = Answer(c.text, cites)
            step.reply = render_action(answer)
            self.acc.grounded = True
        if answer is None:
            step.error = f"no answer chosen: {choice.why}"
            if final:
                self.acc.no_answer = choice.why or "no candidate answer"
            self._record(step, "" if final else "No candidate in what you read is clearly "
                         "the answer. Read another section, or answer from what you read.")
            return None
        self._record(step, "")
        return answer

    def _settle(self) -> Answer | None:
        """A route's own answer (``settled``): the option or yes of a comparison, from what
        was read about each thing; the name a bridge's last role leads to. Cited where it
        rests; none when what was read does not settle it."""
        assert self.route is not None
        self.st.chosen.add(("", ""))
        t0 = time.perf_counter()
        verdict = self.route.settled()
        step = Step(index=self._next_index(), reply="", action=None, observation="",
                    engine_seconds=time.perf_counter() - t0,
                    info={"route": {"answer": verdict.answer if verdict else None,
                                    "why": verdict.why if verdict else ""}})
        if verdict is None:
            self.acc.no_answer = "what was read does not settle the question"
            step.error = f"no answer: {self.acc.no_answer}"
            self._record(step, "")
            return None
        docs = self.route.sources()
        cites = tuple(Citation(d, s, self.st.read_pages.get((d, s), ""))
                      for d, s in self.st.read if d in docs)
        answer = Answer(verdict.answer, cites, verdict.why)
        step.action, step.reply = answer, render_action(answer)
        self.acc.grounded = True
        self._record(step, "")
        return answer


__all__ = ["EngineSteps", "route_for"]
