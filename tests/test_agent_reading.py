"""Questions as people ask them: one reading of the question (agent/question.py), prose
narrowed to candidate answers (agent/read.py), the model's choice or its abstention
(agent/choice.py), comparisons (agent/compare.py) and bridges (agent/bridge.py).

The comparisons and bridges run whole episodes on a lexical collection built from the 2Wiki
fixture: the engine reads along its route and decides, so no model reply is scripted (a
scripted backbone with no replies fails the test if the loop asks it anything)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import sieve_lite
from sieve_lite.agent.backbones import ScriptedBackbone
from sieve_lite.agent.bridge import Bridge, entity, relations
from sieve_lite.agent.choice import PLACED_BOOST, Choice, choose, combine, decide
from sieve_lite.agent.compare import dates_in, is_comparison, shared, subjects
from sieve_lite.agent.compare import decide as compare
from sieve_lite.agent.question import Question, analyze
from sieve_lite.agent.read import (
    Candidate,
    Reading,
    Sentence,
    _inflects,
    extract,
    nlp,
    read_for,
    split_sentences,
)
from sieve_lite.agent.run import run_question
from sieve_lite.agent.steps import NO_ANSWER

DATA = Path(__file__).resolve().parent / "data"


# ------------------------------------------------------------------------- the question
@pytest.mark.parametrize("question, kind, nouns", [
    ("Who wrote the Zen of Python?", "who", set()),
    ("How long may a line be under the style guide?", "number", set()),
    ("Which new type slot are __del__ methods mapped to?", "what", {"slot"}),
    ("Which Python version first shipped the logging package?", "what", {"python", "version"}),
    # a number inside the noun phrase qualifies it: 'Python 2 release' is a Python release
    ("Which Python 2 release finally got dict comprehensions?", "what", {"python", "release"}),
    ("Which environment variable turns off the colours?", "what", {"environment", "variable"}),
    ("Which PEP moved f-strings into the grammar?", "what", {"pep"}),
    # a pronoun starts the clause after the noun asked ('the last year you can store')
    ("What's the last year you can store in it?", "what", {"last", "year"}),
    ("What was the default it replaced?", "what", {"default"}),
    ("What CBS-affiliated station serves Pontotoc County?", "what", {"station"}),
    ("What kind of quotes should surround a docstring?", "what", {"quotes"}),
    ("Which JavaScript feature inspired the tag prefixes?", "what", {"javascript", "feature"}),
    ("What became of the proposal to add a switch statement?", "what", {"status"}),
    ("Whatever happened to the idea of writing ranges as [1:10]?", "what", {"status"}),
    ("What was the outcome of the proposal to seed random from the OS?", "what", {"status"}),
    ("What ended up happening to the proposal for a do-while loop?", "what", {"status"}),
    # a leading 'when' clause whose question word comes later in the main clause
    ("When the slot returned a Py_ssize_t, len() of a huge string got clipped at what number?",
     "number", {"number"}),
    ("When hosting was removed, users hit errors and then needed which second pip flag?",
     "what", {"flag"}),
    # 'why' and 'how' after a verb open a clause the question is about, unless the verb
    # comes after them ('how was it supposed to'); 'how many' asks wherever it stands
    ("Explaining why Python 3000 would evolve, Guido shares his views on rewrites with whom?",
     "who", set()),
    ("Which git mechanism remembers how you resolved a conflict?", "what", {"git", "mechanism"}),
    ("In the design spec, how was a module supposed to announce its markup?", "why", set()),
    ("The arena where the team played can seat how many people?", "number", set()),
    # a dash sets off the question from what it is about; an 'option' that is a question
    # word names nothing to choose
    ("With `print >> f, x`, what happens if f is None — where does the output end up?",
     "where", set()),
    ("The translations proposal — is it Standards Track, Informational, or which type?",
     "what", {"type"}),
    ("What kind of PEP is the guidance on the bare python command?", "what", {"type"}),
    # ... and the other ways people ask where a proposal ended up
    ("Where does the frozen mapping proposal stand now?", "what", {"status"}),
    ("Her 2006 idea for a make statement -- did it go anywhere?", "what", {"status"}),
    ("Did the idea of a callable module ever get accepted?", "what", {"status"}),
    ("What is the state of the frozen mapping proposal?", "what", {"status"}),
    ("Is the frozen mapping PEP still a draft?", "what", {"status"}),
    ("Was the callable modules proposal rejected?", "what", {"status"}),
    ("Where does the frozen mapping type live?", "where", set()),
    ("Was the film rejected by the studio?", "yesno", set()),
    ("Did the callable module idea get a reference implementation?", "yesno", set()),
    # two questions: the last says what is asked ('how' alone asks for a way)
    ("How does the launcher see that a venv is active? Which environment variable does it "
     "read?", "what", {"environment", "variable"}),
    ("Why was the uniq() idea dropped? Which newly added module made it moot?", "what",
     {"module"}),
    # ... but a quoted title's question mark ends no question
    ('How many periods in office were held by the premier who led the "Who? Who?" '
     "ministry?", "number", set()),
    ("What's the default relative tolerance that isclose() uses?", "what", {"tolerance"}),
    ("Where was the father of Sehzade Murad born?", "where", set()),
    ("Is PEP 8 still active?", "yesno", set()),
    ("Was Ausaf Ali or Steven Perry born first?", "choice", set()),
    # '-wise' after a noun asks for it
    ("Where did the frozen mapping proposal end up, status-wise?", "what", {"status"}),
])
def test_what_a_question_asks(question: str, kind: str, nouns: set) -> None:
    target = analyze(question).target
    assert target.kind == kind and set(target.nouns) == nouns


def test_the_noun_asked_for_is_the_last_one() -> None:
    assert analyze("Which JavaScript feature inspired them?").target.head == "feature"
    assert analyze("Which Python version first shipped it?").asks_version
    # 'version control' names a kind of system, not a version
    q = analyze("Which version control system did the FLUFL pick instead of Mercurial?")
    assert not q.asks_version and q.target.head == "system"
    q = analyze("Which release manager was the first no longer expected to sign them?")
    assert not q.asks_version and q.target.head == "manager"
    # a relative pronoun is not the question word when another one asks
    q = analyze("Users who turn the mode on are held responsible for what kind of problems?")
    assert q.target.kind == "what" and q.target.head == "problems"
    assert analyze("Whose Python-DSV module read CSV files?").target.kind == "who"


def test_a_count_names_the_noun_it_counts() -> None:
    # the unit an answer may say ('8 bytes'): read.score_candidates takes it from here
    assert analyze("How many bytes does the header take?").target.counted == "bytes"
    assert analyze("How much memory did it save, roughly?").target.counted == "memory"
    assert analyze("How long may a line be?").target.counted == ""
    assert analyze("Which PEP says how many bytes a header takes?").target.counted == ""


@pytest.mark.parametrize(("question", "head"), [
    # capitalised modifiers and a plural inside the noun phrase
    ("The book is a life of what American civil rights leader, born in 1908?", "leader"),
    ("The song was covered by what Lyric Street Records-affiliated band?", "band"),
    # the phrase ends at a preposition, a relative pronoun or a verb
    ("What screenwriter with credits for two comedies wrote the film?", "screenwriter"),
    ("Which library that translates messages is cited?", "library"),
    ("Which movie starring Ada Brill is based on a toy line?", "movie"),
    ("What marker file tells pip that an installation is managed?", "file"),
    ("Which environment variable turns off the colour output?", "variable"),
    # 'other' is no part of it; an owner's name is not asked for, what it owns is
    ("What other Colombian retired footballer played in the cup?", "footballer"),
    ("Which country Ada Brill's father is from?", "country"),
    ("Which country Tomas Vel (Son Of Ada Brill)'s wife is from?", "country"),
    ("What was Tomas Vel's best known work also published as?", "work"),
    # a hyphenated word is no verb, nor is a capitalised one
    ("What English stand-up comedian has a style of banter?", "comedian"),
    ("What \"Virtual Choir\"-noted conductor has written works for the ensemble?", "conductor"),
    # a comma inside a place, 'and' inside a name
    ("He was killed at what Fayette County, Kentucky airport?", "airport"),
    ("She was the leader of which Lewis and Clark Expedition?", "expedition"),
    # 'the title of' a film asks for a film; 'the title of PEP 8' stays a title
    ("What is the title of the 1999 drama film that starred Ada Brill?", "film"),
    ("What is the title of PEP 8?", "title"),
    # a pronoun asked for stands for the first thing the question introduced
    ("PEP 550 notes a popular framework that depends on greenlet. Which one?", "framework"),
    ("The namespace PEP has a term for a set of files in one directory. What is it?", "term"),
    ("The web PEP suggests one brand new module for FastCGI. What is it called?", "module"),
    # ... and 'one' for one of several, in the same sentence too
    ("The idea adds two opcodes; which one removes the link between a name and a slot?",
     "opcodes"),
    ("If a project's file lists several environments, which one should tools treat as the "
     "default?", "environments"),
    # 'What would X be called?' asks for X's name, X ending where a participle starts
    ("What would the new module holding bind_all() be called?", "module"),
    ("What must a Python lock file be named when it has no name of its own?", "file"),
])
def test_the_noun_a_question_asks_for(question: str, head: str) -> None:
    assert analyze(question).target.head == head


def test_the_two_options_however_they_are_put() -> None:
    # a comparative with no comma, and options after a colon
    q = analyze("who is younger Keith Bostic or Jerry Glanville ?")
    assert q.options == ("Keith Bostic", "Jerry Glanville") and q.order == "last"
    assert analyze("Which Karakoram mountain is higher: Distaghil Sar or The Crown").options == \
        ("Distaghil Sar", "The Crown")
    assert analyze("Which PEP came first, PEP 8 or PEP 20?").options == ("PEP 8", "PEP 20")


def test_one_reading_of_the_question() -> None:
    q = analyze("Which writer was from England, Henry Roth or Robert Erskine Childers?")
    assert q.options == ("Henry Roth", "Robert Erskine Childers")
    assert q is analyze(q) is analyze(" Which writer was from England,  Henry Roth or "
                                      "Robert Erskine Childers? ")  # read once, cached
    assert "england" in q.keywords and "writer" not in q.keywords
    q = analyze("Which film was released more recently, Bollywood Dream or Pretty Persuasion?")
    assert q.order == "last"
    q = analyze("What did the 2024 proposal to forbid bare except: clauses become?")
    assert [(d.value, d.of_document) for d in q.dates] == [("2024", True)]
    q = analyze("What would the Python released in 2026 have been called?")
    assert [(d.value, d.of_document) for d in q.dates] == [("2026", False)]
    q = analyze("In August 2018, Barry Warsaw created a PEP whose title mentions 'source'.")
    assert q.authors == ("Barry Warsaw",) and q.title_cues == ("source",)
    assert analyze("What nickname did Barry Warsaw give the decorator syntax?").authors == ()
    # a word that opens the sentence is no part of the name after it
    q = analyze("Besides Barry Warsaw, who co-authored the proposal for a council of three?")
    assert q.authors == ("Barry Warsaw",)
    # a possessive names the author across a few modifiers of the document noun
    q = analyze("What became of Łukasz Langa's workgroup-based, leaderless governance proposal?")
    assert q.authors == ("Łukasz Langa",)


# -------------------------------------------------------------------------------- reading
TEXT = """Limit all lines to a maximum of 79 characters.

For flowing long blocks of text with fewer structural restrictions (docstrings or
comments), the line length should be limited to 72 characters. Some teams prefer
longer lines, e.g. up to 99 characters.

- the first item
- the second item
"""


def test_sentences_blocks_lists_and_abbreviations() -> None:
    got = split_sentences(TEXT)
    assert got[0] == "Limit all lines to a maximum of 79 characters."
    assert got[2] == "Some teams prefer longer lines, e.g. up to 99 characters."
    assert got[-2:] == ["- the first item", "- the second item"]


DEFINITIONS = """The JSON has the following schema.

build_command
    A mandatory key, this is a list of format strings. If using flit it might be::

        build_command: ["flit"]
        bootstrap: ["flit"]

| ``hexdigest()``

   Return the hash as hexadecimal digits.  Lowercase letters are used.

    An indented paragraph of prose
    that wraps. It says more.
