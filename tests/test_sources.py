"""Builders on samples of the real corpora (``tests/data``), and on small hand-made files for the
edge cases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sieve_lite.documents import INTRO, Document
from sieve_lite.errors import BuildError, DocumentError
from sieve_lite.sources import iter_documents
from sieve_lite.sources._common import loose_date, strip_emails
from sieve_lite.sources.qa import gold_ids, passage_id, passage_ids, repeated_titles


def split(items) -> tuple[list[Document], list[DocumentError]]:
    docs, errs = [], []
    for x in items:
        (docs if isinstance(x, Document) else errs).append(x)
    return docs, errs


def public(doc: Document) -> dict:
    d = doc.to_dict()
    meta = {k: v for k, v in d.get("meta", {}).items() if not k.startswith("_")}
    if meta:
        d["meta"] = meta
    else:
        d.pop("meta", None)
    return d


# ------------------------------------------------------------------------------ real corpora
@pytest.fixture(scope="module")
def peps(data_dir: Path) -> dict[str, Document]:
    docs, errs = split(iter_documents([data_dir / "corpora/peps"], "rst"))
    assert errs == []
    return {d.id: d for d in docs}


@pytest.fixture(scope="module")
def rfcs(data_dir: Path) -> dict[str, Document]:
    docs, errs = split(iter_documents([data_dir / "corpora/rust-rfcs"]))
    assert errs == []
    return {d.id: d for d in docs}


def test_peps_counts_and_fields(peps: dict[str, Document], data_dir: Path) -> None:
    assert len(peps) == len(list((data_dir / "corpora/peps").glob("*.rst"))) == 20
    for d in peps.values():
        assert d.date and d.authors and d.url == f"https://peps.python.org/{d.id}/"
        assert d.infobox[0][0] == "PEP" and d.meta["source"] == "python/peps"
        assert d.meta["file"] == f"{d.id}.rst"
    p = peps["pep-0238"]
    assert p.title == "Changing the Division Operator"
    assert p.authors == ("Moshe Zadka", "Guido van Rossum")
    assert p.date == "2001-03-11"
    assert dict(p.infobox)["Post-History"] == "16-Mar-2001, 26-Jul-2001, 27-Jul-2001"
    assert [s.heading for s in p.sections][:3] == ["Abstract", "Motivation", "Variations"]
    # Aligned header values ('Created:        20-Dec-2005') still give the date.
    assert peps["pep-0354"].date == "2005-12-20"


def test_peps_reproduce_reference_conversion(peps: dict[str, Document], data_dir: Path
                                             ) -> None:
    """The PEPs of the sample that are also among the 64 of bql-examples/corpus.jsonl: same
    title, headings, infobox, authors, date, url, meta, and section texts (the whole document
    is equal)."""
    ref = [json.loads(line) for line in
           (data_dir / "bql-examples/corpus.jsonl").read_text().splitlines()]
    ref = [r for r in ref if r["id"] in peps]
    assert len(ref) == 13
    for r in ref:
        mine = public(peps[r["id"]])
        assert [s["heading"] for s in mine["sections"]] == [s["heading"] for s in r["sections"]]
        for key in ("title", "infobox", "author", "date", "url", "meta"):
            assert mine.get(key) == r.get(key), (r["id"], key)
        assert mine == r, r["id"]


def test_rust_rfcs(rfcs: dict[str, Document]) -> None:
    assert len(rfcs) == 12
    assert [i for i, d in rfcs.items() if not d.date] == ["0534-deriving2derive"]
    d = rfcs["0001-private-fields"]
    assert d.title == "0001-private-fields"  # no H1, no front matter: the file stem
    assert d.infobox == (("Start Date", "2014-03-11"), ("RFC PR", "rust-lang/rfcs#1"),
                         ("Rust Issue", "rust-lang/rust#8122"))
    assert d.date == "2014-03-11"
    assert d.sections[0].heading == "Summary"  # the header block left no intro
    assert "Motivation" in [s.heading for s in d.sections]
    # An H1 at the top is the title, not a section.
    d = rfcs["0385-module-system-cleanup"]
    assert d.title == "Module system cleanups" and d.date == "2014-10-10"
    assert "Module system cleanups" not in [s.heading for s in d.sections]
    # Front matter title; 'RFC PR #' keys lose the '#'; nested and continued values join.
    assert rfcs["3327-lang-team-advisors"].title == "Lang team advisors RFC"
    assert ("RFC PR", "rust-lang/rfcs#235") in rfcs["0235-collections-conventions"].infobox
    assert ("Rust Issues", "20563, 31135") in rfcs["0550-macro-future-proofing"].infobox
    assert dict(rfcs["1644-default-and-expanded-rustc-errors"].infobox)["Rust Issue"] == \
        "rust-lang/rust#34826 rust-lang/rust#34827"
    # Loose dates: '(2016-06-17)', '2020/05/18', '23-07-2014'; impossible '2014-19-19' -> none.
    assert rfcs["1653-assert_ne"].date == "2016-06-17"
    assert rfcs["2930-read-buf"].date == "2020-05-18"
    assert rfcs["0179-and-mut-patterns"].date == "2014-07-23"
    assert rfcs["0534-deriving2derive"].date is None
    assert dict(rfcs["0534-deriving2derive"].infobox)["Start Date"] == "2014-19-19"
    # '[summary]: #summary' anchors are not body text; code fences hide '#' lines.
    assert not any("[summary]: #summary" in s.text for s in rfcs["2071-impl-trait-existential-"
                                                               "types"].sections)
    assert "# or ..." not in [s.heading for s in rfcs["1525-cargo-workspace"].sections]


def test_2wiki(data_dir: Path) -> None:
    docs, errs = split(iter_documents([data_dir / "qa/2wiki/corpus.json"]))
    assert errs == [] and len(docs) == 371
    by_id = {d.id: d for d in docs}
    assert len(by_id) == 371
    d = docs[0]
    assert d.id == d.title == "Teutberga" and d.sections[0].heading == INTRO
    assert d.meta["_where"].endswith("corpus.json:2")  # the element's line in the array
    questions = json.loads((data_dir / "qa/2wiki/questions.json").read_text())
    gold = [g for q in questions for g in gold_ids(q)]
    assert gold and all(g in by_id for g in gold)


def test_hotpotqa(data_dir: Path) -> None:
    folder = data_dir / "qa/hotpotqa"
    docs, errs = split(iter_documents([folder], "hotpotqa"))  # the folder's corpus.jsonl
    assert errs == [] and len(docs) == 955
    by_id = {d.id: d for d in docs}
    questions = [json.loads(x) for x in (folder / "questions.jsonl").read_text().splitlines()]
    inside = [q for q in questions if q["gold_in_context"]]
    assert len(inside) == 199
    assert all(g in by_id for q in inside for g in gold_ids(q))
    assert by_id["Ed Wood (film)"].sections[0].text.startswith("Ed Wood is a 1994")


def test_musique_repeated_titles(data_dir: Path) -> None:
    folder = data_dir / "qa/musique"
    docs, errs = split(iter_documents([folder / "corpus.json"]))
    assert errs == [] and len(docs) == 236
    by_id = {d.id: d for d in docs}
    assert len(by_id) == 236
    corpus = json.loads((folder / "corpus.json").read_text())
    rep = repeated_titles(p["title"] for p in corpus)
    assert len(rep) == 9
    assert passage_ids((p["title"], p["text"]) for p in corpus) == [d.id for d in docs]
    assert "Namibia" not in by_id  # a repeated title is never an id by itself
    questions = json.loads((folder / "questions.json").read_text())
    n = 0
    for q in questions:
        for gid, p in zip(gold_ids(q, rep), [p for p in q["paragraphs"] if p["is_supporting"]],
                          strict=True):
            assert by_id[gid].sections[0].text == p["paragraph_text"]
            # Without the corpus: try the title, else the hashed id.
            guess = p["title"] if p["title"] in by_id else \
                passage_id(p["title"], p["paragraph_text"], repeated=True)
            assert guess == gid
            n += 1
    assert n == 30


def test_questions_files_are_reported_not_indexed(data_dir: Path) -> None:
    docs, errs = split(iter_documents([data_dir / "qa/musique"]))
    assert len(docs) == 236
    assert len(errs) == 1 and "questions file" in str(errs[0])
    assert errs[0].where.endswith("questions.json")


def test_wikipedia_structured(data_dir: Path) -> None:
    folder = data_dir / "structured/wikipedia"
    docs, errs = split(iter_documents([folder]))
    assert errs == [] and len(docs) == 2
    d = {x.id: x for x in docs}["2020_United_States_presidential_election"]
    raw = json.loads((folder / "2020_United_States_presidential_election.json").read_text())
    assert d.title == "2020 United States presidential election"
    assert d.url == "https://en.wikipedia.org/wiki/2020_United_States_presidential_election"
    assert d.date == "2024-10-26"  # date_modified
    assert d.sections[0].heading == INTRO and d.sections[0].text == raw["abstract"].strip()
    heads = [s.heading for s in d.sections]
    assert "Abstract" not in heads
    assert heads[1:4] == ["Background", "Nominations", "Democratic Party"]  # flat, unprefixed
    nominations = d.sections[heads.index("Nominations")]
    assert nominations.text == ""  # all of its text is in its sub-sections
    assert ("Turnout", "66.6% (6.5 pp)") in d.infobox
    assert len(d.infobox) >= 10 and all(k and v for k, v in d.infobox)
    assert d.meta["wikidata"] == "Q22923830" and d.meta["date_created"].startswith("2015")


def test_bql_examples_jsonl(data_dir: Path) -> None:
    docs, errs = split(iter_documents([data_dir / "bql-examples/corpus.jsonl"]))
    assert errs == [] and len(docs) == 67
    assert docs[0].meta["_where"].endswith("corpus.jsonl:1")


@pytest.mark.skipif(not Path("/usr/share/doc/sqlite3/fts5.html").exists(),
                    reason="Debian's sqlite3-doc is not installed")
def test_html_real_sqlite_docs() -> None:
    d = next(x for x in iter_documents([Path("/usr/share/doc/sqlite3/fts5.html")]))
    assert isinstance(d, Document)
    assert d.title == "SQLite FTS5 Extension"
    heads = [s.heading for s in d.sections]
    assert "1. Overview of FTS5" in heads and "3.1. FTS5 Strings" in heads
    assert not any("<div" in s.text or "class=" in s.text for s in d.sections)


# ------------------------------------------------------------------------------ hand-made
def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def one(path: Path, fmt: str = "auto") -> Document:
    items = list(iter_documents([path], fmt))
    assert len(items) == 1 and isinstance(items[0], Document), items
    return items[0]


def test_markdown_front_matter_setext_fences(tmp_path: Path) -> None:
    p = write(tmp_path, "guide.md", """---
