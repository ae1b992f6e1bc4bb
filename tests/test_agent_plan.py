"""The query planner (agent/plan.py), links between documents (agent/hops.py), typed answers
and the JSON of an episode without an answer -- on collections built from the fixtures (PEPs,
Rust RFCs, structured Wikipedia, 2Wiki) and on small JSON Lines collections."""

from __future__ import annotations

from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.agent.answers import type_mismatch, whole_title
from sieve_lite.agent.backbones import ScriptedBackbone
from sieve_lite.agent.hops import references
from sieve_lite.agent.loop import Agent, Budgets
from sieve_lite.agent.plan import clauses, date_clauses, plan, title_words
from sieve_lite.agent.spans import question_target
from sieve_lite.agent.tools import CollectionTools
from tests.test_agent_loop import build_db

DATA = Path(__file__).resolve().parent / "data"


def _build(tmp: Path, name: str, src: Path, fmt: str | None = None) -> Path:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    out = tmp / f"{name}.db"
    docs = iter_documents([src], fmt) if fmt else iter_documents([src])
    build_collection(docs, out, embed=False, quiet=True, source_label=name)
    return out


@pytest.fixture(scope="module")
def dbs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("plan")
    return {"peps": _build(tmp, "peps", DATA / "corpora" / "peps"),
            "rfcs": _build(tmp, "rfcs", DATA / "corpora" / "rust-rfcs"),
            "wiki": _build(tmp, "wiki", DATA / "structured" / "wikipedia", "wikipedia"),
            "qa": _build(tmp, "qa", DATA / "qa" / "2wiki" / "corpus.json", "2wiki")}


def test_date_constrained_question_becomes_author_date_and_title(dbs: dict) -> None:
    q = ("In September 2023, Jelle Zijlstra created a PEP whose title mentions 'governance'; "
         "what is its title?")
    with sieve_lite.open(dbs["peps"]) as c:
        p = plan(c, q)
        assert p is not None and p.admitted == 1
        for part in ('"jelle zijlstra"[author]', "date[2023-09]", "governance[title]"):
            assert part in p.query
        assert [h.id for h in c.search(p.query, k=3).results] == ["pep-0729"]


def test_a_name_is_an_author_clause_only_when_the_index_holds_it(dbs: dict) -> None:
    with sieve_lite.open(dbs["peps"]) as c:
        kinds = {cl.kind for cl in clauses(c, "Did Monty Python write a PEP in 2023?")}
        assert "author" not in kinds and "date" in kinds
        found = clauses(c, "Which PEP did Jelle Zijlstra write?")
        assert [cl.bql for cl in found if cl.kind == "author"] == ['"jelle zijlstra"[author]']
        # a lone surname said right before the writing verb, when the index holds it
        found = clauses(c, "When Zijlstra proposed governance changes, what was the title?")
        assert [cl.bql for cl in found if cl.kind == "author"] == ["zijlstra[author]"]
        for q in ("When Monty proposed governance changes, what was the title?",
                  "When was the PEP that records the Zen of Python created?"):
            assert not [cl for cl in clauses(c, q) if cl.kind == "author"], q


def test_an_author_named_without_a_middle_initial_is_found(dbs: dict) -> None:
    """'Fred Drake's idea of weak references' names the author 'Fred L. Drake, Jr.': the
    phrase admits nothing, one word apart (NEAR/1) does; an idea or a plan of a person is
    theirs as a PEP is."""
    from sieve_lite.agent.question import analyze

    q = "Fred Drake's idea of weak references: what did it call the objects?"
    assert analyze(q).authors == ("Fred Drake",)
    with sieve_lite.open(dbs["peps"]) as c:
        got = [cl.bql for cl in clauses(c, q) if cl.kind == "author"]
        assert got == ["NEAR/1(fred drake)[author]"]
        assert {h.id for h in c.search(got[0], k=5).results} == {"pep-0160", "pep-0205"}


