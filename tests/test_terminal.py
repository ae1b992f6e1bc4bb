"""The people's rendering (``sieve_lite.terminal``, ``sieve_lite.markup``): cards that fit 80
columns in at most 8 lines, highlighted query words, fetch rendered from reST and Markdown,
the outline as a table, plain text in a pipe, the ask live view's folding, and safety against
hostile collection text.

Golden files. ``tests/golden/terminal/cases.jsonl`` holds the inputs, one case a line: a card
(captured from a real search of ``collections/peps.db``, or written by hand to be awkward) or
a fetch result, with the query words to highlight. ``tests/golden/terminal/<case>.txt`` holds
what a terminal shows for it: framed at 80 and 120 columns, plain at 80, and the highlighted
words. After an intended change, regenerate with one command and review the diff:

    SIEVE_REGEN_GOLDEN=1 python -m pytest tests/test_terminal.py -k golden

It also re-captures the cards that came from the demo collection (cases with a ``query``),
so a change in the engine's cards shows up in the same diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown

import sieve_lite
from sieve_lite import terminal as t
from sieve_lite.agent.transcript import LiveView
from sieve_lite.cards import SNIPPET_WORDS, Card
from sieve_lite.collection import default_collection
from sieve_lite.fetch import FetchResult, OutlineEntry
from sieve_lite.markup import escape_markdown, guess_markup, markup_of_source, rst_to_markdown
from sieve_lite.words import words as bql_words

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "terminal"
CASES = GOLDEN / "cases.jsonl"
DEMO = default_collection()
needs_demo = pytest.mark.skipif(not DEMO.exists(), reason="the demo collection is not built")

# Twenty queries over the demo collection, of every kind BQL has (the width and line test).
QUERIES = [
    "walrus", '"assignment expression*"[title] OR walrus[body]', "generator",
    "Guido[author] AND generator", "async await", "Final[infobox] AND Guido[author]",
    '"type hints"', "typing AND date[2018..]", "decorator*", "unicode NOT python2",
    "NEAR(pattern matching)", "f-string*", "GIL OR \"global interpreter lock\"",
    "packaging[title]", "import system[section]", '"release schedule"[title]',
    "exception group*", "dataclass*", "lambda[body] -lambdas", "asyncio OR coroutine*",
]
BOX = set("╭╮╰╯│─")


def _text(lines) -> str:
    return t.render_text(lines, 200)


def _hits(lines) -> list[str]:
    """The highlighted stretches of text, in order."""
    out = []
    for line in lines:
        for span in line.spans:
            if span.style == t.HIT:
                out.append(line.plain[span.start:span.end])
    return out


# ----------------------------------------------------------------------------- the 20 queries
@pytest.fixture(scope="module")
def demo():
    if not DEMO.exists():
        pytest.skip("the demo collection is not built")
    with sieve_lite.open(DEMO) as c:
        yield c


@pytest.fixture(scope="module")
def demo_results(demo):
    return [(q, demo.search(q, k=5, ranker="bm25")) for q in QUERIES]


@needs_demo
@pytest.mark.parametrize("width", [80, 120, 40])
def test_cards_fit_width_and_eight_lines(demo, demo_results, width):
    shown = 0
    for q, res in demo_results:
        assert res.results, q
        words = t.query_words(q, demo.fields)
        for hit in res.results:
            for boxed in (True, False):
                lines = t.card_lines(hit.card, words, width, boxed=boxed)
                assert len(lines) <= t.CARD_LINES, (q, hit.id, _text(lines))
                for line in lines:
                    assert cell_len(line.plain) <= width, (q, hit.id, line.plain)
                # and what a console of that width prints is those lines, none wrapped
                printed = t.render_text(lines, width).rstrip("\n").split("\n")
                assert len(printed) == len(lines)
                assert all(cell_len(x) <= width for x in printed)
                shown += 1
    assert shown == 2 * 5 * len(QUERIES)


@needs_demo
@pytest.mark.slow
def test_cards_fit_with_the_default_ranker(demo):
    """The same on the default (hybrid) ranking, which brings other documents to the top."""
    for q in QUERIES:
        res = demo.search(q, k=5)
        words = t.query_words(q, demo.fields)
        for hit in res.results:
            lines = t.card_lines(hit.card, words, 80)
            assert len(lines) <= t.CARD_LINES and all(cell_len(x.plain) <= 80 for x in lines)


@needs_demo
def test_typical_card_at_80_columns(demo):
    res = demo.search("walrus", k=5, ranker="bm25")
    words = t.query_words("walrus", demo.fields)
    for hit in res.results:
        lines = t.card_lines(hit.card, words, 80)
        text = [x.plain for x in lines]
        assert 5 <= len(lines) <= 8
        assert text[0].startswith(f"╭─ {hit.rank}. ") and text[-1].endswith(" ─╯")
        assert hit.id in text[-1] and f"score {hit.score:.4g}" in text[-1]
        assert hit.card.date in text[-1]
        assert text[1].startswith("│ by ") and re.search(r"matched [a-z, ]*body", text[1])
        assert re.match(r"│ \d+ sections: ", text[2]) and "more" in text[2]
        assert not any(line.startswith("│ |") for line in text)
        assert "walrus" in [h.lower() for h in _hits(lines)]


@needs_demo
def test_snippet_holds_a_query_word_when_the_document_does(demo, demo_results):
    """A property of the card data (``cards.build_card``): when a word of an atom that
    searches section text occurs in some section of the document, the snippet shows one
    (checked on the top 5 of all 20 queries); with no such atom, any positive word counts."""
    from sieve_lite.bql import parse
    from sieve_lite.bql.ast import positive_atoms, positive_words
    from sieve_lite.cards import body_words

    checked = 0
    for q, res in demo_results:
        node = parse(q, demo.fields)
        words = body_words(positive_atoms(node), demo.text_fields) or positive_words(node)
        match = t.WordMatch(words)
        for hit in res.results:
            card = hit.card
            in_doc = any(match.spans(demo.fetch(card.id, name).text)
                         for name in card.headings)
            if in_doc:
                assert match.spans(card.snippet), (q, card.id, card.snippet)
                assert len(bql_words(card.snippet)) <= SNIPPET_WORDS
                checked += 1
    assert checked >= 80  # most of the 100 cards have their words in their text


@needs_demo
def test_issue_example_walrus_snippet(demo):
    """The issue's example: a [title] phrase no longer pulls the snippet from walrus."""
    q = '"assignment expression*"[title] OR walrus[body]'
    res = demo.search(q, k=5, ranker="bm25")
    card = next(h.card for h in res.results if h.id == "pep-0622")
    assert "walrus" in card.snippet.lower()
    lines = t.card_lines(card, t.query_words(q, demo.fields), 80)
    assert "Walrus patterns" in lines[2].plain  # the heading that matched comes first


