"""Hostile collection files: each one a copy of the examples collection with one thing done to
it that a build never does (the cases of issue 9). Every command on such a file must answer
with one line, exit 3 (a damaged collection; never 1, which means "nothing found"), within
2 CPU seconds and 500 MB, and leave the file as it was. The defensive connection settings and
terminal-safe output are checked here too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import pytest

import sieve_lite
from sieve_lite import store
from sieve_lite.build import build_collection
from sieve_lite.documents import Document
from sieve_lite.errors import CollectionError, DamagedCollection
from sieve_lite.store.layout import SHIFT
from sieve_lite.store.packing import MAX_SECTION_BYTES

CLI = [sys.executable, "-c", "import sys; from sieve_lite.cli import main; "
       "sys.argv[0] = 'sieve-lite'; main()"]
SECONDS, MEGABYTES = 2.0, 500
BOMB_DOC, BOMB_SECTION = "pep-0622", "Rationale and Goals"  # a zlib-packed section


# The CLI, writing its own peak resident set (VmHWM, of the process image after exec) to a file
# at exit. (wait4's ru_maxrss would count the forking test process's size too: the kernel
# carries the pre-exec high-water mark over.)
MEASURED = [sys.executable, "-c", textwrap.dedent("""
    import atexit, os, sys
    def _peak():
        with open("/proc/self/status") as f:
            kb = next(line.split()[1] for line in f if line.startswith("VmHWM"))
        with open(os.environ["SIEVE_TEST_PEAK"], "w") as out:
            out.write(kb)
    atexit.register(_peak)
    sys.argv[0] = "sieve-lite"
    from sieve_lite.cli import main
    main()
""")]


def run_measured(*args: str) -> tuple[int, str, str, float, float]:
    """Run the CLI: (exit code, stdout, stderr, CPU seconds, peak RSS in MB). CPU time, not
    wall time: on a shared machine the wall clock mostly measures the load."""
    with tempfile.NamedTemporaryFile("r", suffix=".peak") as peak:
        proc = subprocess.Popen([*MEASURED, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                env={**os.environ, "HF_HUB_OFFLINE": "1",
                                     "SIEVE_TEST_PEAK": peak.name})
        out = proc.stdout.read()  # type: ignore[union-attr]
        err = proc.stderr.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)
        mb = int(peak.read() or 0) / 1024
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
            usage.ru_utime + usage.ru_stime, mb)


# ------------------------------------------------------------------------------ the edits
def _edit(path: Path, sql: str, params: tuple = ()) -> None:
    conn = apsw.Connection(str(path))
    conn.execute(sql, params)
    conn.close()


def _edit_schema(path: Path, name: str, old: str, new: str) -> None:
    """Change the stored SQL of one schema object (what a crafted file can do)."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE name = ?",
                 (old, new, name))
    conn.execute("PRAGMA writable_schema = OFF")
    conn.close()


def _bomb_blob() -> bytes:
    """1 GiB of zeros as one zlib stream (about 1 MB)."""
    z = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    return b"".join([*(z.compress(chunk) for _ in range(1024)), z.flush()])


def _section_rowid(path: Path, doc: str, heading: str) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    (rowid,) = conn.execute(
        f"SELECT s.rowid FROM sections s JOIN documents d ON d.rowid = s.rowid >> {SHIFT} "
        "WHERE d.id = ? AND s.heading = ?", (doc, heading)).fetchone()
    conn.close()
    return rowid


def recursive_meta_view(p: Path) -> None:
    _edit(p, "DROP TABLE meta; CREATE VIEW meta(key, value) AS WITH RECURSIVE r(n) AS "
             "(SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT 'documents', n FROM r")


def spoofed_meta_view(p: Path) -> None:
    _edit(p, "CREATE TABLE real_meta AS SELECT * FROM meta; DROP TABLE meta; "
             "CREATE VIEW meta(key, value) AS SELECT key, CASE key WHEN 'documents' "
             "THEN '999999' ELSE value END FROM real_meta")


def tokenizer_changed(p: Path) -> None:
    _edit_schema(p, "fts_body", "tokenize='ascii'", "tokenize='porter ascii'")


def trigger_added(p: Path) -> None:
    _edit(p, "CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1; END")