"""


def test_sentences_a_definition_lists_term_starts_its_definition() -> None:
    """A term over its indented definition ('build_command' over 'A mandatory key, ...')
    starts the definition's first sentence, in one block or two; a literal block after '::'
    stays line by line, and an indented paragraph is prose."""
    got = split_sentences(DEFINITIONS)
    assert "build_command: A mandatory key, this is a list of format strings." in got
    assert 'build_command: ["flit"]' in got and 'bootstrap: ["flit"]' in got
    assert "``hexdigest()``: Return the hash as hexadecimal digits." in got
    assert "Lowercase letters are used." in got
    assert "An indented paragraph of prose that wraps." in got
    assert "build_command" not in got and "| ``hexdigest()``" not in got


def test_candidates_are_typed_and_never_the_questions_words() -> None:
    q = analyze("How many characters may a line have at most, as a maximum?")
    reading = read_for(q, TEXT, ("pep-0008", "Maximum Line Length"), lambda _w: 1.0)
    texts = [c.text for c in reading.candidates]
    assert texts[0] in ("79 characters", "79")
    assert all(c.kind == "number" for c in reading.candidates[:3])
    assert "characters" not in texts and "line" not in texts
    assert reading.candidates[0].label == ("pep-0008", "Maximum Line Length")
    kinds = {k for _t, k, _a in extract(q, "Set ``PYTHONBREAKPOINT=0`` or call sys.exit().")}
    assert "code" in kinds
    # a number in scientific notation is one number, not the '9' of '1e-9'
    spans = extract(q, "The default tolerance is 1e-9, above 2.5E+3 ulps.")
    assert {("1e-9", "number"), ("2.5E+3", "number")} <= {(t, k) for t, k, _a in spans}
    assert ("9", "number") not in {(t, k) for t, k, _a in spans}


def test_a_person_asked_by_a_calling_is_a_person_not_an_initial() -> None:
    # 'what civil rights leader' asks for a person; an initial alone is no candidate
    q = analyze('"Black Maverick" is a biography of what American civil rights leader?')
    text = ('"Black Maverick" is a biography of civil rights leader, surgeon and self-help '
            'advocate T. R. M. Howard, who was a mentor to Medgar Evers.')
    cands = read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates
    texts = [c.text for c in cands]
    assert not any(len(t) == 1 for t in texts)
    people = [c for c in cands if c.kind == "person"]
    assert people and people[0].text == "T. R. M. Howard"
    assert people[0].prior >= max(c.prior for c in cands if c.kind == "phrase")


def test_a_role_that_points_at_a_pep_reads_as_the_pep_and_markup_is_no_answer() -> None:
    q = analyze("Which governance proposal did this one build on?")
    text = ("This PEP proposes a governance model built on :pep:`8010`, with a trio of "
            "leaders as described in :pep:`the council model <8016>`.")
    reading = read_for(q, text, ("d", "s"), lambda _w: 1.0)
    texts = [c.text for c in reading.candidates]
    assert "PEP 8010" in texts and "the council model" in reading.text()
    assert not any("`" in t or ":pep:" in t for t in texts)
    assert ":pep:" not in reading.text()
    # no piece of a footnote reference answers ('8]_' of '[8]_')
    text = ("C# forbids ending statements like ``return`` within a ``finally``\n[8]_, [9]_. "
            "It was fixed in version 3 [10]_ of the language.")
    for asked in ("What does a return inside a finally block do?", "Which version fixed it?"):
        texts = [c.text for c in read_for(analyze(asked), text, None, lambda _w: 1.0).candidates]
        assert not any("]" in t for t in texts)


def test_a_thing_of_the_asked_kind_is_a_candidate() -> None:
    # the head noun asked for is not 'a word of the question' to a phrase it heads
    q = analyze("What kind of quotes should always surround a docstring?")
    text = 'For consistency, always use ``"""triple double quotes"""`` around docstrings.'
    got = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    assert "triple double quotes" in got
    assert got["triple double quotes"].prior >= max(c.prior for c in got.values()) * 0.8
    # the words after a modifier of the asked noun, and a link's words without its address
    q = analyze("Which JavaScript feature inspired the arbitrary tag prefixes?")
    text = ("Inspired by `JavaScript tagged template literals <https://developer.mozilla.org/"
            "en-US/docs/Web/JavaScript/Reference/Template_literals#tagged_templates>`_, an "
            "earlier version allowed for arbitrary tag prefixes.")
    reading = read_for(q, text, ("d", "s"), lambda _w: 1.0)
    texts = [c.text for c in reading.candidates]
    assert "JavaScript tagged template literals" in texts
    assert not any("://" in t for t in texts) and "https" not in reading.text()
    # a unit written onto its number, the owner of a possessive
    q = analyze("How long can importing the module take?")
    got = [c.text for c in read_for(q, "Importing it can take as much as 10ms on a cold "
                                    "start.", ("d", "s"), lambda _w: 1.0).candidates]
    assert "10ms" in got
    q = analyze("Whose module was one of the ways to read CSV files?")
    got = [c.text for c in read_for(q, "One way to read CSV files was Cliff Wells' Python-DSV "
                                    "module.", ("d", "s"), lambda _w: 1.0).candidates]
    assert "Cliff Wells" in got


def test_the_noun_run_without_the_words_as_written() -> None:
    from sieve_lite.agent.question import _noun_run

    # when the words as written do not line up with the question's words, the run is read
    # from the folded words alone ('and' ends it), never an index error
    assert _noun_run(["pilot", "and", "adventurer"], [], [], "") == ["pilot"]


def test_a_thing_defined_by_a_hyphenated_noun_is_of_that_kind() -> None:
    q = analyze("The tune was covered by which American singer-songwriter?")
    got = {c.text: c.kind for c in read_for(q, "Ada Brill (born 1979) is an American "
                                            "singer-songwriter and actor.", ("d", "s"),
                                            lambda _w: 1.0).candidates}
    assert got.get("Ada Brill") == "defined"


def test_how_long_is_a_span_of_time_not_a_bare_number() -> None:
    # spaCy calls 'five years' a date; for 'how long' it is a number of years, and a bare
    # number ('2.7', a version) fits less than it
    q = analyze("How long does a release get security fixes?")
    got = {c.text: c for c in read_for(q, "Release 2.7 was special. Each release gets "
                                       "security fixes for five years.", ("d", "s"),
                                       lambda _w: 1.0).candidates}
    assert got["five years"].kind == "number"
    assert got["five years"].prior > got["2.7"].prior
    got = {c.text: c for c in read_for(q, "Release 3.7.8 issues were fixed within five "
                                       "years.", ("d", "s"),
                                       lambda _w: 1.0).candidates}
    assert "five years" in got and "3.7.8 issues" not in got  # a version is no quantity
    # any number in words, and a word of the kind of days between ('fourteen calendar days')
    got = {c.text for c in read_for(analyze("How long does a vote stay open?"),
                                    "Each vote stays open. Votes take fourteen calendar days.",
                                    ("d", "s"), lambda _w: 1.0).candidates}
    assert "fourteen calendar days" in got, got
    # 'two' and 'years' are both search stopwords; together they are the answer
    got = {c.text for c in read_for(analyze("How long does a council member serve?"),
                                    "Each council member's term will be two years.",
                                    ("d", "s"), lambda _w: 1.0).candidates}
    assert "two years" in got
    # 'how often' asks for the time between: a year is no answer, and a span of time the
    # tagger calls a date fits as well as one it calls a number
    q = analyze("How often does the project cut a new edition?")
    got = {c.text: c for c in read_for(q, "A crate is assumed to have edition 2015, "
                                       "coinciding with Rust 1.0. The project cuts a new "
                                       "edition every two or three years.", ("d", "s"),
                                       lambda _w: 1.0).candidates}
    assert got["two or three years"].prior > 0.8
    assert max(got["2015"].prior, got["1.0"].prior) < 0.3
    # a dotted triple is a version, never a quantity, whatever the tagger calls it
    q = analyze("Roughly how big was the pure-Python parser?")
    got = {c.text for c in read_for(q, "The parser is about 1000 lines and supports TOML "
                                    "1.0.0 fully.", ("d", "s"), lambda _w: 1.0).candidates}
    assert "1000 lines" in got and not any(t.startswith("1.0.0") for t in got)
    # ... but not for 'how many' (a whole number counts there; a bare decimal does not:
    # test_how_much_memory_asks_for_a_size_with_its_unit)
    q = analyze("How many releases get security fixes?")
    got = {c.text: c for c in read_for(q, "Release 27 was special. Each release gets "
                                       "security fixes for five years.", ("d", "s"),
                                       lambda _w: 1.0).candidates}
    assert got["27"].prior >= 0.5


def test_what_month_is_a_months_name_not_a_span_of_months() -> None:
    q = analyze("In what month do the annual core dev sprints typically happen?")
    got = {c.text: c for c in read_for(q, "While the release cadence is nominally 18-24 "
                                       "months, it complicates alignment with the now-annual "
                                       "core development sprints (typically in September).",
                                       ("d", "s"), lambda _w: 1.0).candidates}
    assert got["September"].prior > 0.5 > got["18-24 months"].prior


def test_a_count_with_the_unit_asked_is_not_a_repeat_of_the_question() -> None:
    """'How many bytes ...' is answered by '8 bytes': the unit is the thing counted, so the
    candidate keeps its full prior; a span that repeats another word of the question still
    fits less."""
    text = "Each frame starts with its size. The frame size takes 8 bytes, little-endian."
    q = analyze("How many bytes does a pickle frame use to store its size?")
    got = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    assert got["8 bytes"].prior >= 0.7
    # a word of the question that is not the unit counted still makes a span fit less
    q = analyze("How many bytes does a pickle store?")
    got = {c.text: c for c in read_for(q, "The pickle stores 8 pickle bytes.", ("d", "s"),
                                       lambda _w: 1.0).candidates}
    assert got["8 pickle"].prior < 0.7


def test_a_span_said_where_the_question_word_stands_leads() -> None:
    # the question word in place after a verb or a preposition; not a relative clause, not
    # a question word that opens the question or a clause
    assert analyze("Tysons Galleria is located in what county?").lead_in == ("located", "in")
    assert analyze("Data classes can be thought of as what, per the PEP?").lead_in == \
        ("of", "as")
    assert analyze("Alvaro Mexia had a mission with which tribe?").lead_in == \
        ("mission", "with")
    for q in ("What is the capital of France?", "Which city was the sprint held in?",
              "It was founded by an industrialist who became known as the father of what?"
              .replace(" of what?", "?")):
        assert analyze(q).lead_in == (), q
    q = analyze("Data classes can be thought of as what, according to the PEP?")
    text = ('Although they use a very different mechanism, Data Classes can be thought of as '
            '"mutable namedtuples with defaults". Class factories are one such mechanism.')
    got = {c.text: c.prior for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    assert got["mutable namedtuples with defaults"] >= max(got.values())
    assert got["mutable namedtuples with defaults"] > got["Class factories"]
    # one word may stand between the two lead-in words ('keynote presentation at')
    q = analyze("The proposal was rejected after a poll during his keynote at which conference?")
    assert q.lead_in == ("keynote", "at")
    text = ("A quick poll during my keynote presentation at PyCon 2007 shows this proposal has "
            "no popular support. I therefore reject it.")
    got = read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates
    assert next(c for c in got if c.text == "PyCon 2007").placed
    assert not next(c for c in got if c.text == "popular support").placed


def test_a_fronted_preposition_leads_with_the_last_word_of_its_clause() -> None:
    # 'In which city was X held?' is answered 'X held in <city>': the clause's last word and
    # the preposition lead in (a relative clause after the subject is not part of it)
    assert analyze("In which city was the sprint held?").lead_in == ("held", "in")
    assert analyze("From which university did she graduate?").lead_in == ("graduate", "from")
    q = analyze("In which city was the 2023 core developer sprint where the inventory of C "
                "API problems was more or less finished?")
    assert q.lead_in == ("sprint", "in")
    assert analyze("In what way does it differ?").lead_in == ("differ", "in")
    assert analyze("In which city?").lead_in == ()
    # ... after a modal too, however long the noun phrase asked
    assert analyze("On which lines of a Python file may an encoding declaration appear?"
                   ).lead_in == ("appear", "on")
    # the name said in place wins over the one that ends in the noun asked ('... City')
    text = ("At the 2023 Language Summit in Salt Lake City it was decided to start work on an "
            "inventory of problems. At the 2023 core developer sprint in Brno this work is more "
            "or less finished.")
    cands = read_for(q, text, None, lambda _w: 1.0).candidates
    prior = {c.text: c.prior for c in cands}
    assert prior["Brno"] > 0.8 and next(c for c in cands if c.text == "Brno").placed
    assert not next(c for c in cands if c.text == "Salt Lake City").placed


def test_a_name_said_right_before_the_noun_asked_names_a_thing_of_that_kind() -> None:
    q = analyze("Which cookbook recipe was the proposed mechanism in an earlier draft?")
    text = ("A script with this behaviour is in the discussion of the recipe [3]_. The "
            "``execmodule`` cookbook recipe itself was the proposed mechanism in an earlier "
            "version of this PEP.")
    top = _top(q, text)
    assert (top.text, top.placed) == ("execmodule", True)
    # ... but a people's name describes the thing, it does not name it
    q = analyze("Which singer released the song as a lead single?")
    text = "Usher is an American singer. The song was released as the lead single in 2004."
    cands = read_for(q, text, None, lambda _w: 1.0).candidates
    assert not any(c.placed for c in cands if c.text == "American")


def test_a_span_said_as_the_thing_asked_by_name_is_placed() -> None:
    # 'which extensible allocator' and 'an extensible allocator like mimalloc'
    q = analyze("Which extensible allocator was mentioned as an option for the object "
                "allocator?")
    text = ("The object allocator could be reimplemented to be thread-safe, using an "
            "extensible allocator like mimalloc. The global allocators would stay.")
    top = _top(q, text)
    assert (top.text, top.placed) == ("mimalloc", True)
    # ... a bare word too ('frameworks like gevent': the tagger calls 'gevent' no name)
    q = analyze("The PEP notes a popular framework that depends on greenlet even though "
                "greenlet isn't in CPython. Which one?")
    text = ("Greenlets are a different implementation of coroutines, and popular "
            "frameworks like gevent rely on greenlets. The behaviour of greenlets differs.")
    got = {c.text: c for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["gevent"].placed
    # 'what shorter name' and 'should be called rat': a name asked, said after 'called'
    q = analyze("What shorter name was floated for the proposed rational number type?")
    text = ("Maybe the type should be called rat instead of rational. Should ``shift`` and "
            "``mask`` operators be allowed for rational numbers?")
    top = _top(q, text)
    assert (top.text, top.placed) == ("rat", True)
    # code is known by its name: 'what new function' and 'under the name ``get_loader()``'
    q = analyze("What new function was proposed for the imp module?")
    text = ("The new import hooks are not easily integrated in the existing "
            "``imp.load_module()`` calls. A new ``imp`` module function is proposed under the "
            "name ``get_loader()``, which is used as follows.")
    got = {c.text: c for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["get_loader()"].placed and not got["imp.load_module()"].placed
    # the noun asked, then the span alone in brackets: 'utilities (``ctlint``)' for 'What
    # utility'; a reference in brackets is a citation, no name of it ('handler (PEP 293)')
    q = analyze("Which utility could rewrite the old comments, according to the author?")
    text = ("Old comments are a problem. Simple utilities (``ctlint``) could rewrite them, and "
            "the checker would warn about the rest of the code base.")
    got = {c.text: c for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["ctlint"].placed and _top(q, text).text == "ctlint"
    q = analyze("What is the error handler called that keeps undecodable bytes?")
    text = ('To keep such bytes, a new error handler (PEP 293) "surrogateescape" is added.')
    assert not any(c.placed for c in read_for(q, text, None, lambda _w: 1.0).candidates
                   if "293" in c.text)
    # ... and the noun asked right before a quoted span ('a message "missing ``zlib``"'),
    # its inline code marks no part of what it says
    q = analyze("What error message do you get when the decompressor is missing?")
    top = read_for(q, 'Compressed archives need ``zlib``. Import of those fails with a message '
                   '"missing ``zlib``" unless ``zlib`` is there.', None,
                   lambda _w: 1.0).candidates[0]
    assert (top.text, top.placed) == ("missing zlib", True)
    # ... but not when a name is asked: each name proposed is introduced so, the one asked
    # or not ('The name "time.try_monotonic()" was also proposed')
    q = analyze("Which name proposed for the clock was rejected as confusing?")
    got = read_for(q, 'The name "time.try_monotonic()" was also proposed. The name '
                   '"time.steady()" was rejected as confusing.', None, lambda _w: 1.0).candidates
    assert not any(c.placed for c in got), got
    # ... but 'called' says nothing when no name is asked
    q = analyze("Which operators might be allowed for rational numbers?")
    cands = read_for(q, text, None, lambda _w: 1.0).candidates
    assert not any(c.placed for c in cands if c.text == "rat")


def test_a_year_asked_by_its_noun_is_a_date_and_a_where_about_software_may_be_code() -> None:
    # 'what's the last year' asks a date, as 'when' does: not the phrases around it
    q = analyze("Counting nanoseconds in 64 bits, what's the last year you can reach?")
    top = read_for(q, "Counting nanoseconds in 64 bits reaches times from year 1677 to year "
                   "2262, which is enough for most uses.", None, lambda _w: 1.0).candidates[0]
    assert "2262" in top.text and top.kind == "date", top
    # 'where ... relocated to' about a package: a module written in code is where it goes
    q = analyze("With the new profiling package, where does the tracing profiler get "
                "relocated to?")
    top = read_for(q, "The tracing profiler will be relocated to ``profiling.tracing``, "
                   "keeping an alias.", None, lambda _w: 1.0).candidates[0]
    assert top.text == "profiling.tracing", top
    # ... but a 'where' about no software keeps to places
    q = analyze("Where was the sprint held?")
    got = {c.text: c for c in read_for(q, "The sprint, hosted by ACME_CORP, was held in Brno.",
                                       None, lambda _w: 1.0).candidates}
    assert "ACME_CORP" not in got or got["ACME_CORP"].prior < got["Brno"].prior


def test_a_dotted_name_in_the_namespace_the_question_names_is_not_its_words_again() -> None:
    # 'which dict method' and 'dict.get()': 'dict' is where the method lives, 'get' the news;
    # the span is not made less likely for repeating 'dict'
    q = analyze("When the proposal was turned down, the idea that some dict method would be "
                "useless was disputed. Which method?")
    text = ("I do not think dict.get() would be useless once we have the new expressions, and "
            "EAFP is not always better than LBYL.")
    top = _top(q, text)
    assert top.text == "dict.get()", top
    # ... not when the question names the namespace elsewhere: 'instead of
    # distutils.spawn' does not ask for a distutils thing
    q = analyze("What should I use instead of the distutils spawn helper?")
    text = "Use shutil.which instead; distutils.version has no replacement."
    prior = {c.text: c.prior for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert prior["shutil.which"] > prior["distutils.version"], prior


def _top(q: Question, text: str) -> Candidate:
    """The best candidate of one read of ``text`` (every word weighs the same)."""
    return read_for(q, text, None, lambda _w: 1.0).candidates[0]


def _candidate_texts(question: str, text: str, use_nlp: bool = False) -> set[str]:
    return {c.text for c in read_for(analyze(question), text, ("d", "s"), lambda _w: 1.0,
                                     use_nlp=use_nlp).candidates}


def test_a_code_name_or_a_path_is_news_though_made_of_the_question_s_words() -> None:
    # 'NEXT_BUFFER' joins two of the question's words ('next', 'buffer'), and
    # '__definition_order__' two more ('defined', 'order'): the question writes neither name
    texts = _candidate_texts(
        "Which opcode tells the unpickler to pull in the next buffer, and what attribute "
        "records the order names were defined in?",
        "If the buffer is readonly, a ``NEXT_BUFFER`` opcode is appended to the stream. "
        "That order is kept in the ``__definition_order__`` attribute of the class.")
    assert {"NEXT_BUFFER", "__definition_order__"} <= texts, texts
    # ... a name the question writes is no news, and code names are not inflected:
    # 'os.fsencode()' is not 'os.fspath()'
    texts = _candidate_texts(
        "When a bytes-only variant of os.fspath() was turned down, which os function was "
        "said to offer similar functionality?",
        "This was rejected: ``os.fspath()`` stays, as ``os.fsencode()`` will provide "
        "similar functionality.")
    assert "os.fsencode()" in texts and "os.fspath()" not in texts, texts
    # a longer word that starts the same is another word ('RecursionError' is news beside
    # 'RecursionOverflow'), an inflection is not ('techniques' for 'technique')
    texts = _candidate_texts(
        "StackOverflow and RecursionOverflow would both subclass which exception?",
        "Both StackOverflow and RecursionOverflow will be sub-classes of ``RecursionError``.")
    assert "RecursionError" in texts, texts
    assert _inflects("techniques", "technique") and _inflects("proposed", "proposal")
    assert not _inflects("recursionerror", "recursionoverflow")
    # a file's path written as code is a thing, an address is not
    texts = _candidate_texts(
        "Which system file could a malicious package overwrite?",
        "A malicious package could overwrite ``/etc/shadow``, as "
        "https://example.org/wiki/Shadow explains.", use_nlp=True)
    assert "/etc/shadow" in texts and not any("example" in t for t in texts), texts


def test_footnote_labels_and_bare_addresses_are_no_answers() -> None:
    # '[#dead-parrot]_' points at a footnote and '.../wiki/Regular_Expressions' is an
    # address: neither is read as text, so neither label nor path is a candidate
    q = analyze("The project went the way of which Monty Python parrot?")
    text = ("With Unladen Swallow going the way of the Norwegian Blue [#us-post-mortem]_ "
            "[#dead-parrot]_, this PEP has been withdrawn.\n\n"
            ".. [#dead-parrot] http://www.example.org/wiki/Dead_Parrot_Sketch\n"
            ".. [1] http://code.example.com/p/unladen/wiki/Regular_Expressions\n")
    got = read_for(q, text, ("d", "s"), lambda _w: 1.0)
    texts = {c.text for c in got.candidates}
    assert "Norwegian Blue" in texts
    assert not texts & {"dead-parrot", "us-post-mortem", "Regular_Expressions",
                        "Dead_Parrot_Sketch"}, texts
    assert all("[#" not in s.text and "http" not in s.text for s in got.sentences)


def test_a_run_of_capitals_is_a_constant_s_name() -> None:
    # 'CIRCLED TIMES' (a Unicode name) is code like 'SNOWMAN', so it fits 'which symbol' as
    # fully as its parts do; a capitalised name is still an entity
    q = analyze("Which Unicode symbol conventionally means elementwise multiplication?")
    text = ("And U+2297 CIRCLED TIMES is actually used conventionally to mean elementwise "
            "multiplication, says Guido van Rossum.")
    got = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    assert got["CIRCLED TIMES"].kind == "code"
    assert got["CIRCLED TIMES"].prior >= got["CIRCLED"].prior
    assert got["Guido van Rossum"].kind != "code"


def test_a_context_manager_is_code_and_a_number_in_a_name_is_no_count() -> None:
    # 'what context manager' asks for code, not a person (a release manager is one); said
    # right before the noun asked, the name's words shared with the question only qualify it
    q = analyze("What context manager in importlib makes a block of imports happen at once?")
    text = ("It may be necessary to force some imports to be eager. This PEP proposes to add "
            "a new ``importlib.eager_imports()`` context manager for that.")
    top = _top(q, text)
    assert (top.text, top.placed) == ("importlib.eager_imports()", True)
    assert top.prior > 0.9
    q = analyze("Which release manager signed the tarballs?")
    text = "The tarballs were signed by Thomas Wouters, the release manager."
    assert _top(q, text).text == "Thomas Wouters"
    # 'PEP 13' names a document; its number counts nothing
    q = analyze("How many ballots were cast in the 2022 steering council election?")
    text = ("The 2022 steering council election, as specified in PEP 13, ran for two weeks. "
            "Of 85 eligible voters, 67 cast ballots.")
    texts = [c.text for c in read_for(q, text, None, lambda _w: 1.0).candidates]
    assert "67" in texts and "13" not in texts


def test_what_share_asks_for_a_quantity() -> None:
    q = analyze("What share of the recorded committer votes must be +1 for a proposal to pass?")
    text = ("Each committer can vote once. If at least two thirds of recorded votes are +1, "
            "then the vote succeeds.")
    top = _top(q, text)
    assert top.text == "at least two thirds" and top.kind == "number"


def test_a_name_written_in_capitals_by_convention_is_asked_in_capitals() -> None:
    # an environment variable, a C macro, a bytecode instruction: a function in their place
    # is another thing, however likely the model finds it
    q = analyze("What environment variable can I set to get warned about a missing encoding?")
    text = ("To get warned about a missing encoding, call ``os.fsencode()``. The "
            "``PYTHONWARNDEFAULTENCODING`` environment variable enables the warning.")
    got = {c.text: c.prior for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["PYTHONWARNDEFAULTENCODING"] > got["os.fsencode()"]
    q = analyze("Which bytecode instruction calls sys.displayhook?")
    text = "The instruction ``sys.displayhook(POP())`` is called by PRINT_EXPR on the value."
    top = _top(q, text)
    assert top.text == "PRINT_EXPR"
    q = analyze("What macro sets the length cutoff for the short-string hash?")
    text = "The cutoff is set by ``Py_HASH_CUTOFF``; ``_Py_HashBytes()`` reads it at build time."
    assert _top(q, text).text == "Py_HASH_CUTOFF"
    # ... and a reST target ('.. _639-spec-field:') is no name at all
    q = analyze("Which licensing standard must the License-Expression field use?")
    text = "See _639-spec-field-license-expression for the License-Expression field: SPDX."
    texts = [c.text for c in read_for(q, text, None, lambda _w: 1.0).candidates]
    assert "SPDX" in texts and not any(t.startswith("_639") for t in texts)


def test_how_much_memory_asks_for_a_size_with_its_unit() -> None:
    q = analyze("How much extra memory would the new field on code objects cost?")
    text = ("A test suite run created 72,395 code objects, so the new field would cost "
            "579,160 bytes of extra memory.")
    top = _top(q, text)
    assert top.text == "579,160 bytes"
    # ... and 'how many' for a whole count: a bare decimal is a version
    q = analyze("Roughly how many source distributions were on PyPI at the time?")
    text = "Metadata 1.0 was current; PyPI held 444,338 source distributions at the time."
    got = {c.text: c.prior for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["1.0"] < 0.5 < got["444,338"]
    # ... and a share of the memory answers 'by how much' it shrank
    q = analyze("By how much did sharing keys cut memory use?")
    text = "Sharing keys cut memory use by 10% to 20% in Python 3.3 programs."
    got = {c.text: c.prior for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["10% to 20%"] > 0.9 > 0.5 > got["3.3"]


def test_a_modifier_s_phrase_is_spaced_as_written_and_e_g_is_no_identifier() -> None:
    q = analyze("Which cookbook recipe was the proposed mechanism, e.g. for running modules?")
    texts = [c.text for c in read_for(q, "The ``execmodule`` cookbook recipe itself was the "
                                      "proposed mechanism, e.g. in an earlier version.",
                                      ("d", "s"), lambda _w: 1.0).candidates]
    assert "execmodule" in texts
    assert not any(t.startswith("cookbookrecipe") or t == "e.g" for t in texts)


def test_a_date_in_figures_is_a_date_not_an_address() -> None:
    # '9/29/2005' has slashes, as a path does; it is the date asked, not three numbers
    q = analyze("On what date did Guido settle on the conditional expression?")
    top = read_for(q, "On 9/29/2005, Guido decided to add conditional expressions.", None,
                   lambda _w: 1.0).candidates[0]
    assert (top.text, top.kind) == ("9/29/2005", "date"), top


def test_a_leading_when_clause_does_not_ask_when() -> None:
    q = analyze("When a bytes-only variant of os.fspath() was turned down, which existing os "
                "function was said to already offer similar functionality?")
    assert (q.target.kind, q.target.head) == ("what", "function")
    assert analyze("When was the Zen of Python written, and by whom?").target.kind == "when"
    assert analyze("When did the vote end, according to the PEP?").target.kind == "when"
    # ... nor does one whose question word comes in its last part, after a preposition
    q = analyze("When the loop syntax was turned down, Guido said that avoiding it was the "
                "whole point, years earlier, of which builtin?")
    assert (q.target.kind, q.target.head) == ("what", "builtin")
    q = analyze("When Brett proposed dropping it, like f((a, b)), which 2.x release would warn?")
    assert (q.target.kind, q.target.head) == ("what", "release")
    assert analyze("When did the vote end, after it was extended, and who ran it?"
                   ).target.kind == "when"


def test_a_name_is_one_identifier_and_a_quoted_term_is_said_in_code_too() -> None:
    q = analyze("If a script still does `import whrandom`, which module should it switch to?")
    top = _top(q, "All random-related methods have been collected in one place, the "
                  "``random`` module.\nLocating: ``grep whrandom``")
    assert top.text == "random", top
    from sieve_lite.agent.read import _kind_fit, _kind_weights
    w = _kind_weights(q)
    assert _kind_fit(q, "grep whrandom", "code", w) < _kind_fit(q, "random", "code", w)
    # 'what exception name' asks an exception's name, as 'what exception' does
    q = analyze("What dedicated exception name was floated as an alternative to RuntimeError?")
    w = _kind_weights(q)
    assert _kind_fit(q, "g.throw(StopIteration)", "code", w) < \
        _kind_fit(q, "UnexpectedStopIteration", "code", w)
    q = analyze("Before settling on 'disjoint base', what term did the first draft use?")
    got = read_for(q, "The decorator is spelled ``@disjoint_base``. The first draft used the "
                      "term \"solid base\".", None, lambda _w: 1.0).candidates
    assert "disjoint_base" not in [c.text for c in got]
    # ... and the question's code name in a namespace repeats it
    q = analyze("dataclass_transform has no cmp option. Which third-party library supports "
                "that parameter?")
    assert _top(q, "The ``typing.dataclass_transform`` decorator has no cmp parameter. The "
                   "attrs library supports cmp.").text == "attrs"
    q = analyze("Instead of a __version__ attribute, which API is the better way to look up "
                "a version?")
    assert _top(q, "Use ``importlib.metadata.version()`` instead.").text == \
        "importlib.metadata.version()"
    assert "solid base" in [c.text for c in got]


def test_a_narrowed_read_fits_its_budget() -> None:
    sents = [Sentence("alpha beta gamma.", 0, 3.0), Sentence("delta.", 5, 2.0),
             Sentence("epsilon zeta.", 1, 1.0)]
    reading = Reading(("d", "s"), sents)
    assert reading.text() == "alpha beta gamma.\nepsilon zeta.\n…\ndelta."
    assert reading.text(lambda t: len(t.split()) <= 5) == "alpha beta gamma.\n…\ndelta."
    assert reading.text(lambda t: False) == "alpha beta gamma."  # always the best one


# ------------------------------------------------------------------------------ abstaining
def _cands(*priors: float, coverage: float = 0.5) -> list[Candidate]:
    return [Candidate(f"c{i}", "phrase", 0, p, None, coverage) for i, p in enumerate(priors)]


def test_the_model_abstains_when_no_candidate_is_clearly_the_answer() -> None:
    ok = decide(_cands(0.9, 0.2), [0.8, 0.2], "likelihood", [{"per_token": -1.0}, {}])
    assert isinstance(ok, Choice) and ok.answer is not None and ok.answer.text == "c0"
    tied = decide(_cands(0.9, 0.9), [0.5, 0.5], "likelihood")
    assert tied.answer is None and "about as likely" in tied.why
    loose = decide(_cands(0.5, 0.1), [0.9, 0.1], "likelihood")
    assert loose.answer is None and "loosely" in loose.why
    unlikely = decide(_cands(0.9, 0.1), [0.7, 0.3], "likelihood", [{"per_token": -4.0}, {}])
    assert unlikely.answer is None and "unlikely" in unlikely.why
    # ... unless the text says it where the question puts its answer ('the RECORD file' for
    # 'Which file ...'); the other gates still hold
    placed = [replace(c, placed=True) for c in _cands(0.9, 0.1)]
    said = decide(placed, [0.7, 0.3], "likelihood", [{"per_token": -4.0}, {}])
    assert said.answer is not None and said.answer.text == "c0"
    assert decide(placed, [0.5, 0.5], "likelihood", [{"per_token": -4.0}, {}]).answer is None
    assert decide([replace(c, coverage=0.1) for c in placed], [0.7, 0.3], "likelihood",
                  [{"per_token": -4.0}, {}]).answer is None
    aside = decide(_cands(0.9, 0.1, coverage=0.1), [0.9, 0.1], "likelihood")
    assert aside.answer is None and "something else" in aside.why
    # a sentence that holds most of the question lowers the prior a candidate needs
    covered = decide(_cands(0.5, 0.1, coverage=0.8), [0.9, 0.1], "likelihood")
    assert covered.answer is not None and covered.answer.text == "c0"
    thin = decide(_cands(0.3, 0.1, coverage=0.8), [0.9, 0.1], "likelihood")
    assert thin.answer is None and "loosely" in thin.why
    # ... but not on a hop, where the question's words are mostly about the document before
    hop = decide(_cands(0.5, 0.1, coverage=0.8), [0.9, 0.1], "likelihood", relax_covered=False)
    assert hop.answer is None and "loosely" in hop.why
    # a clear lead in the combined belief lowers it too, but not below CLEAR_MIN_PRIOR
    clear = decide(_cands(0.65, 0.9), [0.8, 0.15], "likelihood")
    assert clear.answer is not None and clear.answer.text == "c0"
    assert decide(_cands(0.65, 0.9), [0.6, 0.4], "likelihood").answer is None
    assert decide(_cands(0.55, 0.9), [0.9, 0.1], "likelihood").answer is None
    # ... and a lone candidate's lead is no sign: it holds all the belief by construction
    assert decide(_cands(0.65), [1.0], "likelihood").answer is None


def test_the_sentence_that_holds_more_of_the_question_wins_a_tie() -> None:
    # 'CRITICAL' and 'FATAL' are as likely to the model; 'FATAL' stands in the sentence
    # that says 'log4j' and 'death'
    pair = [Candidate("CRITICAL", "code", 0, 0.8, None, 0.2),
            Candidate("FATAL", "code", 1, 0.8, None, 0.4)]
    shares = combine(pair, [-0.5, -0.5])
    assert shares[1] > shares[0] and abs(shares[1] / shares[0] - 2 ** 0.5) < 1e-6


def test_a_span_the_text_puts_where_the_question_puts_its_answer_weighs_more() -> None:
    # 'sigint_event' said as 'the event object' against a name the model likes as well
    pair = [Candidate("PyOS_StdioReadline()", "code", 0, 0.8, None, 0.4),
            Candidate("sigint_event", "code", 1, 0.8, None, 0.4, placed=True)]
    shares = combine(pair, [-0.5, -0.5])
    assert abs(shares[1] / shares[0] - PLACED_BOOST) < 1e-6 and PLACED_BOOST > 1


def test_a_sure_model_outweighs_a_loose_prior_but_not_a_sentence_about_something_else() -> None:
    sure = [{"per_token": -3.0}, {"per_token": -6.0}, {"per_token": -7.0}]
    got = decide(_cands(0.4, 0.9, 0.9), [0.9, 0.06, 0.04], "likelihood", sure)
    assert got.answer is not None and got.answer.text == "c0"
    # eight times the second is the bar: 0.85 against 0.15 is not sure
    near = decide(_cands(0.4, 0.9), [0.85, 0.15], "likelihood", sure[:2])
    assert near.answer is None and "loosely" in near.why
    # a lone candidate holds all the belief by construction, two nearly so
    alone = decide(_cands(0.4), [1.0], "likelihood", sure[:1])
    assert alone.answer is None
    pair = decide(_cands(0.4, 0.9), [0.96, 0.04], "likelihood", sure[:2])
    assert pair.answer is None
    # a candidate of a kind the question hardly asks for (its prior) is not made sure
    odd = decide(_cands(0.3, 0.9, 0.9), [0.9, 0.06, 0.04], "likelihood", sure)
    assert odd.answer is None and "loosely" in odd.why
    # without the model's likelihood (a grammar pick) the prior gate stays
    picked = decide(_cands(0.4, 0.9, 0.9), [0.9, 0.06, 0.04], "grammar")
    assert picked.answer is None
    aside = decide(_cands(0.4, 0.9, 0.9, coverage=0.1), [0.95, 0.03, 0.02], "likelihood", sure)
    assert aside.answer is None and "something else" in aside.why


# ----------------------------------------------------------------------------- comparisons
def test_dates_and_comparisons_from_text() -> None:
    assert [w.year for _a, w in dates_in("born 11 May 1982; died September 7, 1988")] == \
        [1982, 1988]
    q = "Was Ausaf Ali or Steven Perry born first?"
    assert is_comparison(q) and subjects(q) == ("Ausaf Ali", "Steven Perry")
    texts = {"Ausaf Ali": "Ausaf Ali (born 11 May 1982) is a cricketer.",
             "Steven Perry": "Steven Perry (born September 7, 1988 in Edmond) is a player."}
    assert compare(q, texts).answer == "Ausaf Ali"
    assert compare("Who was born later, Ausaf Ali or Steven Perry?", texts).answer == \
        "Steven Perry"
    # a side that does not say is no answer, never a guess
    assert compare(q, {**texts, "Steven Perry": "Steven Perry is a player."}) is None
    # a life span whose dash was lost runs the birth year into the day of death
    assert [w.text for _a, w in dates_in("Éric Rohmer (21 March 192011 January 2010) was a "
                                         "French director.")] == \
        ["21 March 1920", "11 January 2010"]


def test_both_holds_what_the_texts_say_not_how_it_is_put() -> None:
    # 'described as' is how the question puts it; 'genera' is the plural of 'genus'
    q = "Are both Dictyosperma, and Huernia described as a genus?"
    texts = {"Dictyosperma": "Dictyosperma is a monotypic genus of flowering plant.",
             "Huernia": "The genus Huernia consists of stem succulents from Africa."}
    assert subjects(q) == ("Dictyosperma", "Huernia") and compare(q, texts).answer == "yes"
    assert compare("Are both Dictyosperma and Huernia genera?", texts).answer == "yes"
    # one text that does not say it: no answer, not 'no'
    assert compare(q, {**texts, "Huernia": "Huernia plants grow in Africa."}) is None


def test_the_option_whose_text_says_more_of_what_is_asked() -> None:
    # neither text says every word asked; the one that says clearly more of them is the one
    q = "Which painter, Ada Brill or Tomas Vel, is known for murals, etchings and portraits?"
    texts = {"Ada Brill": "Ada Brill was a Dutch painter of portraits and etchings.",
             "Tomas Vel": "Tomas Vel was a Dutch painter and teacher."}
    got = compare(q, texts)
    assert got is not None and got.answer == "Ada Brill"
    # the property stands before the options too
    q = "Who directed the silent film Harbour Lights, Ada Brill or Tomas Vel?"
    texts = {"Ada Brill": "Ada Brill was a film director; her silent film Harbour Lights ...",
             "Tomas Vel": "Tomas Vel was a film critic."}
    assert compare(q, texts).answer == "Ada Brill"
    # as many words said on each side: no answer
    texts["Tomas Vel"] = "Tomas Vel directed the silent film Harbour Lights."
    assert compare(q, texts) is None


def test_the_option_that_has_more_of_a_thing_or_says_the_property() -> None:
    # the number each text gives of the counted noun, in digits or in words
    q = "Which opera has more acts, Don Quichotte or Tosca?"
    texts = {"Don Quichotte": "Don Quichotte is an opera in five acts by Jules Massenet.",
             "Tosca": "Tosca is an opera in three acts by Giacomo Puccini."}
    assert compare(q, texts).answer == "Don Quichotte"
    assert compare(q.replace("more", "fewer"), texts).answer == "Tosca"
    species = {"Aichryson": "Aichryson is a genus of about 15 species of succulents.",
               "Polypodium": "Polypodium is a genus of 75 to 100 species of ferns."}
    assert compare("Which has more species, Aichryson or Polypodium?", species).answer == \
        "Polypodium"
    # a text that gives no number, or 'more' that counts nothing: no answer
    assert compare(q, {**texts, "Tosca": "Tosca is an opera by Puccini."}) is None
    # the possessive's 's' is no word a text must say
    q = ("Which dog's ancestors include Gordon and Irish Setters: the Manchester Terrier or "
         "the Scotch Collie?")
    got = compare(q, {"Manchester Terrier": "The Manchester Terrier is a breed of dog.",
                      "Scotch Collie": "The Scotch Collie is a landrace breed whose ancestors "
                      "include Gordon and Irish Setters."})
    assert got is not None and got.answer == "Scotch Collie"


def test_the_option_that_is_higher_longer_or_more_populous() -> None:
    # a height in any unit, the one said next to a word of the measure before the rest
    q = "Which peak is higher: Mount Arlo or Crest Vane"
    texts = {"Mount Arlo": "Mount Arlo has a 3 km long ridge; its summit stands at 7,885 m.",
             "Crest Vane": "Crest Vane rises to an elevation of 24,000 ft (7,315 m)."}
    assert compare(q, texts).answer == "Mount Arlo"
    assert compare("Which peak is taller, Crest Vane or Mount Arlo?", texts).answer == \
        "Mount Arlo"
    # the population, not the census year; 'smaller' picks the other
    towns = {"Aldby": "As of the 2010 census, the population was 3,001.",
             "Brayton": "The population was 10,657 at the 2010 census."}
    q = "Which town has a greater population as of the 2010 census, Aldby or Brayton?"
    assert compare(q, towns).answer == "Brayton"
    assert compare("Which town is less populous, Aldby or Brayton?", towns).answer == "Aldby"
    # the place both options share is no part of the answer
    both = {"Aldby, Nevada": towns["Aldby"], "Brayton, Nevada": towns["Brayton"]}
    assert compare("Which town has more residents, Aldby, Nevada or Brayton, Nevada?",
                   both).answer == "Brayton"
    # money is no length, an area no height; a side that gives no number is no answer
    assert compare(q, {**towns, "Aldby": "Aldby is a town."}) is None
    assert compare("Which project was longer, Avon or Brill?",
                   {"Avon": "Avon cost $5 m.", "Brill": "Brill covered 40 km²."}) is None


def test_the_two_things_a_question_names_without_what_it_says_of_them() -> None:
    assert analyze('Which movie was filmed first "The Guest" or "You\'re Next"?').options == \
        ("The Guest", "You're Next")
    assert analyze("Which band, Letters to Cleo or Screaming Trees, had more members?"
                   ).options == ("Letters to Cleo", "Screaming Trees")
    assert subjects("Are Ruggero Deodato from Italy, and Mexican Alejandro Springall, both "
                    "film directors?") == ("Ruggero Deodato", "Alejandro Springall")
    assert subjects("Are both Duke Energy and Affiliated Managers Group based in "
                    "Massachusetts?") == ("Duke Energy", "Affiliated Managers Group")
    assert subjects("Are Yingkou and Fuding the same level of city?") == ("Yingkou", "Fuding")
    assert subjects("Are Random House Tower and 888 7th Avenue both used for real estate?") \
        == ("Random House Tower", "888 7th Avenue")
    # a title that ends with a place keeps it when the place is not one known
    assert subjects("Are The Man from Snowy River and Babe both films?") == \
        ("Man from Snowy River", "Babe")


def test_the_person_a_film_names_in_a_role() -> None:
    from sieve_lite.agent.compare import related_name

    # 'directed by' names the director even when the entity model knows no such person,
    # and before another person the sentence names
    text = ("Copper Lane is a 1974 comedy film, produced, co-written and directed by Orhan "
            "Talip, featuring the singer Leyla Ceylan as a kidnapped star.")
    assert related_name(text, "director", nlp()) == "Orhan Talip"
    assert related_name(text, "producer", None) == "Orhan Talip"
    # a film 'by' someone is theirs; a sentence's full stop ends the name
    assert related_name("Blue Kite is an Indian drama film by Ravi Menon. The film follows a "
                        "boy.", "director", None) == "Ravi Menon"
    assert related_name("Dawn is a film written by J. R. Hale.", "writer", None) == "J. R. Hale"
    assert related_name("Dawn is a short film.", "director", None) == ""


def test_the_name_prose_gives_in_a_role() -> None:
    from sieve_lite.agent.roles import said_in_role

    # names the entity model misses: after '<verb> by', past what the person is
    assert said_in_role("Harbour Lights is an HBO documentary film directed by Mirela "
                        "Dunca.", "director") == ["Mirela Dunca"]
    assert said_in_role('"Tin Roof" is a song by American rapper 4 Corners from his second '
                        "album.", "performer") == ["4 Corners"]
    assert said_in_role("Low Tide is a 2000 house song by Étienne Valère. The track sold "
                        "well.", "performer") == ["Étienne Valère"]
    # a list of the songs' recorders keeps its order; a clause's capital word ends the name
    assert said_in_role("It was recorded by Ada Lind and Bo Strand in 1951.",
                        "performer")[:1] == ["Ada Lind"]
    # parents: the father named first, the mother second; one named alone is no mother
    text = ("Gerold was the youngest son of Godric I, Count of Varn, and Mette Holm, "
            "daughter of Harald, Duke of Sund.")
    assert said_in_role(text, "father")[0] == "Godric I, Count of Varn"
    assert said_in_role(text, "mother") == ["Mette Holm"]
    # ... unless a woman's title says the mother is named first
    text = "Tevita was the son of Queen Salote Lupe and her consort Prince Viliami Tonga."
    assert said_in_role(text, "father") == ["Prince Viliami Tonga"]
    assert said_in_role(text, "mother") == ["Queen Salote Lupe"]
    assert said_in_role("He was the son of Princess Anne.", "father") == []
    # a title may hold 'and': both readings are leads, the whole first
    text = "Aimery was the son of Simon de Val, 5th Earl of Lees and Alis de Mont, and more."
    assert said_in_role(text, "father") == ["Simon de Val, 5th Earl of Lees and Alis de Mont",
                                            "Simon de Val, 5th Earl of Lees"]
    assert said_in_role(text, "mother") == ["Alis de Mont"]
    assert said_in_role("In 1794 she married Louis the Mild.", "husband") == ["Louis the Mild"]
    assert said_in_role("Dawn is a short film.", "director") == []
    # the role's words opening a sentence, in any of their forms (not only the first)
    assert said_in_role("Dawn is a short film. Music by Ines Marr.", "composer") == \
        ["Ines Marr"]


def _first_hop(coll: Any, q: str) -> Bridge:
    """A bridge for ``q`` once its entity's first section is read."""
    b = Bridge(coll, q, nlp())
    b.on_read(b.start, coll.document(b.start)["sections"][0]["text"])
    return b