def test_document_numbers_become_identifier_clauses(dbs: dict) -> None:
    with sieve_lite.open(dbs["peps"]) as c:
        p = plan(c, "What is the status of PEP 729?")
        assert p is not None and p.query.startswith('"pep 729"[infobox]') and p.admitted == 1
        # 'Python 3000' names no single document: no identifier clause
        assert not [cl for cl in clauses(c, "Was Python 3000 planned?") if cl.kind == "id"]
    with sieve_lite.open(dbs["rfcs"]) as c:  # 'RFC PR: rust-lang/rfcs#1644'
        p = plan(c, "What feature name does RFC 1644 give?")
        assert p is not None and p.admitted == 1
        assert c.search(p.query, k=1).results[0].id == "1644-default-and-expanded-rustc-errors"


def test_quoted_titles_and_collections_without_those_fields(dbs: dict) -> None:
    with sieve_lite.open(dbs["wiki"]) as c:
        p = plan(c, 'Who won the "2020 United States presidential election"?')
        assert p is not None and p.query.startswith('"2020 united states presidential '
                                                    'election"[title]')
        assert c.search(p.query, k=1).results[0].id == \
            "2020_United_States_presidential_election"
    with sieve_lite.open(dbs["qa"]) as c:  # title and body only: no author, no date
        found = clauses(c, "In March 1990, William the Silent met whom?")
        assert all(cl.kind not in ("author", "date") for cl in found)


def test_date_phrases() -> None:
    got = [c.bql for c in date_clauses("Between 2001 and 2005, after 1999, in May 2020, 1988")]
    assert got == ["date[2001..2005]", "date[2020-05]", "date[>1999]", "date[1988]"]
    assert [c.bql for c in date_clauses("What changed before 2010?")] == ["date[<2010]"]


def test_a_question_without_a_stated_constraint_still_gets_a_plan(dbs: dict) -> None:
    """No name, date, number or quote: the plan is the question's content words (never its
    stopwords), ranked; a name written with capitals selects; a run of words that is a
    title here becomes a title phrase, checked against the ranker; words that together
    say most of one title select it."""
    with sieve_lite.open(dbs["peps"]) as c:
        p = plan(c, "which proposal talks about how numbers get rounded")
        assert p is not None and p.query == "proposal OR numbers"  # words the index holds
        assert not {"which", "how"} & set(p.query.lower().split())
        # 'changed ... division' says two of the three words of 'Changing the Division
        # Operator': the title's words select it, stems and all
        p = plan(c, "which proposal changed how division works")
        assert p is not None and p.query == "chang* division[title]"
        assert "in one title here" in p.why
        assert [r.id for r in c.search(p.query, k=3).results] == ["pep-0238"]
        # two words of 'Network Security Enhancements for Python 2.7.x' do not name it
        assert title_words(c, "How does a network check security?") == []
        p = plan(c, "Who wrote the proposal for changing the division operator?")
        assert p is not None and '"changing the division operator"[title]' in p.query
        assert c.search(p.query, k=1).results[0].id == "pep-0238"
        assert "is a title here" in p.why
        # no question word at all: no plan (step 0 then ranks the words)
        assert plan(c, "what is it?") is None


def test_a_date_only_dates_the_document_when_the_question_says_so(dbs: dict) -> None:
    with sieve_lite.open(dbs["peps"]) as c:
        stated = {cl.bql for cl in clauses(c, "What did the 2017 proposal about dataclasses "
                                            "say?")}
        assert "date[2017]" in stated
        about = {cl.bql for cl in clauses(c, "What would the Python released in 2026 be "
                                           "called?")}
        assert "date[2026]" not in about


LINKED = [
    {"id": "pep-0100", "title": "Old Frobnication", "date": "2001-03-04", "author": ["Ann Old"],
     "infobox": [["PEP", "100"], ["Status", "Superseded"], ["Created", "04-Mar-2001"],
                 ["Superseded-By", "200"], ["Requires", "300"]],
     "sections": [{"heading": "Abstract", "text": "Frobnication, see PEP 300 for the base."}]},
    {"id": "pep-0200", "title": "New Frobnication", "date": "2010-05-06", "author": ["Bo New"],
     "infobox": [["PEP", "200"], ["Title", "New Frobnication"],
                 ["Status", "Final"], ["Created", "06-May-2010"]],
     "sections": [{"heading": "Abstract", "text": "Frobnication done right."}]},
    {"id": "pep-0300", "title": "Base Layer", "date": "2000-01-02", "author": ["Cy Base"],
     "infobox": [["PEP", "300"], ["Status", "Final"], ["Created", "02-Jan-2000"]],
     "sections": [{"heading": "Abstract", "text": "The base layer."}]},
]
Q2 = "PEP 100 was superseded by another PEP. When was that PEP created?"