def embed_dim_not_a_number(p: Path) -> None:
    _edit(p, "UPDATE meta SET value = 'abc' WHERE key = 'embed_dim'")


def avg_words_nan(p: Path) -> None:
    _edit(p, "UPDATE meta SET value = 'NaN' WHERE key = 'avg_words'")


def documents_count_lies(p: Path) -> None:
    _edit(p, "UPDATE meta SET value = '999999' WHERE key = 'documents'")


def document_rowid_2_40(p: Path) -> None:
    _edit(p, "UPDATE documents SET rowid = 1 << 40 WHERE rowid = 1")


def section_rowid_2_40(p: Path) -> None:
    _edit(p, "UPDATE sections SET rowid = 1 << 40 WHERE rowid = (SELECT max(rowid) FROM sections)")


def negative_section_rowid(p: Path) -> None:
    _edit(p, "UPDATE sections SET rowid = -5 WHERE rowid = (SELECT min(rowid) FROM sections)")


def fts_rowid_out_of_range(p: Path) -> None:
    _edit(p, "INSERT INTO fts_body(rowid, v) VALUES (1 << 40, 'stray')")


def zlib_bomb(p: Path) -> None:
    rowid = _section_rowid(p, BOMB_DOC, BOMB_SECTION)
    _edit(p, "UPDATE sections SET text = ? WHERE rowid = ?", (_bomb_blob(), rowid))


def zlib_bomb_and_bound(p: Path) -> None:
    zlib_bomb(p)
    _edit(p, "UPDATE meta SET value = '999999999999' WHERE key = 'max_section_bytes'")


def not_zlib(p: Path) -> None:
    rowid = _section_rowid(p, BOMB_DOC, BOMB_SECTION)
    _edit(p, "UPDATE sections SET text = ? WHERE rowid = ?", (os.urandom(3000), rowid))


def heading_is_a_number(p: Path) -> None:
    rowid = _section_rowid(p, BOMB_DOC, BOMB_SECTION)
    _edit(p, "UPDATE sections SET heading = x'00ff' WHERE rowid = ?", (rowid,))


def with_vectors(p: Path, dim: int = 8) -> None:
    """Make the copy an embedded collection of dimension ``dim`` (random vectors: these tests
    never rank by them), as a build with an embedding model would."""
    conn = store.connect(p, readonly=False, need_vec=True)
    n = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    conn.execute(store.schema.vec_sql(dim))
    rng = np.random.default_rng(1)
    conn.executemany("INSERT INTO doc_vectors(rowid, embedding) VALUES (?, ?)",
                     [(i, rng.random(dim, dtype=np.float32).tobytes()) for i in range(1, n + 1)])
    conn.execute("UPDATE meta SET value = ? WHERE key = 'embed_dim'", (str(dim),))
    conn.execute("UPDATE meta SET value = 'test-model' WHERE key = 'embed_model'")
    conn.close()


def vector_dimension_edited(p: Path) -> None:
    with_vectors(p)
    _edit_schema(p, "doc_vectors", "float[8]", "float[9]")


def vector_dimension_and_meta_edited(p: Path) -> None:
    vector_dimension_edited(p)
    _edit(p, "UPDATE meta SET value = '9' WHERE key = 'embed_dim'")


CASES: list[tuple[Callable[[Path], None], str]] = [
    (recursive_meta_view, "altered view meta (a table in a build)"),
    (spoofed_meta_view, "unexpected table real_meta; altered view meta (a table in a build)"),
    (tokenizer_changed, "altered table fts_body"),
    (trigger_added, "unexpected trigger t"),
    (embed_dim_not_a_number, "embed_dim is 'abc', not a whole number"),
    (avg_words_nan, "avg_words is 'NaN'"),
    (documents_count_lies, "67 document rows but its metadata says 999999"),
    (document_rowid_2_40, "documents has rowids 2..1099511627776"),
    (section_rowid_2_40, "sections has rowids"),
    (negative_section_rowid, "sections has rowids -5.."),
    (fts_rowid_out_of_range, "fts_body has rowids"),
    (zlib_bomb_and_bound, "max_section_bytes is 999999999999"),
    (vector_dimension_edited, "vector table has dimension 9 but its metadata says 8"),
    (vector_dimension_and_meta_edited, "1 chunk(s) of its vectors do not hold vectors of "
                                       "dimension 9"),
]


