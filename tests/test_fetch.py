"""fetch(): every way of naming a document and a section, the 12,000-token cut, and every
refusal (unknown id, rank without a listing, rank out of range, unknown or ambiguous section),
through the library and the ``fetch`` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import sieve_lite
from sieve_lite.build import build_collection
from sieve_lite.cli import cli
from sieve_lite.errors import SectionError
from sieve_lite.fetch import MAX_TOKENS, cut, section_names
from sieve_lite.sources import iter_documents

CORPUS = Path(__file__).resolve().parent / "golden" / "cards" / "corpus.jsonl"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fetch") / "cards.db"
    build_collection(iter_documents([CORPUS], "jsonl"), out, embed=False, quiet=True)
    return out


@pytest.fixture()
def coll(db):
    with sieve_lite.open(db) as c:
        yield c


# ------------------------------------------------------------------------------- documents
def test_by_id_and_outline(coll):
    r = coll.fetch("dups")
    assert r.section is None and not r.truncated
    assert r.sections == ["Notes", "Notes (2)", "notes (3)", "Overview", "Overview of things",
                          "Infobox"]
    assert r.text.splitlines()[0] == "Notes (2 tokens)"
    out = coll.fetch("brackets")
    assert out.text.splitlines()[-1] == "infobox (3 entries)"


def test_by_rank_in_last_listing(coll):
    res = coll.search("needle", k=2, ranker="bm25")
    assert coll.fetch(1, "(intro)" if res.results[0].id == "brackets" else "Part 33").id == \
        res.results[0].id
    assert coll.fetch("2").id == res.results[1].id  # a digit string that is no id: a rank


def test_digit_string_is_an_id_first(coll):
    coll.search("needle", k=2, ranker="bm25")
    assert coll.fetch("42").id == "42"
    assert coll.fetch(1).id != "42"  # an int is always a rank


def test_rank_errors(coll):
    with pytest.raises(SectionError, match="no search listing"):
        coll.fetch(1)
    coll.search("needle", k=2, ranker="bm25")
    with pytest.raises(SectionError, match=r"rank 3 is out of range.*1\.\.2"):
        coll.fetch(3)
    with pytest.raises(SectionError, match="out of range"):
        coll.fetch(0)


def test_unknown_id(coll):
    with pytest.raises(SectionError, match="no document has the id 'nope'"):
        coll.fetch("nope")
    with pytest.raises(SectionError, match="did you mean 'dups'"):
        coll.fetch("DUPS")
    with pytest.raises(SectionError, match="no search listing to read it as a rank"):
        coll.fetch("7")
    with pytest.raises(SectionError, match="id or its rank"):
        coll.fetch(True)


# -------------------------------------------------------------------------------- sections
def test_section_names_ignore_case_and_spacing(coll):
    assert coll.fetch("dups", "overview").text == "overview text"
    assert coll.fetch("dups", "  OVERVIEW   of things ").text == "things text"
    assert coll.fetch("dups", "Notes (2)").text == "second notes"


def test_unique_prefix(coll):
    assert coll.fetch("many", "part 33").text.endswith("The needle is here.")
    assert coll.fetch("brackets", "det").section == "Details [sic]"


def test_ambiguous_prefix_lists_candidates(coll):
    with pytest.raises(SectionError, match=r"ambiguous.*Notes, Notes \(2\), notes \(3\)"):
        coll.fetch("dups", "no")
    with pytest.raises(SectionError, match="ambiguous.*Part 1, Part 2, Part 3"):
        coll.fetch("many", "par")
    with pytest.raises(SectionError, match="ambiguous"):
        coll.fetch("dups", "over")


def test_exact_name_beats_prefix(coll):
    assert coll.fetch("many", "Part 1").section == "Part 1"
    assert coll.fetch("dups", "Overview").section == "Overview"


def test_unknown_section_lists_sections(coll):
    with pytest.raises(SectionError) as e:
        coll.fetch("brackets", "body")
    assert "brackets has no section 'body'" in str(e.value)
    assert "(intro), Details [sic], infobox" in str(e.value)
    with pytest.raises(SectionError, match="empty section name"):
        coll.fetch("brackets", "  ")


def test_intro_and_infobox(coll):
    assert coll.fetch("brackets", "(intro)").text.startswith("Markup like [red]")
    assert coll.fetch("brackets", "intro").section == "(intro)"
    ib = coll.fetch("brackets", "INFOBOX")
    assert ib.section == "infobox"
    assert ib.text == "Status: Final [x]\nType: Test\nStatus: Again"
    # no infobox: a section called 'Infobox' is just a section
    assert coll.fetch("dups", "infobox").text == "a section called infobox"
    with pytest.raises(SectionError, match="has no section 'infobox'"):
        coll.fetch("split", "infobox")


def test_cut_at_max_tokens(coll):
    r = coll.fetch("long", "Body")
    assert r.truncated and r.tokens == MAX_TOKENS and r.total_tokens == 13001
    assert "cut at 12,000 of 13,001 tokens" in r.note and "1,001 tokens" in r.note
    assert not r.text.endswith("tailword") and r.text.endswith("lorem1")  # word 12,000
    assert f"[{r.note}]" in r.render()
    small = coll.fetch("long", "(intro)")
    assert not small.truncated and small.note == "" and small.tokens == small.total_tokens


def test_cut_helper():
    assert cut("a b c", 5) == ("a b c", 3, 3)
    assert cut("a, b; c. d", 2) == ("a, b", 2, 4)


def test_section_names_helper():
    assert section_names(["A", "a", "A (2)", "A"]) == ["A", "a (2)", "A (2) (2)", "A (3)"]


def test_json_form(coll):
    d = coll.fetch("dups", "Overview").to_dict()
    assert d == {"id": "dups", "title": "Repeated headings", "section": "Overview",
                 "text": "overview text", "tokens": 2, "total_tokens": 2, "truncated": False,
                 "note": None, "sections": coll.fetch("dups").sections}


# ---------------------------------------------------------------------------- command line
def _run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_fetch(db):
    r = _run("fetch", str(db), "dups", "overview")
    assert r.exit_code == 0 and r.output.startswith("dups | Repeated headings | Overview")
    d = json.loads(_run("fetch", str(db), "42", "--json").output)
    assert d["id"] == "42" and d["section"] is None
    bad = _run("fetch", str(db), "dups", "zzz")
    assert bad.exit_code == 2
    assert _run("fetch", str(db), "3").exit_code == 2  # no session on the command line