# ----------------------------------------------------------------------------------- cards
def _card(**kw) -> Card:
    base = dict(rank=1, id="doc-1", title="A title", score=1.5, headings=["Intro"],
                authors=["Ann Author"], matched_fields=["body"], date="2020-01-02",
                snippet="one two three", snippet_section="Intro")
    base.update(kw)
    return Card(**base)


def test_title_cut_with_ellipsis():
    long = "Observability for Python " * 8
    lines = t.card_lines(_card(title=long), (), 80)
    top = lines[0].plain
    assert cell_len(top) == 80 and "…" in top and top.endswith(" ─╮")
    plain = t.card_lines(_card(title=long), (), 80, boxed=False)[0].plain
    assert plain.endswith("…") and cell_len(plain) <= 80


def _styled(line, console: Console) -> list[tuple[str, bool]]:
    """(text, dim) per rendered segment of one card line, styles combined as printed."""
    return [(seg.text, bool(seg.style and seg.style.dim))
            for seg in console.render(line, console.options.update(width=200))
            if seg.text.strip("\n")]


@pytest.mark.parametrize("boxed", [True, False])
def test_only_the_frame_and_labels_are_dim(boxed):
    """The card's own text (title, authors, headings, snippet) is printed at full
    brightness; dim is for the frame, the footer and the labels (``by``, ``N sections:``)."""
    card = _card(title="Walrus title", authors=["Ann Author"], headings=["Intro", "Walrus"],
                 snippet="the walrus is here")
    console = Console(file=StringIO(), width=80, color_system="truecolor")
    lines = t.card_lines(card, [("walrus", False)], 80, boxed=boxed)
    segs = [seg for line in lines for seg in _styled(line, console)]
    for word in (" title", "Ann Author", "Intro", "the ", "walrus", " is here"):
        shown = [dim for text, dim in segs if word in text]
        assert shown and not any(shown), (word, segs)
    assert any(dim for text, dim in segs if "sections: " in text)
    assert not any(dim for text, dim in segs if text.startswith("1. "))
    if boxed:
        assert all(dim for text, dim in segs if text.strip() and set(text.strip()) <= BOX)
    folded = _styled(t.card_line(card, [("walrus", False)], 80), console)
    assert [dim for text, dim in folded if "score" in text] == [True]
    assert not any(dim for text, dim in folded if "score" not in text)