def _answer_read(coll: Any, b: Bridge) -> tuple[str, float]:
    """(text, prior) of the first candidate of the bridge's answer document, read for the
    bridge's question about it."""
    text = coll.document(b.answer_doc)["sections"][0]["text"]
    top = read_for(b.question(), text, (b.answer_doc, "(intro)"), lambda _w: 1.0,
                   use_nlp=False).candidates[0]
    return top.text, top.prior


def test_a_bridge_takes_the_name_said_in_the_role(tmp_path: Path) -> None:
    db = _collection(tmp_path, "2wiki", [
        {"title": "Harbour Lights (film)", "text": "Harbour Lights is an HBO documentary film "
         "directed by Mirela Dunca."},
        {"title": "Mirela Dunca", "text": "Mirela Dunca (born 1970) is a film maker, the "
         "daughter of Petra Dunca."},
        {"title": "Tin Roof (song)", "text": '"Tin Roof" is a song by American rapper Cody '
         "Vane, produced by Lee Marr."},
        {"title": "Cody Vane", "text": "Cody Vane (born 1989) is a rapper born in Dayton."},
        {"title": "Lee Marr", "text": "Lee Marr is a record producer."},
    ])
    with sieve_lite.open(db) as coll:
        b = _first_hop(coll, "Who is the mother of the director of film Harbour Lights (Film)?")
        assert b.path[-1] == "Mirela Dunca"
        # the qualifier names the performer: he may fill the role all the same
        b = _first_hop(coll, "Where was the performer of song Tin Roof (Cody Vane Song) born?")
        assert b.path[-1] == "Cody Vane"
        # 'the place of birth of the performer': his own page says where he was born (a
        # life fact), so the bridge ends there and asks it of him
        q = "What is the place of birth of the performer of song Tin Roof (Cody Vane Song)?"
        b = _first_hop(coll, q)
        assert [h.role for h in b.hops] == ["performer"]
        assert b.answer_doc == "Cody Vane"
        assert b.question() == "What is the place of birth of Cody Vane?"
        assert _answer_read(coll, b) == ("Dayton", 1.0)