title: The Guide
author: [Ann Lee, Bo Chan]
date: 2021-02-03
tags: [a, b]
draft: false
nested: {x: 1}
---
Intro text.

Usage
=====

Run it.

```sh
# not a heading
```

Details *here*
--------------

~~~
## also not a heading
~~~

### `code` and [link](http://x) ###
last
""")
    d = one(p)
    assert d.id == "guide" and d.title == "The Guide"
    assert d.authors == ("Ann Lee", "Bo Chan") and d.date == "2021-02-03"
    assert d.infobox == (("tags", "a, b"), ("draft", "false"))
    assert [s.heading for s in d.sections] == [INTRO, "Usage", "Details here", "code and link"]
    assert d.sections[0].text == "Intro text."
    assert "# not a heading" in d.sections[1].text
    assert d.sections[3].text == "last"


def test_markdown_title_rules(tmp_path: Path) -> None:
    d = one(write(tmp_path, "a.md", "# Only Title\n\nlead\n\n## One\n\nx\n"))
    assert d.title == "Only Title"
    assert [(s.heading, s.text) for s in d.sections] == [(INTRO, "lead"), ("One", "x")]
    d = one(write(tmp_path, "b.md", "# Part 1\n\nx\n\n# Part 2\n\ny\n"))
    assert d.title == "b" and [s.heading for s in d.sections] == ["Part 1", "Part 2"]
    d = one(write(tmp_path, "c.md", "## Not a title\n\ntext\n"))
    assert d.title == "c" and d.sections[0].heading == "Not a title"
    # an unreadable front-matter date stays in the infobox
    d = one(write(tmp_path, "d.md", "---\ndate: sometime\n---\nbody\n"))
    assert d.date is None and d.infobox == (("date", "sometime"),)


def test_markdown_bad_front_matter_is_reported_with_line(tmp_path: Path) -> None:
    p = write(tmp_path, "bad.md", "---\ntitle: [unclosed\nx: 1\n---\nbody\n")
    items = list(iter_documents([p]))
    assert len(items) == 1 and isinstance(items[0], DocumentError)
    assert str(items[0]).startswith(f"{p}:") and "front matter" in str(items[0])


def test_html(tmp_path: Path) -> None:
    p = write(tmp_path, "page.html", """<!doctype html><html><head>