@pytest.fixture(scope="module")
def linked_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("hops") / "linked.db", LINKED)


def test_references_resolve_ids_and_know_what_the_question_asks(linked_db: Path) -> None:
    with sieve_lite.open(linked_db) as c:
        text = c.fetch("pep-0100", "infobox").text
        refs = references(c, text, "pep-0100", Q2)
        assert [(r.doc, r.related) for r in refs] == [("pep-0200", True), ("pep-0300", False)]
        assert refs[0].query == '"pep 200"[infobox]' and refs[0].key == "Superseded-By"
        # 'successor' stands for superseded; a prose mention is a reference too
        assert references(c, text, "pep-0100", "Who wrote its successor?")[0].related
        # the direction of "replaced by" and "supersedes" picks the header that names it
        for q, want in [("PEP 100 was replaced by another PEP. Who wrote it?", True),
                        ("PEP 100 was superseded by a later PEP. Who wrote it?", True),
                        ("Which PEP is the replacement of PEP 100?", True),
                        ("PEP 100 replaced an earlier PEP. Who wrote that one?", False),
                        ("PEP 100 supersedes which PEP?", False)]:
            got = references(c, text, "pep-0100", q)
            assert got[0].related is want and got[0].doc == "pep-0200", q
        new = c.fetch("pep-0200", "infobox").text + "\nReplaces: 100"
        for q, want in [("PEP 200 replaced an earlier PEP. When was that PEP created?", True),
                        ("Which PEP did PEP 200 supersede?", True),
                        ("PEP 200 supersedes an older PEP. Who wrote it?", True),
                        ("PEP 200 was replaced by another PEP. Who wrote it?", False)]:
            got = references(c, new, "pep-0200", q)
            assert [(r.doc, r.related) for r in got] == [("pep-0100", want)], q
        prose = references(c, c.fetch("pep-0100", "Abstract").text, "pep-0100", Q2)
        assert [(r.doc, r.key, r.related) for r in prose] == [("pep-0300", "", False)]


class _GrammarScripted(ScriptedBackbone):
    """Scripted replies, but the loop builds the grammar of each call (to inspect it)."""

    supports_grammar = True


def test_two_hops_the_link_is_followed_and_answered_from(linked_db: Path) -> None:
    bb = _GrammarScripted(["fetch: 1 | infobox", "fetch: 1 | infobox",
                           "answer: 06-May-2010\ncite: pep-0200 | infobox"])
    bud = Budgets(k=3, max_steps=3, compact=True, follow_links=True, read_before_search=True,
                  span_answer=False, answer_when_keyed=False, thought_chars=0)
    with sieve_lite.open(linked_db) as c:
        tools = CollectionTools(c, "sieve", ranker="bm25", compact=True)
        ep = Agent(bb, tools, "manual", bud).run(Q2)
    assert ep.steps[0].info["plan"].startswith('"pep 100"[infobox]')
    # the read names the link the question asks about: the engine searches it at once,
    # and the next reply can only read it (no answer, no other search)
    assert ep.steps[1].info["hop"] == {"doc": "pep-0200", "query": '"pep 200"[infobox]',
                                       "total": 1, "hits": ["pep-0200"]}
    assert "Superseded-By: pep-0200" in ep.steps[1].observation
    g = bb.calls[1]["grammar"]
    assert "root ::= (fetch)" in g and "pep-0100" not in g
    assert ep.accounting.searches == 2 and ep.accounting.stop_reason == "answer"
    assert ep.answer == "06-May-2010" and [x.doc for x in ep.citations] == ["pep-0200"]


def test_a_link_asked_for_is_the_answer_not_a_hop(linked_db: Path) -> None:
    """'Which PEP took its place?' asks for the number on 'Superseded-By: 200': the read
    is not followed to PEP 200 (whose own lines would then be offered), and the line's
    value is accepted."""
    q = "Old Frobnication, PEP 100, is not current anymore. Which PEP took its place?"
    bb = ScriptedBackbone(["fetch: 1 | infobox", "answer: 200\ncite: pep-0100 | infobox"])
    bud = Budgets(k=3, max_steps=2, compact=True, follow_links=True, span_answer=False,
                  thought_chars=0)
    with sieve_lite.open(linked_db) as c:
        ep = Agent(bb, CollectionTools(c, "sieve", ranker="bm25", compact=True), "manual",
                   bud).run(q)
    read = next(s for s in ep.steps if s.info.get("section") == "infobox")
    assert "hop" not in read.info and read.info["references"][0]["related"]
    assert ep.answer == "200" and [x.doc for x in ep.citations] == ["pep-0100"]