def test_a_bridge_s_last_role_without_a_page_is_chosen_from_the_read(tmp_path: Path) -> None:
    """The last role asked for ('Who is the spouse of ...') is filled by a name the last read
    gives; when no such name has a page here, the read is where the answer is chosen from
    (for the question as asked), not the first name taken, and not no answer."""
    db = _collection(tmp_path, "musique", [
        {"title": "Jump Star", "text": "Jump Star is a 1937 British drama film directed by "
         "Raoul Wade and starring Vic Lane."},
        {"title": "Raoul Wade", "text": "Raoul Wade (1887 - 1980) was an American film "
         "director. He worked with the actor Hob Borth for years. Wade married the actress "
         "Mira Cole in 1916; they divorced in 1926."},
    ])
    with sieve_lite.open(db) as coll:
        q = "Who is the spouse of the director of Jump Star?"
        b = _first_hop(coll, q)
        assert b.path == ["Jump Star", "Raoul Wade"] and b.asks_role
        assert b.answer_doc == ""  # the last role is still to go through
        b.on_read("Raoul Wade", coll.document("Raoul Wade")["sections"][0]["text"])
        assert b.open_end and not b.stuck and not b.answer and b.leads() == b.path
        assert b.answer_doc == "Raoul Wade" and b.question() == q
        # the names it found in the role, in their sentences, are what is chosen from
        text = coll.document("Raoul Wade")["sections"][0]["text"]
        r = b.fillers_reading(text, ("Raoul Wade", "(intro)"))
        # (the actor he worked with is not said in the role: no candidate)
        assert [c.text for c in r.candidates] == ["Mira Cole"]
        assert "married the actress Mira Cole" in r.text()
        assert all(c.label == ("Raoul Wade", "(intro)") for c in r.candidates)
        # a page that names people but none in the role is no open end: the bridge is stuck
        other = _first_hop(coll, q)
        other.on_read("Raoul Wade", "Raoul Wade was a director. He worked with Hob Borth.")
        assert not other.open_end and other.stuck and other.answer_doc == ""
        # the model chooses among the names; it abstains when it finds them unlikely
        assert choose(_Prefers("nobody"), q, [r], "likelihood", "sieve").answer is None
    # the episode: the model's choice, cited where the name is
    from sieve_lite.agent.profile import budgets_for

    ep = run_question(db, q, backbone_obj=_Prefers("Mira Cole"),
                      budgets=budgets_for(135_000_000, 8192))
    assert ep.answer == "Mira Cole", ep.steps
    assert {(c.doc, c.section) for c in ep.citations} == {("Raoul Wade", "(intro)")}