<title>Fort Santiago</title>
<meta name="author" content="Ann Lee"><meta name="author" content="Bo Chan">
<meta property="article:published_time" content="2019-05-04T10:00:00Z">
<meta name="description" content="A citadel.">
<link rel="canonical" href="https://example.org/fort">
<style>p {color: red}</style><script>var x = "<h2>no</h2>";</script>
</head><body>
<nav><a href="/">Home</a></nav>
<p>Before any heading.</p>
<h1>Fort Santiago</h1>
<p>Built in <b>1571</b>.</p>
<h2>History <a class="headerlink" href="#h">¶</a></h2>
<p>First   paragraph
spanning lines.</p><ul><li>one</li><li>two</li></ul>
<pre>  code
    indented</pre>
<h3>Today</h3><p>A park &amp; museum.</p>
<footer>copyright</footer>
</body></html>""")
    d = one(p)
    assert d.title == "Fort Santiago" and d.id == "page"
    assert d.authors == ("Ann Lee", "Bo Chan") and d.date == "2019-05-04"
    assert d.url == "https://example.org/fort"
    assert d.infobox == (("description", "A citadel."),)
    assert [s.heading for s in d.sections] == [INTRO, "History", "Today"]
    assert d.sections[0].text == "Before any heading.\n\nBuilt in 1571."
    hist = d.sections[1].text
    assert "First paragraph spanning lines." in hist and "* one\n* two" in hist
    assert "  code\n    indented" in hist
    assert d.sections[2].text == "A park & museum."
    assert not any(w in s.text for s in d.sections for w in ("color", "var x", "Home",
                                                              "copyright"))


def test_html_main_content_only(tmp_path: Path) -> None:
    p = write(tmp_path, "s.htm", """<html><body><div class="sidebar">Sidebar junk</div>