def test_an_unfollowed_link_gives_no_answer(linked_db: Path) -> None:
    bb = ScriptedBackbone(["fetch: 1 | infobox", "answer: 04-Mar-2001\ncite: pep-0100 | infobox"])
    bud = Budgets(k=3, max_steps=1, compact=True, follow_links=True, span_answer=False,
                  thought_chars=0)
    with sieve_lite.open(linked_db) as c:
        ep = Agent(bb, CollectionTools(c, "sieve", ranker="bm25"), "manual", bud).run(Q2)
    assert not ep.answered and "pep-0200" in ep.accounting.no_answer
    out = ep.to_json()
    assert out["answer"] is None and out["answered"] is False
    assert "pep-0200" in out["no_answer"]


def test_typed_answers() -> None:
    titles = ("New Frobnication",)
    assert type_mismatch("Bo New", "What is its title?", titles)
    assert not type_mismatch("New Frobnication", "What is its title?", titles)
    assert type_mismatch("Final", "Which Python version does it target?")
    assert not type_mismatch("3.8", "Which Python version does it target?")
    # 'whose' in a relative clause does not make it a 'who' question
    q = "In 2010, Bo New created a PEP whose title mentions 'new'; what is its title?"
    assert question_target(q).kind == "what" and question_target(q).nouns == {"title"}
    assert whole_title("New", q, titles) == "New Frobnication"
    assert whole_title("New", "Who wrote it?", titles) == "New"


def test_a_title_that_starts_with_a_word_of_the_question_is_accepted(linked_db: Path) -> None:
    """Small models answer only header values that name what is asked; a whole title asked
    for is one, even when its first word is the question's ('New' below)."""
    q = "In May 2010, Bo New created a PEP whose title mentions 'new'; what is its title?"
    bb = ScriptedBackbone(["fetch: 1 | infobox", "answer: New Frobnication", "answer: x"])
    bud = Budgets(k=3, max_steps=2, compact=True, prose_answers=False, thought_chars=0)
    with sieve_lite.open(linked_db) as c:
        tools = CollectionTools(c, "sieve", ranker="bm25", compact=True)
        ep = Agent(bb, tools, "manual", bud).run(q)
    assert '"bo new"[author]' in ep.steps[0].info["plan"]
    assert ep.answer == "New Frobnication", [s.error for s in ep.steps]


def test_larger_models_keep_their_own_queries(linked_db: Path) -> None:
    """A model with free BQL may write its own query beside the planner's ones."""
    bb = ScriptedBackbone(["search: frobnication[title] AND date[2010]", "fetch: 1 | infobox",
                           "answer: Final\ncite: pep-0200 | infobox"])
    with sieve_lite.open(linked_db) as c:
        ep = Agent(bb, CollectionTools(c, "sieve", ranker="bm25"), "manual",
                   Budgets(span_answer=False)).run("What is the status of the 2010 "
                                                   "frobnication PEP?")
    assert ep.steps[0].info.get("plan", "").startswith("date[2010]")
    assert ep.steps[1].info["total"] == 1 and ep.answer == "Final"
    assert ep.accounting.fields.get("date", 0) >= 1


def test_title_words_may_be_words_a_quarter_of_the_texts_use(dbs: dict) -> None:
    """'main' is in 5 of the 20 fixture PEPs' texts and 'special' in 6: more than a keyword
    may be (``MAX_SELECT_SHARE``), but few enough to make a title with the question's other
    words ('Special __main__() function in modules'). 'python', in 19, makes none."""
    from sieve_lite.agent import plan as planner
    from sieve_lite.agent.queries import admits

    question = "Who wanted modules to have a main that is a function?"
    with sieve_lite.open(dbs["peps"]) as c:
        assert admits(c, "main") / c.documents > planner.MAX_SELECT_SHARE
        got = title_words(c, question)
        assert [x.bql for x in got] == ["modules main function[title]"]
        p = plan(c, question)
        assert p is not None and [r.id for r in c.search(p.query, k=3).results] == ["pep-0299"]
        # 'python' (19 of 20) and 'release' (8) together are in three titles, but neither
        # is a word few texts use
        assert title_words(c, "Which python release came first?") == []