def test_a_bridge_goes_through_a_work_the_question_describes(tmp_path: Path) -> None:
    db = _collection(tmp_path, "hotpotqa", [
        {"title": "Tam Ruddle", "text": "Tam Ruddle (born 2001) is an Australian actor. He "
         'acted as Dylan in "Paper Kites", and as Tyler in the film "The Call".'},
        {"title": "The Call (2015 film)", "text": "The Call is a 2015 horror film written and "
         "directed by Nils Orrin."},
        {"title": "Paper Kites (film)", "text": "Paper Kites is a 2014 family film directed "
         "by Rob Wey."},
        {"title": "Morning Tide", "text": "Morning Tide is a British comedy film that stars "
         "Irish actor Colm Reddan."},
        {"title": "Colm Reddan", "text": "Colm Reddan is an Irish actor."},
    ])
    with sieve_lite.open(db) as coll:
        # a work after the entity, tied by a participle: its title is what the text quotes
        # next to what the question says (Tyler), and the question is then about it
        q = "Tam Ruddle plays Tyler in a film directed by which famous director?"
        assert [(h.role, h.kind) for h in relations(q, "Tam Ruddle")] == [("film", "work")]
        b = _first_hop(coll, q)
        assert b.answer_doc == "The Call (2015 film)"
        assert b.question() == "The Call was directed by which famous director?"
        # what the entity itself is ('is a ... film that') is no role of it; a work's noun
        # right before its title names its kind
        assert [h.role for h in relations("Morning Tide is a British comedy film that stars "
                                          "an actor who was born where?", "Morning Tide")] \
            == ["actor"]
        assert relations("Which country the director of film Paper Kites is from?",
                         "Paper Kites")[0].role == "director"
        # a clause after the entity about another name says which one is meant, not a role
        assert relations("Humboldt Peak, in the state where Silverton is located, is part of "
                         "what mountain range?", "Humboldt Peak") == []
    # a role before the entity with a relative clause: the clause's verb goes with it
    with sieve_lite.open(db) as coll:
        b = _first_hop(coll, "Who directed the 2015 film in which Tam Ruddle appeared?")
        assert [h.role for h in b.hops] == ["film"]
        assert b.named and b.question() == f"Who directed {b.named}?"


def test_a_bridge_starts_at_the_page_about_the_question(tmp_path: Path) -> None:
    db = _collection(tmp_path, "hotpotqa", [
        {"title": "The Long Field (film)", "text": "The Long Field is a 1999 crime film."},
        {"title": "The Long Field (Garden Time)", "text": '"The Long Field" is an episode of '
         "Garden Time; its guest stars include Ben Tully."},
        {"title": "Ben Tully", "text": "Ben Tully is an actor, the younger brother of Sam "
         "Tully."},
    ])
    with sieve_lite.open(db) as coll:
        # of two pages so titled, the one with the question's other words
        assert entity(coll, "Who is the younger brother of the guest stars of the episode "
                            "The Long Field?") == ("The Long Field",
                                                   "The Long Field (Garden Time)")


def test_when_and_where_a_life_began_and_ended() -> None:
    from sieve_lite.agent.lives import asked_fact, life_date, life_place

    span = "Prince Arvid of Lund (8 October 1876 – 30 March 1949) was a Danish prince."
    assert life_date(span, "birth").text == "8 October 1876"
    assert life_date(span, "death").text == "30 March 1949"
    assert life_date("Mara Voss (born 2 May 1950) is a singer.", "death") is None
    told = ("James Hale (March 7, 1876 - October 13, 1943) was a director. He was born in "
            "Frederick, Maryland and died in Baltimore.")
    assert life_place(told, "birth")[0] == "Frederick, Maryland"
    assert life_place(told, "death")[0] == "Baltimore"
    assert life_place("She died on 3 May 1950 in Frankfurt am Main.", "death")[0] == \
        "Frankfurt am Main"
    assert life_place("He was born in 1950.", "birth") is None
    def asked(question: str) -> tuple[str, str, str, bool] | None:
        f = asked_fact(analyze(question))
        return (f.which, f.what, f.who, f.named()) if f else None

    # a role still to go through is no name ('X's father'); a bridge's question, once the
    # role is filled, is ('When was Prince Arvid of Lund born?')
    assert asked("When was Princess Ulla of Lund's father born?") == \
        ("birth", "date", "Princess Ulla of Lund's father", False)
    assert asked("When was Prince Arvid of Lund born?") == \
        ("birth", "date", "Prince Arvid of Lund", True)
    assert asked("Where did the director of film Dawn die?")[:2] == ("death", "place")
    assert asked("What is the place of birth of J. R. Hale?") == \
        ("birth", "place", "J. R. Hale", True)
    assert asked("Where was the place of death of Mara Voss?") == \
        ("death", "place", "Mara Voss", True)
    assert asked("Who was born first, Ann or Bo?") is None


def test_a_life_fact_is_the_candidate_the_engine_is_sure_of() -> None:
    text = ("Prince Arvid of Lund (8 October 1876 – 30 March 1949) was a Danish prince. He "
            "married Princess Helga in 1909 and served until 1921.")
    got = read_for("When was Prince Arvid of Lund born?", text, ("Prince Arvid", "(intro)"),
                   lambda _w: 1.0, use_nlp=False)
    first = got.candidates[0]
    assert (first.text, first.prior, first.label) == ("8 October 1876", 1.0,
                                                      ("Prince Arvid", "(intro)"))
    # the other dates fit less, and the sentence that says it is shown
    assert all(c.prior < 0.5 for c in got.candidates[1:] if c.kind == "date")
    assert any("8 October 1876" in s.text for s in got.sentences)
    # the person's own words in a sentence that says 'He' are read too
    later = read_for("Where was Prince Arvid of Lund born?", text + " He was born in Lund, "
                     "Scania and died in Malmö.", None, lambda _w: 1.0, use_nlp=False)
    assert later.candidates[0].text == "Lund, Scania"
    # a question about anything else, about a role not yet gone through, or a read that
    # opens about someone else, has no such candidate
    for question, read in (("Whom did Prince Arvid marry?", text),
                           ("When was Prince Arvid of Lund's father born?", text),
                           ("When was Olaf Berg born?", text + " Olaf Berg was his aide."),
                           ("When was Olaf Berg born?", "Olaf Berg was a publisher. His "
                            "magazine (founded 1948) grew.")):
        got = read_for(question, read, None, lambda _w: 1.0, use_nlp=False)
        assert all(c.prior < 1.0 for c in got.candidates), question


def test_documents_named_by_number_are_compared_by_their_own_dates(tmp_path: Path) -> None:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    def doc(num: int, created: str, date: str, text: str) -> dict[str, object]:
        return {"id": f"pep-{num:04d}", "title": f"Proposal {num}", "date": date,
                "infobox": [["PEP", str(num)], ["Created", created]],
                "sections": [{"heading": "Abstract", "text": text}]}

    corpus = tmp_path / "peps.jsonl"
    # the later proposal's text names an earlier year: the header's date decides, not that
    corpus.write_text("\n".join(json.dumps(d) for d in (
        doc(8, "05-Jul-2001", "2001-07-05", "A style guide, first drafted in 2001."),
        doc(257, "29-May-2001", "2001-05-29", "Docstring conventions, after a 1999 idea."),
        doc(30, "01-Jan-2010", "2010-01-01", "Mentions PEP 8 and PEP 257 in passing."),
    )), encoding="utf-8")
    db = tmp_path / "peps.db"
    build_collection(iter_documents([corpus], "jsonl"), db, embed=False, quiet=True,
                     source_label="numbered fixture")
    for question, answer in (("Which is older, PEP 8 or PEP 257?", "PEP 257"),
                             ("Which PEP came later, PEP 257 or PEP 8?", "PEP 8")):
        bb = ScriptedBackbone([])
        ep = run_question(db, question, backbone_obj=bb)
        assert ep.answer == answer and not bb.calls
        # each cited at its header, which holds the date compared
        assert {(c.doc, c.section) for c in ep.citations} == {("pep-0008", "infobox"),
                                                               ("pep-0257", "infobox")}


def test_a_state_or_a_country_is_the_name_asked() -> None:
    from sieve_lite.agent.read import _names_asked

    state = analyze("In what state is the maker of the mix headquartered?")
    assert _names_asked(state, "Minnesota") and not _names_asked(state, "Golden Valley")
    assert not _names_asked(state, "United States")
    country = analyze("Which country is the director of the film from?")
    assert _names_asked(country, "China") and not _names_asked(country, "Chinese")
    assert not _names_asked(country, "Texas")


def test_a_compared_thing_with_no_date_is_read_under_its_other_title(tmp_path: Path) -> None:
    db = _collection(tmp_path, "hotpotqa", [
        {"title": "Kim Lowe", "text": "Kim Lowe is an American software engineer known for a "
         "database library."},
        {"title": "Kim Lowe (American football)", "text": "Kim Lowe (born January 17, 1961) "
         "is a former American football player."},
        {"title": "Pat Dale", "text": "Pat Dale (born October 14, 1941) is a former American "
         "football coach."},
    ])
    bb = ScriptedBackbone([])
    ep = run_question(db, "who is younger Kim Lowe or Pat Dale ?", backbone_obj=bb)
    assert ep.answer == "Kim Lowe" and not bb.calls
    assert {c.doc for c in ep.citations} >= {"Kim Lowe (American football)", "Pat Dale"}


def test_a_country_is_said_by_its_demonym() -> None:
    both = "Are Local H and For Against both from the United States?"
    texts = {"Local H": "Local H is an American rock band from Zion, Illinois.",
             "For Against": "For Against is an American post-punk band from Lincoln."}
    assert compare(both, texts).answer == "yes"
    # a text that does not say so is no proof it is not so; one that opens by naming
    # another nation is (read with spaCy's entities)
    assert compare(both, {**texts, "For Against": "For Against is a band."}, nlp()) is None
    french = {**texts, "For Against": "For Against is a French band. It toured Japan."}
    assert compare(both, french) is None   # without entities nothing is read as a nation
    assert compare(both, french, nlp()).answer == "no"
    assert compare("Are Local H and For Against both American?", french, nlp()).answer == "no"
    # a compound nationality whose hyphen lost its word shares either part
    same = "Did the films Local H and For Against originate from the same country?"
    films = {"Local H": "Local H is a 2007 Italian- American mystery film.",
             "For Against": "For Against is a 1951 Italian war film."}
    assert compare(same, films, nlp()).answer == "yes"
    # 'English' does not deny 'British'; a state is denied by another state, not by a city
    # or a person
    brit = {"Local H": "Local H is an English band.", "For Against": "For Against is British."}
    assert compare("Are Local H and For Against both British?", brit, nlp()) is None
    mich = "Are both Local H and For Against located in Michigan?"
    assert compare(mich, {"Local H": "Local H is an airport in Elko County, Nevada.",
                          "For Against": "For Against is in Grand Rapids, Michigan."},
                   nlp()).answer == "no"
    assert compare(mich, {"Local H": "Local H is an airport near Grand Rapids.",
                          "For Against": "For Against is in Grand Rapids, Michigan."},
                   nlp()) is None
    assert compare(both, {**texts, "For Against": "For Against was formed by Michael Jordan "
                                                  "in Lincoln."}, nlp()) is None
    which = "Which writer was from England, Henry Roth or Robert Erskine Childers?"
    texts = {"Henry Roth": "Henry Roth was an American novelist.",
             "Robert Erskine Childers": "Robert Erskine Childers was an English-born writer."}
    assert compare(which, texts).answer == "Robert Erskine Childers"
    # a comparative asks which is more so, not which one says the words
    assert compare("Which writer wrote more novels, Henry Roth or Robert Erskine Childers?",
                   {"Henry Roth": "Roth wrote novels.", "Robert Erskine Childers": "A writer."}
                   ) is None
    # a country: a state stands for its own, a film's nationality says it, a town says none
    country = "Are Jimmy Santiago Baca and Duane Armstrong from the same country?"
    assert compare(country, {"Jimmy Santiago Baca": "Jimmy Santiago Baca is a poet from "
                                                    "Santa Fe, New Mexico.",
                             "Duane Armstrong": "Duane Armstrong is a painter born in Los "
                                                "Angeles, California."},
                   nlp()).answer == "yes"
    films = "Are the movies By The Grace Of God and A Texas Steer from the same country?"
    assert compare(films, {"By The Grace Of God": "By the Grace of God is a 2019 French-"
                                                  "Belgian drama film. It was shot in France.",
                           "A Texas Steer": "A Texas Steer is a lost 1927 American silent "
                                            "film."}, nlp()).answer == "no"
    assert compare(films, {"By The Grace Of God": "By the Grace of God is a drama film shot "
                                                  "near Lake Golovita.",
                           "A Texas Steer": "A Texas Steer is a lost 1927 American silent "
                                            "film."}, nlp()) is None
    same = "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert compare(same, {"Scott Derrickson": "Scott Derrickson is an American director.",
                          "Ed Wood": "Ed Wood was a filmmaker from the United States."},
                   nlp()).answer == "yes"