@pytest.fixture(scope="module")
def base(examples_db: Path) -> Path:
    return examples_db


def hostile(base: Path, tmp: Path, edit: Callable[[Path], None]) -> tuple[Path, bytes]:
    path = tmp / f"{edit.__name__}.db"
    shutil.copyfile(base, path)
    edit(path)
    return path, path.read_bytes()


def refused(rc: int, err: str, seconds: float, mb: float, want: str) -> None:
    assert rc == 3, (rc, err)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    assert want in err, err
    assert seconds < SECONDS, seconds
    assert 0 < mb < MEGABYTES, mb


@pytest.mark.parametrize("edit,want", CASES, ids=[e.__name__ for e, _ in CASES])
def test_hostile_file_is_refused_on_open(base: Path, tmp_path: Path, edit, want: str) -> None:
    path, before = hostile(base, tmp_path, edit)
    for args in (("info", str(path)), ("search", str(path), "generator", "--ranker", "bm25"),
                 ("fetch", str(path), BOMB_DOC, BOMB_SECTION)):
        rc, _out, err, seconds, mb = run_measured(*args)
        refused(rc, err, seconds, mb, want)
    with pytest.raises(DamagedCollection, match="rebuild it or get a fresh copy"):
        sieve_lite.open(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("edit,want", [
    (zlib_bomb, "unpacks to over"),
    (not_zlib, "does not unpack"),
    (heading_is_a_number, "a heading is stored as bytes"),
], ids=["zlib_bomb", "not_zlib", "heading_is_a_number"])
def test_damage_inside_a_document_is_refused_when_read(base: Path, tmp_path: Path, edit,
                                                       want: str) -> None:
    """Damage that only one document's rows show: the file opens, reading that document is
    refused (in one line, without inflating the bomb)."""
    path, before = hostile(base, tmp_path, edit)
    rc, _out, err, seconds, mb = run_measured("fetch", str(path), BOMB_DOC, BOMB_SECTION)
    refused(rc, err, seconds, mb, want)
    rc, out, err, _s, _mb = run_measured("fetch", str(path), "pep-0238", "Abstract")
    assert rc == 0 and "Abstract" in out, err  # the rest of the collection still reads
    with sieve_lite.open(path) as coll, pytest.raises(DamagedCollection, match=want):
        coll.document(BOMB_DOC)
    assert path.read_bytes() == before


def test_postings_past_the_passages_are_refused_when_searched(base: Path,
                                                              tmp_path: Path) -> None:
    """A packed postings list naming a passage the collection does not have: a search using
    that word is refused in one line (the ranker's arrays are never indexed with it); other
    words still search."""
    from sieve_lite.store import passages as ps

    def far_passage(p: Path) -> None:
        _edit(p, "UPDATE passage_postings SET data = ? WHERE term = 'generator'",
              (ps.encode(np.array([3, 10**9]), np.array([1, 1])),))

    path, before = hostile(base, tmp_path, far_passage)
    for query in ("generator", "generat*"):
        rc, _out, err, seconds, mb = run_measured("search", str(path), query, "--ranker",
                                                  "bm25")
        refused(rc, err, seconds, mb, "postings of 'generator' name passage 1000000000")
    rc, out, err, _s, _mb = run_measured("search", str(path), "walrus", "--ranker", "bm25")
    assert rc == 0 and "pep-0622" in out, err
    assert path.read_bytes() == before


def test_a_card_unpacks_no_more_than_the_build_bound(base: Path, tmp_path: Path) -> None:
    """A search whose card's snippet comes from the bomb's section (the index still holds the
    section's words) is refused at the bound the build stored, not at the global ceiling."""
    path, before = hostile(base, tmp_path, zlib_bomb)
    with sieve_lite.open(path) as coll:
        bound = coll.meta.max_section_bytes
        assert 0 < bound < MAX_SECTION_BYTES
        with pytest.raises(DamagedCollection, match=f"unpacks to over {bound:,} bytes"):
            coll.search("visitor tedious", k=5, ranker="bm25")  # only that section has both
    rc, _out, err, seconds, mb = run_measured("search", str(path), "visitor tedious",
                                              "--ranker", "bm25")
    refused(rc, err, seconds, mb, f"unpacks to over {bound:,} bytes")
    assert path.read_bytes() == before


def test_the_same_edits_on_a_good_file_are_needed(base: Path, tmp_path: Path) -> None:
    """The base file and the vector-making edit are sound: they open and read."""
    for edit in (lambda p: None, with_vectors):
        path = tmp_path / "ok.db"
        shutil.copyfile(base, path)
        edit(path)
        rc, out, err, seconds, mb = run_measured("fetch", str(path), BOMB_DOC, BOMB_SECTION)
        assert rc == 0 and BOMB_SECTION in out, err
        assert seconds < SECONDS and mb < MEGABYTES
        with sieve_lite.open(path) as coll:
            assert coll.documents == 67


# ------------------------------------------------------------------ the connection itself
def test_read_connection_is_defensive(base: Path) -> None:
    with sieve_lite.open(base) as coll:
        conn = coll.conn
        assert conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, -1) == 1
        assert conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1) == 0
        assert conn.config(apsw.SQLITE_DBCONFIG_ENABLE_VIEW, -1) == 0
        assert conn.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, -1) == 0
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
        assert conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0
        with pytest.raises(apsw.ReadOnlyError):
            conn.execute("DELETE FROM meta")
        with pytest.raises(apsw.Error):
            conn.execute("ATTACH ':memory:' AS other")