def test_a_whole_title_is_found_when_the_ranker_rates_others(dbs: dict) -> None:
    """A run of three words or more that is a whole title ('keyword only arguments' is
    *Keyword-Only Arguments*) names that document even when the ranker, misled by the
    question's other words, rates other documents first; two words, or part of a title, do
    not (a title phrase must then name a document the ranker rates)."""
    from sieve_lite.agent.plan import found_phrases

    elsewhere = ["pep-0226", "pep-0251"]
    with sieve_lite.open(dbs["peps"]) as c:
        got = found_phrases(c, "Who proposed changing the division operator?", good=elsewhere)
        assert [cl.bql for cl in got] == ['"changing the division operator"[title]']
        assert found_phrases(c, "Who proposed dict comprehensions?", good=elsewhere) == []
        assert found_phrases(c, "Who wrote the 2.2 release schedule?", good=["pep-0238"]) == []


def test_the_version_asked_is_no_title_phrase() -> None:
    """'which Python release' says what the answer is, not which document: 'Coordinated Python
    release' holds the phrase and is another proposal (shipped PEP collection)."""
    from sieve_lite.agent.plan import found_phrases

    shipped = Path(__file__).resolve().parents[1] / "collections" / "peps.db"
    question = ("Showing DeprecationWarning by default for code that runs in __main__: which "
                "Python release was that change targeted for?")
    with sieve_lite.open(shipped) as c:
        assert found_phrases(c, question) == []
        p = plan(c, question)
        assert p is not None and "deprecationwarning" in p.query
        # ... a phrase that is not only the version asked is still found
        assert [x.bql for x in found_phrases(c, "Who wrote the coordinated Python release "
                                                "proposal?")] == [
            '"coordinated python release"[title]']


def test_a_short_quoted_value_with_a_number_is_no_title(dbs: dict) -> None:
    """'a version written like 'v1.0'' quotes an example: a title or heading that happens to
    hold it ('... to Python 2.7') names another thing, so the quote is a phrase anywhere; a
    quoted title with a number is still a title."""
    with sieve_lite.open(dbs["peps"]) as c:
        got = [cl.bql for cl in clauses(c, "What must tools do with a version like '2.7'?")]
        assert got == ['"2 7"']
        got = [cl.bql for cl in clauses(c, "Which PEP is 'Python 2.2 Release Schedule'?")]
        assert got == ['"python 2 2 release schedule"[title]']


def test_a_term_with_a_one_letter_part_is_searched_whole(dbs: dict) -> None:
    """'f-strings', 't-strings', 'C-extension': the letter is no word alone (a one-letter
    word selects nothing), so the term is a phrase anywhere, not a title the letter's
    absence makes look like another document's."""
    from sieve_lite.agent.question import analyze

    assert analyze("Who added f-strings and t-strings?").lettered == ("f-strings", "t-strings")
    assert analyze("Was x86-64 or a co-authored PEP first?").lettered == ()
    with sieve_lite.open(dbs["peps"]) as c:
        p = plan(c, "Which proposal discusses a C-extension module?")
        assert p is not None and p.query.startswith('"c extension"')
        assert "'C-extension' as written" in p.why
        assert [r.id for r in c.search(p.query, k=3).results] == ["pep-0680"]


def test_a_function_word_written_as_code_is_searched_for(dbs: dict) -> None:
    """'with', 'is', 'for' are stopwords, but 'the with statement' and 'the 'is' operator'
    name code: the word is searched for (PEP 343 is 'The "with" Statement')."""
    from sieve_lite.agent.question import analyze

    assert "with" in analyze("Which PEP introduced the 'with' statement?").content
    assert "with" in analyze("What does the with statement call on exit?").content
    assert {"is", "for"} <= set(analyze("Was `is` or the async for loop added first?").content)
    assert "with" not in analyze("Who came up with the statement?").content
    assert "for" not in analyze("What is the operator for matrix multiplication?").content
    with sieve_lite.open(dbs["peps"]) as c:
        p = plan(c, "What does the with statement call on exit?")
        assert p is not None and "with" in p.query.split()