def test_authors_shortened():
    assert t.authors_short(["A", "B", "C", "D", "E"]) == "A, B +3"
    assert t.authors_short(["A", "B"]) == "A, B"
    assert t.authors_short(["A"]) == "A"
    assert t.authors_short([]) == ""


def test_headings_matched_first_then_more():
    from sieve_lite.terminal import WordMatch, headings_line

    heads = ["Abstract", "Motivation", "Walrus patterns", "Rationale"] + \
        [f"Part {i}" for i in range(40)]
    line = headings_line(heads, WordMatch([("walrus", False)]), 76).plain
    assert line.startswith("44 sections: Walrus patterns · Abstract · Motivation")
    shown = line.split(": ", 1)[1].rsplit(" +", 1)[0].split(" · ")
    more = int(re.search(r"\+(\d+) more$", line).group(1))
    assert len(shown) + more == 44 and cell_len(line) <= 76
    # everything fits: no count
    assert headings_line(["A", "B"], WordMatch(), 76).plain == "2 sections: A · B"
    # a heading too long is passed over for shorter ones, but the first is cut, not dropped
    line = headings_line(["A", "x" * 200, "B"], WordMatch(), 40).plain
    assert line == "3 sections: A · B +1 more"
    line = headings_line(["A", "walrus " * 30, "B"], WordMatch([("walrus", False)]), 60).plain
    assert line.startswith("3 sections: walrus walrus") and line.endswith("… · A · B")
    # more of the query's words first: the heading with both words leads
    two = WordMatch([("docstring", True), ("indentation", False)])
    heads = ["Abstract", "3 What is a Docstring?", "6 Handling Docstring Indentation"]
    line = headings_line(heads, two, 100).plain
    assert line == ("3 sections: 6 Handling Docstring Indentation · 3 What is a Docstring? · "
                    "Abstract")
    assert two.terms(heads[2]) == 2 and two.terms(heads[1]) == 1 and two.terms(heads[0]) == 0
    cut = headings_line(["x" * 200, "y" * 200], WordMatch(), 40).plain
    assert cut.startswith("2 sections: xxx") and "…" in cut and cut.endswith("+1 more")
    assert cell_len(cut) <= 40


def test_snippet_highlight_and_cap():
    card = _card(snippet="... the Walrus operator := and walruses ...",
                 snippet_section="Walrus")
    lines = t.card_lines(card, [("walrus", False)], 80)
    assert _hits(lines) == ["Walrus", "Walrus"]  # section name and the word; not 'walruses'
    assert "│ Walrus: … the Walrus operator := and walruses … " in _text(lines)
    lines = t.card_lines(card, [("walrus", True)], 80)  # walrus* matches walruses too
    assert _hits(lines)[-1] == "walruses"
    # a snippet too long for the room left is cut with an ellipsis, the card stays 8 lines
    huge = _card(snippet=" ".join(["antidisestablishmentarianism"] * 40))
    lines = t.card_lines(huge, (), 80)
    assert len(lines) == t.CARD_LINES and lines[-2].plain.rstrip(" │").endswith("…")


def test_no_markup_no_control_characters():
    card = _card(title="[bold]Not markup[/bold] \x1b[31mred\x1b[0m \u202eevil",
                 authors=["Ada [Countess]\x07 Lovelace"], headings=["Details [sic]\r"],
                 snippet="tab\there [link=x]y[/link]", id="id\x1b]0;title\x07")
    out = t.render_text(t.card_lines(card, (), 80), 80, color=True)
    assert "[bold]Not markup[/bold]" in out and "[link=x]y[/link]" in out
    assert "\x1b[31m" not in out and "\x1b]0;" not in out and "\x07" not in out
    assert "\u202e" not in out and "\r" not in out
    assert "Ada [Countess] Lovelace" in out


