"""Opening collection files: what is refused, and how."""

import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

import sieve_lite
from sieve_lite.errors import DamagedCollection


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy.db"
    shutil.copyfile(src, dst)
    return dst


def test_a_file_missing_a_table_of_its_version_is_refused(examples_db: Path,
                                                          tmp_path: Path) -> None:
    db = _copy(Path(examples_db), tmp_path)
    conn = apsw.Connection(str(db))
    conn.execute("DROP TABLE fts_doc")
    conn.close()
    with pytest.raises(DamagedCollection, match="missing table fts_doc,.*rebuild"):
        sieve_lite.open(db)
    before = db.read_bytes()
    cli = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
    proc = subprocess.run([*cli, "search", str(db), "x"], capture_output=True, text=True)
    assert proc.returncode == 3  # a damaged collection (issue #12's exit codes)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert db.read_bytes() == before


def test_document_reads_every_field_back(examples_db: Path) -> None:
    with sieve_lite.open(examples_db) as coll:
        doc = coll.document("ex-nodate")
        assert doc is not None
        assert doc["author"] == ["Ada Lovelace", "Charles Babbage"]
        assert doc["sections"] == [{"heading": "(intro)", "text":
                                    "A flat document about rock and roll music without a date."}]
        assert coll.document("no-such-id") is None


def test_collection_summaries_the_agent_reads(tmp_path: Path) -> None:
    """store.reads' summaries of a whole collection (the agent's manual and query builder read
    them; no SQL over the schema outside store/) against the same counts made in Python."""
    from collections import Counter

    from sieve_lite.build import build_collection
    from sieve_lite.documents import Document
    from sieve_lite.store import reads

    docs = [
        {"id": "b", "title": "Walrus operator", "author": ["Chris", "Tim"],
         "infobox": [["Status", "Final"], ["Type", "Standards"]],
         "sections": [{"heading": "Abstract", "text": "walrus here"},
                      {"heading": "Rationale", "text": "more walrus words"}]},
        {"id": "a", "title": "Another proposal", "author": ["Tim"],
         "infobox": [["Status", "Final"]], "date": "2001-02-03",
         "sections": [{"heading": "Rationale", "text": "no such animal"},
                      {"heading": "Abstract", "text": "plain text"}]},
        {"id": "c", "title": "Third walrus", "text": "x " * 200},  # packed: an (intro) blob
    ]
    out = tmp_path / "s.db"
    build_collection([Document.from_dict(d) for d in docs], out, embed=False)
    with sieve_lite.open(out) as coll:
        listed = reads.document_list(coll.conn)
        assert [(i, t) for _r, i, t, _d in listed] == [(d["id"], d["title"]) for d in docs]
        assert [d for *_x, d in listed] == [None, "2001-02-03", None]
        first = {i: reads.first_section_text(coll.conn, r) for r, i, _t, _d in listed}
        assert first == {"b": "walrus here", "a": "no such animal", "c": "x " * 200}
        headings = Counter(s["heading"] for d in docs for s in d.get("sections", []))
        assert reads.common_headings(coll.conn, 5) == sorted(headings,
                                                             key=lambda h: (-headings[h], h))
        assert reads.common_author(coll.conn) == "Tim"
        assert reads.common_infobox_entry(coll.conn) == ("Status", "Final")
        assert reads.term_rows(coll.conn, "title", "walrus") == 2
        assert reads.term_rows(coll.conn, "body", "walrus") == 2  # two section texts
        assert reads.term_rows(coll.conn, "body", "zebra") == 0


def test_card_rows_out_of_rowid_order_are_refused():
    """cards_rows reads without ORDER BY and checks the order itself: a document's headings
    below the previous one, or coming back after another document's, ask for the sorted
    query (None); rows in order are grouped per document."""
    from sieve_lite.store.cards import _card_lists
    from sieve_lite.store.layout import value_rowid as v

    rows = [(0, 1, "a", "A", None, None), (0, 2, "b", "B", None, None),
            (1, v(2, 0), "x", None, None, None), (1, v(2, 1), "y", None, None, None),
            (1, v(1, 0), "p", None, None, None), (2, v(1, 0), "k", "val", None, None),
            (3, v(2, 0), "ann", None, None, None)]
    heads, lists, _ = _card_lists(rows, [2, 1], 100)
    assert heads == {1: ("a", "A", None, None), 2: ("b", "B", None, None)}
    assert lists[2] == (["x", "y"], [], ["ann"]) and lists[1] == (["p"], [("k", "val")], [])
    swapped = rows[:2] + [rows[3], rows[2]] + rows[4:]
    assert _card_lists(swapped, [2, 1], 100) is None
    back = rows[:4] + [rows[4], (1, v(2, 2), "z", None, None, None)] + rows[5:]
    assert _card_lists(back, [2, 1], 100) is None