def test_what_two_things_have_in_common_is_what_both_openings_say() -> None:
    q = "What occupation do Chris Menges and Aram Avakian share?"
    assert is_comparison(q) and subjects(q) == ("Chris Menges", "Aram Avakian")
    texts = {"Chris Menges": "Chris Menges (born 1940) is an English cinematographer and film "
                             "director. He won two Academy Awards.",
             "Aram Avakian": "Aram Avakian (1926-1987) was an American film editor and "
                             "director. He was born in New York."}
    got = compare(q, texts, nlp())
    assert got is not None and got.answer == "director"
    # two values in common ('singer' and 'songwriter') are no one answer
    two = {"Chris Menges": "Chris Menges is an English singer and songwriter.",
           "Aram Avakian": "Aram Avakian is an American songwriter and singer."}
    assert compare(q, two, nlp()) is None
    nation = "What nationality were social anthropologists Alfred Gell and Edmund Leach?"
    assert subjects(nation) == ("Alfred Gell", "Edmund Leach")
    got = compare(nation, {"Alfred Gell": "Alfred Gell was a British anthropologist.",
                           "Edmund Leach": "Sir Edmund Leach was a British anthropologist."},
                  nlp())
    assert got is not None and got.answer == "British"
    # a clause is no name: this asks who, and compares nothing
    assert not is_comparison("What chef is the owner of a Japanese restaurant in Tribeca and "
                             "also owns a bar in Nevada?")


# (question, what ``shared`` reads of it, each subject's text, the answer or None)
IN_COMMON = [
    ("Which NFL team did both Don Looney and DeSean Jackson play for?",
     ("team", "Don Looney", "DeSean Jackson"),
     # not 'He' (a sentence's first word), 'National Football League' (the question's 'NFL'
     # spelled out), 'American' (not asked) nor 'Eagles' (part of a longer name)
     ("Don Looney was an American football end in the National Football League. He played "
      "for the Philadelphia Eagles.",
      "DeSean Jackson is an American football wide receiver in the National Football League. "
      "He was drafted by the Philadelphia Eagles in 2008."),
     "Philadelphia Eagles"),
    ("What do Susan Stafford and Vanna White have in common?",
     ("", "Susan Stafford", "Vanna White"),
     ("Susan Stafford is an American former model, best known as the original hostess of "
      "Wheel of Fortune.",
      "Vanna White is an American television personality, the hostess of Wheel of Fortune "
      "since 1982."),
     "Wheel of Fortune"),
    ("What country of origin does The Late Late Show and Craig Kilborn have in common?",
     ("country", "The Late Late Show", "Craig Kilborn"),
     ("The Late Late Show is an American late-night talk show on CBS.",
      "Craig Kilborn is an American comedian who hosted a show on CBS."),
     "American"),
    # a name that says it is another kind of place is no answer to 'what city'
    ("What city does Paul Clyne and David Soares have in common?",
     ("city", "Paul Clyne", "David Soares"),
     ("Paul Clyne was the District Attorney of Albany County.",
      "David Soares is the District Attorney of Albany County."),
     None),
]


@pytest.mark.parametrize("question, parts, texts, answer", IN_COMMON)
def test_what_two_things_have_in_common_is_a_name_both_texts_say(
        question: str, parts: tuple[str, str, str], texts: tuple[str, str],
        answer: str | None) -> None:
    assert shared(question) == parts and is_comparison(question)
    got = compare(question, dict(zip(parts[1:], texts, strict=True)), nlp())
    assert (got.answer if got else None) == answer


def test_two_names_are_not_compared_without_a_word_that_they_share_something() -> None:
    assert shared("What year did Paul Clyne and David Soares marry?") is None


def _collection(tmp_path: Path, fmt: str, docs: list[dict[str, str]]) -> Path:
    """A lexical collection of a few title/text documents in the QA corpus format ``fmt``."""
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(docs), encoding="utf-8")
    db = tmp_path / f"{fmt}.db"
    build_collection(iter_documents([corpus], fmt), db, embed=False, quiet=True,
                     source_label=f"{fmt} fixture")
    return db


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    out = tmp_path_factory.mktemp("wiki") / "2wiki.db"
    build_collection(iter_documents([DATA / "qa" / "2wiki" / "corpus.json"], "2wiki"), out,
                     embed=False, quiet=True, source_label="2wiki fixture")
    return out


QUESTIONS = {q["question"]: q["answer"]
             for q in json.loads((DATA / "qa" / "2wiki" / "questions.json").read_text())}


@pytest.mark.parametrize("question", [
    "Was Ausaf Ali or Steven Perry born first?",
    "Who died first, Earl Valiquette or Jean-Joseph Gaume?",
    "Which film was released more recently, Bollywood Dream or Pretty Persuasion?",
    "Did R. D. Call and Taryn Power share the same nationality?",
    "Which film has the director born first, Toto And Cleopatra or Land Of Peace?",
])
def test_a_comparison_is_answered_from_what_was_read_about_each(wiki: Path,
                                                                 question: str) -> None:
    bb = ScriptedBackbone([])  # the engine reads and decides: no model call at all
    ep = run_question(wiki, question, backbone_obj=bb)
    assert ep.answer == QUESTIONS[question] and not bb.calls
    assert len(ep.citations) == 2 and ep.accounting.fetches >= 2
    assert ep.steps[0].info["plan_why"].startswith("it compares")


def test_a_compared_thing_is_read_in_its_own_sense(tmp_path: Path) -> None:
    from sieve_lite.agent.compare import documents_for

    db = _collection(tmp_path, "hotpotqa", [
        {"title": "Ed Wood", "text": "Ed Wood was an American filmmaker and actor."},
        {"title": "Ed Wood (film)", "text": "Ed Wood is a 1994 American biographical film "
         "about the filmmaker, with a nationality of its own in the credits."},
        {"title": "Scott Derrickson", "text": "Scott Derrickson is an American director."},
        {"title": "Inside Job (TV series)", "text": "Inside Job is an animated series."},
        {"title": "Inside Job (2010 film)", "text": "Inside Job is a 2010 documentary film "
         "about the financial crisis."},
        {"title": "Flying Padre", "text": "Flying Padre is a 1951 black-and-white short "
         "documentary film."},
        {"title": "Alec Gibson", "text": "Alec Gibson was a footballer who liked a drink of "
         "gin."},
        {"title": "Gibson (cocktail)", "text": "The Gibson is a mixed drink made with gin and "
         "dry vermouth."},
        {"title": "Zurracapote", "text": "Zurracapote is a popular Spanish drink made with "
         "red wine."},
        *({"title": f"Teatro Giuseppe Verdi ({town})", "text": f"An opera house in {town} "
           "named after the composer Giuseppe Verdi."} for town in ("Trieste", "Pisa",
                                                                    "Salerno", "Busseto")),
        {"title": "Giuseppe Verdi", "text": "Giuseppe Verdi was an Italian opera composer."},
        {"title": "Ambroise Thomas", "text": "Ambroise Thomas was a French opera composer."},
    ])
    with sieve_lite.open(db) as coll:
        def docs(question: str) -> list[str]:
            return [coll.document(d)["title"] for _s, d, _q in documents_for(coll, question)]

        # the plain title is the name's main sense; a qualified one when the question says
        # its qualifier, or when it is the only one so named
        assert docs("Were Scott Derrickson and Ed Wood of the same nationality?") == \
            ["Scott Derrickson", "Ed Wood"]
        assert docs("Which is a black-and-white film, Flying Padre or Inside Job?") == \
            ["Flying Padre", "Inside Job (2010 film)"]
        assert docs("Do the drinks Gibson and Zurracapote both contain gin?") == \
            ["Gibson (cocktail)", "Zurracapote"]
        # the exact title, however many titles hold the name
        assert docs("Are Giuseppe Verdi and Ambroise Thomas both opera composers?") == \
            ["Giuseppe Verdi", "Ambroise Thomas"]


def test_a_bridge_goes_through_the_role_the_question_names(wiki: Path) -> None:
    with sieve_lite.open(wiki) as coll:
        q = "Where did the composer of film The Merry Monahans die?"
        assert entity(coll, q) == ("The Merry Monahans", "The Merry Monahans")
        assert [h.role for h in relations(q, "The Merry Monahans")] == ["composer"]
        deep = "Where was the place of death of the director of film A Rare Bird?"
        # (the place of death is then read off the director's own page, a life fact)
        assert [h.role for h in relations(deep, "A Rare Bird")] == ["director"]
        # 'the village of X' names X's kind, not a role; a question with no entity: no bridge
        assert not Bridge(coll, "Where is the village of Marufabad?", None)
        assert not Bridge(coll, "Who wrote about volcanoes?", None)
        # once the role is filled, the answer document is asked about that name: it need
        # not say the path's words ('composer', 'The Merry Monahans'), only what is asked
        b = Bridge(coll, q, nlp())
        assert b.question() == q  # not crossed yet
        doc = coll.document(b.start)
        b.on_read(b.start, "\n".join(sec["text"] for sec in doc["sections"]))
        assert b.answer_doc and b.named
        assert b.question() == f"Where did {b.named} die?"


def test_a_possessive_role_is_replaced_by_the_name_it_leads_to(tmp_path: Path) -> None:
    db = _collection(tmp_path, "2wiki", [
        {"title": "Princess Ulla of Lund", "text": "Princess Ulla of Lund (1910-1975) was the "
         "daughter of Prince Arvid of Lund."},
        {"title": "Prince Arvid of Lund", "text": "Prince Arvid of Lund (8 October 1876 – 30 "
         "March 1949) was a Danish prince."},
    ])
    with sieve_lite.open(db) as coll:
        q = "When was Princess Ulla Of Lund's father born?"
        b = _first_hop(coll, q)
        # 'X's father born?': the role is 'father', not the verb after it
        assert b.answer_doc == "Prince Arvid of Lund"
        assert b.question() == "When was Prince Arvid of Lund born?"
        # ... which the read of that page answers with its life span's first date
        assert _answer_read(coll, b) == ("8 October 1876", 1.0)


def test_a_bridge_finds_the_role_however_the_question_ties_it(wiki: Path) -> None:
    def roles(q: str, name: str) -> list[str]:
        return [h.role for h in relations(q, name)]

    # a role right before the entity, tied to it by the clause after it
    assert roles("Who was in charge of the country Ceelmakoile is located in?",
                 "Ceelmakoile") == ["country"]
    assert roles("What year did the company Novair International Airways is part of "
                 "dissolve?", "Novair International Airways") == ["company"]
    assert roles("Who founded the band Pearl Jam?", "Pearl Jam") == []  # names its kind
    # a possessive with no modifier, and a place of birth said either way
    assert roles("Who did Barry Wesson's team play in the World Series?",
                 "Barry Wesson") == ["team"]
    assert roles("What is the most popular hotel in Gisvi's city of birth?",
                 "Gisvi") == ["birthplace"]
    assert roles("Of what church is the Diocese of the birthplace of Meehan Bonnar?",
                 "Meehan Bonnar") == ["birthplace"]
    # a role after the entity that a relative clause asks about, an occupation as a role
    assert roles("Ralph Hefferline was a psychology professor at a university that is "
                 "located in what city?", "Ralph Hefferline") == ["university"]
    assert roles("Seven Brief Lessons on Physics was written by an Italian physicist that has "
                 "worked in France since what year?", "Seven Brief Lessons on Physics") == \
        ["physicist"]
    assert roles("In 1991 Euromarché was bought by a chain that operated how many "
                 "hypermarkets?", "Euromarché") == ["chain"]
    assert roles("The battle in which Giuseppe Arimondi died secured what for Ethiopia?",
                 "Giuseppe Arimondi") == ["battle"]
    # punctuation inside the entity's name, and the role's mention nearest it
    hops = relations("What county shares a border with the county in which Johnnycake, West "
                     "Virginia is located?", "Johnnycake West Virginia")
    assert [h.role for h in hops] == ["county"] and "border" not in hops[0].cues
    with sieve_lite.open(wiki) as coll:
        # the role's filler is the answer only when nothing more is asked about it
        assert Bridge(coll, "Who is the composer of film The Merry Monahans?", None).asks_role
        assert not Bridge(coll, "What is the composer of film The Merry Monahans named "
                                "after?", None).asks_role


def test_a_bridge_reads_the_filler_s_document_about_what_is_asked(tmp_path: Path) -> None:
    db = _collection(tmp_path, "musique", [
        {"title": "Henry Worrall (artist)", "text": "Henry Worrall was an American visual "
         "artist. He settled in Topeka and died there in 1902, in the state of Kansas."},
        {"title": "Kansas", "text": "Kansas is divided into 4 congressional districts, each "
         "electing one member of the House of Representatives for a term of two years."},
        {"title": "Kansas", "text": "Kansas, a state, covers 82,278 square miles."},
        {"title": "Battle of Mine Creek", "text": "The Battle of Mine Creek was fought in "
         "Linn County, Kansas, in October 1864."},
        {"title": "Ralph Hefferline", "text": "Ralph Hefferline was a professor of psychology "
         "at Columbia University."},
        {"title": "Columbia University", "text": "Columbia University is a private research "
         "university in New York City."},
        {"title": "Brand (play)", "text": "Brand is a play by the Norwegian playwright Henrik "
         "Ibsen, written in 1865."},
        {"title": "Nora Ibsen", "text": "Nora Ibsen is a producer of the 2006 Ibsen Year, "
         "Norway's anniversary of playwright Henrik Ibsen's death."},
        {"title": "Decade (album)", "text": "Decade is a compilation album by Canadian "
         "musician Neil Young."},
        {"title": "Scott Young (writer)", "text": "Scott Young was a Canadian writer, the "
         "father of the sibling performers Neil Young and Astrid Young."},
        {"title": "Cortez the Killer", "text": "Cortez the Killer is a song by Neil Young, "
         "its performer on the album Zuma."},
    ])
    with sieve_lite.open(db) as coll:
        q = "The state where Henry Worrall died has how many congressional districts?"
        b = Bridge(coll, q, nlp())
        assert [h.role for h in b.hops] == ["state"]
        b.on_read(b.start, coll.fetch(b.start, "(intro)").text)
        # of the two documents titled 'Kansas', the one about what is asked, not its area
        # (which the title alone ranks first: it is the shorter)
        assert "congressional" in coll.fetch(b.answer_doc, "(intro)").text
        # a role right before the name, tied by a clause that ends the question
        q = "Who was governor of the state the Battle of Mine Creek was fought?"
        assert [h.role for h in Bridge(coll, q, None).hops][:1] == ["state"]
        # a role after the entity: its filler's document is asked what the clause asks
        q = "Ralph Hefferline was a psychology professor at a university that is located in " \
            "what city?"
        b = Bridge(coll, q, nlp())
        b.on_read(b.start, coll.fetch(b.start, "(intro)").text)
        assert b.named == "Columbia University"
        assert b.question() == "Columbia University is located in what city?"
        # a filler with no document of its own is read where its name is said, even without
        # the question's other words ('country', 'citizen')
        b = Bridge(coll, "What country was the author of Brand a citizen of?", nlp())
        b.on_read(b.start, coll.fetch(b.start, "(intro)").text)
        assert b.named == "Henrik Ibsen" and not b.stuck
        assert "Norway" in coll.fetch(b.answer_doc, "(intro)").text
        # a later role's filler is never an earlier one's (Neil Young is no sibling of his,
        # though the page that names his sibling names him first)
        b = Bridge(coll, "Who is the sibling of the performer of Decade?", nlp())
        for _hop in b.hops:
            if not b.stuck:
                b.on_read(b.path[-1], coll.fetch(b.path[-1], "(intro)").text)
        assert b.fillers[0] == "Neil Young" and "Neil Young" not in b.fillers[1:]