def test_plain_card_has_no_box_drawing():
    lines = t.card_lines(_card(), [("two", False)], 80, boxed=False)
    text = "".join(x.plain for x in lines)
    assert not BOX & set(text)
    assert lines[0].plain == "1. A title"
    assert lines[1].plain == "   doc-1 · 2020-01-02 · score 1.5"


def test_card_round_trips_through_a_transcript():
    card = _card(headings=["A", "B"], infobox_keys=["K"])
    again = t.card_from_dict(json.loads(json.dumps({**card.to_dict(), "extra": 1})))
    assert dataclasses.asdict(again) == dataclasses.asdict(card) | {"score": 1.5}
    with pytest.raises(ValueError):
        t.card_from_dict({"rank": 1})
    with pytest.raises(ValueError):  # a hand-edited transcript
        t.card_from_dict({**card.to_dict(), "score": "high"})
    with pytest.raises(ValueError):
        t.card_from_dict({**card.to_dict(), "headings": [1, 2]})


_text_st = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_text_st, heads=st.lists(_text_st, max_size=60),
       authors=st.lists(_text_st, max_size=12), snippet=_text_st,
       section=st.none() | _text_st, doc_id=_text_st.filter(bool), date=st.none() | _text_st,
       score=st.floats(allow_nan=False, allow_infinity=False),
       width=st.integers(min_value=t.MIN_WIDTH, max_value=200), boxed=st.booleans())
def test_any_card_fits(title, heads, authors, snippet, section, doc_id, date, score, width,
                       boxed):
    card = Card(rank=7, id=doc_id, title=title, score=score, headings=heads, authors=authors,
                date=date, matched_fields=["title"], snippet=snippet * 3,
                snippet_section=section)
    words = [(w, False) for w in bql_words(title + " " + snippet)[:5]]
    lines = t.card_lines(card, words, width, boxed=boxed)
    assert len(lines) <= t.CARD_LINES
    limit = min(width, t.MAX_WIDTH)
    for line in lines:
        assert cell_len(line.plain) <= limit, (width, line.plain)
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", line.plain)
    if boxed:
        assert all(cell_len(x.plain) == limit for x in lines)


def test_one_line_card():
    line = t.card_line(_card(rank=4, title="Folded " * 30), (), 80)
    assert line.plain.startswith("4. doc-1  Folded") and cell_len(line.plain) <= 80


# ------------------------------------------------------------------------------ markup / fetch
RST = """\
Holds a **named expression** of the form ``NAME := expr`` (see :pep:`572` and :class:`Foo`).

Example::

    if (n := len(a)) > 10:
        print(n)

* first item
* second item with *emphasis*

  1. nested one
  2. nested two

term
   Its definition.

.. include:: /etc/passwd

.. raw:: html

   <script>alert(1)</script>

.. versionadded:: 3.8
   Kept as text.

Sub heading
-----------

Text under it with a footnote [#f]_ and a_b * c.

.. [#f] The note.
"""


def test_rst_to_markdown_renders_headings_blocks_and_lists(capsys):
    md = rst_to_markdown(RST)
    out = t.render_text(Markdown(md), 80)
    assert "```\nif (n := len(a)) > 10:\n    print(n)\n```" in md
    assert " • first item" in out and " • second item with emphasis" in out
    assert "1 nested one" in out or "1. nested one" in out
    assert "term\nIts definition." in out.replace(" ", "").replace("term", "term") or \
        re.search(r"term\s*\n\s*Its definition\.", out)
    assert "Sub heading" in out and "## Sub heading" in md
    assert "NAME := expr" in out and "Foo" in out and "PEP 572" in out
    assert "a_b * c" in out and "[1] The note." in out
    # files are never read, raw never runs, unknown directives keep their source
    assert "root:" not in out and ".. include:: /etc/passwd" in out
    assert "<script>" in out  # shown as source text inside a code block, not run
    assert ".. versionadded:: 3.8" in out and "Kept as text." in out
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""  # docutils reports nothing


@pytest.mark.parametrize("bad", ["", "::", "* ", "``unclosed", "`x`_", ".. [", "=" * 80,
                                 "Title\n===\n\n" * 50, ".. |x| replace:: |x|\n\n|x|",
                                 "\x00\x1b[2J", "- " * 500])