def test_a_statement_over_its_budget_is_stopped(base: Path) -> None:
    coll = sieve_lite.collection.Collection(base, budget=0.2)
    t0 = time.monotonic()
    with pytest.raises(DamagedCollection, match="ran over its 0.2 s budget"):
        coll.conn.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                          "SELECT count(*) FROM r").fetchone()
    assert time.monotonic() - t0 < 5  # stopped, not left to run (wall time: the load varies)
    # the budget is per statement: the next one runs
    assert coll.conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 67
    coll.close()


def test_other_files_keep_their_usage_errors(tmp_path: Path, base: Path) -> None:
    """Not a collection at all, or another version: exit 2 with a fix, as before."""
    other = tmp_path / "other.db"
    _edit(other, "CREATE TABLE t(x)")
    rc, _o, err, _s, _m = run_measured("info", str(other))
    assert rc == 2 and "not a sieve-lite collection" in err
    with pytest.raises(CollectionError) as info:
        sieve_lite.open(other)
    assert not isinstance(info.value, DamagedCollection)


# ------------------------------------------------------------------------ terminal safety
OSC8 = "\x1b]8;;https://evil.example/\x1b\\Click\x1b]8;;\x1b\\"


def test_control_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    doc = Document.from_dict({
        "id": "osc", "title": f"Link {OSC8} here\r\x07", "author": ["Eve\x1b[2J"],
        "sections": [{"heading": f"Part {OSC8}", "text": f"needle text {OSC8} \u202eevil"}],
        "infobox": [["k\x1b[31m", "[/oops] [bold]x"]]})
    out = tmp_path / "osc.db"
    build_collection([doc], out, embed=False)
    _edit(out, "UPDATE meta SET value = '[/oops]' WHERE key = 'source'")
    for args in (("search", str(out), "needle", "--ranker", "bm25"),
                 ("search", str(out), "needle", "--ranker", "bm25", "--compact"),
                 ("fetch", str(out), "osc", "Part"), ("fetch", str(out), "osc"),
                 ("info", str(out))):
        rc, stdout, err, _s, _m = run_measured(*args)
        assert rc == 0, (args, err)
        assert not any(c in stdout for c in "\x1b\x07\r\u202e"), (args, repr(stdout))
        assert "Click" in stdout or args[0] == "info"
    rc, stdout, _e, _s, _m = run_measured("info", str(out))
    assert "[/oops]" in stdout
    # JSON keeps the text as stored (escaped by json): it is for programs, not terminals.
    rc, stdout, _e, _s, _m = run_measured("fetch", str(out), "osc", "Part", "--json")
    assert json.loads(stdout)["text"] == f"needle text {OSC8} \u202eevil"