def test_a_filler_without_a_page_is_read_where_a_title_holds_it(tmp_path: Path) -> None:
    db = _collection(tmp_path, "musique", [
        {"title": "Pocahontas Mounds", "text": "Pocahontas Mounds is an archaeological site "
         "in Hinds County, Mississippi."},
        {"title": "Midway, Copiah County, Mississippi", "text": "Midway, Mississippi, is a "
         "part of the United States."},
        {"title": "History of Mississippi", "text": "In 1817 elected delegates wrote a "
         "constitution and applied to Congress for statehood. On Dec. 10, 1817, the western "
         "portion of Mississippi Territory became the State of Mississippi, the 20th state of "
         "the Union."},
        {"title": "Tennessee", "text": "Tennessee, beside Mississippi, became part of the "
         "United States."},
    ])
    with sieve_lite.open(db) as coll:
        b = Bridge(coll, "When did the state where Pocahontas Mounds is located become part "
                         "of the United States?", nlp())
        b.on_read(b.start, coll.fetch(b.start, "(intro)").text)
        # no page is titled 'Mississippi': the page about it is one whose title holds it,
        # not a place in it (after a comma), nor a page that only says it
        assert b.named == "Mississippi" and b.answer_doc == "History of Mississippi"
        # the role and the relative clause that holds the entity give way to the filler
        assert b.question() == "When did Mississippi become part of the United States?"
        # ... a clause of place only: a 'that' clause's parse takes in the main verb too often
        q = "When was the state that holds Pocahontas Mounds admitted?"
        at = q.index("Pocahontas")
        assert Bridge(coll, q, nlp())._relative_clause((at, at + 17)) is None
        q = "When was the state where Pocahontas Mounds lies admitted?"
        at = q.index("Pocahontas")
        assert Bridge(coll, q, nlp())._relative_clause((at, at + 17)) is not None


def test_a_grandparent_is_a_parent_s_parent(tmp_path: Path) -> None:
    db = _collection(tmp_path, "2wiki", [
        {"title": "Thomas Baker", "text": "Thomas Baker was an English painter. He was the son "
         "of George Baker, and his mother was Alice Jones."},
        {"title": "Alice Jones", "text": "Alice Jones was an English singer. Her father was "
         "Henry Jones, a London merchant."},
        {"title": "George Baker", "text": "George Baker was an English printer. His father was "
         "William Baker."},
        {"title": "Henry Jones", "text": "Henry Jones was a London merchant."},
    ])
    with sieve_lite.open(db) as coll:
        b = Bridge(coll, "Who is Thomas Baker's maternal grandfather?", None)
        assert [h.role for h in b.hops] == ["mother", "father"] and b.asks_role
        b = Bridge(coll, "Who is the paternal grandfather of Thomas Baker?", None)
        assert [h.role for h in b.hops] == ["father", "father"] and b.asks_role
        # asked about the filler, not for it
        assert not Bridge(coll, "What nationality is Thomas Baker's father?", None).asks_role
        assert not Bridge(coll, "What is the county seat of the county where Thomas Baker "
                          "is?", None).asks_role
    ep = run_question(db, "Who is Thomas Baker's maternal grandfather?",
                      backbone_obj=ScriptedBackbone([]))
    assert ep.answer == "Henry Jones" and ep.citations
    # a filler with no document of its own is not taken on trust (measured: every such
    # first name on the QA sets was wrong): the model chooses among the names said in the
    # role (its abstaining: test_a_bridge_s_last_role_without_a_page_is_chosen_from_the_read)
    from sieve_lite.agent.profile import budgets_for

    small = budgets_for(135_000_000, 8192)
    ep = run_question(db, "Who is the paternal grandfather of Thomas Baker?",
                      backbone_obj=_Prefers("William Baker"), budgets=small)
    assert ep.answer == "William Baker"
    assert {c.doc for c in ep.citations} == {"George Baker"}


def test_a_bridge_takes_the_place_the_text_says_it_is_in() -> None:
    from sieve_lite.agent.bridge import Hop, bridge_name

    country = Hop("country", "place", ("country",))
    text = ("Damerjog is a small village located in eastern Djibouti, in the Arta Region, "
            "north of the border with Somalia.")
    names = bridge_name(text, country, nlp(), set())
    assert names[0] == "Djibouti" and "Somalia" not in names  # not what it borders
    # a part of a place said by its direction is in that place ('West Virginia' is not)
    area = Hop("area", "place", ("area",))
    text = ("The Intrepid Wind Farm consists of 107 wind turbines, located in Sac and Buena "
            "Vista counties in north-west Iowa.")
    assert "Iowa" in bridge_name(text, area, nlp(), set())
    text = "The Lost River flows through West Virginia."
    assert "Virginia" not in bridge_name(text, area, nlp(), set())
    # 'written by' names the writer, though 'written' and 'writer' part after four letters
    writer = relations("Who was the writer of These Boots Are Made for Walkin?",
                       "These Boots Are Made for Walkin")[0]
    text = ("These Boots Are Made for Walkin' is a hit song written by Lee Hazlewood and "
            "recorded by Nancy Sinatra.")
    assert bridge_name(text, writer, nlp(), set())[0] == "Lee Hazlewood"
    state = Hop("state", "place", ("state",))
    text = "Shringarpur is a small village in Ratnagiri district, Maharashtra state, India."
    # the text says which; 'Maharashtra state' is tried as a title, then 'Maharashtra'
    assert bridge_name(text, state, nlp(), set())[:2] == ["Maharashtra state", "Maharashtra"]


def test_the_words_that_tie_a_role_to_the_entity_find_its_filler() -> None:
    from sieve_lite.agent.bridge import bridge_name

    # a relative clause between the role and the entity: the rest of the clause is what the
    # text says next to the filler, not the role's own noun
    q = ("The organization that Marta Velicu chaired for two terms as president was founded "
         "in what year?")
    hop = relations(q, "Marta Velicu")[0]
    assert hop.role == "organization" and {"chaired", "terms", "president"} <= set(hop.cues)
    assert "founded" not in hop.cues  # the main clause asks; it ties nothing
    text = ("Marta Velicu was a Romanian diplomat, a member of the Liberal Union. She chaired "
            "two terms as president of the Assembly of the Danube Commission.")
    names = bridge_name(text, hop, nlp(), {"marta velicu"})
    # the body of another body may be the page there is: both are tried, the whole first
    assert names[:2] == ["Assembly of the Danube Commission", "Danube Commission"]
    # ... but a place's one word is no body ('University of Kansas' is not 'Kansas')
    uni = relations("The university that Ola Brenn taught at has how many students?",
                    "Ola Brenn")[0]
    assert "Kansas" not in bridge_name("Ola Brenn taught at the University of Kansas.", uni,
                                       nlp(), {"ola brenn"})
    # the words between the entity and a role after it
    hop = relations("Ivo Prenta held a heavyweight title by an organization recognized by "
                    "which museum?", "Ivo Prenta")[0]
    assert {"held", "heavyweight", "title"} <= set(hop.cues)
    # a role and its entity in one short question: no clause to take
    assert relations("Where was the director of film Paper Kites born?",
                     "Paper Kites")[0].cues[:2] == ("director", "film")


def test_a_name_that_holds_the_noun_asked_names_a_thing_of_that_kind() -> None:
    # 'World War II' for 'which war': sharing the asked noun does not make it the
    # question's own words (it did: the name ranked below 'stone cross')
    q = analyze("The Brenmoor Memorial commemorates the fallen of which war?")
    text = ("The Brenmoor Memorial is a stone cross in Kent. It commemorates the men of the "
            "parish who fell in World War II, and was unveiled by Lord Ash.")
    reading = read_for(q, text, ("Brenmoor Memorial", "(intro)"), lambda _w: 1.0)
    assert "World War II" in [c.text for c in reading.candidates[:2]]