def test_the_dense_ranker_reads_the_question_a_plan_was_made_from(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan keeps the question's words, not its sentence; hybrid ranking embeds the
    question with them. On the shipped collection (real MiniLM vectors), the words alone put
    'Extended Iterable Unpacking' outside the first card; with the question it is first."""
    import sieve_lite.rank as rk
    from sieve_lite.agent.plan import planned_search

    embedded: list[str] = []
    real = rk.embed_query
    monkeypatch.setattr(rk, "embed_query", lambda c, text: (embedded.append(text),
                                                           real(c, text))[1])
    shipped = Path(__file__).resolve().parents[1] / "collections" / "peps.db"
    q = "Which PEP proposed the catch-all starred name in unpacking, as in a, *b, c = range(5)?"
    with sieve_lite.open(shipped) as c:
        tools = CollectionTools(c, "sieve")
        assert tools.ranker == "hybrid"
        got = planned_search(tools, q, 3)
        assert got is not None
        assert got[0].hits[0].id == "pep-3132"
        assert embedded and all(text.startswith(q) for text in embedded)
        # a search the model writes has no question behind it: its words are embedded alone
        embedded.clear()
        tools.search("starred unpacking", 3)
        assert embedded == ["starred unpacking"]


def test_a_number_beside_a_title_phrase_picks_the_numbered_title(tmp_path: Path) -> None:
    """'pickle protocol 4' is 'Pickle protocol version 4': the phrase alone admits protocol
    5's title too, and the number, written beside it, tells them apart. A number no title of
    the phrase holds changes nothing."""
    filler = [{"id": f"doc-{i}", "title": f"Unrelated proposal {i}",
               "sections": [{"heading": "Abstract", "text": f"Something else entirely, {i}."}]}
              for i in range(6)]
    docs = [{"id": "pep-0574", "title": "Pickle protocol 5 with out-of-band data",
             "sections": [{"heading": "Abstract", "text": "Frames of pickle data are large."}]},
            {"id": "pep-3154", "title": "Pickle protocol version 4",
             "sections": [{"heading": "Framing", "text": "The frame size takes 8 bytes."}]},
            *filler]
    db = build_db(tmp_path / "pickle.db", docs)
    with sieve_lite.open(db) as c:
        p = plan(c, "How many bytes does pickle protocol 4 use to store a frame's size?")
        assert p is not None and '"pickle protocol"[title] AND 4[title]' in p.query
        assert [h.id for h in c.search(p.query, k=3).results] == ["pep-3154"]
        p = plan(c, "How many bytes does pickle protocol 7 use to store a frame's size?")
        assert p is not None and "7[title]" not in p.query


def test_the_ranking_words_never_drop_the_document_the_selection_ranks_first(
        tmp_path: Path) -> None:
    """The question's other words rank the selection as an OR group, which also selects. The
    PEP that proposed concurrent.futures says 'proposes', neither 'wrote' nor 'proposal':
    the group would drop it although `concurrent AND futures` ranks it first. Then the
    selection's own word joins the group, which admits what the selection admits."""
    filler = [{"id": f"doc-{i}", "title": f"Unrelated proposal {i}",
               "sections": [{"heading": "Abstract", "text": f"A proposal about thing {i}."}]}
              for i in range(10)]
    docs = [{"id": "pep-3148", "title": "futures - execute computations asynchronously",
             "sections": [{"heading": "Abstract", "text": "This PEP proposes a design for a "
                           "package, concurrent.futures, that evaluates callables with "
                           "futures. The concurrent.futures module holds futures."}]},
            {"id": "pep-3156", "title": "Asynchronous IO Support Rebooted",
             "sections": [{"heading": "Abstract", "text": "This proposal wrote an event loop; "
                           "concurrent.futures is mentioned once."}]},
            *filler]
    db = build_db(tmp_path / "futures.db", docs)
    with sieve_lite.open(db) as c:
        p = plan(c, "Who wrote the proposal for concurrent.futures?")
        assert p is not None and p.query.startswith("concurrent AND futures AND (")
        assert [h.id for h in c.search(p.query, k=3, ranker="bm25").results][0] == "pep-3148"
