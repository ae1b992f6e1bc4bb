"""The small-model harness without a model: the question-seeded step 0 in every mode, the
suggested searches, grammars that cannot repeat an action, the span automaton behind grounded
answers, the no-progress stop, and the budgets picked from a model's size."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_agent_loop import MINI_DOCS, build_db

import sieve_lite
from sieve_lite.agent.backbones import ScriptedBackbone
from sieve_lite.agent.loop import NO_ANSWER, Agent, Budgets
from sieve_lite.agent.profile import budgets_for, parse_size_label
from sieve_lite.agent.queries import candidates, suggest
from sieve_lite.agent.spans import Source, SpanIndex, chunk_words
from sieve_lite.agent.steps import Citation
from sieve_lite.agent.tools import CollectionTools, excerpt, short_values

Q = "Which PEP introduced the walrus operator?"


@pytest.fixture(scope="module")
def mini_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("harness") / "mini.db", MINI_DOCS)


@pytest.fixture()
def coll(mini_db: Path):
    with sieve_lite.open(mini_db) as c:
        yield c


def episode(coll, replies, mode="sieve", question=Q, events=None, **budgets):
    bb = ScriptedBackbone(replies)
    agent = Agent(bb, CollectionTools(coll, mode), "manual", Budgets(**budgets),
                  on_event=events.append if events is not None else None)
    ep = agent.run(question)
    assert not bb.replies, f"unused replies {bb.replies}"
    return ep, bb, agent


# ------------------------------------------------------------------------------ step 0
@pytest.mark.parametrize("mode", ["sieve", "search-fetch", "search-visit"])
def test_seed_step_runs_in_every_mode(coll, mode: str) -> None:
    events: list = []
    read = "visit: 1" if mode == "search-visit" else "fetch: 1 | (intro)"
    cite = "pep-0572 | (document)" if mode == "search-visit" else "pep-0572 | (intro)"
    ep, bb, _ = episode(coll, [read, f"answer: NAME := expr\ncite: {cite}"], mode=mode,
                        events=events, suggest=False)
    seed = ep.steps[0]
    assert seed.index == 0 and seed.info["seed"] and seed.reply == ""
    if mode == "sieve":  # the planner's: the content words the collection holds, ranked
        assert seed.info["plan"] == seed.info["engine_query"] == "pep OR walrus OR operator"
    else:
        assert seed.info["engine_query"] == \
            "which OR pep OR introduced OR the OR walrus OR operator"
    assert seed.info["hits"][0]["id"] == "pep-0572"
    # in the transcript, in the accounting (a search, engine time, not a model step)
    assert [e["index"] for e in events if e["event"] == "step"] == [0, 1, 2]
    acc = ep.accounting
    assert acc.seeded and acc.searches == 1 and acc.steps == 2 and acc.llm_calls == 2
    assert acc.engine_seconds >= seed.engine_seconds > 0
    # the model saw the cards before its first call, in the question's message
    first = bb.calls[0]["messages"]
    assert first[1]["role"] == "user" and first[1]["content"].startswith(f"Question: {Q}")
    head = ("Results of the search planned from the question" if mode == "sieve" else
            "Results of a search for the question's words")
    assert head in first[1]["content"]
    assert ep.answer == "NAME := expr" and ep.accounting.grounded


def test_no_seed(coll) -> None:
    ep, bb, _ = episode(coll, ["search: walrus", "fetch: 1 | (intro)",
                               "answer: NAME := expr\ncite: pep-0572 | (intro)"],
                        seed=False, suggest=False)
    assert ep.steps[0].index == 1 and not ep.accounting.seeded
    assert "Results of a search" not in bb.calls[0]["messages"][1]["content"]


# ------------------------------------------------------------------ no repeated actions
def test_grammar_cannot_repeat_a_search_or_a_read(coll) -> None:
    """A suggested search already run and a section already read leave the grammar."""
    ep, bb, agent = episode(coll, ["fetch: 1 | (intro)", "answer: x\ncite: 1 | (intro)"],
                            free_search=False, max_steps=1,
                            span_answer=False, question="Who proposed the walrus?")
    agent.budgets.max_steps = 10  # steps left: searching is still worth it
    agent.st.suggested = ['"walrus operator"', "walrus[title]"]
    agent.st.done[("search", "walrus[title]")] = 1
    g = agent._grammar().gbnf()
    assert '"\\"walrus operator\\""' in g and '"walrus[title]"' not in g
    assert "andtop" not in g  # no free query: only the offered ones
    # (intro) of rank 1 was read: it is not offered again, the other sections are
    target = re.search(r'target0 ::= "1 \| " \(([^)]*)\)', g).group(1)
    assert '"(intro)"' not in target and '"Rationale"' in target


def test_repeats_are_refused_and_counted_without_grammar(coll) -> None:
    ep, _, _ = episode(coll, ["search: Walrus", "search:  walrus ", "fetch: 1 | (intro)",
                              "fetch: pep-0572 | (intro)",
                              "answer: NAME := expr\ncite: pep-0572 | (intro)"],
                       seed=False, suggest=False)
    assert ep.accounting.repeats == 2
    assert "already ran this exact search" in ep.steps[1].error  # case and spaces ignored


def test_stops_after_actions_without_progress(coll) -> None:
    ep, _, _ = episode(coll, ["search: walrus", "search: walrus operator", "search: walrus*"],
                       seed=False, suggest=False, stall_limit=2)
    # the second and third searches show nothing new: stop, and say why
    assert ep.accounting.stop_reason == "no-progress" and not ep.answered
    assert ep.accounting.no_answer == "nothing was read"


# --------------------------------------------------------------------- suggested queries
def test_suggested_searches_come_from_the_question(coll) -> None:
    q = "Who wrote the assignment expressions proposal with Tim Peters in February 2018?"
    cands = [c for c, _ in candidates(coll, q)]
    assert '"tim peters"[author]' in cands and '"assignment expressions"[title]' in cands
    assert any("date[2018-02]" in c for c in cands)
    got = suggest(coll, q)
    assert got and all(1 <= s.admitted <= coll.documents // 2 for s in got)
    assert [s.admitted for s in got] == sorted(s.admitted for s in got)
    for s in got:  # every one parses and runs on this collection
        assert coll.search(s.query, k=1, strict=True, ranker="bm25").total == s.admitted


# --------------------------------------------------------------------------- span answers
TEXT = ("Author: Eric V. Smith <eric at trueblade.com>\nStatus: Final\n"
        "The ``PYTHONBREAKPOINT`` variable (see LL(1)-based parsers) wins.")


def test_chunks_keep_inner_punctuation() -> None:
    assert chunk_words(TEXT) == ["Author", "Eric", "V", "Smith", "eric", "at", "trueblade.com",
                                 "Status", "Final", "The", "PYTHONBREAKPOINT", "variable",
                                 "see", "LL(1)-based", "parsers", "wins"]


def test_ground_returns_the_written_span() -> None:
    idx = SpanIndex([Source(TEXT, ("pep-0557", "infobox")), Source("Dataclasses", None)])
    g = idx.ground("Eric V. Smith")
    assert g and g.text == "Eric V. Smith" and g.label == ("pep-0557", "infobox")
    assert not g.trimmed and g.labels == [("pep-0557", "infobox")]
    # pieces stitched from two places: trimmed to the longest contiguous run
    g = idx.ground("Smith Final wins")
    assert g and g.text in ("Smith", "Final", "wins") and g.trimmed
    assert idx.ground("Dataclasses").label is None  # a card title: shown, not citable
    assert idx.ground("nothing shown") is None


def test_span_grammar_is_a_deterministic_trie() -> None:
    from llama_cpp import LlamaGrammar

    from sieve_lite.agent.spans import _trie

    idx = SpanIndex([Source(TEXT, ("d", "s"))])
    g = idx.grammar()
    LlamaGrammar.from_string('root ::= span\n' + g, verbose=False)  # llama.cpp accepts it
    names = {"ab": 0, "ac": 1, "a": 2, "b": 3}
    # alternatives at every node start with different characters; a word that ends where
    # others go on continues by its own rule
    assert _trie(["ab", "ac", "a", "b"], names, "s") == '"a" (s2 | "b" s0 | "c" s1) | "b" s3'
    after_smith = next(r for r in g.splitlines() if r.startswith("span")
                       and '"Status"' in r and "::= (" in r)
    assert after_smith.startswith("span") and '(" " (' in after_smith


def test_span_rule_grounds_and_cites_the_section_holding_the_answer(coll) -> None:
    ep, _, _ = episode(coll, ["search: walrus", "fetch: 1 | (intro)", "fetch: 1 | Rationale",
                              "answer: walrus operator.\ncite: pep-0572 | Rationale"],
                       seed=False, suggest=False, question="What is := informally known as?")
    assert ep.answer == "walrus operator"
    assert ep.citations == [Citation("pep-0572", "(intro)")]  # the one that holds it
    assert ep.steps[-1].info.get("citation_from_span")


def test_span_rule_refuses_made_up_answers(coll) -> None:
    ep, _, _ = episode(coll, ["search: walrus", "fetch: 1 | (intro)",
                              "answer: a small mammal\ncite: pep-0572 | (intro)",
                              "answer: NAME := expr\ncite: pep-0572 | (intro)"],
                       seed=False, suggest=False)
    assert "not a span of any text shown" in ep.steps[2].error
    assert ep.answer == "NAME := expr"


def test_free_answer_lifts_the_span_rule(coll) -> None:
    ep, _, _ = episode(coll, ["search: walrus", "fetch: 1 | (intro)",
                              "answer: PEP 572\ncite: pep-0572 | (intro)"],
                       seed=False, suggest=False, span_answer=False)
    assert ep.answer == "PEP 572" and not ep.accounting.grounded


def test_excerpt_keeps_the_part_with_the_question_words() -> None:
    text = " ".join(["filler"] * 500 + ["the", "walrus", "operator", "is", "here"]
                    + ["filler"] * 500)
    cut, was_cut = excerpt(text, ["walrus", "operator"], 50)
    assert was_cut and "walrus operator" in cut and len(cut.split()) <= 52
    # a header's long values are cut first, so its short lines fit a read
    long_box = ("PEP: 695\nAuthor: Eric Traut\nPost-History: " + ", ".join(
        f"`20-Jun-2022 <https://mail.python.org/archives/thread/{i}/>`__" for i in range(9)))
    short = short_values(long_box)
    assert "Author: Eric Traut" in short and short.endswith("…") and len(short) < 120
    # the window ends at whitespace, never inside '3.11'
    box = "Status: Final\nCreated: 22-Feb-2021\nPython-Version: 3.11\nPost-History: 22-Feb-2021"
    cut, was_cut = excerpt(box, ["status", "created", "python", "version"], 9)
    assert was_cut and "Python-Version: 3.11" in cut and not cut.rstrip(" .").endswith(": 3")


# --------------------------------------------------------------------------- budgets
def test_budgets_fit_the_model_size() -> None:
    assert parse_size_label("135M") == 135_000_000
    assert parse_size_label("1.7B") == 1_700_000_000
    assert parse_size_label("8x7B") == 56_000_000_000 and parse_size_label("big") is None
    small, mid, big = (budgets_for(p, 8192) for p in (135_000_000, 3_000_000_000, None))
    assert small.compact and not small.free_search and small.thought_chars == 0
    assert small.max_steps < mid.max_steps <= big.max_steps == 100
    assert small.k < big.k and small.read_tokens < mid.read_tokens < big.read_tokens
    assert big.free_search and big.span_answer and mid.span_answer


def test_no_answer_constant() -> None:
    assert NO_ANSWER == "(no answer)"


def test_answer_starts_follow_the_question() -> None:
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import answer_starts

    box = ("PEP: 405\nTitle: Python Virtual Environments\nAuthor: Carl Meyer\nStatus: Final\n"
           "Created: 13-Jun-2011\nPython-Version: 3.3")
    idx = SpanIndex([Source(box, ("pep-0405", "infobox"))])
    # the value of the key the question names
    assert answer_starts(idx, "When was PEP 405 created?", STOPWORDS) == {"13-Jun-2011"}
    # written / proposed: when the document was made
    assert answer_starts(idx, "When was the proposal for virtual environments written?",
                         STOPWORDS) == {"13-Jun-2011"}
    assert answer_starts(idx, "When did Carl Meyer propose venv?", STOPWORDS) == {"13-Jun-2011"}
    assert answer_starts(idx, "What is the status of PEP 405?", STOPWORDS) == {"Final"}
    # who: capitalised, not a label, not a word of the question
    who = answer_starts(idx, "Who wrote PEP 405?", STOPWORDS)
    assert "Carl" in who and "Author" not in who and "PEP" not in who
    assert all(c[:1].isupper() for c in who)
    g = idx.grammar(starts={"Carl"})
    assert g.splitlines()[0] == f'span ::= "Carl" span{sorted(idx.succ).index("Carl")}'


def test_which_x_questions_may_answer_x_and_a_number(coll) -> None:
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import answer_starts, header_starts, keyed_values

    idx = SpanIndex([Source("PEP: 572\nTitle: Assignment Expressions", ("pep-0572", "infobox"))])
    assert answer_starts(idx, "Which PEP introduced the walrus operator?", STOPWORDS) == {"PEP"}
    assert idx.ground("PEP 572").text == "PEP 572"  # the label's colon is dropped
    # 'Which proposal ...' asks for the document as much as 'Which PEP ...': the key that
    # numbers the one read answers, key and all; not a value that merely is a number
    for q in ("Which proposal introduced the walrus operator?",
              "What document introduced the walrus operator?"):
        assert answer_starts(idx, q, STOPWORDS) == {"PEP"}, q
        assert header_starts(idx, q, STOPWORDS) == {"PEP", "572"}, q
        assert keyed_values(idx, q, STOPWORDS) == {"PEP", "572"}, q
    assert not keyed_values(idx, "Which operator did the proposal introduce?", STOPWORDS)
    # the infobox leads when one of its keys names what the question asks for, and comes
    # last when none does (its title's words alone make any infobox look relevant)
    tools = CollectionTools(coll, compact=True, sections_shown=2)
    tools.focus = ["status", "walrus"]
    tools.question_text = "What status does the walrus PEP have?"
    names = tools.sections("pep-0572")
    assert tools.rank_sections("pep-0572", names)[0] == "infobox"
    tools.focus = ["walrus", "operator", "scope"]
    tools.question_text = "Why does the walrus operator leak its target to the outer scope?"
    assert tools.rank_sections("pep-0572", names)[-1] == "infobox"


def test_the_author_answers_who_wrote_the_document_not_a_part_of_it() -> None:
    """The 'Author:' line answers who wrote the document; not who wrote a part of it (one of
    several authors, named in its text), nor a question whose writing verb belongs to another
    clause ('whose module was a way to write CSV files')."""
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import keyed_lines

    idx = SpanIndex([Source("PEP: 3119\nTitle: Introducing Abstract Base Classes\n"
                            "Author: Guido van Rossum, Talin\nCreated: 18-Apr-2007",
                            ("pep-3119", "infobox"))])
    for q in ("Who wrote the abstract base classes PEP?",
              "Who first proposed abstract base classes?",
              # 'that' and an article start what was proposed, not a part written
              "Who proposed that the standard library's classes be abstract?",
              "The abstract base classes proposal was written by whom?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] == 2, q
    for q in ("Who wrote the rationale of the abstract base classes proposal and was said to "
              "deserve co-authorship for it?",
              "Whose Python-DSV module was one of the ways to read and write CSV files?",
              "Besides Ben Hoyt, who helped a lot with the C module behind the iterator?",
              # a name coined, or an implementation, is a part: who came up with it is in
              # the text ('Who came up with abstract base classes?' stays the author)
              'Who came up with the name "abstract base classes"?',
              "Who came up with the first implementation of abstract base classes?",
              # the author does the asking verb: someone else is asked
              "Who did the author talk with about abstract base classes while implementing "
              "them?",
              "Whom does the author of the abstract base classes PEP thank?",
              # ... and so does the document: a person it thanks or cites is in its text
              "Who does the abstract base classes PEP thank for pointing out that the author "
              "had it backwards?",
              "Whom did the abstract base classes proposal cite on interfaces?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] < 2, q
    assert keyed_lines(idx, "Who came up with abstract base classes?", STOPWORDS)[0] == 2
    # designing it is proposing it; a gerund after the verb is the act proposed, not a part
    # written; 'someone proposed ... Who was that?' asks who wrote it
    for q in ("Who designed abstract base classes?",
              "Who proposed putting class documentation into abstract base classes?",
              "Long before Python 3, someone proposed abstract base classes for interfaces. "
              "Who was that?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] == 2, q
    assert keyed_lines(idx, "Long before Python 3, someone proposed abstract base classes. "
                            "Who objected?", STOPWORDS)[0] < 2
    # when the document was written is still its 'Created:' line
    assert keyed_lines(idx, "When was the abstract base classes PEP written?", STOPWORDS)[0] == 2
    # ... but 'proposal' names the document, it does not ask when it was proposed
    assert keyed_lines(idx, "In the abstract base classes proposal, in what year did pip "
                            "deprecate eggs?", STOPWORDS)[0] < 2
    # 'file' before a determiner is filing it ('the file' asks about a file)
    assert keyed_lines(idx, "When did Talin file his proposal for abstract base classes?",
                       STOPWORDS)[0] == 2
    assert keyed_lines(idx, "When is the abstract base classes file read?", STOPWORDS)[0] < 2
    # ... and other ways of making a proposal one's own
    for q in ("Whose idea were abstract base classes?", "Who championed abstract base classes?",
              "Who put together the abstract base classes proposal?",
              "When was the abstract base classes proposal put forward?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] == 2, q
    assert keyed_lines(idx, "Who drew up the abstract base classes proposal?", STOPWORDS)[0] == 2
    # starting the document is writing it; a phase that starts is not
    assert keyed_lines(idx, "Talin started the abstract base classes PEP on what date?",
                       STOPWORDS)[0] == 2
    assert keyed_lines(idx, "On what date did the abstract base classes beta phase start?",
                       STOPWORDS)[0] < 2
    assert keyed_lines(idx, "Who pushed the abstract base classes button?", STOPWORDS)[0] < 2
    # 'Which core developer sponsored ...' asks a person, as 'who' does
    sponsored = SpanIndex([Source("PEP: 604\nAuthor: Philippe PRADOS, Maggie Moss\n"
                                  "Sponsor: Chris Angelico\nStatus: Final",
                                  ("pep-0604", "infobox"))])
    score, values, _ = keyed_lines(sponsored, "Which core developer sponsored the union "
                                   "operator proposal?", STOPWORDS)
    assert score == 2 and values == {"Chris", "Angelico"}
    # ... and so does a 'core dev'
    score, values, _ = keyed_lines(sponsored, "The union operator proposal was written by "
                                   "Maggie Moss, but which core dev sponsored it?", STOPWORDS)
    assert score == 2 and values == {"Chris", "Angelico"}
    # a part written in a clause that only says which document is no part asked about
    assert keyed_lines(idx, "When was the proposal that introduced the abc module written?",
                       STOPWORDS)[0] == 2
    assert keyed_lines(idx, "Who co-wrote, with Guido van Rossum, the abstract base classes "
                            "proposal?", STOPWORDS)[0] == 2
    # ... nor does a verb that says which document: accepting it is not writing it
    assert keyed_lines(idx, "On what date did Guido accept the proposal that introduced "
                            "abstract base classes?", STOPWORDS)[0] < 2
    assert keyed_lines(idx, "When was the proposal that introduced abstract base classes "
                            "written?", STOPWORDS)[0] == 2
    # a name written after the verb that the title does not say is another work
    assert keyed_lines(idx, "Among the tools it surveys, who wrote Heapy?", STOPWORDS)[0] < 2
    assert keyed_lines(idx, "Who wrote Abstract Base Classes?", STOPWORDS)[0] == 2


def test_a_key_that_qualifies_the_asked_noun_otherwise_does_not_answer() -> None:
    """'Python-Version: 3.7' names a version, but not the pip version asked for; a key whose
    value says the question's qualifier ('Rust-Issue: rust-lang/cargo#9069' for 'Which Cargo
    issue') or a question that says the key's ('Which Python version') still is answered."""
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import keyed_lines

    idx = SpanIndex([Source("PEP: 561\nTitle: Distributing and Packaging Type Information\n"
                            "Python-Version: 3.7\nCreated: 09-Sep-2017", ("pep-0561", "infobox"))])
    assert keyed_lines(idx, "From which pip version is the only-if-needed upgrade strategy the "
                            "default for stub packages?", STOPWORDS)[0] < 2
    for q in ("Which Python version did the stub packaging PEP target?",
              "What version was the type information packaging PEP written for?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] == 3, q
    rfc = SpanIndex([Source("Feature Name: sparse-registry\nRust Issue: rust-lang/cargo#9069",
                            ("2789-sparse-index", "infobox"))])
    score, values, _ = keyed_lines(rfc, "Which Cargo issue tracks the sparse index?", STOPWORDS)
    assert score == 3 and any("9069" in v for v in values)
    # a bare key and a noun the question qualifies: 'Type:' is not the content type asked,
    # but is the current one, or the PEP's
    idx = SpanIndex([Source("PEP: 691\nTitle: JSON-based Simple API\nStatus: Accepted\n"
                            "Type: Standards Track", ("pep-0691", "infobox"))])
    assert keyed_lines(idx, "What content type should a client ask for to get the JSON "
                            "flavour of the simple API?", STOPWORDS)[0] < 2
    for q in ("What PEP type is the JSON simple API?", "What type of PEP is the JSON API one?",
              "What is the current status of the JSON simple API proposal?",
              # a word that names the line itself, or '-wise' after the noun asked
              "The JSON simple API PEP: what's its Type header?",
              "Where did the JSON simple API proposal end up, status-wise?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] == 3, q
    # 'the creation date' is the 'Created:' line, whose value is a date
    created = SpanIndex([Source("PEP: 392\nTitle: Python 3.2 Release Schedule\n"
                                "Created: 30-Dec-2009", ("pep-0392", "infobox"))])
    score, values, _ = keyed_lines(created, "What's the creation date on the Python 3.2 "
                                   "release schedule?", STOPWORDS)
    assert score == 3 and values == {"30-Dec-2009"}
    # ... a key of two words is not bare, whatever chunk of it names the noun
    assert keyed_lines(rfc, "What is the tracking issue for the sparse index in the Rust "
                            "repository?", STOPWORDS)[0] == 3
    assert keyed_lines(SpanIndex([Source("Feature Name: raw_identifiers\nStart Date: 2017-09-14",
                                          ("2151-raw-identifiers", "infobox"))]),
                       "What is the feature name of the raw identifiers RFC?", STOPWORDS)[0] == 3


def test_a_name_that_only_says_which_thing_is_asked_does_not_make_its_key_the_answer() -> None:
    """'which Python 2 builtin' asks a builtin; 'Python' says whose, so 'Python-Version:' is
    not what is asked. A release or a version is ('Which Python 2 release'), and so is a line
    the question calls by its name ('its Type header')."""
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import keyed_lines

    idx = SpanIndex([Source("PEP: 3111\nTitle: Simple input built-in in Python 3000\n"
                            "Type: Standards Track\nPython-Version: 3.0", ("pep-3111", "infobox"))])
    assert keyed_lines(idx, "In Python 3000, which Python 2 builtin got renamed into the new "
                            "input()?", STOPWORDS)[0] < 2
    for q in ("Which Python 3 release got the simple input built-in?",
              "Which Python version was the simple input proposal for?",
              "The simple input built-in PEP: what is its Type header?"):
        assert keyed_lines(idx, q, STOPWORDS)[0] == 3, q
    # a release of another series than the line's ('which Python 2 release' and 3.0) is not
    # the one the document targets
    assert keyed_lines(idx, "Which Python 2 release warned about the simple input built-in?",
                       STOPWORDS)[0] < 2
    assert keyed_lines(idx, "Which Python 3 release got the simple input built-in?",
                       STOPWORDS)[0] == 3
    # ('3.0 release' names a release of the line's own series, not a series '0')
    assert keyed_lines(idx, "Which Python 3.0 release had the simple input built-in?",
                       STOPWORDS)[0] == 3


_FILLER = " ".join(f"Filler sentence number {i} talks about weather." for i in range(12))
SPREAD = {"id": "pep-0999", "title": "Frobnication", "date": "2020-01-01", "author": ["A B"],
          "sections": [
              {"heading": "Background", "text": " ".join(
                  ["The frobnicator was slow.", "Caches were discussed at length.",
                   "Locks were many.", "Holding was hard.", "Locks and more locks."] * 3)},
              {"heading": "Cache Design", "text": f"{_FILLER} Each frobnicator cache holds "
               f"its locks for one second. {_FILLER}"},
              {"heading": "Open Questions", "text": "Should the frobnicator keep a cache?"}]}


SURVEY = {"id": "pep-0998", "title": "Gradual Typing Survey", "date": "2015-01-01",
          "author": ["Ann Writer"],
          "infobox": [["Author", "Ann Writer"], ["Status", "Final"]],
          "sections": [
              {"heading": "Abstract", "text": "This PEP surveys gradual typing projects."},
              {"heading": "Reticulated Python", "text": "Reticulated Python by Michael "
               "Vitousek is a different approach to gradual typing."}]}


def test_the_author_of_a_thing_a_section_is_about_is_not_the_document_s(tmp_path: Path
                                                                         ) -> None:
    """'Who is the author of X?' where X is a heading of the document (not its title) asks
    about X's author, which that section says, not the document's 'Author:' line."""
    with sieve_lite.open(build_db(tmp_path / "survey.db", [SURVEY])) as c:
        tools = CollectionTools(c)
        names = tools.sections("pep-0998")
        tools.focus = ["author", "gradual", "typing", "survey"]
        tools.question_text = "Who is the author of the gradual typing survey?"
        assert tools.rank_sections("pep-0998", names)[0] == "infobox"
        tools.focus = ["main", "author", "reticulated", "python"]
        tools.question_text = "Who is the main author of Reticulated Python?"
        order = tools.rank_sections("pep-0998", names)
        assert order[0] == "Reticulated Python" and order[-1] == "infobox"


def test_sections_rank_by_the_sentence_that_says_most_of_the_question(tmp_path: Path) -> None:
    with sieve_lite.open(build_db(tmp_path / "spread.db", [SPREAD])) as c:
        tools = CollectionTools(c)
        q = "How long does a frobnicator cache hold its locks?"
        tools.focus, tools.question_text = ["frobnicator", "cache", "hold", "locks"], q
        names = tools.sections("pep-0999")
        # 'Background' has every word many times over, in different sentences
        assert tools.rank_sections("pep-0999", names)[0] == "Cache Design"
        # a heading the question names is the section it asks about
        tools.question_text = "In the section Open Questions, what is asked of the frobnicator?"
        tools.focus = ["section", "open", "questions", "asked", "frobnicator"]
        assert tools.rank_sections("pep-0999", names)[0] == "Open Questions"


TWINS = {"id": "pep-0997", "title": "Frobnicator Locks", "date": "2015-01-01",
         "author": ["Ann Writer"], "infobox": [["Author", "Ann Writer"]],
         "sections": [
             {"heading": "Discussion", "text": "The frobnicator was settled in May. The lock "
              "was too. The frobnicator was tested. The lock was tested."},
             {"heading": "Acceptance", "text": "The frobnicator lock was settled in June."}]}


def test_between_equal_sections_the_one_whose_heading_the_question_says_leads(
        tmp_path: Path) -> None:
    """'accept' says the heading 'Acceptance' (first five letters): a tie-break between
    sections the question's words match alike (one first by its passage, the other by its
    best sentence)."""
    with sieve_lite.open(build_db(tmp_path / "twins.db", [TWINS])) as c:
        tools = CollectionTools(c)
        names = tools.sections("pep-0997")
        tools.focus = ["frobnicator", "lock", "accepted"]
        tools.question_text = "When was the frobnicator lock accepted?"
        assert tools.rank_sections("pep-0997", names)[0] == "Acceptance"
        tools.focus = ["frobnicator", "lock", "finished"]
        tools.question_text = "When was the frobnicator lock finished?"
        assert tools.rank_sections("pep-0997", names)[0] == "Discussion"


def test_a_heading_is_said_by_the_plural_of_its_word() -> None:
    """'lines' says 'Line' (the style guide's 'Maximum Line Length' for 'How long should
    docstring lines be?'): on five letters alone it did not."""
    from sieve_lite.agent.tools import _heading_said
    from sieve_lite.words import stem5

    assert stem5("lines") == stem5("line") and stem5("accepted") == stem5("acceptance")
    said = _heading_said(["Maximum Line Length", "Documentation Strings"],
                         "How long should docstring lines be?", lambda w: 1.0, frozenset())
    assert said == {"Maximum Line Length": 1 / 3, "Documentation Strings": 0.0}


QUESTIONS = [
    # (question, kind, nouns)
    ("Who is the author of PEP 557?", "who", set()),
    ("In PEP 618, what exception does zip() raise when its arguments differ?", "what",
     {"exception"}),
    ("On what date was PEP 498 created?", "when", {"date"}),
    ("What type of PEP is the docstring conventions document?", "what", {"type"}),
    ("Which Python version did the with statement target?", "what", {"python", "version"}),
    ("How many members does the council have?", "number", set()),
    # a trailing 'these days' is no noun asked; 'those' before the noun is skipped
    ("Is that template still in force, or what is its status these days?", "what",
     {"status"}),
    ("The PEP describes a distribution with boolean switches. What are those switches "
     "called?", "what", {"switches"}),
    # 'Did it get approved?' asks how it ended, as 'Was it ever accepted?' does
    ("Did the proposal to keep static values in dynamic metadata fields get approved?",
     "what", {"status"}),
    # one option and an open other: the thing itself is asked, not a choice of two
    ("Mike Miller's write-up on string interpolation: was it filed as a Standards Track PEP "
     "or as some other kind?", "what", {"type"}),
    # ... as does one option and a question of its own
    ("The steering council election PEP for 2020: is it a process PEP, or what type is it?",
     "what", {"type"}),
]


@pytest.mark.parametrize("question,kind,nouns", QUESTIONS)
def test_what_a_question_asks_for(question, kind, nouns) -> None:
    from sieve_lite.agent.spans import question_target

    t = question_target(question)
    assert (t.kind, set(t.nouns)) == (kind, nouns)


BOX = ("PEP: 618\nTitle: Add Optional Length-Checking To zip\nAuthor: Brandt Bucher, Tony "
       "Lownds\nSponsor: Antoine Pitrou\nStatus: Final\nType: Standards Track\n"
       "Created: 01-May-2020\nPython-Version: 3.10")
KEYED = [
    ("What is the status of PEP 618?", {"Final"}),
    ("What type of PEP is the zip length-checking proposal?", {"Standards", "Track"}),
    ("Who wrote the zip length-checking PEP?", {"Brandt", "Bucher", "Tony", "Lownds"}),
    ("Who came up with strict zip?", {"Brandt", "Bucher", "Tony", "Lownds"}),
    ("Who is the sponsor of PEP 618?", {"Antoine", "Pitrou"}),
    ("When was the zip length-checking PEP created?", {"01-May-2020"}),
    ("Which Python version does the zip length-checking PEP target?", {"3.10"}),
    # a key that only shares a word with the question is not enough
    ("Who is named as the release manager for Python 3.10?", set()),
    ("In which month are Python feature versions released?", set()),
    ("In PEP 618, what exception does zip() raise when its arguments differ?", set()),
]


@pytest.mark.parametrize("question,values", KEYED)
def test_header_lines_that_answer_the_question(question, values) -> None:
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import keyed_values

    idx = SpanIndex([Source(BOX, ("pep-0618", "infobox"))])
    assert keyed_values(idx, question, STOPWORDS) == values


def test_a_header_line_that_names_the_other_document_the_question_asks_for() -> None:
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import keyed_values

    box = ("PEP: 354\nTitle: Enumerations in Python\nAuthor: Ben Finney\nStatus: "
           "Superseded\nCreated: 20-Dec-2005\nSuperseded-By: 435")
    idx = SpanIndex([Source(box, ("pep-0354", "infobox"))])
    # read in the superseded PEP, 'Superseded-By:' names the PEP asked for, not 'PEP: 354'
    assert keyed_values(idx, "Which PEP superseded Ben Finney's proposal for enumerations?",
                        STOPWORDS) == {"435"}
    assert keyed_values(idx, "Which PEP introduced enumerations?", STOPWORDS) == {"354"}
    # the other side of the verb is not asked for by its '-By' key
    assert keyed_values(idx, "Which PEP was superseded by the enum PEP?", STOPWORDS) == \
        {"354"}
    replaces = box.replace("Superseded-By", "Replaces")
    idx = SpanIndex([Source(replaces, ("pep-0354", "infobox"))])
    assert "435" not in keyed_values(idx, "Which PEP replaced Ben Finney's proposal?",
                                     STOPWORDS)


def test_an_answer_from_a_list_is_the_whole_item() -> None:
    idx = SpanIndex([Source(BOX, ("pep-0618", "infobox"))])
    assert idx.item(idx.ground("Tony")) == "Tony Lownds"
    assert idx.item(idx.ground("Bucher")) == "Brandt Bucher"
    assert idx.item(idx.ground("Final")) == "Final"
    prose = SpanIndex([Source("Tony Lownds wrote it, with help.", ("x", "y"))])
    assert prose.item(prose.ground("Tony")) == "Tony"


def test_small_models_answer_only_from_a_header_line_that_names_what_is_asked(coll) -> None:
    # prose: refused for a small model (no answer), taken from a larger one
    q = "Which PEP introduced the walrus operator?"
    ep, _bb, _agent = episode(coll, ["fetch: 1 | (intro)", "answer: the walrus operator"],
                              suggest=False, prose_answers=False, question=q, max_steps=1)
    assert not ep.answered and "header line" in ep.accounting.no_answer
    ep, _bb, _agent = episode(coll, ["fetch: 1 | infobox", "answer: Final"], suggest=False,
                              prose_answers=False,
                              question="What is the status of the walrus operator PEP?")
    assert ep.answer == "Final" and ep.citations == [Citation("pep-0572", "infobox")]


def test_an_answer_with_nothing_of_the_question_near_it_is_refused(coll) -> None:
    ep, _bb, _agent = episode(coll, ["fetch: 1 | infobox", "answer: Final"], suggest=False,
                              max_steps=1, question="In the walrus PEP, what exception is "
                                                    "raised when the target is a tuple?")
    assert not ep.answered


def test_small_models_answer_once_a_key_of_the_question_is_read(coll) -> None:
    ep, bb, agent = episode(coll, ["fetch: 1 | infobox", "answer: Final"], suggest=False,
                            answer_when_keyed=True,
                            question="What is the status of the walrus operator PEP?")
    assert ep.answer == "Final" and ep.citations == [Citation("pep-0572", "infobox")]
    # after the infobox (its 'Status:' names a word of the question) the grammar of the
    # next reply has only the answer, starting at the key's value
    assert agent._answer_now()
    g = agent._answer_grammar().gbnf()
    assert g.startswith("root ::= (answer)\n") and 'span ::= "Final"' in g


def test_answers_of_the_wrong_type_are_no_answer() -> None:
    from sieve_lite.agent.answers import type_mismatch

    assert type_mismatch("PEP 649", "Who co-authored the proposal?")
    assert not type_mismatch("Guido van Rossum", "Who wrote it?")
    assert type_mismatch("Final", "When was it created?")
    assert not type_mismatch("08-Mar-2002", "When was it created?")
    assert not type_mismatch("March 2002", "On what date was it created?")
    assert type_mismatch("Deferred", "On what date was it created?")
    assert not type_mismatch("anything", "Which PEP introduced it?")
    # a leading 'when' clause says when; the question word after its comma asks
    assert not type_mismatch("BerliOS", "When the repository was moving off CVS, which "
                                        "hosting service was suggested instead?")
    assert type_mismatch("BerliOS", "In PEP 347, when was the move off CVS finished?")
    # 'which release' inside a clause about the thing asked does not ask a version
    assert not type_mismatch("getMandatoryRelease()", "Each feature has getOptionalRelease(); "
                             "what's the companion method that says in which release the "
                             "change stops being optional?")
    assert type_mismatch("getMandatoryRelease()", "Which release made it mandatory?")


def test_header_lines_for_whose_where_and_a_named_author() -> None:
    """'Whose proposal' asks the author; 'directory' names no director; 'where was it
    discussed' is the 'Discussions-To:' line; an author the question names is not asked."""
    from sieve_lite.agent.question import STOPWORDS
    from sieve_lite.agent.spans import keyed_lines

    idx = SpanIndex([Source("PEP: 471\nTitle: os.scandir() function -- a better and faster "
                            "directory iterator\nAuthor: Ben Hoyt\nDiscussions-To: "
                            "scandir@python.org\nPython-Version: 3.5\nCreated: 30-May-2014",
                            ("pep-0471", "infobox"))])

    def top(q: str) -> tuple[int, set[str]]:
        got = keyed_lines(idx, q, STOPWORDS)
        return got[0], got[1]

    assert top("os.scandir(), the faster directory iterator — whose proposal was that?") == (
        2, {"Ben", "Hoyt"})
    assert top("os.scandir(), the faster directory iterator — who wrote that?")[0] == 2
    assert top("Where was discussion of the directory iterator supposed to take place?") == (
        2, {"scandir@python.org"})
    # a version is no place; nor is an author's line, though the question says 'authors'
    assert top("Where in Python is the faster directory iterator?")[0] < 2
    assert top("Where did its authors say the directory iterator belongs?")[0] < 2
    # the question names the author: 'whose' then asks about another proposal
    assert top("Ben Hoyt dropped his iterator in favour of a simpler proposal. Whose proposal "
               "was that?")[0] < 2


def test_no_search_when_its_results_could_not_be_read(coll) -> None:
    ep, bb, agent = episode(coll, ["fetch: 1 | (intro)", "answer: x\ncite: 1 | (intro)"],
                            suggest=False, max_steps=1, span_answer=False,
                            question="Who proposed the walrus?")
    agent.st.read.clear()
    agent.st.done.clear()
    agent.acc.steps = 0  # one step left, nothing read: fetch only, no search
    g = agent._grammar().gbnf()
    assert g.startswith("root ::= thought? (fetch | answer)") or "search ::=" not in g
    assert "fetch ::=" in g


# the title and every section say the question's words; no sentence says the thing
OVERVIEW = {"id": "pep-0998", "title": "Frobnicator Overview", "date": "2020-01-01",
            "author": ["C D"], "sections": [
                {"heading": "Parts", "text": "The frobnicator is one part. A cache is "
                 "another. Locks exist."},
                {"heading": "More", "text": "Locks are listed elsewhere. Caches too."}]}


def test_the_first_read_is_the_card_whose_sentence_says_the_thing(tmp_path: Path) -> None:
    """The ranker orders whole documents: a later card whose best passage or sentence
    scores half as much again as the first card's is read first, and the step says why."""
    with sieve_lite.open(build_db(tmp_path / "first.db", [OVERVIEW, SPREAD, *MINI_DOCS])) as c:
        tools = CollectionTools(c)
        tools.question_text = "How long does a frobnicator cache hold its locks?"
        tools.focus = ["frobnicator", "cache", "hold", "locks"]
        doc, why = tools.first_to_read(["pep-0998", "pep-0999"])
        assert doc == "pep-0999" and why.startswith("card 2's best passage")
        assert tools.first_to_read(["pep-0999", "pep-0998"]) == ("pep-0999", "")
        # a close second stays second
        tools.focus = ["frobnicator"]
        assert tools.first_to_read(["pep-0998", "pep-0999"]) == ("pep-0998", "")
        tools.focus = []
        assert tools.first_to_read(["pep-0998", "pep-0999"]) == ("pep-0998", "")
    # in the loop: the engine's first read (a small model's) is that card, and says why
    with sieve_lite.open(tmp_path / "first.db") as c:
        bb = ScriptedBackbone(["answer: one second\ncite: pep-0999 | Cache Design"] * 3)
        ep = Agent(bb, CollectionTools(c, "sieve"), "manual",
                   Budgets(engine_first_read=True, plan=True, max_steps=3)).run(
            "How long does a frobnicator cache hold its locks?")
        assert [h["id"] for h in ep.steps[0].info["hits"]][:2] == ["pep-0998", "pep-0999"]
        first = ep.steps[1]
        assert first.info.get("engine") and first.action.doc == "pep-0999"
        assert first.info["lead"].startswith("card 2's best passage")


def test_relation_words_stand_for_the_header_keys_of_a_link() -> None:
    """'prerequisite' says 'Requires', 'took its place' says 'Superseded-By'; 'dependency'
    names a thing, not the link ('the external dependency registry')."""
    from sieve_lite.agent.question import relation_stems

    assert "requi" in relation_stems("Which other PEP did it list as a prerequisite?")
    took = relation_stems("The spec isn't current anymore. Which PEP took its place?")
    assert "super" in took and "repla" not in took
    assert "requi" not in relation_stems("Where does the external dependency registry live?")
    assert "requi" in relation_stems("It depends on which earlier PEP?")


LINKED_BOX = ("PEP: 500\nTitle: A protocol for delegating datetime methods\nAuthor: Alexander "
              "Belopolsky, Tim Peters\nStatus: Rejected\nType: Standards Track\nRequires: 495\n"
              "Created: 08-Aug-2015\n")


def test_a_link_said_in_other_words_answers_which_document() -> None:
    """'Which other PEP did it list as a prerequisite?' is answered by 'Requires: 495' (a
    line naming another document, score 4), and the loop does not go on to read 495: the
    number is the answer (``hops.asks_for_link``); 'Who wrote the PEP it requires?' still
    reads it."""
    from sieve_lite.agent.hops import asks_for_link
    from sieve_lite.agent.question import STOPWORDS, analyze
    from sieve_lite.agent.spans import Source, SpanIndex, header_starts, keyed_lines

    idx = SpanIndex([Source(LINKED_BOX, ("pep-0500", "infobox"))], max_chunks=1 << 30)
    q = "Which other PEP did the datetime protocol list as a prerequisite?"
    assert keyed_lines(idx, q, STOPWORDS)[:2] == (4, {"495"})
    assert header_starts(idx, q, STOPWORDS) == {"495"}
    assert asks_for_link(analyze(q), "pep-0500")
    assert not asks_for_link(analyze("Who wrote the PEP the datetime protocol requires?"),
                             "pep-0500")
    # without the relation word, 'PEP:' is the noun asked and its value the document's own
    assert keyed_lines(idx, "Which PEP is the datetime protocol?", STOPWORDS)[1] != {"495"}
    # the relation said outright, the document the verb's subject: the line answers too;
    # the document the verb's object ('Which PEP requires it?') it does not
    q = "The datetime protocol builds on an earlier PEP. Which one does it list as required?"
    assert keyed_lines(idx, q, STOPWORDS)[:2] == (4, {"495"})
    assert keyed_lines(idx, "Which PEP requires the datetime protocol?", STOPWORDS)[0] < 4