def test_a_name_of_the_kind_asked_for_is_preferred() -> None:
    # 'the name of the waterfall' asks for a waterfall; what a sentence defines as one is one
    q = analyze("What is the name of the waterfall in Zimbabwe?")
    assert q.target.head == "waterfall"
    text = ("Victoria Falls (Mosi-oa-Tunya, 'The Smoke that Thunders') is a waterfall in "
            "southern Africa on the Zambezi River at the border between Zambia and Zimbabwe.")
    reading = read_for(q, text, ("Victoria Falls", "(intro)"), lambda _w: 1.0)
    assert reading.candidates[0].text == "Victoria Falls"
    assert reading.candidates[0].kind == "defined"
    # 'Which county ...': a name ending in 'County' first; a word before an article is a verb
    q = analyze("What county shares a border with McDowell County?")
    assert q.target.head == "county"
    text = ("The tavern stands in Linville Falls, Avery County, North Carolina. Famous Louise's "
            "Rock House Restaurant sits on the line between Avery County and McDowell County.")
    assert _top(q, text).text == "Avery County"
    # such a name fits fully, whatever kind it was found as
    q = analyze("Humboldt Peak, in Colorado, is part of what mountain range?")
    text = ("Humboldt Peak is a high mountain summit in the Sangre de Cristo Range of the "
            "Rocky Mountains of North America.")
    top = _top(q, text)
    assert top.text == "Sangre de Cristo Range" and top.prior > 0.8
    # a name built on the noun asked, with 'of', is such a name too
    q = analyze("Of what church is the Diocese of Fredericton?")
    text = ("The Diocese of Fredericton is a diocese of the Ecclesiastical Province of Canada "
            "of the Anglican Church of Canada. Established in 1845, its first bishop was John "
            "Medley.")
    prior = {c.text: c.prior for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert prior["Anglican Church of Canada"] > 0.8
    # ... but 'what kind of university' asks for a kind, not a name
    q = analyze("What kind of university did Judith Viorst attend?")
    text = "Viorst is a graduate of Rutgers University, a land-grant university in New Jersey."
    cands = read_for(q, text, None, lambda _w: 1.0).candidates
    assert cands[0].text == "land-grant university"
    # ... which no proper name of one is
    prior = {c.text: c.prior for c in cands}
    assert prior["Rutgers University"] < 0.4 < prior["land-grant university"]


def test_a_quoted_blank_is_filled_from_the_text_not_by_the_model() -> None:
    from sieve_lite.agent.choice import choose
    from sieve_lite.agent.read import fill_blank

    text = ("Open issues remain. Should C modules listed in \"Undocumented modules\" be "
            "removed too? The old basic REPL stays as a fallback for users.")
    q = ("In PEP 356's section \"Open issues\", which word fills the blank: \"- should C "
         "modules listed in \"___ modules\" be removed too?\"")
    assert fill_blank(q, text) == ("Undocumented", text.index("Undocumented"))
    # a blank that opens the passage: the one word before what matches
    assert fill_blank('Which word fills the blank: "___ stays as a fallback for users"?',
                      text) == ("REPL", text.index("REPL"))
    # more than one word, between matching words
    assert fill_blank('Fill the blank: "removed too? The ___ stays as a fallback"', text) \
        == ("old basic REPL", text.index("old basic"))
    # too little of the passage matches: no fill, rather than a guess
    assert fill_blank('Fill the blank: "the ___ modules"', text) is None
    assert fill_blank("Which modules are undocumented?", text) is None
    # an apostrophe next to the blank is the passage's, not a quotation mark
    assert fill_blank('Fill the blank: "Barry ___\'s original idea was for fat files."',
                      "Barry Warsaw's original idea was for fat files.")[0] == "Warsaw"
    # a document number inside the quoted passage is not the document asked about
    assert analyze('In PEP 3141\'s section "Abstract", which word fills the blank: "a '
                   'hierarchy of ___ Base Classes (PEP 3119)"').docnums == (("PEP", "3141"),)
    reading = read_for(q, text, ("pep-0356", "Open issues"), lambda _w: 1.0, use_nlp=False)
    assert reading.candidates[0].kind == "blank"
    bb = ScriptedBackbone([])  # the text decides: the model is not asked
    got = choose(bb, q, [reading], "likelihood", "sieve")
    assert got.answer is not None and got.answer.text == "Undocumented" and not bb.calls
    assert got.answer.label == ("pep-0356", "Open issues")


# ------------------------------------------------------------------------ with the model
@pytest.mark.slow
def test_the_shipped_model_chooses_a_prose_answer_by_likelihood() -> None:
    from sieve_lite.agent.backbones import LlamaBackbone
    from sieve_lite.agent.choice import MIN_LEAD, by_grammar, by_likelihood
    from sieve_lite.agent.read import collection_idf
    from tests.test_agent_plan import _build

    q = ("Which third-party library was the standard library's TOML reader based on?")
    db = _build(Path(__import__("tempfile").mkdtemp()), "peps", DATA / "corpora" / "peps")
    with sieve_lite.open(db) as coll:
        text = coll.fetch("pep-0680", "Rationale").text
        reading = read_for(q, text, ("pep-0680", "Rationale"), collection_idf(coll))
    bb = LlamaBackbone(n_ctx=4096)
    got = by_likelihood(bb, q, reading.text(), reading.candidates)
    assert got.scores[0]["text"] == "tomli"
    assert got.answer is not None and got.answer.label == ("pep-0680", "Rationale")
    # two log levels side by side ('FATAL' is the answer, 'CRITICAL' what Python kept): the
    # model's belief is split, and a candidate barely ahead of the second is no answer
    q = ("Which log level name, used by log4j, did Python's logging system avoid because "
         "it implies death?")
    with sieve_lite.open(db) as coll:
        text = coll.fetch("pep-0282", "Levels").text
        reading = read_for(q, text, ("pep-0282", "Levels"), collection_idf(coll))
    split = by_likelihood(bb, q, reading.text(), reading.candidates)
    first, second = split.scores[:2]
    assert {first["text"], second["text"]} == {"FATAL", "CRITICAL"}
    if first["share"] <= MIN_LEAD * second["share"]:
        assert split.answer is None and "about as likely" in split.why
    # the constrained choice can only pick one of the candidates offered
    picked = by_grammar(bb, q, reading.text(), reading.candidates, "sieve")
    assert any(s["picked"] for s in picked.scores)


def test_over_a_server_the_model_chooses_under_a_constraint_of_the_candidates() -> None:
    from sieve_lite.agent.choice import by_grammar

    q = analyze("How many characters may a line have at most, as a maximum?")
    reading = read_for(q, TEXT, ("pep-0008", "Maximum Line Length"), lambda _w: 1.0)
    pick = reading.candidates[0].text
    bb = ScriptedBackbone([f"answer: {pick}"])
    got = by_grammar(bb, q, reading.text(), reading.candidates, "sieve")
    menu = bb.calls[-1]["menu"]
    assert menu.answer_only and pick in menu.choices  # the only answers it may write
    assert f'"{pick}"' in bb.calls[-1]["grammar"]
    assert [s["text"] for s in got.scores if s["picked"]] == [pick]


# ------------------------------------------------------- a hop through the document read
_HOP_DOCS = [
    {"title": "Gerd Kalish", "text": "Gerd Kalish (died May 1990) was a Lithuanian "
     "photographer who documented life in the Vilna Ghetto during the war."},
    {"title": "Vilna Ghetto", "text": "The Vilna Ghetto was a ghetto in Vilnius. At its "
     "peak the ghetto held about 40,000 people."},
    # more of the question's words, but the read never names it
    {"title": "Lodz Ghetto", "text": "The Lodz Ghetto held many people: at its peak it held "
     "160,000 people, and its life was documented by many."},
    {"title": "Kaunas", "text": "Kaunas is a city in Lithuania."},
]
_HOP_Q = "The ghetto that Gerd Kalish documented held how many people at its peak?"


def test_a_read_leads_to_the_document_it_names_that_the_question_s_words_find(
        tmp_path: Path) -> None:
    from sieve_lite.agent.hops import named_next

    db = _collection(tmp_path, "hotpotqa", _HOP_DOCS)
    with sieve_lite.open(db) as coll:
        text = coll.fetch("Gerd Kalish", "(intro)").text
        ref = named_next(coll, analyze(_HOP_Q), "Gerd Kalish", "Gerd Kalish", text,
                         {"Gerd Kalish"})
        # 'Lodz Ghetto' holds more of the question's words; the read names 'Vilna Ghetto'
        assert ref is not None and ref.doc == "Vilna Ghetto"
        assert "kalish" not in ref.query and "ghetto" in ref.query
        # nothing the question's other words find is named there: no lead
        assert named_next(coll, analyze(_HOP_Q), "Kaunas", "Kaunas",
                          coll.fetch("Kaunas", "(intro)").text, {"Kaunas"}) is None


class _Unsure(ScriptedBackbone):
    """A backbone that finds every candidate unlikely, so each choice abstains (the loop's
    unit test: which documents the engine reads, not what a model answers)."""

    def score(self, messages: Any, conts: list[str], prefill: str = "") -> list[float]:
        self.calls.append({"score": conts})
        return [-40.0 for _ in conts]


def test_a_read_that_does_not_answer_leads_to_the_document_it_names(tmp_path: Path) -> None:
    from sieve_lite.agent.profile import budgets_for

    db = _collection(tmp_path, "hotpotqa", _HOP_DOCS)
    bb = _Unsure([])  # no action is asked of it: the engine reads, the model only scores
    ep = run_question(db, _HOP_Q, backbone_obj=bb, budgets=budgets_for(135_000_000, 8192))
    reads = [(s.action.doc, s.info.get("lead", "")) for s in ep.steps
             if s.action is not None and s.action.kind == "fetch"]
    assert [d for d, _ in reads] == ["Gerd Kalish", "Vilna Ghetto"]
    assert "names Vilna Ghetto" in reads[1][1]
    # both reads were chosen from, and neither choice was sure: no answer, not a guess
    assert sum(1 for c in bb.calls if "score" in c) == 2
    assert ep.answer == NO_ANSWER and ep.accounting.no_answer


_TIMING = {"id": "pep-0996", "title": "Frobnicator timing", "date": "2020-01-01",
           "author": ["A B"], "sections": [
               {"heading": "Timing", "text": "Ada Byron and Bob Stone first timed the "
                "frobnicator cache locks."},
               {"heading": "Notes", "text": "Carl Young wrote notes on the frobnicator cache."},
               {"heading": "History", "text": "The project began in 2001."}]}


def test_a_first_read_that_does_not_answer_and_names_nothing_leads_to_the_next_section(
        tmp_path: Path) -> None:
    from sieve_lite.agent.profile import budgets_for
    from tests.test_agent_loop import MINI_DOCS, build_db

    db = build_db(tmp_path / "timing.db", [_TIMING, *MINI_DOCS])
    bb = _Unsure([])  # each choice abstains: which sections the engine reads, not answers
    ep = run_question(db, "Who first timed the frobnicator cache locks?", backbone_obj=bb,
                      budgets=budgets_for(135_000_000, 8192))
    reads = [(s.action.doc, s.action.section, s.info.get("lead", "")) for s in ep.steps
             if s.action is not None and s.action.kind == "fetch"]
    assert [(d, sec) for d, sec, _ in reads] == [("pep-0996", "Timing"), ("pep-0996", "Notes")]
    assert reads[1][2] == "pep-0996 | Timing did not answer; its next section for the question"
    assert ep.answer == NO_ANSWER


class _Prefers(ScriptedBackbone):
    """A backbone that finds one candidate likely and every other one unlikely (``other``:
    their log-likelihood; -4 only leans to the favourite, never sure of it)."""

    def __init__(self, favourite: str, other: float = -40.0) -> None:
        super().__init__([])
        self.favourite = favourite
        self.other = other

    def score(self, messages: Any, conts: list[str], prefill: str = "") -> list[float]:
        self.calls.append({"score": conts})
        return [-1.0 if c.strip() == self.favourite else self.other for c in conts]


def test_a_document_reached_through_the_read_that_is_what_is_asked_is_the_answer() -> None:
    text = "The Vilna Ghetto was a ghetto in Vilnius. At its peak it held 40,000 people."
    q = analyze("Which ghetto in Vilnius did the photographer document?")
    reading = read_for(q, text, ("Vilna Ghetto", "(intro)"), lambda _w: 1.0)
    # reached through another read (a hop), its text says it is a ghetto: the thing asked
    # for, with no model's choice (the model here prefers another candidate)
    got = choose(_Prefers("40,000 people"), q, [reading], "likelihood", "sieve", hop=True,
                 hop_title="Vilna Ghetto (Lithuania)")
    assert got.method == "text" and got.answer is not None
    assert got.answer.text == "The Vilna Ghetto"
    assert got.answer.label == ("Vilna Ghetto", "(intro)")
    # a fuller form of the name defined there is answered by the document's name
    fuller = read_for(q, "The Old Vilna Ghetto was a ghetto in Vilnius.",
                      ("Vilna Ghetto", "(intro)"), lambda _w: 1.0)
    got = choose(_Prefers("Vilnius"), q, [fuller], "likelihood", "sieve", hop=True,
                 hop_title="Vilna Ghetto")
    assert got.answer is not None and got.answer.text == "Vilna Ghetto"
    # not reached through another read, or asked for another ghetto than one described:
    # the model chooses
    got = choose(_Prefers("40,000 people"), q, [reading], "likelihood", "sieve")
    assert got.method == "likelihood"
    q = analyze("Besides the one in Kaunas, which ghetto did the photographer document?")
    got = choose(_Prefers("40,000 people"), q, [read_for(q, text, ("Vilna Ghetto", "(intro)"),
                                                          lambda _w: 1.0)],
                 "likelihood", "sieve", hop=True, hop_title="Vilna Ghetto")
    assert got.method == "likelihood"


_OWNER_DOCS = [
    {"title": "Orla Brandt", "text": "Orla Brandt is the founder and chief executive of "
     "Brightwell Foods, a maker of oat drinks. She also invests in farmland."},
    {"title": "Brightwell Foods", "text": "Brightwell Foods was founded in 1988 by Orla "
     "Brandt. In 1995 it bought Meadow Mills, a miller of oats."},
    {"title": "Meadow Mills", "text": "Meadow Mills is a miller of oats in Kent."},
    {"title": "Oat milk", "text": "Oat milk is a drink made from oats."},
    # what the question's other words ('business', 'acquire') find first: none is named
    *({"title": f"Holding {n}", "text": f"Holding {n} is a business that may acquire a "
       f"business, and acquire another business."} for n in "ABCDEF"),
]


def test_a_read_s_likeliest_candidate_with_a_page_of_its_own_is_read_next(
        tmp_path: Path) -> None:
    from sieve_lite.agent.hops import named_candidate
    from sieve_lite.agent.profile import budgets_for

    db = _collection(tmp_path, "hotpotqa", _OWNER_DOCS)
    with sieve_lite.open(db) as coll:
        got = named_candidate(coll, "Brightwell Foods", "entity", "Orla Brandt",
                              {"Orla Brandt"})
        assert got is not None and got.doc == "Brightwell Foods"
        # a date, a name with no page of its own, a page already read: none
        assert named_candidate(coll, "1988", "date", "Orla Brandt", {"Orla Brandt"}) is None
        assert named_candidate(coll, "oat drinks", "phrase", "Orla Brandt",
                               {"Orla Brandt"}) is None
        assert named_candidate(coll, "Brightwell Foods", "entity", "Orla Brandt",
                               {"Orla Brandt", "Brightwell Foods"}) is None
    # the question's other words find nothing the read names; the model's likeliest
    # candidate is the company, not sure enough to be the answer (its prior is low)
    bb = _Prefers("Brightwell Foods", other=-4.0)
    ep = run_question(db, "Which business did Orla Brandt acquire?", backbone_obj=bb,
                      budgets=budgets_for(135_000_000, 8192))
    reads = [(s.action.doc, s.info.get("lead", "")) for s in ep.steps
             if s.action is not None and s.action.kind == "fetch"]
    assert [d for d, _ in reads][:2] == ["Orla Brandt", "Brightwell Foods"], ep.steps
    assert "'Brightwell Foods', has a document of its own" in reads[1][1]


def test_a_code_name_said_as_the_thing_asked_is_news_though_joined_from_its_words() -> None:
    # the question has 'external', 'hosting' and 'JSON', not the file's name: the text says
    # 'the EXTERNAL-HOSTING.json file', the thing asked, so the name is an answer
    q = analyze("For external wheel hosting, what JSON file gets added to the archive?")
    text = ("When a wheel is converted for hosting elsewhere, the EXTERNAL-HOSTING.json file "
            "is added to the archive. The rest of the wheel stays.")
    reading = read_for(q, text, ("d", "s"), lambda _w: 1.0)
    got = choose(_Prefers("EXTERNAL-HOSTING.json"), q, [reading], "likelihood", "sieve")
    assert got.answer is not None and got.answer.text == "EXTERNAL-HOSTING.json"
    # ... but a name joined from the question's words that is not said as the thing asked
    # only repeats them ('typing.Final' for '... settled on Final ... which other name')
    q = analyze("Before typing settled on Final for names, which other name was considered?")
    text = "The typing.Final qualifier was adopted in the end. Const was considered too."
    reading = read_for(q, text, ("d", "s"), lambda _w: 1.0)
    got = choose(_Prefers("typing.Final"), q, [reading], "likelihood", "sieve")
    assert got.answer is None and "only repeats" in got.why


def test_names_joined_by_a_hyphen_paths_with_a_slash_and_digits_inside_a_word() -> None:
    # a code name joined by a hyphen from the question's words is news ('pypi-explicit' for
    # '... PyPI ... explicitly nominates'), as one joined by '_' or '.' is
    q = analyze("Which hosting mode lists only uploaded files plus external links the owner "
                "explicitly nominates on PyPI?")
    text = ("- ``pypi-explicit``: for a package in this mode, only links to release files "
            "uploaded to PyPI, and external links explicitly nominated by the owner, are "
            "added to the simple index.")
    assert "pypi-explicit" in {c.text for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    # ... but not when the question writes it whole
    q = analyze("Which standard's syntax must the License-Expression field use?")
    text = "The ``License-Expression`` field must use the SPDX license expression syntax."
    got = {c.text for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert "License-Expression" not in got and "SPDX" in got
    # an absolute path may end in its slash ('/devguide/'), and is a thing, not an address
    q = analyze("Which URL path does the developer's guide keep?")
    text = "The developer's guide is not version specific, and keeps its own ``/devguide/`` URL."
    assert "/devguide/" in {c.text for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    # '2to3' is a tool's name, whatever the tagger calls it
    q = analyze("Which conversion tool would get a rule to rewrite the old idiom?")
    text = "To help the transition, 2to3 will gain a rule to transform the current idiom."
    got = {c.text: c for c in read_for(q, text, None, lambda _w: 1.0).candidates}
    assert got["2to3"].kind == "code"


def test_emphasis_is_no_part_of_an_answer() -> None:
    q = analyze("Which Unix permission are tools still recommended to preserve?")
    text = "Tools are still recommended to preserve the *executable* permission of files."
    got = {c.text for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    assert "executable permission" in got and not any("*" in t for t in got)


def test_an_environment_variable_asked_in_an_earlier_sentence_is_written_in_capitals() -> None:
    q = analyze("How can I make tracebacks show timestamps, using an environment variable? "
                "Which variable does the proposal define?")
    text = ("The timestamps are shown when ``PYTHON_TRACEBACK_TIMESTAMPS`` is set; "
            "``sys.flags.traceback_timestamps`` reflects it.")
    got = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    caps, flag = got["PYTHON_TRACEBACK_TIMESTAMPS"], got["sys.flags.traceback_timestamps"]
    assert caps.prior > 1.5 * flag.prior
    # ... and a phrase is no such name
    text = "A command-line flag turns the timestamps on, as ``PYTHON_TRACEBACK_TIMESTAMPS`` does."
    got = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    assert got["PYTHON_TRACEBACK_TIMESTAMPS"].prior > 2 * got["command-line flag"].prior


def test_only_a_person_is_sure_enough_when_a_person_is_asked() -> None:
    from sieve_lite.agent.choice import by_likelihood

    cands = [Candidate("TypeAlias", "entity", 0, 0.44, ("d", "s"), 0.31),
             Candidate("aliases", "phrase", 1, 0.13, ("d", "s"), 0.44),
             Candidate("include_extras", "phrase", 2, 0.16, ("d", "s"), 0.44)]
    text = "A TypeAlias may hold aliases; include_extras keeps them."
    # the model is sure of an identifier the tagger calls an entity: not a person
    who = by_likelihood(_Prefers("TypeAlias"), "Who proposed documenting parameters inside "
                        "Annotated metadata?", text, cands)
    assert who.answer is None
    # ... while for a thing asked, the same sureness answers
    what = by_likelihood(_Prefers("TypeAlias"), "What special form marks a type alias?",
                         text, cands)
    assert what.answer is not None and what.answer.text == "TypeAlias"


def test_a_name_the_collection_knows_as_an_author_is_a_person() -> None:
    """The tagger calls some names a company ('Christian Heimes'); a 'who' question's
    candidate that the collection's author field holds as a phrase is a person's name, with
    a person's fit. The check is the index's, made once per name; a collection without
    authors has none."""
    from sieve_lite.agent.read import collection_persons
    from tests.test_agent_plan import _build

    q = analyze("The PEP mentions that the port itself was upstreamed in 2022. Who did that?")
    text = ("The Emscripten port was upstreamed in 2022 by Christian Heimes, who also wrote "
            "the build scripts. Pyodide has used it since.")
    plain = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0).candidates}
    known = {c.text: c for c in read_for(q, text, ("d", "s"), lambda _w: 1.0,
                                         persons=lambda n: n == "Christian Heimes").candidates}
    assert known["Christian Heimes"].kind == "person"
    assert plain["Christian Heimes"].kind != "person"
    assert known["Christian Heimes"].prior > plain["Christian Heimes"].prior
    db = _build(Path(__import__("tempfile").mkdtemp()), "peps", DATA / "corpora" / "peps")
    with sieve_lite.open(db) as coll:
        persons = collection_persons(coll)
        assert persons is not None
        assert persons("Jelle Zijlstra") and not persons("Steering Council")
        assert not persons("Zijlstra") and not persons("Jelle Zijlstra 2")
