"""Parsers users can rely on: HTML table cells stay apart, Markdown headings are CommonMark's
(none inside comments, code or quotes), PEP authors come out as the people they name."""

from __future__ import annotations

from pathlib import Path

from sieve_lite.documents import INTRO, Document
from sieve_lite.sources import iter_documents
from sieve_lite.sources._common import strip_emails
from sieve_lite.sources.rst import split_authors
from sieve_lite.words import words

PEPS = Path(__file__).resolve().parent / "data" / "corpora" / "peps"


def one(tmp: Path, name: str, text: str) -> Document:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    (doc,) = list(iter_documents([path]))
    assert isinstance(doc, Document), doc
    return doc


# ----------------------------------------------------------------------------------- HTML
def test_html_table_cells_are_separated(tmp_path: Path) -> None:
    d = one(tmp_path, "t.html", """<html><head><title>Grain</title></head><body>
<h2>Yields</h2>
<table><tr><th>Crop</th><th>Bushels</th></tr>
<tr><td>Rye</td><td>80</td></tr>
<tr><td> Oats </td>
    <td>9<b>5</b></td></tr></table>
<p>Rye80 is not a word here.</p></body></html>""")
    (sec,) = d.sections
    assert sec.heading == "Yields"
    assert sec.text.splitlines()[:3] == ["Crop | Bushels", "Rye | 80", "Oats | 95"]
    assert "rye" in words(sec.text) and "80" in words(sec.text)


# ------------------------------------------------------------------------------- Markdown
def test_markdown_headings_follow_commonmark(tmp_path: Path) -> None:
    d = one(tmp_path, "m.md", """Lead text.

<!--
# Drawbacks
[drawbacks]: #drawbacks
-->

> # Quoted, not a section

    # indented code, not a heading

```export X=1``` is inline code, not a fence, so the next heading counts.

## Real &amp; *shown* `code` <span>html</span>

body

Setext too
----------

end
""")
    assert [s.heading for s in d.sections] == [INTRO, "Real & shown code html", "Setext too"]
    intro = d.sections[0].text
    assert "# Drawbacks" in intro and "> # Quoted" in intro
    assert d.sections[1].text == "body" and d.sections[2].text == "end"


def test_markdown_heading_inside_an_unclosed_fence_is_text(tmp_path: Path) -> None:
    d = one(tmp_path, "f.md", "# Title\n\nintro\n\n```\n## inside\n")
    assert d.title == "Title" and [s.heading for s in d.sections] == [INTRO]


# ------------------------------------------------------------------------- PEP authors
def test_pep_authors_are_people(tmp_path: Path) -> None:
    docs = {d.id: d for d in iter_documents([PEPS], "rst") if isinstance(d, Document)}
    assert docs["pep-0282"].authors == ("Vinay Sajip", "Trent Mick")
    assert dict(docs["pep-0282"].infobox)["Author"] == "Vinay Sajip, Trent Mick"
    for pep in ("pep-0160", "pep-0205"):
        assert docs[pep].authors == ("Fred L. Drake, Jr.",)
    assert docs["pep-0680"].authors == ("Taneli Hukkinen", "Shantanu Jain")
    assert docs["pep-0729"].authors == ("Jelle Zijlstra", "Shantanu Jain")
    # 'Author: A <a@x>,\n    B <b@y>,' ends with a comma: no empty author
    assert docs["pep-0546"].authors == ("Victor Stinner", "Cory Benfield")
    assert docs["pep-0466"].authors == ("Alyssa Coghlan",)
    for d in docs.values():
        assert all(a and "<" not in a and not a.endswith(",") for a in d.authors), d.id


def test_author_helpers() -> None:
    assert strip_emails("Ann <ann at x.org>, Bo <b@y.z>, C <https://h/x@y>") == \
        "Ann, Bo, C <https://h/x@y>"
    assert split_authors("Fred L. Drake, Jr., Guido van Rossum,") == \
        ["Fred L. Drake, Jr.", "Guido van Rossum"]
    assert split_authors("A. Person, III, B  Person, PhD") == ["A. Person, III",
                                                              "B Person, PhD"]
    assert split_authors("Ivan, Xavier") == ["Ivan", "Xavier"]  # names, not numerals
