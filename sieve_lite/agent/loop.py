"""The ReAct loop: search, fetch (or visit), answer -- with the paper's budgets.

Budgets: k = 5 results per search, at most ``max_steps`` (100) model steps, each read cut at
12,000 tokens (and at half the context window, so one read can never fill it). When the prompt
reaches 90% of the context window, or the step cap is hit, the loop asks for a final answer;
if the model still calls a tool, the answer is forced by prefilling ``answer: ``.

Trimming policy (stated, deterministic): the manual, the question, every action the model
wrote and the newest observation are never trimmed. When the prompt passes 75% of the window,
the oldest observations are replaced by one-line stubs (a read keeps its id, section and size;
a result list keeps its ranks, ids and titles) until the prompt is back under 50% -- the
hysteresis keeps trims rare, which matters because a trim invalidates the model's KV cache from
that point on. A stubbed read may be fetched again without counting as a repeat. Only when
that is not enough does the 90% rule end the episode. The final-answer request itself may stub
the newest observation too, so that the request always fits.

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
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import QueryError, SectionError
from ..words import words
from .answers import asks_title, focus_words, says_more, type_mismatch, unsupported, whole_title
from .backbones import Backbone, Message
from .bridge import Bridge
from .choice import by_grammar, by_likelihood
from .compare import Comparison, is_comparison
from .profile import Budgets
from .question import Question, analyze
from .read import Reading, nlp, read_for, reader_for
from .spans import Source, SpanIndex, answer_starts, chunk_words, keyed_values
from .steps import (
    NO_ANSWER,
    Accounting,
    Action,
    Answer,
    Citation,
    Episode,
    Fetch,
    Search,
    Step,
    action_to_json,
    render_action,
)
from .syntax import ActionError, Menu, parse_action
from .tools import (
    WHOLE_DOCUMENT,
    Hit,
    SearchOutcome,
    Tools,
    excerpt,
    query_features,
    results_text,
)

ANSWER_PREFILL = "answer: "
OUTLINE = "(sections)"


@dataclass
class _Turn:
    """One message of the conversation, with what trimming needs to know."""

    role: str
    content: str
    kind: str                      # system | question | action | observation | instruction
    step: int = 0
    stub: str = ""                 # what replaces the content when trimmed ('' = never)
    read_key: tuple[str, str] | None = None
    trimmed: bool = False


EventSink = Callable[[dict[str, Any]], None]


class Agent:
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
        self.turns: list[_Turn] = []
        self.last_hits: list[Hit] = []
        self.cards: dict[str, Hit] = {}             # every card shown, by document id
        self.seen: dict[str, list[str]] = {}       # doc id -> sections, most recent last
        # (doc, section) -> step it was read at: everything read in this episode, trimmed or
        # not, is citable and is never read again.
        self.read: dict[tuple[str, str], int] = {}
        self.read_pages: dict[tuple[str, str], str] = {}  # (doc, section) -> 'p. 4–6'
        self.read_text: dict[tuple[str, str], str] = {}  # what was shown of each read
        self.done: dict[tuple[str, ...], int] = {}  # call key -> step (repeat detection)
        self.suggested: list[str] = []              # searches offered (queries.py)
        self.hop: Any = None                        # the link to follow (hops.Reference)
        self.titles: dict[str, str] = {}            # doc id -> title, of documents read
        self._plan: Any = None                      # the planner's query (plan.py)
        self._stall = 0
        self._ops: Counter[str] = Counter()
        self._fields: Counter[str] = Counter()
        self.q: Question = analyze(question)
        self.readings: dict[tuple[str, str], Reading] = {}  # prose reads, narrowed
        self._chosen: set[tuple[str, str]] = set()  # reads the model already chose from
        self.full_text: dict[tuple[str, str], str] = {}  # each read's whole text
        self.comparison: Comparison | None = None  # a question comparing two things
        self.bridge: Bridge | None = None          # ... or reaching its answer through another
        self._focus = focus_words(question)
        if hasattr(self.tools, "focus"):
            self.tools.focus = self._focus
        if hasattr(self.tools, "question_text"):
            self.tools.question_text = question
        self._add("system", self.manual, "system")
        self._add("user", f"Question: {question}", "question")
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
            prompt = self._fit()
            if prompt >= self.budgets.context_stop * self.backbone.n_ctx:
                reason = "context"
                break
            if self.bridge is not None and self.bridge.stuck:
                # what was read answers a question about another thing than the one asked
                self.acc.no_answer = self.bridge.stuck
                reason = "nothing-left"
                break
            lead = self._lead()
            if lead:
                try:
                    self._engine_read(lead)
                except _NothingLeft:
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
            except _NothingLeft:
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
        if self.mode == "sieve" and self.budgets.plan and is_comparison(self.q):
            self.comparison = Comparison(coll, self.q, nlp())
            if not self.comparison.queries:
                self.comparison = None
        if self.mode == "sieve" and self.budgets.plan and self.comparison is None:
            bridge = Bridge(coll, self.q, None)
            if bridge:
                bridge.entities = nlp()
                self.bridge = bridge
        if self.mode == "sieve" and self.budgets.plan and self.comparison is None:
            from .plan import plan

            planned = self._plan = plan(coll, self.question)
            if planned is not None:  # the plan's looser conjunctions first
                found = list(dict.fromkeys([*planned.alternatives[:4], *found]))
        if self.mode != "sieve":
            found = list(dict.fromkeys(q for q in (plain(x) for x in found) if q))
        self.suggested = found
        self.acc.engine_seconds += time.perf_counter() - t0

    def _seed(self) -> None:
        """Step 0: the engine ranks the question's words and shows those cards, in every
        mode, before the model is called. Counted as a search and as engine time."""
        seed = getattr(self.tools, "seed", None)
        if seed is None:
            return
        t0 = time.perf_counter()
        planned = None
        if self.comparison is not None or self.bridge is not None:
            planned = self._compare_search()
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
            self.done[("search", _norm_query(res.engine_query))] = 0
            ops, used = query_features(res.engine_query)
            self._ops.update(ops)
            self._fields.update(used)
        self._take_hits(res, step)
        stub = "[step 0 results, shortened: " + "; ".join(
            f"{h.rank} {h.id} {h.title}" for h in res.hits) + "]"
        self._record(step, f"{head}\n{self._search_text(res)}", stub=stub)

    def _take_hits(self, res: SearchOutcome, step: Step) -> int:
        """Remember a result's cards; returns how many documents are new to the episode."""
        new = sum(1 for h in res.hits if h.id not in self.cards)
        self._show(res.hits)
        step.info.update({"total": res.total, "fallback": res.fallback,
                          "engine_query": res.engine_query, "notes": res.notes,
                          "clause_counts": res.clause_counts, "new_documents": new,
                          "hits": [{"rank": h.rank, "id": h.id, "title": h.title,
                                    "card": h.card, "data": h.data} for h in res.hits]})
        return new

    def _show(self, hits: list[Hit]) -> None:
        """Cards now on screen: the last result, and every document seen (newest last)."""
        self.last_hits = hits
        for h in hits:
            self.seen.pop(h.id, None)
            self.seen[h.id] = h.sections
            self.cards[h.id] = h

    # -- one step --------------------------------------------------------------------------
    def _step(self, prompt: int, grammar: Menu | None) -> Answer | None:
        max_tokens = max(16, min(self.budgets.action_tokens, self.backbone.n_ctx - prompt - 1))
        comp = self._call(self._messages(), max_tokens, grammar, "")
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
                if not self.read:
                    raise _Mistake("You have read nothing yet, and an answer must cite what "
                                   "you read. Fetch the section that holds the answer, then "
                                   "answer citing it.")
                answer = self._accept(action, step, final=False)
                self._record(step, "")
                return answer
            obs, turn_extra, progress = self._act(action, step)
        except (ActionError, _Mistake, QueryError, SectionError) as e:
            obs, turn_extra = self._mistake(e, step), {}
        self._stall = 0 if progress else self._stall + 1
        self._record(step, obs, **turn_extra)
        return None

    def _act(self, action: Action, step: Step) -> tuple[str, dict[str, Any], bool]:
        """Run a tool action; returns the observation, trimming info for its turn, and
        whether it made progress (new documents on screen, or new text read)."""
        if isinstance(action, Search):
            key: tuple[str, ...] = ("search", _norm_query(action.query))
            self._check_repeat(key, "search")
            ops, used = query_features(action.query)
            t0 = time.perf_counter()
            try:
                res = self.tools.search(action.query, self.budgets.k)
            finally:
                step.engine_seconds += time.perf_counter() - t0
            self.done[key] = step.index
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
        self.done[key] = step.index
        self.acc.fetches += 1
        text, tokens, cut = self._cap(res.text)
        name = res.section or OUTLINE
        step.info.update({"doc": res.doc, "title": res.title, "section": name,
                          "tokens": tokens, "cut": cut or res.truncated})
        if section == "":  # the outline: a list of names, not a citable text
            head = f"{res.doc} ({res.title}) has these sections (fetch one by name):"
            return (f"{head}\n{text}", {"stub": f"[outline of {res.doc}, step {step.index}]",
                                        "read_key": (res.doc, OUTLINE)}, True)
        self.full_text[(res.doc, name)] = res.text
        reading = self._narrow(res.doc, name, res.text if section else text, step)
        if reading is not None and section and cut:
            # a section longer than the read budget: the sentences that match the question,
            # not a window of it (a visit keeps its page, cut as before)
            cap = self._read_cap()
            text = reading.text(lambda t: self.backbone.count_tokens(t) <= cap)
            tokens = self.backbone.count_tokens(text)
            step.info.update({"tokens": tokens, "narrowed": True})
        self.read[(res.doc, name)] = step.index
        if res.pages:
            self.read_pages[(res.doc, name)] = res.pages
        self.read_text[(res.doc, name)] = text
        self.titles[res.doc] = res.title
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

    def _compare_search(self) -> tuple[SearchOutcome, str, dict[str, Any]] | None:
        """Step 0 of a comparison (one search that shows each compared thing's card) or of a
        bridge (the named entity's title)."""
        if self.comparison is not None:
            query = self.comparison.query()
            names = " and ".join(self.comparison.doc_of)
            why = f"it compares {names}"
        else:
            assert self.bridge is not None
            query = self.bridge.query()
            roles = ", then ".join(h.role for h in self.bridge.hops)
            why = f"{self.bridge.name}, then its {roles}"
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
        for task in (self.comparison, self.bridge):
            if task is None:
                continue
            for _ in range(4):  # a read may add the next lead
                pending = [d for d in task.leads() if not self._was_read(d)]
                if pending:
                    return pending[0]
                before = task.leads()
                for doc in before:
                    task.on_read(doc, self._full(doc))
                if task.leads() == before:
                    break
        return ""

    def _full(self, doc: str) -> str:
        return "\n".join(t for (d, _s), t in self.full_text.items() if d == doc)

    def _engine_read(self, doc: str) -> None:
        """Read a document's best section as an engine step (no model call)."""
        sections = self.tools.sections(doc)
        if hasattr(self.tools, "rank_sections") and len(sections) > 1:
            sections = self.tools.rank_sections(doc, sections)
        step = Step(index=self._next_index(), reply="", action=None, observation="",
                    info={"engine": True})
        if not sections:
            raise _NothingLeft()
        action = Fetch(doc, sections[0])
        step.action = action
        step.reply = render_action(action)
        try:
            obs, extra, _progress = self._act(action, step)
        except (_Mistake, QueryError, SectionError) as e:
            obs, extra = self._mistake(e, step), {}
        self._record(step, obs, **extra)
        for task in (self.comparison, self.bridge):
            if task is not None:
                task.on_read(doc, self._full(doc))

    def _narrow(self, doc: str, section: str, text: str, step: Step) -> Reading | None:
        """A prose read narrowed to the question (``read.py``): its best sentences and the
        candidate answers in them. None for an infobox (its lines are the answers) or when
        narrowing is off or finds nothing."""
        if not self.budgets.narrow or section == "infobox":
            return None
        t0 = time.perf_counter()
        try:
            reader = reader_for(self.tools)
            reading = read_for(self.q, text, (doc, section), *reader,
                               shown=self.budgets.shown_sentences)
        finally:
            step.engine_seconds += time.perf_counter() - t0
        if not reading.sentences:
            return None
        self.readings[(doc, section)] = reading
        step.info["candidates"] = [c.text for c in reading.candidates[:8]]
        return reading

    def _choose(self, final: bool) -> Answer | None:
        """Small models answer prose by choosing among the candidates of what they read
        (``choice.py``): by likelihood in process, under a grammar of the candidates over a
        server. Abstaining mid-episode costs the step (the model may read on); at the end it
        means no answer."""
        if self.comparison is not None:
            return self._compare(final)
        keys = sorted(self.readings, key=lambda k: -self.read.get(k, 0))
        if self.hop is not None and self._was_read(self.hop.doc):
            keys = [k for k in keys if k[0] == self.hop.doc]
        if self.bridge is not None and self.bridge.answer:
            return self._bridged()
        if self.bridge is not None:
            # the answer is about where the roles lead, not about the entity named
            keys = [k for k in keys if k[0] == self.bridge.answer_doc]
        if not final:
            keys = keys[:1]
        newest = max(self.read, key=lambda k: self.read[k]) if self.read else None
        self._chosen.update([*keys, *([newest] if newest else [])])
        cands = sorted((c for k in keys for c in self.readings[k].candidates),
                       key=lambda c: -c.prior)
        text = "\n".join(self.readings[k].text() for k in keys)
        t0 = time.perf_counter()
        if hasattr(self.backbone, "score") and self.budgets.choice == "likelihood":
            choice = by_likelihood(self.backbone, self.q, text, cands)
            completion = 0
        else:
            choice = by_grammar(self.backbone, self.q, text, cands, self.mode)
            completion = choice.completion_tokens
        seconds = time.perf_counter() - t0
        self.acc.model_seconds += seconds
        self.acc.llm_calls += 1
        self.acc.steps += 1
        self.acc.completion_tokens += completion
        step = Step(index=self._next_index(), reply="", action=None, observation="",
                    model_seconds=seconds, info={"choice": choice.to_json(), "final": final})
        answer = None
        if choice.answer is not None:
            c = choice.answer
            cites = (Citation(c.label[0], c.label[1], self.read_pages.get(c.label, "")),) \
                if c.label else ()
            why = type_mismatch(c.text, self.question, tuple(self.titles.values()))
            if not why and not says_more(c.text, self.question):
                why = f"the answer {c.text!r} only repeats words of the question"
            if why:
                choice.why, choice.answer = why, None
            else:
                answer = Answer(c.text, cites)
                step.reply = render_action(answer)
                step.action = answer
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

    def _compare(self, final: bool) -> Answer | None:
        """The answer to a comparison, from what was read about each thing (``compare.py``):
        one of the question's options, or yes; none when the texts do not settle it."""
        assert self.comparison is not None
        self._chosen.add(("", ""))
        t0 = time.perf_counter()
        verdict = self.comparison.verdict()
        step = Step(index=self._next_index(), reply="", action=None, observation="",
                    engine_seconds=time.perf_counter() - t0,
                    info={"compare": {"answer": verdict.answer if verdict else None,
                                      "why": verdict.why if verdict else ""}})
        if verdict is None:
            self.acc.no_answer = "what was read does not settle the comparison"
            step.error = f"no answer: {self.acc.no_answer}"
            self._record(step, "")
            return None
        docs = set(self.comparison.doc_of.values())
        cites = tuple(Citation(d, s, self.read_pages.get((d, s), ""))
                      for d, s in self.read if d in docs)
        answer = Answer(verdict.answer, cites, verdict.why)
        step.action, step.reply = answer, render_action(answer)
        self.acc.grounded = True
        self._record(step, "")
        return answer

    def _bridged(self) -> Answer:
        """The answer to 'Who is the R of E?': the name E's text gives in that role, whose
        own document was found and read (``bridge.py``); cited where it was named."""
        assert self.bridge is not None
        self._chosen.add(("", ""))
        named_in = self.bridge.path[-2]
        cites = tuple(Citation(d, s, self.read_pages.get((d, s), ""))
                      for d, s in self.read if d == named_in)
        answer = Answer(self.bridge.answer, cites)
        step = Step(index=self._next_index(), reply=render_action(answer), action=answer,
                    observation="", info={"bridge": self.bridge.path})
        self.acc.grounded = True
        self._record(step, "")
        return answer

    def _follow(self, doc: str, text: str, step: Step) -> str:
        """After a read (sieve mode): the documents it names become the first searches
        offered. With ``follow_links`` (small models), the link the question asks about is
        searched at once by the engine (its card is shown after the read, and it counts as a
        search) and reading it is the next step. Returns text to show after the read."""
        from .hops import link_text, references

        coll = getattr(self.tools, "coll", None)
        if coll is None:
            return ""
        t0 = time.perf_counter()
        try:
            refs = references(coll, text, doc, self.question)
            step.info["references"] = [{"doc": r.doc, "query": r.query, "key": r.key,
                                        "related": r.related} for r in refs]
            self.suggested = list(dict.fromkeys([r.query for r in refs] + self.suggested))
            related = [r for r in refs if r.related and not self._was_read(r.doc)]
            if not (self.budgets.follow_links and related and self.hop is None):
                return ""
            self.hop = hop = related[0]
            res = self.tools.search(hop.query, self.budgets.k)
        finally:
            step.engine_seconds += time.perf_counter() - t0
        self.done[("search", _norm_query(hop.query))] = step.index
        self.acc.searches += 1
        self._show(res.hits)
        step.info["hop"] = {"doc": hop.doc, "query": hop.query, "total": res.total,
                            "hits": [h.id for h in res.hits]}
        return link_text(hop, res.hits)

    def _was_read(self, doc: str) -> bool:
        return any(d == doc for d, _s in self.read)

    def _hop_pending(self) -> bool:
        return self.hop is not None and not self._was_read(self.hop.doc)

    def _hop_grammar(self) -> Menu:
        """The next reply while a link is being followed: its search, then a read of the
        linked document; no answer yet (the question asks about the linked document)."""
        hop = self.hop
        if ("search", _norm_query(hop.query)) not in self.done:
            return Menu.of(self.mode, self.tools.fields, [], [], uncited_answer=False,
                                  queries=[hop.query], free_search=False,
                                  thought_chars=self.budgets.thought_chars)
        secs = self._unread(hop.doc, self.tools.sections(hop.doc))
        if self.budgets.sections_shown and hasattr(self.tools, "rank_sections"):
            secs = self.tools.rank_sections(hop.doc, secs)[: self.budgets.sections_shown]
        label = next((str(h.rank) for h in self.last_hits if h.id == hop.doc), hop.doc)
        if hop.doc not in self.seen:
            self.seen[hop.doc] = secs
        return Menu.of(self.mode, self.tools.fields, [(label, secs)], [],
                              uncited_answer=False, queries=[], free_search=False,
                              thought_chars=self.budgets.thought_chars)

    def _search_text(self, res: SearchOutcome) -> str:
        left = self._queries_left() if self.budgets.compact else []
        return results_text(res, self.mode, left)

    # -- answers ---------------------------------------------------------------------------
    def _accept(self, action: Answer, step: Step, final: bool) -> Answer:
        """Check an answer: its citations must be sections read in this episode; under the
        span rule it must be a span of shown text that says more than the question does.
        Mid-episode a failed check is a mistake the model is told about; for the final
        answer it means no answer (``_NoAnswer``)."""
        cites, bad = self._check_citations(action.citations)
        if bad and not final:
            raise _Mistake(self._bad_citations(bad))
        text = action.text.strip()
        titles = tuple(self.titles.values())
        if self._span_rule():
            spans = self._spans()
            grounded = spans.ground(text)
            if grounded is None or 2 * grounded.chunks < len(chunk_words(text)):
                return self._reject(step, final, "the answer is not a span of any text shown "
                                    "in this episode; copy the answer from what you read")
            if grounded.trimmed:
                step.info["answer_trimmed_from"] = text
            as_title = whole_title(grounded.text, self.question, titles)
            is_title = asks_title(self.question) and any(
                words(as_title) == words(t) for t in titles)
            # a whole title asked for is supported by being one (its first word may well be
            # a word of the question: 'Assignment Expressions' for a title mentioning it)
            why = "" if is_title else unsupported(spans, grounded, self.question, self._focus,
                                                   self.budgets.prose_answers)
            if why:
                return self._reject(step, final, why)
            text = spans.item(grounded)  # 'Tony' -> 'Tony Lownds', the whole list item
            text = whole_title(text, self.question, titles)
            if text != grounded.text:
                step.info["answer_item_of"] = grounded.text
            # Cite what really holds the span: the model's citations that do, else the read
            # sections that do (a span copied from a card only keeps the model's citations).
            holding = [Citation(d, s, self.read_pages.get((d, s), ""))
                       for d, s in grounded.labels]
            kept = [c for c in cites if c in holding]
            if holding and not kept:
                kept = holding[:1]
                step.info["citation_from_span"] = True
            cites = kept or cites
            self.acc.grounded = True
        mismatch = type_mismatch(text, self.question, titles)
        if mismatch:
            return self._reject(step, final, mismatch)
        if not says_more(text, self.question):
            return self._reject(step, final, f"the answer {text!r} only repeats words of the "
                                "question; answer with what you read")
        if not cites:
            return self._reject(step, final, "the answer cites no section read in this "
                                "episode")
        return Answer(text, tuple(cites), action.thought)

    def _reject(self, step: Step, final: bool, why: str) -> Answer:
        if final:
            raise _NoAnswer(why)
        raise _Mistake(f"Not accepted: {why}.")

    def _span_rule(self) -> bool:
        return self.budgets.span_answer

    def _spans(self) -> SpanIndex:
        """The text an answer may copy: the sections read, newest first (with a cap, what was
        read last is what the answer most likely comes from). Cards' titles and bylines only
        while nothing was read: an answer cites what it was read in, and a byline copied from
        a card ('2017-09-05 by ...') was the commonest wrong answer of small models."""
        sources = [Source(self.read_text[key], key) for key in self._answer_keys()]
        index = SpanIndex(sources, max_chunks=self.budgets.max_answer_chunks)
        if index:
            return index
        cards = [Source(h.title + (f" ({h.byline})" if h.byline else ""), None)
                 for h in self.cards.values()]
        return SpanIndex(sources + cards, max_chunks=self.budgets.max_answer_chunks)

    def _answer_keys(self) -> list[tuple[str, str]]:
        """The reads an answer may come from, newest first: all of them, or only those of
        the linked document once a followed link was read (what was read of the first
        document answers another question)."""
        keys = sorted(self.read, key=lambda k: -self.read[k])
        if self.hop is not None and self._was_read(self.hop.doc):
            keys = [k for k in keys if k[0] == self.hop.doc]
        return keys

    def _evidence(self) -> list[dict[str, str]]:
        """The best text read, for a user left without an answer: each section read (newest
        first), its first lines."""
        out = []
        for (doc, sec), _i in sorted(self.read.items(), key=lambda kv: -kv[1])[:3]:
            text = " ".join(self.read_text.get((doc, sec), "").split())
            out.append({"doc": doc, "section": sec,
                        "text": text if len(text) <= 400 else text[:399] + "…"})
        return out

    # -- resolution and checks -------------------------------------------------------------
    def _resolve(self, doc: str) -> str:
        doc = doc.strip().lstrip("#")
        if doc.isdigit():
            rank = int(doc)
            if not self.last_hits:
                raise _Mistake(f"There is no search result yet, so rank {rank} means nothing. "
                               "Search first, or fetch by a document id.")
            for h in self.last_hits:
                if h.rank == rank:
                    return h.id
            raise _Mistake(f"Rank {rank} is not in the last result, which has ranks "
                           f"1-{len(self.last_hits)}. Use one of those ranks or a document id.")
        if doc in self.seen or self.tools.sections(doc):
            return doc
        raise _Mistake(f"No document has the id {doc!r}. Use a rank from the last result or an "
                       "id shown on a card.")

    def _match_section(self, doc_id: str, section: str) -> str:
        """The real name of a section the model named loosely (case, spaces); else as given,
        and the engine refuses it with the list of real sections."""
        names = self.tools.sections(doc_id) or self.seen.get(doc_id) or []
        if section in names:
            return section
        norm = " ".join(section.split()).casefold()
        for name in names:
            if " ".join(name.split()).casefold() == norm:
                return name
        return section

    def _check_repeat(self, key: tuple[str, ...], what: str) -> None:
        if key in self.done:
            self.acc.repeats += 1
            hint = ("change the words: loosen it, or pivot to another entity of the question, "
                    "or fetch a section from its cards" if what == "search" else
                    "fetch a different section or document, or answer")
            raise _Mistake(f"You already ran this exact {what} at step {self.done[key]}; its "
                           f"result is above. Do something different: {hint}.")

    def _check_citations(self, cites: tuple[Citation, ...]
                         ) -> tuple[list[Citation], list[Citation]]:
        """(valid citations, deduplicated, as read; citations of nothing read)."""
        good: list[Citation] = []
        bad: list[Citation] = []
        for c in cites:
            doc = c.doc.strip()
            if doc.isdigit():  # a rank: resolve against the last result
                doc = next((h.id for h in self.last_hits if h.rank == int(doc)), doc)
            hit = None
            norm = " ".join(c.section.split()).casefold()
            for d, s in self.read:
                if d == doc and (s == c.section or " ".join(s.split()).casefold() == norm):
                    hit = Citation(d, s, self.read_pages.get((d, s), ""))
                    break
            if hit is None:
                bad.append(c)
            elif hit not in good:
                good.append(hit)
        return good, bad

    def _bad_citations(self, bad: list[Citation]) -> str:
        read = "; ".join(f"{d} | {s}" for d, s in self.read) or "nothing yet"
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
    def _read_cap(self) -> int:
        return max(64, min(self.budgets.read_tokens,
                           int(self.budgets.read_share * self.backbone.n_ctx)))

    def _cap(self, text: str) -> tuple[str, int, bool]:
        """Cut a read at the cap: the excerpt richest in the question's words, on word
        boundaries; returns (text, tokens, was_cut)."""
        cap = self._read_cap()
        n = self.backbone.count_tokens(text)
        if n <= cap:
            return text, n, False
        words_cap = max(16, int(len(text.split()) * cap / n))
        cut = text
        while True:
            cut, _ = excerpt(text, self._focus, words_cap)
            n = self.backbone.count_tokens(cut)
            if n <= cap or words_cap <= 16:
                return cut, n, True
            words_cap = max(16, int(words_cap * cap / n * 0.95))

    def _messages(self) -> list[Message]:
        """The conversation; consecutive turns of one role are joined into one message, so
        that chat templates that insist on alternating roles accept it."""
        out: list[Message] = []
        for t in self.turns:
            if out and out[-1]["role"] == t.role and t.role == "user":
                out[-1] = {"role": "user", "content": out[-1]["content"] + "\n\n" + t.content}
            else:
                out.append({"role": t.role, "content": t.content})
        return out

    def _fit(self, force_room: int = 0) -> int:
        """Apply the trimming policy; returns the prompt's tokens. ``force_room`` > 0 means
        the next call needs that many free tokens whatever it takes (the final answer)."""
        n_ctx = self.backbone.n_ctx
        prompt = self.backbone.prompt_tokens(self._messages())
        need_trim = prompt > self.budgets.trim_at * n_ctx or (
            force_room and prompt + force_room > n_ctx)
        if not need_trim:
            return prompt
        target = self.budgets.trim_to * n_ctx
        if force_room:
            target = min(target, n_ctx - force_room) if prompt + force_room > n_ctx else target
        observations = [t for t in self.turns if t.kind == "observation" and t.stub
                        and not t.trimmed]
        protected = observations[-1:] if not force_room else []
        trimmed = []
        for t in observations:
            if prompt <= target:
                break
            if t in protected:
                continue
            t.content, t.trimmed = t.stub, True
            self._count(t.stub)
            trimmed.append(t.step)
            prompt = self.backbone.prompt_tokens(self._messages())
        if trimmed:
            self.acc.trims += 1
            self._emit({"event": "trim", "steps": trimmed, "prompt_tokens": prompt})
        return prompt

    # -- final answer ----------------------------------------------------------------------
    def _finalize(self, reason: str) -> Answer:
        """Ask for the final answer. With nothing read there is nothing to answer from: no
        answer (unless the paper's forced answer is on, for the mode study). In-process the
        answer is decoded under the span grammar, so it can only copy what was read."""
        if not self.read and not self.budgets.paper_forced_answer:
            self.acc.no_answer = "nothing was read"
            return Answer(NO_ANSWER)
        if self.comparison is not None and not self._chosen:
            return self._compare(final=True) or Answer(NO_ANSWER)
        if self.bridge is not None and (self.bridge.stuck or not self.bridge.answer_doc):
            self.acc.no_answer = self.bridge.stuck or "the bridge's last document was not read"
            return Answer(NO_ANSWER)
        if self._hop_pending() and not self.budgets.paper_forced_answer:
            # the question asks about a linked document that was not read: what was read
            # answers another question
            self.acc.no_answer = f"the linked document {self.hop.doc} was not read"
            return Answer(NO_ANSWER)
        if self.budgets.choice and self.readings and self._answer_now() != "keyed":
            return self._choose(final=True) or Answer(NO_ANSWER)
        why = {"step-cap": "the step limit", "context": "the limit of the context window",
               "no-progress": "several actions in a row that found nothing new",
               "nothing-left": "the end of what can be searched or read"}.get(reason, reason)
        text = (f"You have reached {why}. Do not search or fetch any more. Give your final "
                "answer now: one line 'answer: SHORT ANSWER' copied from what you read, then "
                "one 'cite: ID | SECTION' line for each section you read that supports it.")
        self._add("user", text, "instruction")
        self._emit({"event": "final-request", "reason": reason, "text": text})
        room = self.budgets.answer_tokens + self.backbone.count_tokens(ANSWER_PREFILL) + 8
        prompt = self._fit(force_room=room)
        max_tokens = max(16, min(self.budgets.action_tokens, self.backbone.n_ctx - prompt - 1))
        grammar = None
        if self.use_grammar and self.read:
            grammar = self._answer_grammar()
        elif self.use_grammar:
            grammar = self._grammar()
        comp = self._call(self._messages(), max_tokens, grammar, "")
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
        prompt = self.backbone.prompt_tokens(self._messages(), ANSWER_PREFILL)
        max_tokens = max(16, min(self.budgets.answer_tokens, self.backbone.n_ctx - prompt - 1))
        grammar = None
        if self.use_grammar:
            grammar = Menu.of(self.mode, (), (), self._citable(), prefilled=True)
        comp = self._call(self._messages(), max_tokens, grammar, ANSWER_PREFILL)
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

    def _queries_left(self) -> list[str]:
        return [q for q in self.suggested if ("search", _norm_query(q)) not in self.done]

    def _grammar(self, uncited_answer: bool = True) -> Menu:
        """The grammar of the next reply: only actions that are new and useful. A search
        already run and a section already read cannot be written; an answer only once
        something was read (and, under the span rule, only as a span of shown text)."""
        if self._hop_pending() and self.budgets.max_steps - self.acc.steps >= 1:
            return self._hop_grammar()
        fetchable: list[tuple[str, list[str]]] = []
        for h in self.last_hits:
            fetchable.append((str(h.rank), self._unread(h.id, h.sections)))
        last_ids = {h.id for h in self.last_hits}
        # ids of documents seen earlier (newest 40): fetchable by id
        for doc_id in list(self.seen)[-40:]:
            if doc_id not in last_ids:
                fetchable.append((doc_id, self._unread(doc_id, self.seen[doc_id])))
        if self.mode == "search-visit":
            fetchable = [(lab, [WHOLE_DOCUMENT]) for lab, secs in fetchable if secs]
        queries = self._queries_left() if self.budgets.suggest else None
        free = self.budgets.free_search or not self.budgets.suggest
        # A search whose results can no longer be read is wasted: none on the last step,
        # and none on the last two while nothing has been read.
        left = self.budgets.max_steps - self.acc.steps
        first_read = self.budgets.read_before_search and not self.read and self.acc.seeded
        if left <= 1 or (left <= 2 and not self.read) or first_read:
            if has_fetch_now(fetchable):
                queries, free = [], False
        span_rules = self._span_grammar() if (self._span_rule() and self.read) else None
        has_fetch = any(secs for _lab, secs in fetchable)
        if not (queries or free or has_fetch or self.read):
            raise _NothingLeft()
        return Menu.of(self.mode, self.tools.fields, fetchable, self._citable(),
                              uncited_answer=uncited_answer, queries=queries,
                              free_search=free, span_rules=span_rules,
                              thought_chars=self.budgets.thought_chars)

    def _answer_now(self) -> str:
        """What the next reply must be, for small models: 'keyed' once a read shows a 'key:
        value' line whose key names a word of the question ('Created:' for 'when was it
        created', ``answer_when_keyed``): the next reply can only be the answer, since a
        small model otherwise wanders off to read more; 'choice' once a prose read has
        candidate answers not chosen from yet (``choose``); '' otherwise."""
        if self.comparison is not None:
            return "" if self.comparison.leads() or self._chosen else "choice"
        if self.bridge is not None and self.bridge.answer:
            return "" if self._chosen else "choice"
        if not self.read or self._hop_pending():
            return ""
        newest = max(self.read, key=lambda k: self.read[k])
        if self.budgets.answer_when_keyed and self._span_rule():
            from .queries import STOPWORDS

            idx = SpanIndex([Source(self.read_text[newest], newest)])
            if keyed_values(idx, self.question, STOPWORDS):
                return "keyed"
        reading = self.readings.get(newest)
        if self.budgets.choice and reading is not None and reading.candidates \
                and newest not in self._chosen:
            return "choice"
        return ""

    def _span_grammar(self) -> str:
        from .queries import STOPWORDS

        if self.titles and asks_title(self.question):
            # 'what is its title': the answer is the title of a document read, nothing else
            keys = self._answer_keys()
            titles = list(dict.fromkeys(self.titles[d] for d, _s in keys if d in self.titles))
            tidx = SpanIndex([Source(t, None) for t in titles], max_chunks=1 << 30)
            firsts = {c[0] for c in (chunk_words(t) for t in titles) if c}
            if tidx:
                return tidx.grammar(starts=firsts)
        idx = self._spans()
        return idx.grammar(starts=answer_starts(idx, self.question, STOPWORDS))

    def _answer_grammar(self) -> Menu:
        span_rules = self._span_grammar() if self._span_rule() else None
        return Menu.of(self.mode, (), (), self._citable(), answer_only=True,
                              span_rules=span_rules, thought_chars=0)

    def _unread(self, doc_id: str, sections: list[str]) -> list[str]:
        """Sections not read yet: the grammar makes a repeated read unwritable."""
        if self.mode == "search-visit":
            return [] if ("read", doc_id, WHOLE_DOCUMENT) in self.done else [WHOLE_DOCUMENT]
        return [s for s in sections if ("read", doc_id, s) not in self.done]

    def _visible(self) -> set[tuple[str, str]]:
        return {t.read_key for t in self.turns
                if t.read_key is not None and not t.trimmed}

    def _citable(self) -> list[Citation]:
        return [Citation(d, s, self.read_pages.get((d, s), "")) for d, s in self.read]

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

    def _add(self, role: str, content: str, kind: str, **extra: Any) -> None:
        self.turns.append(_Turn(role, content, kind, **extra))
        self._count(content)

    def _count(self, text: str) -> None:
        self.acc.distinct_tokens += self.backbone.count_tokens(text)

    def _record(self, step: Step, observation: str, stub: str = "",
                read_key: tuple[str, str] | None = None, in_conversation: bool = True) -> None:
        """Append the step's reply and observation to the conversation, and emit it."""
        step.observation = observation
        self.acc.engine_seconds += step.engine_seconds
        # The reply is already counted (completion tokens): add its turn without recounting.
        # Step 0 is the engine's: no reply, its observation joins the question's message.
        if in_conversation and step.index > 0:
            self.turns.append(_Turn("assistant", step.reply or "(empty)", "action",
                                    step.index))
        if observation:
            if step.index == 0:
                content = observation
            else:
                content = f"Observation (step {step.index}):\n{observation}"
            step.observation_tokens = self.backbone.count_tokens(content)
            self._add("user", content, "observation", step=step.index, stub=stub,
                      read_key=read_key)
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
                     evidence=self._evidence() if answer.text == NO_ANSWER else [])
        self._emit({"event": "end", **ep.to_json()})
        return ep

    def _emit(self, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)


class _NothingLeft(Exception):
    """No action is possible any more (nothing to search, fetch or answer from)."""


class _NoAnswer(Exception):
    """The final answer failed its checks: the episode ends without one."""


def _whole_lines(comp: Any) -> str:
    """A reply cut by max_tokens loses its unfinished last line (a half-written citation);
    a one-line reply is kept as it is."""
    text = comp.text
    if comp.finish_reason == "length" and "\n" in text.strip():
        return text.strip().rsplit("\n", 1)[0]
    return text


def has_fetch_now(fetchable: list[tuple[str, list[str]]]) -> bool:
    """Whether any listed document still has something to read."""
    return any(secs for _label, secs in fetchable)


def _norm_query(query: str) -> str:
    """How two searches are compared for repeats: case and runs of whitespace ignored."""
    return " ".join(query.split()).casefold()


class _Mistake(Exception):
    """A model mistake found by the loop itself (unknown rank, repeat, bad citation)."""


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
