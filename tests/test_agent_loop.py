"""The agent loop driven by a scripted backbone (replies queued in order) over a real, small
collection: every path of the loop, the action syntax and its repair, the manual, the three
modes, accounting and transcripts. No model: fast."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.agent.backbones import ScriptedBackbone
from sieve_lite.agent.loop import NO_ANSWER, Agent, Budgets
from sieve_lite.agent.manual import build_manual, check_manual, examples
from sieve_lite.agent.steps import Answer, Citation, Fetch, Search, Visit
from sieve_lite.agent.syntax import ActionError, action_grammar, parse_action
from sieve_lite.agent.tools import CollectionTools, or_words, query_features
from sieve_lite.agent.transcript import TranscriptWriter, read_transcript, replay

LONG = " ".join(f"word{i} filler" for i in range(300))

MINI_DOCS = [
    {"id": "pep-0572", "title": "Assignment Expressions", "date": "2018-02-28",
     "author": ["Chris Angelico", "Tim Peters", "Guido van Rossum"],
     "infobox": [["Status", "Final"], ["Type", "Standards Track"], ["Python-Version", "3.8"]],
     "sections": [
         {"heading": "(intro)", "text": "This is a proposal for creating a way to assign to "
          "variables within an expression using the notation NAME := expr. This operator is "
          "informally known as the walrus operator."},
         {"heading": "Rationale", "text": "Naming the result of an expression is an important "
          "part of programming."},
         {"heading": "Syntax and semantics", "text": "A named expression is of the form "
          "NAME := expr where expr is any valid Python expression."}]},
    {"id": "pep-0008", "title": "Style Guide for Python Code", "date": "2001-07-05",
     "author": ["Guido van Rossum", "Barry Warsaw"],
     "infobox": [["Status", "Active"], ["Type", "Process"]],
     "sections": [
         {"heading": "(intro)", "text": "This document gives coding conventions for the "
          "Python code comprising the standard library."},
         {"heading": "Code Lay-out", "text": "Use 4 spaces per indentation level."},
         {"heading": "Naming Conventions", "text": "The naming conventions of Python's "
          "library are a bit of a mess."}]},
    {"id": "pep-0020", "title": "The Zen of Python", "date": "2004-08-19",
     "author": ["Tim Peters"], "infobox": [["Status", "Active"], ["Type", "Informational"]],
     "sections": [
         {"heading": "(intro)", "text": "Tim Peters channels the guiding principles for "
          "Python's design into 20 aphorisms."},
         {"heading": "The Zen of Python", "text": "Beautiful is better than ugly."}]},
    {"id": "pep-0484", "title": "Type Hints", "date": "2014-09-29",
     "author": ["Guido van Rossum", "Jukka Lehtosalo", "Lukasz Langa"],
     "infobox": [["Status", "Final"], ["Type", "Standards Track"]],
     "sections": [
         {"heading": "(intro)", "text": "This PEP introduces a standard syntax for type "
          "annotations of function parameters and return values."},
         {"heading": "Rationale and Goals", "text": "Type annotations open Python code to "
          "easier static analysis."},
         {"heading": "Long Appendix", "text": LONG}]},
]

FLAT_DOCS = [
    {"id": "Teutberga", "title": "Teutberga", "text": "Teutberga (died 11 November 875) was a "
     "queen of Lotharingia by marriage to Lothair II."},
    {"id": "Lothair II", "title": "Lothair II", "text": "Lothair II (835 - 869) was the king "
     "of Lotharingia."},
    {"id": "Boso the Elder", "title": "Boso the Elder", "text": "Boso the Elder was a Frankish "
     "count, father of Teutberga."},
]


def build_db(path: Path, docs: list[dict]) -> Path:
    """A lexical collection of ``docs`` at ``path`` (the real build path)."""
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    src = path.with_suffix(".jsonl")
    src.write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    build_collection(iter_documents([src], "jsonl"), path, embed=False, strict=True,
                     quiet=True, source_label="test")
    return path


@pytest.fixture(scope="module")
def mini_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("agent") / "mini.db", MINI_DOCS)


@pytest.fixture(scope="module")
def flat_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("agent") / "flat.db", FLAT_DOCS)


@pytest.fixture()
def coll(mini_db: Path):
    with sieve_lite.open(mini_db) as c:
        yield c


MANUAL = "You research questions. Actions: search, fetch, answer."
# A read and a cited answer: how the scripted episodes below end.
END = ["fetch: pep-0572 | Rationale", "answer: PEP 572\ncite: pep-0572 | Rationale"]


def run(coll, replies: list[str], mode: str = "sieve", n_ctx: int = 8192,
        manual: str = MANUAL, question: str = "Which PEP introduced the walrus operator?",
        events: list | None = None, **budgets):
    bb = ScriptedBackbone(replies, n_ctx=n_ctx)
    # The paths of the loop itself: no seed, suggestions, span rule or narrowed reads unless
    # a test asks.
    budgets = {"seed": False, "suggest": False, "span_answer": False, "narrow": False,
               **budgets}
    agent = Agent(bb, CollectionTools(coll, mode), manual, Budgets(**budgets),
                  on_event=events.append if events is not None else None)
    ep = agent.run(question)
    assert not bb.replies, f"unused scripted replies: {bb.replies}"
    return ep, bb


def observations(bb: ScriptedBackbone) -> list[str]:
    """The observation messages the model saw in its last call."""
    return [m["content"] for m in bb.calls[-1]["messages"]
            if m["role"] == "user" and m["content"].startswith("Observation")]


# ----------------------------------------------------------------------------- loop paths
def test_answer_path(coll) -> None:
    ep, bb = run(coll, [
        'thought: the walrus is an assignment expression\nsearch: walrus[body]',
        "fetch: 1 | (intro)",
        "answer: PEP 572\ncite: pep-0572 | (intro)",
    ])
    assert ep.answer == "PEP 572"
    assert ep.citations == [Citation("pep-0572", "(intro)")]
    acc = ep.accounting
    assert (acc.stop_reason, acc.forced) == ("answer", False)
    assert (acc.steps, acc.llm_calls, acc.searches, acc.fetches, acc.errors) == (3, 3, 1, 1, 0)
    assert acc.fields == {"body": 1}
    assert acc.accumulated_prompt_tokens == sum(
        bb.prompt_tokens(c["messages"]) for c in bb.calls)
    # distinct: every segment once; accumulated: each call's whole prompt again
    assert 0 < acc.distinct_tokens < acc.accumulated_prompt_tokens
    obs = observations(bb)
    assert "1 documents match" in obs[0] and "[1] pep-0572" in obs[0]
    assert obs[1].splitlines()[1].startswith("pep-0572 | (intro) (Assignment Expressions)")
    assert "walrus operator" in obs[1]


def test_forced_answer_at_step_cap(coll) -> None:
    ep, bb = run(coll, [
        "search: walrus",
        "fetch: 1 | Rationale",
        "search: zen",  # at the cap: asked for the answer, it calls a tool again
        "PEP 572\ncite: pep-0572 | Rationale\ncite: pep-0008 | (intro)",  # after the prefill
    ], max_steps=2, paper_forced_answer=True)
    acc = ep.accounting
    assert (acc.stop_reason, acc.forced, acc.steps, acc.llm_calls) == ("step-cap", True, 2, 4)
    assert bb.calls[-1]["prefill"] == "answer: "
    assert "step limit" in bb.calls[-2]["messages"][-1]["content"]
    # the refused tool call is not in the conversation the prefill continues
    assert bb.calls[-1]["messages"] == bb.calls[-2]["messages"]
    assert ep.answer == "PEP 572"
    # the unread citation is dropped from a forced answer, the read one kept
    assert ep.citations == [Citation("pep-0572", "Rationale")]


def test_final_request_answered_without_forcing(coll) -> None:
    ep, bb = run(coll, ["search: walrus", "fetch: 1 | (intro)",
                        "answer: PEP 572\ncite: pep-0572 | (intro)"], max_steps=2)
    assert (ep.accounting.stop_reason, ep.accounting.forced) == ("step-cap", False)
    assert ep.answer == "PEP 572" and ep.steps[-1].info["final"] == "step-cap"
    assert all(c["prefill"] == "" for c in bb.calls)


def test_no_answer_when_nothing_was_read(coll) -> None:
    """At the cap with nothing read there is nothing to answer from: no final request, no
    made-up answer (the paper's forcing is only for the mode study)."""
    ep, bb = run(coll, ["search: walrus"], max_steps=1)
    assert not ep.answered and ep.answer == NO_ANSWER and ep.citations == []
    assert ep.accounting.no_answer == "nothing was read" and len(bb.calls) == 1


def test_no_answer_when_the_final_answer_is_refused(coll) -> None:
    """A final answer that fails its checks (here: it only repeats the question) is no
    answer, and the episode shows the best evidence it read."""
    ep, bb = run(coll, ["search: walrus", "fetch: 1 | (intro)",
                        "answer: the walrus operator\ncite: pep-0572 | (intro)"],
                 max_steps=2, question="What is the walrus operator?")
    assert not ep.answered and "only repeats words of the question" in ep.accounting.no_answer
    assert ep.evidence and ep.evidence[0]["doc"] == "pep-0572"
    assert "walrus operator" in ep.evidence[0]["text"]


def test_context_stop_at_90_percent(coll) -> None:
    # A manual of ~250 tokens in a 600-token window: after one long read (capped at half the
    # window) the prompt passes 90% even with nothing left to trim.
    manual = "manual " * 250
    events: list = []
    ep, bb = run(coll, [
        "search: appendix[section]",
        "fetch: 1 | Long Appendix",
        "answer: type hints\ncite: pep-0484 | Long Appendix",
    ], n_ctx=600, manual=manual, events=events)
    acc = ep.accounting
    assert acc.stop_reason == "context" and not acc.forced
    assert acc.steps == 2
    step2 = ep.steps[1]
    assert step2.info["cut"] and step2.info["tokens"] <= 300
    assert "[an excerpt: the rest is not shown]" in step2.observation
    # the final request made room by stubbing even the newest observation
    assert any(e["event"] == "trim" for e in events)
    last = bb.calls[-1]["messages"]
    assert "context window" in last[-1]["content"]
    assert bb.prompt_tokens(last) + 160 <= 600
    assert ep.citations == [Citation("pep-0484", "Long Appendix")]


def test_trimming_keeps_episode_going(coll) -> None:
    # 1,000-token window: each long read is cut at 500; the older one is stubbed at 75%.
    events: list = []
    ep, bb = run(coll, [
        "search: appendix[section]",
        "fetch: 1 | Long Appendix",
        "search: walrus",
        "fetch: 1 | (intro)",
        "search: zen",                       # passes 75%: steps 1-2 become stubs
        "fetch: pep-0484 | Rationale and Goals",
        "answer: PEP 572\ncite: pep-0572 | (intro)",
    ], n_ctx=1000, events=events)
    assert ep.accounting.stop_reason == "answer"
    assert ep.accounting.errors == 0
    trims = [e for e in events if e["event"] == "trim"]
    assert trims[0]["steps"] == [1, 2] and trims[0]["prompt_tokens"] <= 500
    assert ep.accounting.trims == len(trims) == 1
    assert ep.steps[5].prompt_tokens < ep.steps[4].prompt_tokens
    msgs = bb.calls[-1]["messages"]
    assert any("removed to save context" in m["content"] for m in msgs)
    # never trimmed: manual, question, every action
    assert msgs[0]["content"] == MANUAL and msgs[1]["content"].startswith("Question:")
    assert [m["content"] for m in msgs if m["role"] == "assistant"] == [
        s.reply for s in ep.steps[:-1]]


def test_malformed_action(coll) -> None:
    ep, bb = run(coll, ["I think it is PEP 572.", *END])
    assert ep.steps[0].action is None
    assert ep.steps[0].error.startswith("Malformed action")
    assert "search: WORDS" in observations(bb)[0]
    assert ep.accounting.errors == 1 and ep.answer == "PEP 572"


def test_answer_before_any_read_is_refused(coll) -> None:
    ep, bb = run(coll, ["answer: PEP 572", *END])
    assert "You have read nothing yet" in ep.steps[0].error
    assert ep.citations == [Citation("pep-0572", "Rationale")]


def test_unknown_section(coll) -> None:
    ep, bb = run(coll, ["search: walrus", "fetch: 1 | Body", *END])
    err = ep.steps[1].error
    assert "no section 'Body'" in err and "Rationale" in err and "(intro)" in err
    assert "Copy a section name exactly" in err


def test_bql_error(coll) -> None:
    ep, bb = run(coll, ["search: walrus[auther]", *END])
    err = ep.steps[0].error
    assert err.startswith("Query error:") and "auther" in err and "column" in err
    assert "author" in err  # the fix: the fields this collection has
    assert ep.accounting.searches == 0


def test_repeated_call(coll) -> None:
    ep, bb = run(coll, ["search: walrus", "search:  walrus ", "fetch: 1 | (intro)",
                        "fetch: pep-0572 | (intro)", "answer: PEP 572\ncite: 1 | (intro)"])
    assert "already ran this exact search at step 1" in ep.steps[1].error
    assert "already ran this exact fetch at step 3" in ep.steps[3].error
    assert ep.accounting.searches == 1 and ep.accounting.fetches == 1


def test_unknown_rank_and_id(coll) -> None:
    ep, _ = run(coll, ["fetch: 1 | (intro)", "search: walrus", "fetch: 7 | (intro)",
                       "fetch: pep-9999 | (intro)", *END])
    assert "no search result yet" in ep.steps[0].error
    assert "Rank 7 is not in the last result" in ep.steps[2].error
    assert "No document has the id 'pep-9999'" in ep.steps[3].error


def test_citation_of_unread_section_is_refused(coll) -> None:
    ep, bb = run(coll, ["search: walrus", "fetch: 1 | (intro)",
                        "answer: PEP 572\ncite: pep-0572 | Rationale",
                        "fetch: 1 | Rationale", "answer: PEP 572\ncite: 1 | rationale"])
    assert "which you have not read" in ep.steps[2].error
    assert "pep-0572 | (intro)" in ep.steps[2].error
    assert ep.citations == [Citation("pep-0572", "Rationale")]  # rank and case resolved


def test_outline_fetch(coll) -> None:
    ep, bb = run(coll, ["search: walrus", "fetch: 1", *END])
    assert "has these sections" in ep.steps[1].observation
    assert "Syntax and semantics" in ep.steps[1].observation
    assert not ep.steps[1].error


def test_fallback_counted(coll) -> None:
    ep, bb = run(coll, ["search: walrus AND zzzzqx", *END])
    assert ep.accounting.fallbacks == 1
    assert "No document matches the whole query" in ep.steps[0].observation
    assert "zzzzqx: 0" in ep.steps[0].observation


# --------------------------------------------------------------------------------- modes
def test_search_fetch_mode_ranks_words_without_selection(coll) -> None:
    ep, bb = run(coll, ['search: walrus[title] AND "zen"', "fetch: 1 | (intro)",
                        "answer: x\ncite: 1 | (intro)"], mode="search-fetch")
    info = ep.steps[0].info
    assert info["engine_query"] == "walrus OR title OR and OR zen"
    assert info["total"] >= 2 and not info["fallback"]
    assert ep.accounting.fields == {} and ep.accounting.operators == {}
    assert "matched:" in ep.steps[0].observation  # the same cards


def test_search_visit_mode_reads_whole_documents(coll) -> None:
    ep, bb = run(coll, ["search: walrus", "visit: 1",
                        "answer: PEP 572\ncite: pep-0572 | (document)"], mode="search-visit")
    obs = ep.steps[0].observation
    assert "[1] pep-0572: Assignment Expressions" in obs and "sections (" not in obs
    read = ep.steps[1].observation
    assert "## Rationale" in read and "## Syntax and semantics" in read
    assert ep.citations == [Citation("pep-0572", "(document)")]
    ep2, _ = run(coll, ["search: walrus", "fetch: 1 | (intro)", "visit: pep-0020",
                        "answer: x\ncite: pep-0020"], mode="search-visit")
    assert "'fetch' is not a tool in this mode" in ep2.steps[1].error


# ----------------------------------------------------------------------- syntax & grammar
@pytest.mark.parametrize("reply,expected,repair", [
    ('search: "fort santiago"[title] AND date[1570..1600]',
     Search('"fort santiago"[title] AND date[1570..1600]'), ""),
    ("thought: x\nfetch: 2 | Origins and construction", Fetch("2", "Origins and construction",
                                                               "x"), ""),
    ("answer: Fort Santiago\ncite: a | (intro)\ncite: b | A | B",
     Answer("Fort Santiago", (Citation("a", "(intro)"), Citation("b", "A | B"))), ""),
    ("**Action:** Search: walrus operator", Search("walrus operator"), "lines"),
    ('{"action": "fetch", "doc": 2, "section": "Rationale"}', Fetch("2", "Rationale"), "json"),
    ('fetch(2, "Rationale")', Fetch("2", "Rationale"), "call"),
    ("Final Answer: PEP 572 | cite: pep-0572 | (intro)",
     Answer("PEP 572", (Citation("pep-0572", "(intro)"),)), "lines"),
    ("Thought: x\nAnswer:\nPEP 572\nCitations: p | (intro); q | Code",
     Answer("PEP 572", (Citation("p", "(intro)"), Citation("q", "Code")), "x"), "lines"),
    ("```\nfetch: 2 Rationale\n```", Fetch("2", "Rationale"), "lines"),
    ("search: walrus\nObservation: 3 documents", Search("walrus"), "lines"),
])
def test_parse_action(reply: str, expected, repair: str) -> None:
    assert parse_action(reply, "sieve") == (expected, repair)


def test_parse_visit_and_errors() -> None:
    assert parse_action("visit: 3", "search-visit") == (Visit("3"), "")
    assert parse_action("answer: x\nsearch: y", "sieve") == (Answer("x"), "lines")
    for bad in ["", "hello", "search:", "cite: a | b", "fetch: 2 | "]:
        with pytest.raises(ActionError):
            parse_action(bad, "sieve")


def test_action_grammar_shape() -> None:
    g = action_grammar("sieve", ("title", "body", "tiab", "all"),
                       [("1", ["(intro)", 'A "q"']), ("pep-1", ["Rationale"])],
                       [Citation("pep-1", "Rationale")])
    assert 'target0 ::= "1 | " ("(intro)" | "A \\"q\\"")' in g
    assert 'cite ::= "pep-1 | Rationale"' in g
    assert '"section"' not in g and "date" not in g.split("field ::=")[1]
    flat = action_grammar("sieve", ("title", "body", "tiab", "all"), [], [])
    assert "fetch" not in flat.split("\n")[0] and "cite" not in flat  # nothing to fetch/cite
    first = action_grammar("sieve", ("title",), [], [], uncited_answer=False)
    assert first.split("\n")[0] == "root ::= thought? (search)"  # read before answering
    pre = action_grammar("sieve", (), (), [Citation("a", "b")], prefilled=True)
    assert pre.startswith("root ::= answerbody")
    visit = action_grammar("search-visit", (), [("1", ["(document)"])], [])
    assert 'visit ::= "visit: " ("1")' in visit and "andtop" not in visit  # no BQL


def test_query_features() -> None:
    ops, fields = query_features('"a b"[ti] AND (c OR d*)[body] -e NOT f date[2001..2003]')
    assert ops == ["phrase", "AND", "OR", "NOT", "-", "prefix", "group", "date"]
    assert fields == ["title", "body", "date"]
    assert query_features('"x AND y"') == (["phrase"], [])
    assert or_words("Fort-Santiago AND the") == "fort OR santiago OR and OR the"


# ------------------------------------------------------------------------------- manual
def test_manual_is_generated_from_the_collection(coll, flat_db: Path) -> None:
    m = build_manual(coll)
    assert m == build_manual(coll)  # same inputs, same prompt
    assert check_manual(m, coll) == []
    assert not re.search(r"20[2-9]\d-\d\d-\d\d", m.replace("2018-02-28", ""))  # no today
    for ex in examples(coll):
        assert f"search: {ex.query}" in m
        assert coll.search(ex.query, k=1, strict=True, ranker="bm25").total >= 1
    with sieve_lite.open(flat_db) as flat:
        fm = build_manual(flat)
        assert check_manual(fm, flat) == []
        for word in ("section", "infobox", "author", "date"):
            assert f"- {word}:" not in fm
        assert "[section]" not in fm and "[infobox]" not in fm
        assert examples(flat)
    visit = build_manual(coll, "search-visit")
    assert "visit: RANK" in visit and "fetch:" not in visit and "BQL" not in visit


# ---------------------------------------------------------------------------- transcript
def test_transcript_and_replay(coll, tmp_path: Path, capsys) -> None:
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path)
    ep, _ = run(coll, ["search: walrus", "fetch: 1 | (intro)",
                       "answer: PEP 572\ncite: pep-0572 | (intro)"], events=[])
    # run again through the writer (events list above only checks the hook is optional)
    bb = ScriptedBackbone(["search: walrus", "fetch: 1 | (intro)",
                           "answer: walrus operator\ncite: pep-0572 | (intro)"])
    Agent(bb, CollectionTools(coll), MANUAL, on_event=writer).run("walrus?")
    writer.close()
    events = read_transcript(path)
    # the default budgets: the seed is step 0 in the transcript
    assert [e["event"] for e in events] == ["start", "step", "step", "step", "step", "end"]
    assert events[0]["system"] == MANUAL
    assert events[1]["index"] == 0 and events[1]["info"]["seed"]
    assert events[2]["action"] == {"kind": "search", "query": "walrus", "thought": ""}
    assert events[-1]["answer"] == "walrus operator"
    assert events[-1]["accounting"]["stop_reason"] == "answer"
    from rich.console import Console

    console = Console(file=open(tmp_path / "out.txt", "w"), width=100)  # noqa: SIM115
    end = replay(path, console)
    console.file.close()
    out = (tmp_path / "out.txt").read_text()
    assert end is not None and "walrus operator" in out and "pep-0572 | (intro)" in out
    assert "step 0" in out
    assert "search" in out and "walrus" in out