def test_rst_hostile_never_raises(bad):
    assert isinstance(rst_to_markdown(bad), str)
    t.render_text(t.section_renderable(bad, "rst", [("x", False)]), 80)


def test_rendering_never_loses_the_words():
    # raw HTML is shown as text (rich drops HTML tokens)
    out = t.render_text(t.section_renderable("Para <b>bold</b>\n\n<div>\nblock html\n</div>",
                                             "markdown"), 80)
    assert "<b>bold</b>" in out and "block html" in out
    # past markdown-it's nesting limit a subtree would vanish: the text is shown as it is
    deep = "- " * 300 + "needle\n\n" + "> " * 300 + "haystack"
    out = t.render_text(t.section_renderable(deep, "markdown"), 80)
    assert "needle" in out and "haystack" in out
    # a reST section made only of a link target renders to nothing: shown as written
    target = ".. _Open Publication License: http://www.opencontent.org/openpub/"
    assert "Open Publication License" in t.render_text(t.section_renderable(target, "rst"), 80)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=60))
def test_escape_markdown_renders_the_text_itself(s):
    s = " ".join(s.split())
    if not s:
        return
    out = t.render_text(Markdown(escape_markdown(s)), 200).strip()
    assert " ".join(out.split()) == s


def test_markup_guess_and_source():
    assert guess_markup("Example::\n\n    code\n\nSee ``x``.") == "rst"
    assert guess_markup("# Title\n\n```py\ncode\n```\n[a](http://b)") == "markdown"
    assert guess_markup("Plain words, 3 * 4 = 12 and snake_case.") == "text"
    assert markup_of_source("rst: ../peps") == "rst"
    assert markup_of_source("markdown: notes") == "markdown"
    assert markup_of_source("html: site") == "text"
    assert markup_of_source("auto: x") is None and markup_of_source("") is None


def _fetch(text: str, section: str | None = "Sec", **kw) -> FetchResult:
    n = len(bql_words(text))
    return FetchResult("doc-1", "A title", section, text, n, n, False, **kw)


def test_fetch_highlights_query_words_in_rendered_markdown():
    res = _fetch("Some **bold walrus** and `walrus` code.\n\n```\nwalrus = 1\n```")
    out = t.render_text(t.fetch_renderables(res, [("walrus", False)], "markdown"), 80,
                        color=True)
    # three walruses highlighted: in bold text, in inline code, in a code block
    assert len(re.findall(r"\x1b\[(?:\d+;)*35(?:;\d+)*mwalrus", out)) == 3
    plain = t.render_text(t.fetch_renderables(res, [("walrus", False)], "markdown"), 80)
    assert "Some bold walrus and walrus code." in plain and "**" not in plain


def test_outline_table_fits_and_shows_first_words():
    heads = ["Abstract", "Differences between assignment expressions and assignment "
             "statements", "infobox"]
    outline = [OutlineEntry(h, 10 * i, "The first words of this section go on and on and "
                            "on ...") for i, h in enumerate(heads)]
    res = _fetch("", None, outline=outline, sections=heads[:2],
                 note="fetch one of these sections by name")
    for width in (80, 120):
        out = t.render_text(t.fetch_renderables(res, (), None, True, width), width)
        lines = out.rstrip("\n").split("\n")
        assert all(cell_len(x) <= width for x in lines)
        assert "section" in lines[2] and "tokens" in lines[2] and "begins" in lines[2]
        assert any(x.startswith("Abstract ") and "The first words" in x for x in lines)
        assert "2 sections and the infobox" in lines[0]
        assert "(162 token\ns)" not in out


def test_print_fetch_piped_is_the_plain_text():
    res = _fetch("Line one \x1b[2J\nLine two", note="")
    out = StringIO()
    t.print_fetch(res, Console(file=out, width=80), [("line", False)])
    assert out.getvalue() == "doc-1 | A title | Sec\n\nLine one [2J\nLine two\n"