<div role="main"><h1>T</h1><p>kept</p><div>inner</div></div><div>after main</div>""")
    d = one(p)
    assert d.title == "T"
    assert d.sections[0].text == "kept\ninner"


def test_rst_generic_title_and_sections(tmp_path: Path) -> None:
    p = write(tmp_path, "doc.rst", """=========
Doc Title
=========

Intro para.

First ``Part``
--------------

Text one.

::

    literal
    -------

Second
------

Text two.
""")
    d = one(p)
    assert d.title == "Doc Title"
    assert [s.heading for s in d.sections] == [INTRO, "First Part", "Second"]
    assert "literal\n    -------" in d.sections[1].text


def test_plain_text(tmp_path: Path) -> None:
    d = one(write(tmp_path, "notes.txt", "\n\n  My Notes  \nline two\n\n"))
    assert d.title == "My Notes" and d.id == "notes"
    assert d.sections == (d.sections[0],) and d.sections[0].heading == INTRO
    assert d.sections[0].text == "  My Notes  \nline two".rstrip()
    items = list(iter_documents([write(tmp_path, "empty.txt", "\n \n")]))
    assert isinstance(items[0], DocumentError) and "empty" in str(items[0])


def test_folder_walk_ids_order_and_forced_format(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root, "b.md", "# B\n")
    write(root, "a/z.txt", "zed\n")
    write(root, "a/y.rst", "Y\n=\n\nbody\n")
    write(root, "image.png", "not text")
    write(root, ".hidden/x.md", "# hidden\n")
    docs, errs = split(iter_documents([root]))
    assert errs == [] and [d.id for d in docs] == ["a/y", "a/z", "b"]
    assert docs[0].meta["_where"] == str(root / "a/y.rst")
    # --format takes only that format's files from a folder, and any single file.
    assert [d.id for d in iter_documents([root], "text")] == ["a/z"]
    assert one(root / "a/z.txt", "markdown").title == "z"
    with pytest.raises(BuildError, match="cannot tell the format"):
        list(iter_documents([root / "image.png"]))
    with pytest.raises(BuildError, match="does not exist"):
        list(iter_documents([tmp_path / "missing"]))
    with pytest.raises(BuildError, match="no html files"):
        list(iter_documents([root], "html"))


def test_json_shapes(tmp_path: Path) -> None:
    arr = write(tmp_path, "docs.json", json.dumps(
        [{"id": "a", "title": "A", "text": "x"},
         {"id": "b", "title": "B", "text": "", "date": "2020-13"}],
        indent=1))
    docs, errs = split(iter_documents([arr]))
    assert [d.id for d in docs] == ["a"] and docs[0].meta["_where"] == f"{arr}:2"
    assert len(errs) == 1 and errs[0].where == f"{arr}:7"
    assert "month 13" in str(errs[0])
    single = write(tmp_path, "one.json", json.dumps({"id": "s", "title": "S", "text": "t"}))
    assert one(single).id == "s"
    passages = write(tmp_path, "p.jsonl",
                     '{"title": "T", "text": "x"}\n{"title": "T", "text": "y"}\n')
    docs, errs = split(iter_documents([passages]))
    assert errs == [] and [d.id for d in docs] == [passage_id("T", "x", True),
                                                   passage_id("T", "y", True)]
    assert docs[0].id.startswith("T #") and len(docs[0].id) == len("T #") + 8
    # --format jsonl forces DOCUMENTS.md: passages lack ids
    docs, errs = split(iter_documents([passages], "jsonl"))
    assert docs == [] and [e.where for e in errs] == [f"{passages}:1", f"{passages}:2"]
    broken = write(tmp_path, "broken.json", '[\n{"title": "T", "text": "x"},\n{"title": \n')
    docs, errs = split(iter_documents([broken], "2wiki"))
    assert len(docs) == 1 and errs and errs[0].where.startswith(f"{broken}:")


def test_jsonl_bad_lines_have_line_numbers(tmp_path: Path) -> None:
    p = write(tmp_path, "bad.jsonl", "\n".join([
        json.dumps({"id": "ok", "title": "Ok", "text": "fine"}),
        "{not json",
        json.dumps({"title": "no id", "text": "x"}),
        json.dumps({"id": "d", "title": "D", "text": "x", "date": "2019-02-29"}),
        "",
        json.dumps({"id": "ok2", "title": "Ok", "sections": [{"heading": "H", "text": "t"}]}),
    ]) + "\n")
    docs, errs = split(iter_documents([p]))
    assert [d.id for d in docs] == ["ok", "ok2"]
    assert [e.where for e in errs] == [f"{p}:2", f"{p}:3", f"{p}:4"]
    assert "not valid JSON" in errs[0].reason
    assert "missing 'id'" in errs[1].reason
    assert "does not exist" in errs[2].reason  # 2019 has no 29 February


def test_loose_dates_and_emails() -> None:
    assert loose_date("11-Mar-2001") == "2001-03-11"
    assert loose_date("(2016-06-17)") == "2016-06-17"
    assert loose_date("2023-10-3") == "2023-10-03"
    assert loose_date("2020/05/18") == "2020-05-18"
    assert loose_date("23-07-2014") == "2014-07-23"
    assert loose_date("2024-10-26T01:14:33Z") == "2024-10-26"
    assert loose_date("2014") == "2014" and loose_date("2014-05") == "2014-05"
    for bad in ("05-06-2014", "2014-19-19", "fill me in", "", None, "12345"):
        assert loose_date(bad) is None
    assert strip_emails("Ann <a@x.org>, Bo <b@y.z>") == "Ann, Bo"
    assert strip_emails("`x <https://h/l@list/thread>`__") == "`x <https://h/l@list/thread>`__"


def test_repeated_titles_helper() -> None:
    assert repeated_titles(["a", "b", "a"]) == {"a"}
    assert Counter(passage_ids([("a", "1"), ("b", "2"), ("a", "3")]))["b"] == 1
