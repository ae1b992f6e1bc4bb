"""The ReAct loop: search, fetch (or visit), answer -- with the paper's budgets.

Budgets: k = 5 results per search, at most ``max_steps`` (100) model steps, each read cut at
12,000 tokens (and at half the context window, so one read can never fill it). When the prompt
reaches 90% of the context window, or the step cap is hit, the loop asks for a final answer;
if the model still calls a tool, the answer is forced by prefilling ``answer: ``.

The conversation and its trimming policy are ``context.py``'s; prose reads are narrowed by
``read.py`` and small models choose among their candidates (``choice.py``); comparisons and
bridges are read along the engine's route (``compare.py``, ``bridge.py``).

Every answer the model gives on its own must cite a section it read in this episode (an
answer before any read is refused; only the forced final answer may come without a citation).

Model mistakes (a malformed action, a query the engine refuses, an unknown rank, id or
section, a repeated identical call, a citation of a section not read) go back to the model as
observations that say how to fix them. Anything else raised by the engine or a backbone
(other than ``ModelError``) is our bug and propagates.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ..errors import QueryError, SectionError
from .answers import Refused, check, focus_words, match_citations
from .backbones import Backbone, Message
from .bridge import Bridge
from .compare import Comparison
from .context import Conversation, cap, read_cap
from .engine_steps import EngineSteps, route_for
from .menus import Menus
from .profile import Budgets
from .question import Question, analyze
from .spans import Source, SpanIndex, shown
from .state import EpisodeState
from .steps import (
    NO_ANSWER,
    Accounting,
    Action,
    Answer,
    Citation,
    Episode,
    Fetch,
    Mistake,
    NothingLeft,
    Search,
    Step,
    action_to_json,
    norm_query,
)
from .syntax import ActionError, Menu, parse_action
from .tools import (
    WHOLE_DOCUMENT,
    SearchOutcome,
    Tools,
    query_features,
    results_text,
    short_values,
)

ANSWER_PREFILL = "answer: "
OUTLINE = "(sections)"


EventSink = Callable[[dict[str, Any]], None]


class Agent(EngineSteps, Menus):
    """Runs one episode per ``run(question)`` over a backbone and a set of tools."""

    def __init__(self, backbone: Backbone, tools: Tools, manual: str,
                 budgets: Budgets | None = None, on_event: EventSink | None = None,
                 use_grammar: bool = True) -> None:
        self.backbone = backbone
        self.tools = tools
        self.manual = manual
        self.budgets = budgets or Budgets()
        self.on_event = on_event
        self.use_grammar = use_grammar and backbone.supports_grammar
        self.mode = tools.mode

    # -- public ----------------------------------------------------------------------------
    def run(self, question: str) -> Episode:
        question = " ".join(question.split())
        self.question = question
        self._t0 = time.perf_counter()
        self.acc = Accounting()
        self.steps: list[Step] = []
        self.conv = Conversation(self.backbone, self.budgets, self.acc, self._emit)
        self.st = EpisodeState()
        self._plan: Any = None                      # the planner's query (plan.py)
        self._lead_doc = self._lead_why = ""        # the engine's next lead (engine_steps)
        self._stall = 0
        self._ops: Counter[str] = Counter()
        self._fields: Counter[str] = Counter()
        self.q: Question = analyze(question)
        # a question comparing two things, or reaching its answer through another: the
        # documents to read are the engine's (compare.Comparison, bridge.Bridge)
        self.route: Comparison | Bridge | None = None
        self._focus = focus_words(question)
        if hasattr(self.tools, "focus"):
            self.tools.focus = self._focus
        if hasattr(self.tools, "question_text"):
            self.tools.question_text = question
        self.conv.add("system", self.manual, "system")
        self.conv.add("user", f"Question: {question}", "question")
        self._emit({"event": "start", "question": question, "mode": self.mode,
                    "backbone": getattr(self.backbone, "name", "?"),
                    "n_ctx": self.backbone.n_ctx, "budgets": asdict(self.budgets),
                    "grammar": self.use_grammar, "system": self.manual})
        if self.budgets.suggest:
            self._suggest()
        if self.budgets.seed:
            self._seed()
        answer: Answer | None = None
        reason = ""
        while answer is None:
            if self.acc.steps >= self.budgets.max_steps:
                reason = "step-cap"
                break
            if self._stall >= self.budgets.stall_limit:
                reason = "no-progress"
                break
            prompt = self.conv.fit()
            if prompt >= self.budgets.context_stop * self.backbone.n_ctx:
                reason = "context"
                break
            if self.route is not None and self.route.stuck:
                # what was read answers a question about another thing than the one asked
                self.acc.no_answer = self.route.stuck
                reason = "nothing-left"
                break
            lead = self._lead()
            if lead:
                try:
                    self._engine_read(lead)
                except NothingLeft:
                    reason = "nothing-left"
                    break
                continue
            now = self._answer_now()
            if now == "choice":
                answer = self._choose(final=False)
                continue
            try:
                grammar = None
                if self.use_grammar:
                    grammar = (self._answer_grammar() if now == "keyed"
                               else self._grammar(uncited_answer=False))
            except NothingLeft:
                reason = "nothing-left"
                break
            answer = self._step(prompt, grammar)
        if answer is None:
            answer = self._finalize(reason)
        else:
            reason = "answer"
        return self._end(answer, reason)

    # -- step 0 ----------------------------------------------------------------------------
    def _suggest(self) -> None:
        """Searches built from the question (engine work, before any model call)."""
        from .queries import plain, suggest

        coll = getattr(self.tools, "coll", None)
        if coll is None:
            return
        t0 = time.perf_counter()
        found = [s.query for s in suggest(coll, self.question)]
        if self.mode == "sieve" and self.budgets.plan:
            self.route = route_for(coll, self.q)
        if self.mode == "sieve" and self.budgets.plan and self.route is None:
            from .plan import plan

            planned = self._plan = plan(coll, self.question)
            if planned is not None:  # the plan's looser conjunctions first
                found = list(dict.fromkeys([*planned.alternatives[:4], *found]))
        if self.mode != "sieve":
            found = list(dict.fromkeys(q for q in (plain(x) for x in found) if q))
        self.st.suggested = found
        self.acc.engine_seconds += time.perf_counter() - t0

    def _seed(self) -> None:
        """Step 0: the engine ranks the question's words and shows those cards, in every
        mode, before the model is called. Counted as a search and as engine time."""
        seed = getattr(self.tools, "seed", None)
        if seed is None:
            return
        t0 = time.perf_counter()
        planned = None
        if self.route is not None:
            planned = self._route_search()
        if planned is None and self.mode == "sieve" and self.budgets.plan:
            from .plan import planned_search

            planned = planned_search(self.tools, self.question, self.budgets.k, self._plan)
        if planned is not None:
            res, head, info = planned
        else:
            try:
                res = seed(self.question, self.budgets.k)
            except QueryError:
                return  # a question with no words: nothing to seed with
            head, info = "Results of a search for the question's words:", {}
        step = Step(index=0, reply="", action=Search(res.engine_query), observation="",
                    engine_seconds=time.perf_counter() - t0, info={"seed": True, **info})
        self.acc.seeded = True
        self.acc.searches += 1
        if planned is not None:
            self.st.done[("search", norm_query(res.engine_query))] = 0
            ops, used = query_features(res.engine_query)
            self._ops.update(ops)
            self._fields.update(used)
        self._take_hits(res, step)
        stub = "[step 0 results, shortened: " + "; ".join(
            f"{h.rank} {h.id} {h.title}" for h in res.hits) + "]"
        self._record(step, f"{head}\n{self._search_text(res)}", stub=stub)

    def _take_hits(self, res: SearchOutcome, step: Step) -> int:
        """Remember a result's cards; returns how many documents are new to the episode."""
        new = sum(1 for h in res.hits if h.id not in self.st.cards)
        self.st.show(res.hits)
        step.info.update({"total": res.total, "fallback": res.fallback,
                          "engine_query": res.engine_query, "notes": res.notes,
                          "clause_counts": res.clause_counts, "new_documents": new,
                          "hits": [{"rank": h.rank, "id": h.id, "title": h.title,
                                    "card": h.card, "data": h.data} for h in res.hits]})
        return new

    # -- one step --------------------------------------------------------------------------
    def _step(self, prompt: int, grammar: Menu | None) -> Answer | None:
        max_tokens = max(16, min(self.budgets.action_tokens, self.backbone.n_ctx - prompt - 1))
        comp = self._call(self.conv.messages(), max_tokens, grammar, "")
        self.acc.steps += 1
        step = Step(index=self._next_index(), reply=comp.text.strip(), action=None,
                    observation="", prompt_tokens=comp.prompt_tokens,
                    completion_tokens=comp.completion_tokens, model_seconds=comp.seconds)
        progress = False
        try:
            action, repair = parse_action(_whole_lines(comp), self.mode)
            if repair:
                self.acc.repairs += 1
                step.info["repair"] = repair
            step.action = action
            if isinstance(action, Answer):
                if not self.st.read:
                    raise Mistake("You have read nothing yet, and an answer must cite what "
                                   "you read. Fetch the section that holds the answer, then "
                                   "answer citing it.")
                answer = self._accept(action, step, final=False)
                self._record(step, "")
                return answer
            obs, turn_extra, progress = self._act(action, step)
        except (ActionError, Mistake, QueryError, SectionError) as e:
            obs, turn_extra = self._mistake(e, step), {}
        self._stall = 0 if progress else self._stall + 1
        self._record(step, obs, **turn_extra)
        return None

    def _act(self, action: Action, step: Step) -> tuple[str, dict[str, Any], bool]:
        """Run a tool action; returns the observation, trimming info for its turn, and
        whether it made progress (new documents on screen, or new text read)."""
        if isinstance(action, Search):
            key: tuple[str, ...] = ("search", norm_query(action.query))
            self._check_repeat(key, "search")
            ops, used = query_features(action.query)
            t0 = time.perf_counter()
            try:
                res = self.tools.search(action.query, self.budgets.k)
            finally:
                step.engine_seconds += time.perf_counter() - t0
            self.st.done[key] = step.index
            self.acc.searches += 1
            self.acc.fallbacks += int(res.fallback)
            if self.mode == "sieve":
                self._ops.update(ops)
                self._fields.update(used)
            new = self._take_hits(res, step)
            stub = f"[results of step {step.index}, shortened: " + "; ".join(
                f"{h.rank} {h.id} {h.title}" for h in res.hits) + "]"
            return self._search_text(res), {"stub": stub}, new > 0
        # fetch or visit
        doc_id = self._resolve(action.doc)
        section = action.section if isinstance(action, Fetch) else None
        if section:
            section = self._match_section(doc_id, section)
        label = WHOLE_DOCUMENT if section is None else (section or OUTLINE)
        key = ("read", doc_id, label)
        self._check_repeat(key, "fetch" if isinstance(action, Fetch) else "visit")
        t0 = time.perf_counter()
        try:
            res = self.tools.read(doc_id, section)
        finally:
            step.engine_seconds += time.perf_counter() - t0
        self.st.done[key] = step.index
        self.acc.fetches += 1
        limit = read_cap(self.budgets, self.backbone.n_ctx)
        shown = res.text
        if res.section == "infobox" and self.backbone.count_tokens(shown) > limit:
            shown = short_values(shown)  # the short lines a question asks about first
        text, tokens, cut = cap(shown, limit,
                                self.backbone.count_tokens, self._focus)
        name = res.section or OUTLINE
        step.info.update({"doc": res.doc, "title": res.title, "section": name,
                          "tokens": tokens, "cut": cut or res.truncated})
        if section == "":  # the outline: a list of names, not a citable text
            head = f"{res.doc} ({res.title}) has these sections (fetch one by name):"
            return (f"{head}\n{text}", {"stub": f"[outline of {res.doc}, step {step.index}]",
                                        "read_key": (res.doc, OUTLINE)}, True)
        self.st.full_text[(res.doc, name)] = res.text
        reading = self._narrow(res.doc, name, res.text if section else text, step)
        if reading is not None and section and cut:
            # a section longer than the read budget: the sentences that match the question,
            # not a window of it (a visit keeps its page, cut as before)
            limit = read_cap(self.budgets, self.backbone.n_ctx)
            text = reading.text(lambda t: self.backbone.count_tokens(t) <= limit)
            tokens = self.backbone.count_tokens(text)
            step.info.update({"tokens": tokens, "narrowed": True})
        self.st.read[(res.doc, name)] = step.index
        if res.pages:
            self.st.read_pages[(res.doc, name)] = res.pages
        self.st.read_text[(res.doc, name)] = text
        self.st.titles[res.doc] = res.title
        # links come from the whole section: the excerpt shown may have cut the header line
        link = self._follow(res.doc, res.text, step) if self.mode == "sieve" else ""
        note = ""
        if reading is not None and section and cut:
            note = " [the sentences that match the question]"
        elif cut:
            note = " [an excerpt: the rest is not shown]"
        elif res.truncated:
            note = " [cut by the engine at 12,000 tokens]"
        where = f", {res.pages}" if res.pages else ""
        head = f"{res.doc} | {name} ({res.title}{where}){note}:"
        stub = (f"[{res.doc} | {name}: {tokens} tokens read at step {step.index}, "
                f"removed to save context]")
        # A small model loses the question behind the text: say it again after the read.
        tail = f"\nQuestion: {self.question}" if self.budgets.compact else ""
        return (f"{head}\n{text}{link}{tail}", {"stub": stub, "read_key": (res.doc, name)},
                True)

    def _follow(self, doc: str, text: str, step: Step) -> str:
        """After a read (sieve mode): the documents it names become the first searches
        offered. With ``follow_links`` (small models), the link the question asks about is
        searched at once by the engine (its card is shown after the read, and it counts as a
        search) and reading it is the next step. Returns text to show after the read."""
        from .hops import asks_for_link, link_text, references

        coll = getattr(self.tools, "coll", None)
        if coll is None:
            return ""
        t0 = time.perf_counter()
        try:
            refs = references(coll, text, doc, self.question)
            step.info["references"] = [{"doc": r.doc, "query": r.query, "key": r.key,
                                        "related": r.related} for r in refs]
            self.st.suggested = list(dict.fromkeys([r.query for r in refs] + self.st.suggested))
            related = [r for r in refs if r.related and not self.st.was_read(r.doc)]
            # 'Which PEP did it list as a prerequisite?': the line's number is the answer
            if not (self.budgets.follow_links and related and self.st.hop is None) \
                    or asks_for_link(self.q, doc):
                return ""
            self.st.hop = hop = related[0]
            res = self.tools.search(hop.query, self.budgets.k)
        finally:
            step.engine_seconds += time.perf_counter() - t0
        self.st.done[("search", norm_query(hop.query))] = step.index
        self.acc.searches += 1
        self.st.show(res.hits)
        step.info["hop"] = {"doc": hop.doc, "query": hop.query, "total": res.total,
                            "hits": [h.id for h in res.hits]}
        return link_text(hop, res.hits)

    def _search_text(self, res: SearchOutcome) -> str:
        left = self._queries_left() if self.budgets.compact else []
        return results_text(res, self.mode, left)

    # -- answers ---------------------------------------------------------------------------
    def _accept(self, action: Answer, step: Step, final: bool) -> Answer:
        """Check an answer (``answers.check``): its citations must be sections read in this
        episode, and under the span rule it must be a span of shown text. Mid-episode a
        failed check is a mistake the model is told about; for the final answer it means no
        answer (``_NoAnswer``)."""
        cites, bad = self._check_citations(action.citations)
        if bad and not final:
            raise Mistake(self._bad_citations(bad))
        try:
            ok = check(action.text, cites, self.question, tuple(self.st.titles.values()),
                       self._spans() if self._span_rule() else None,
                       lambda d, s: Citation(d, s, self.st.read_pages.get((d, s), "")),
                       self.budgets.prose_answers)
        except Refused as e:
            if final:
                raise _NoAnswer(str(e)) from None
            raise Mistake(f"Not accepted: {e}.") from None
        step.info.update(ok.notes)
        self.acc.grounded = self.acc.grounded or ok.grounded
        return Answer(ok.text, tuple(ok.citations), action.thought)

    def _span_rule(self) -> bool:
        return self.budgets.span_answer

    def _spans(self) -> SpanIndex:
        """What an answer may copy (``spans.shown``): the reads, newest first."""
        return shown([Source(self.st.read_text[k], k) for k in self.st.answer_keys()],
                     [Source(h.title + (f" ({h.byline})" if h.byline else ""), None)
                      for h in self.st.cards.values()], self.budgets.max_answer_chunks)

    # -- resolution and checks -------------------------------------------------------------
    def _resolve(self, doc: str) -> str:
        doc = doc.strip().lstrip("#")
        if doc.isdigit():
            rank = int(doc)
            if not self.st.last_hits:
                raise Mistake(f"There is no search result yet, so rank {rank} means nothing. "
                               "Search first, or fetch by a document id.")
            for h in self.st.last_hits:
                if h.rank == rank:
                    return h.id
            raise Mistake(f"Rank {rank} is not in the last result, which has ranks "
                           f"1-{len(self.st.last_hits)}. Use one of those ranks or a document id.")
        if doc in self.st.seen or self.tools.sections(doc):
            return doc
        raise Mistake(f"No document has the id {doc!r}. Use a rank from the last result or an "
                       "id shown on a card.")

    def _match_section(self, doc_id: str, section: str) -> str:
        """The real name of a section the model named loosely (case, spaces); else as given,
        and the engine refuses it with the list of real sections."""
        names = self.tools.sections(doc_id) or self.st.seen.get(doc_id) or []
        if section in names:
            return section
        norm = " ".join(section.split()).casefold()
        for name in names:
            if " ".join(name.split()).casefold() == norm:
                return name
        return section

    def _check_repeat(self, key: tuple[str, ...], what: str) -> None:
        if key in self.st.done:
            self.acc.repeats += 1
            hint = ("change the words: loosen it, or pivot to another entity of the question, "
                    "or fetch a section from its cards" if what == "search" else
                    "fetch a different section or document, or answer")
            raise Mistake(f"You already ran this exact {what} at step {self.st.done[key]}; its "
                           f"result is above. Do something different: {hint}.")

    def _check_citations(self, cites: tuple[Citation, ...]
                         ) -> tuple[list[Citation], list[Citation]]:
        """(valid citations, as read; citations of nothing read): ``match_citations``."""
        return match_citations(cites, list(self.st.read), {h.rank: h.id for h in self.st.last_hits},
                               lambda d, s: Citation(d, s, self.st.read_pages.get((d, s), "")))

    def _bad_citations(self, bad: list[Citation]) -> str:
        read = "; ".join(f"{d} | {s}" for d, s in self.st.read) or "nothing yet"
        return (f"You cited {', '.join(c.label() for c in bad)}, which you have not read in "
                f"this episode. Cite only sections you fetched ({read}), or fetch first.")

    def _mistake(self, err: Exception, step: Step) -> str:
        self.acc.errors += 1
        msg = str(err)
        if isinstance(err, QueryError):
            msg = f"Query error: {msg}. Fix the query and search again."
        elif isinstance(err, SectionError):
            msg = f"{msg}. Copy a section name exactly as listed."
        step.error = msg
        return msg

    # -- context ---------------------------------------------------------------------------
    # -- final answer ----------------------------------------------------------------------
    def _finalize(self, reason: str) -> Answer:
        """Ask for the final answer. With nothing read there is nothing to answer from: no
        answer (unless the paper's forced answer is on, for the mode study). In-process the
        answer is decoded under the span grammar, so it can only copy what was read."""
        if not self.st.read and not self.budgets.paper_forced_answer:
            self.acc.no_answer = "nothing was read"
            return Answer(NO_ANSWER)
        if self.route is not None and not self.route.answer_doc and not self.st.chosen:
            return self._settle() or Answer(NO_ANSWER)
        if self.route is not None and (self.route.stuck or not self.route.answer_doc):
            self.acc.no_answer = self.route.stuck or "the route's last document was not read"
            return Answer(NO_ANSWER)
        if self.st.hop_pending() and not self.budgets.paper_forced_answer:
            # the question asks about a linked document that was not read: what was read
            # answers another question
            self.acc.no_answer = f"the linked document {self.st.hop.doc} was not read"
            return Answer(NO_ANSWER)
        if self.budgets.choice and self.st.readings and self._answer_now() != "keyed":
            return self._choose(final=True) or Answer(NO_ANSWER)
        why = {"step-cap": "the step limit", "context": "the limit of the context window",
               "no-progress": "several actions in a row that found nothing new",
               "nothing-left": "the end of what can be searched or read"}.get(reason, reason)
        text = (f"You have reached {why}. Do not search or fetch any more. Give your final "
                "answer now: one line 'answer: SHORT ANSWER' copied from what you read, then "
                "one 'cite: ID | SECTION' line for each section you read that supports it.")
        self.conv.add("user", text, "instruction")
        self._emit({"event": "final-request", "reason": reason, "text": text})
        room = self.budgets.answer_tokens + self.backbone.count_tokens(ANSWER_PREFILL) + 8
        prompt = self.conv.fit(force_room=room)
        max_tokens = max(16, min(self.budgets.action_tokens, self.backbone.n_ctx - prompt - 1))
        grammar = None
        if self.use_grammar and self.st.read:
            grammar = self._answer_grammar()
        elif self.use_grammar:
            grammar = self._grammar()
        comp = self._call(self.conv.messages(), max_tokens, grammar, "")
        step = Step(index=self._next_index(), reply=comp.text.strip(), action=None,
                    observation="", prompt_tokens=comp.prompt_tokens,
                    completion_tokens=comp.completion_tokens, model_seconds=comp.seconds,
                    info={"final": reason})
        try:
            action, _ = parse_action(_whole_lines(comp), self.mode)
        except ActionError:
            action = None
        step.action = action
        if isinstance(action, Answer):
            try:
                answer = self._accept(action, step, final=True)
            except _NoAnswer as e:
                step.error = f"no answer: {e}"
                self.acc.no_answer = str(e)
                self._record(step, "")
                return Answer(NO_ANSWER)
            self._record(step, "")
            return answer
        step.error = "asked for the final answer, the model called a tool instead"
        # The refused call stays in the transcript but not in the conversation.
        self._record(step, "", in_conversation=False)
        if self.budgets.paper_forced_answer:
            return self._forced()
        self.acc.no_answer = "the model gave no answer when asked for one"
        return Answer(NO_ANSWER)

    def _forced(self) -> Answer:
        """The paper's forcing: prefill 'answer: ' (in-process) or read the reply as the
        answer (HTTP). Only with ``paper_forced_answer`` (the mode study)."""
        self.acc.forced = True
        prompt = self.backbone.prompt_tokens(self.conv.messages(), ANSWER_PREFILL)
        max_tokens = max(16, min(self.budgets.answer_tokens, self.backbone.n_ctx - prompt - 1))
        grammar = None
        if self.use_grammar:
            grammar = Menu.of(self.mode, (), (), self.st.citable(), prefilled=True)
        comp = self._call(self.conv.messages(), max_tokens, grammar, ANSWER_PREFILL)
        text = comp.text.strip()
        if text.lower().startswith("answer:"):  # a server that could not prefill
            text = text[len("answer:"):].strip()
        reply = ANSWER_PREFILL + text
        try:
            action, _ = parse_action(reply, self.mode)
        except ActionError:
            action = None
        if not isinstance(action, Answer):
            action = Answer(_first_line(comp.text) or NO_ANSWER)
        cites, _bad = self._check_citations(action.citations)
        answer = Answer(action.text, tuple(cites), action.thought)
        step = Step(index=self._next_index(), reply=reply, action=answer, observation="",
                    prompt_tokens=comp.prompt_tokens, completion_tokens=comp.completion_tokens,
                    model_seconds=comp.seconds, prefill=ANSWER_PREFILL, info={"forced": True})
        self._record(step, "")
        return answer

    # -- plumbing --------------------------------------------------------------------------
    def _next_index(self) -> int:
        """Model calls are numbered from 1; step 0 is the engine's seed."""
        return sum(1 for s in self.steps if s.index > 0) + 1

    def _call(self, messages: list[Message], max_tokens: int, grammar: Menu | None,
              prefill: str) -> Any:
        t0 = time.perf_counter()
        comp = self.backbone.complete(messages, max_tokens=max_tokens, grammar=grammar,
                                      prefill=prefill, call=self.acc.llm_calls)
        self.acc.model_seconds += time.perf_counter() - t0
        self.acc.llm_calls += 1
        self.acc.accumulated_prompt_tokens += comp.prompt_tokens
        self.acc.completion_tokens += comp.completion_tokens
        self.acc.distinct_tokens += comp.completion_tokens
        self.acc.peak_prompt_tokens = max(self.acc.peak_prompt_tokens, comp.prompt_tokens)
        return comp

    def _record(self, step: Step, observation: str, stub: str = "",
                read_key: tuple[str, str] | None = None, in_conversation: bool = True) -> None:
        """Append the step's reply and observation to the conversation, and emit it."""
        step.observation = observation
        self.acc.engine_seconds += step.engine_seconds
        self.conv.record(step, observation, stub, read_key, in_conversation)
        self.steps.append(step)
        self._emit({"event": "step", **step.to_json()})

    def _end(self, answer: Answer, reason: str) -> Episode:
        self.acc.stop_reason = reason
        self.acc.operators = dict(sorted(self._ops.items()))
        self.acc.fields = dict(sorted(self._fields.items()))
        self.acc.wall_seconds = time.perf_counter() - self._t0
        if answer.text == NO_ANSWER and not self.acc.no_answer:
            self.acc.no_answer = "no answer"
        ep = Episode(question=self.question, mode=self.mode,
                     answer=answer.text.strip(), citations=list(answer.citations),
                     steps=self.steps, accounting=self.acc,
                     evidence=self.st.evidence() if answer.text == NO_ANSWER else [])
        self._emit({"event": "end", **ep.to_json()})
        return ep

    def _emit(self, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)


class _NoAnswer(Exception):
    """The final answer failed its checks: the episode ends without one."""


def _whole_lines(comp: Any) -> str:
    """A reply cut by max_tokens loses its unfinished last line (a half-written citation);
    a one-line reply is kept as it is."""
    text = comp.text
    if comp.finish_reason == "length" and "\n" in text.strip():
        return text.strip().rsplit("\n", 1)[0]
    return text


def _first_line(text: str) -> str:
    for line in text.strip().split("\n"):
        line = line.strip()
        if line:
            for prefix in ("answer:", "search:", "fetch:", "visit:", "thought:"):
                if line.lower().startswith(prefix):
                    line = line[len(prefix):].strip()
            return line[:200]
    return ""


__all__ = ["NO_ANSWER", "Accounting", "Agent", "Budgets", "Episode", "action_to_json"]