def test_print_search_boxed_only_on_a_terminal(demo):
    res = demo.search("walrus", k=2, ranker="bm25")
    piped, forced = StringIO(), StringIO()
    t.print_search(res, Console(file=piped, width=80), [("walrus", False)])
    t.print_search(res, Console(file=forced, width=80, force_terminal=True),
                   [("walrus", False)])
    assert not BOX & set(piped.getvalue()) and "1. " in piped.getvalue()
    shown = re.sub(r"\x1b\[[0-9;]*m", "", forced.getvalue())
    assert "╭─ 1. " in shown and "\x1b[" in forced.getvalue()


# ---------------------------------------------------------------------------------- live view
def _events(cards: list[Card], read_text: str) -> list[dict]:
    hits = [{"rank": c.rank, "id": c.id, "title": c.title, "card": c.render_compact(),
             "data": c.to_dict()} for c in cards]
    return [
        {"event": "start", "question": "Q?", "mode": "sieve", "backbone": "fake",
         "n_ctx": 8192, "budgets": {"max_steps": 3}, "grammar": True},
        {"event": "step", "index": 1, "action": {"kind": "search", "query": "walrus"},
         "model_seconds": 0.1, "engine_seconds": 0.01,
         "info": {"total": 9, "fallback": False, "engine_query": "walrus", "hits": hits}},
        {"event": "step", "index": 2, "action": {"kind": "fetch", "doc": "doc-1",
                                                 "section": "Intro"},
         "model_seconds": 0.1, "observation": "doc-1 | Intro (A title), 40 tokens:\n"
         + read_text,
         "info": {"doc": "doc-1", "section": "Intro", "title": "A title", "tokens": 40}},
    ]


def _live(events: list[dict], verbose: bool, terminal: bool = True) -> str:
    out = StringIO()
    view = LiveView(Console(file=out, width=80, force_terminal=terminal, color_system=None),
                    verbose=verbose)
    for e in events:
        view(e)
    return out.getvalue()


def test_live_view_folds_after_three_cards_and_verbose_unfolds():
    cards = [_card(rank=i, id=f"doc-{i}", title=f"Title {i}",
                   snippet="the walrus is here") for i in range(1, 6)]
    text = "\n\n".join(f"Paragraph {i} about the walrus." for i in range(12))
    folded = _live(_events(cards, text), verbose=False)
    assert folded.count("╭─") == 3 and "  4. doc-4  Title 4" in folded
    assert "  5. doc-5  Title 5" in folded
    assert "Paragraph 0 about the walrus." in folded and "Paragraph 11" not in folded
    assert "more lines (--verbose shows them)" in folded
    full = _live(_events(cards, text), verbose=True)
    assert full.count("╭─") == 5 and "Paragraph 11 about the walrus." in full
    for line in folded.split("\n") + full.split("\n"):
        assert cell_len(line) <= 80
    piped = _live(_events(cards, text), verbose=False, terminal=False)
    assert "╭" not in piped and "│" not in piped and "  1. Title 1" in piped


def test_live_view_reads_old_transcripts_without_card_data():
    events = _events([_card()], "text")
    for hit in events[1]["info"]["hits"]:
        del hit["data"]
    out = _live(events, verbose=False)
    assert "[1] doc-1 | A title" in out  # the compact text, as before


# -------------------------------------------------------------------------------------- golden
def _render_case(case: dict) -> str:
    words = [tuple(w) for w in case.get("words", [])]
    out = [f"case: {case['name']}"]
    if "query" in case:
        out.append(f"query: {case['query']}")
    if "card" in case:
        card = t.card_from_dict(case["card"])
        for title, width, boxed in (("framed, 80 columns", 80, True),
                                    ("framed, 120 columns", 120, True),
                                    ("plain (piped), 80 columns", 80, False)):
            lines = t.card_lines(card, words, width, boxed=boxed)
            out += [f"--- {title}", t.render_text(lines, width).rstrip("\n")]
        out += ["--- highlighted", ", ".join(_hits(t.card_lines(card, words, 80))) or "-"]
    else:
        f = case["fetch"]
        res = FetchResult(f["id"], f["title"], f["section"], f["text"], f["tokens"],
                          f["total_tokens"], f["truncated"], f.get("note") or "",
                          f.get("sections", []),
                          [OutlineEntry(**e) for e in f.get("outline", [])])
        for width in (80, 120):
            parts = t.fetch_renderables(res, words, case.get("markup"), True, width)
            out += [f"--- fetch, {width} columns", t.render_text(parts, width).rstrip("\n")]
    return re.sub(r"[ \t]+\n", "\n", "\n".join(out) + "\n")


def _cases() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _recapture(cases: list[dict]) -> list[dict]:
    """Refresh the cards and fetches that came from the demo collection."""
    with sieve_lite.open(DEMO) as c:
        for case in cases:
            if "query" not in case:
                continue
            words = t.query_words(case["query"], c.fields)
            case["words"] = [list(w) for w in words]
            if "card" in case:
                res = c.search(case["query"], k=case["rank"], ranker="bm25")
                case["card"] = res.results[case["rank"] - 1].card.to_dict()
            else:
                from sieve_lite.markup import markup_of_source

                res = c.fetch(case["fetch"]["id"], case["fetch"]["section"])
                case["fetch"] = res.to_dict() | {
                    "outline": [dataclasses.asdict(e) for e in res.outline]}
                case["markup"] = markup_of_source(c.meta.get("source", ""))
    CASES.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in cases),
                     encoding="utf-8")
    return cases


@pytest.fixture(scope="module")
def golden_cases() -> list[dict]:
    cases = _cases()
    if os.environ.get("SIEVE_REGEN_GOLDEN") and DEMO.exists():
        cases = _recapture(cases)
    return cases


def test_golden_terminal(golden_cases):
    names = [c["name"] for c in golden_cases]
    assert len(names) == len(set(names))
    regen = bool(os.environ.get("SIEVE_REGEN_GOLDEN"))
    if regen:
        for old in GOLDEN.glob("*.txt"):
            if old.stem not in names:
                old.unlink()
    failures = []
    for case in golden_cases:
        got = _render_case(case)
        path = GOLDEN / f"{case['name']}.txt"
        if regen:
            path.write_text(got, encoding="utf-8")
        if not path.exists() or got != path.read_text(encoding="utf-8"):
            failures.append(case["name"])
    assert not failures, f"golden files differ: {failures}; see the module docstring"


def test_golden_card_cases_fit(golden_cases):
    for case in golden_cases:
        if "card" in case:
            card = t.card_from_dict(case["card"])
            for width in (80, 120):
                lines = t.card_lines(card, [tuple(w) for w in case.get("words", [])], width)
                assert len(lines) <= t.CARD_LINES
                assert all(cell_len(x.plain) <= width for x in lines)


# ---------------------------------------------------------------------------------------- CLI
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    full.update({"COLUMNS": "80", "PYTHONIOENCODING": "utf-8", "HF_HUB_OFFLINE": "1"}, **env)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full, timeout=120)


@needs_demo
def test_cli_search_piped_plain_and_forced_colour_framed():
    piped = _cli("search", str(DEMO), "walrus", "--ranker", "bm25", "-k", "3")
    assert piped.returncode == 0, piped.stderr
    assert not BOX & set(piped.stdout) and "\x1b[" not in piped.stdout
    assert "\n1. Structural Pattern Matching\n" in piped.stdout
    forced = _cli("search", str(DEMO), "walrus", "--ranker", "bm25", "-k", "3",
                  FORCE_COLOR="1")
    assert "╭─" in forced.stdout and "\x1b[" in forced.stdout
    plain_forced = re.sub(r"\x1b\[[0-9;]*m", "", forced.stdout)
    assert all(cell_len(x) <= 80 for x in plain_forced.split("\n"))


@needs_demo
def test_cli_fetch_rendered_on_a_terminal_plain_in_a_pipe():
    piped = _cli("fetch", str(DEMO), "pep-0572", "Syntax and semantics")
    assert piped.stdout.startswith("pep-0572 | Assignment Expressions | Syntax and semantics")
    assert "``NAME := expr``" in piped.stdout  # the text as written
    shown = _cli("fetch", str(DEMO), "pep-0572", "Syntax and semantics", "--highlight",
                 "walrus OR expression", FORCE_COLOR="1")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown.stdout)
    assert "``" not in plain and "NAME := expr" in plain and "::" not in plain
    assert "\x1b[1;35mexpression" in shown.stdout or ";35mexpression" in shown.stdout
    outline = _cli("fetch", str(DEMO), "pep-0572", FORCE_COLOR="1")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", outline.stdout)
    assert re.search(r"\nAbstract +111 +This is a proposal", plain)
    assert all(cell_len(x) <= 80 for x in plain.split("\n"))
