"""Hostile queries: each is refused cleanly (a ``QueryError`` with a one-line message that names
a column) or searched literally, through the library and through ``sieve-lite search``; the
collection file is byte-identical afterwards. Also the limits of BQL.md section 7 at and past
their edges.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

try:
    from bruteforce import BruteForce, Engine, build_collection_from_jsonl, engine_available
    from bruteforce import read_jsonl as read_docs
except ImportError:  # tests/ as a package
    from tests.bruteforce import (  # type: ignore[no-redef]
        BruteForce,
        Engine,
        build_collection_from_jsonl,
        engine_available,
    )
    from tests.bruteforce import read_jsonl as read_docs  # type: ignore[no-redef]

from sieve_lite.errors import QueryError

FIXTURE = Path(__file__).resolve().parent / "fixture_corpus.jsonl"

pytestmark = pytest.mark.skipif(not engine_available(),
                                reason="sieve_lite.bql.parse/compile_query not there yet")

HOSTILE: list[tuple[str, str]] = [
    ("quote", '"'),
    ("two quotes", '""'),
    ("three quotes", '"""'),
    ("quote in term", 'fort"castle'),
    ("single quote", "'"),
    ("field colon", "title:x"),
    ("near open", "NEAR("),
    ("near empty", "NEAR()"),
    ("near one", "NEAR(fort)"),
    ("near bare", "NEAR"),
    ("near slash", "NEAR/"),
    ("near slash 5", "NEAR/5"),
    ("near huge", "NEAR/99999999999999999999999(fort castle)"),
    ("near negative", "NEAR/-1(fort castle)"),
    ("near space", "NEAR/5 (fort castle)"),
    ("caret", "^"),
    ("caret term", "^fort"),
    ("star", "*"),
    ("stars", "**"),
    ("star quoted", '"*"'),
    ("star middle", "fo*t"),
    ("star short", "f*"),
    ("dash", "-"),
    ("dashes", "--fort"),
    ("dash alone", "fort - castle"),
    ("nul", "\x00"),
    ("nul inside", "fort\x00castle"),
    ("nul quoted", '"fort\x00"'),
    ("lone high surrogate", "\ud800"),
    ("lone low surrogate", "fort \udfff"),
    ("surrogate in phrase", '"fort \udc80"'),
    ("surrogate in field", "fort[\ud800]"),
    ("surrogate star", "\ud800*"),
    ("100 KB", "fort " * 20_000),
    ("100 KB one term", "x" * 100_000),
    ("200 nested", "(" * 200 + "fort" + ")" * 200),
    ("200 open", "(" * 200),
    ("200 close", ")" * 200),
    ("open bracket", "["),
    ("close bracket", "]"),
    ("scope alone", "[title]"),
    ("scope unclosed", "fort[title"),
    ("scope empty", "fort[]"),
    ("scope nested", "fort[[title]]"),
    ("scope unknown", "fort[nosuch]"),
    ("scope sql", "fort[title) UNION SELECT 1 --]"),
    ("date open", "date["),
    ("date impossible", "date[2019-02-29]"),
    ("date month 13", "date[2018-13]"),
    ("date reversed", "date[2023..2018]"),
    ("date word", "fort[date]"),
    ("date garbage", "date[yesterday]"),
    ("date year 0", "date[0000]"),
    ("empty", ""),
    ("spaces", "   \t\n "),
    ("empty group", "()"),
    ("and dangling", "fort AND"),
    ("or leading", "OR fort"),
    ("and or", "fort AND OR castle"),
    ("not alone", "NOT fort"),
    ("not not", "NOT NOT fort"),
    ("or not", "fort OR NOT castle"),
    ("no letters", "+++"),
    ("sql injection 1", "'; DROP TABLE documents; --"),
    ("sql injection 2", 'fort" OR 1=1 --'),
    ("sql injection 3", "fort') UNION SELECT id FROM documents --"),
    ("fts syntax", "fort OR castle NOT NEAR(a b, 1) ^x {title}: y"),
    ("fts column filter", "v:fort"),
    ("fts star quote", '"fort"*"castle"'),
    ("placeholders", "? ?1 :p0 @x $x"),
    ("bidi", "\u202efort\u202c"),
    ("bom", "\ufefffort"),
    ("combining pile", "x" + "\u0301" * 200),
    ("emoji", "🏰 fort"),
    ("fullwidth and", "fort ＡＮＤ castle"),
    ("new tai lue", "ᦂᦱ"),
    ("private use", "\ue000\ue001"),
    ("noncharacter", "\uffff fort"),
    ("astral", "\U0010ffff fort"),
    ("control", "fort\x07\x1b[31mcastle"),
]


def collection_hash(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    db = build_collection_from_jsonl(FIXTURE, tmp_path_factory.mktemp("bql-hostile") / "h.db")
    before = collection_hash(db)
    yield db
    assert collection_hash(db) == before, "the collection file changed"
    leftovers = sorted(p.name for p in db.parent.iterdir() if p.name != db.name)
    assert not leftovers, f"files appeared beside the collection: {leftovers}"


@pytest.fixture(scope="module")
def engine(hostile_db: Path) -> Iterator[tuple[Engine, BruteForce]]:
    e = Engine(hostile_db)
    yield e, BruteForce(read_docs(FIXTURE))
    e.close()


def assert_clean_refusal(query: str, err: QueryError) -> None:
    text = str(err)
    assert text and "\n" not in text and "\r" not in text, f"not one line: {text!r}"
    text.encode("utf-8")  # no lone surrogate copied into the message
    assert 1 <= err.column <= len(query) + 1, f"no column inside the query: {err.column}"
    if query.strip():  # (an empty query has nothing to point at)
        assert f"column {err.column}" in text, f"the message does not name the column: {text}"
    assert len(text) < 600, f"message too long ({len(text)} chars)"


@pytest.mark.parametrize("query", [q for _, q in HOSTILE], ids=[n for n, _ in HOSTILE])
def test_hostile_library(engine: tuple[Engine, BruteForce], hostile_db: Path,
                         query: str) -> None:
    eng, brute = engine
    before = collection_hash(hostile_db)
    try:
        node = eng.parse(query)
    except QueryError as e:
        assert_clean_refusal(query, e)
    else:  # searched literally: the SQL runs and agrees with the brute force
        try:
            got = eng.run_node(node)
        except apsw.Error as e:
            pytest.fail(f"SQL error: {type(e).__name__}: {e}")
        assert got == brute.evaluate(node), f"engine vs brute force over {node!r}"
    assert collection_hash(hostile_db) == before


@pytest.mark.parametrize("query,what", [
    ("x" * 1000, None),
    ("x" * 1001, "1,000 characters"),
    (" ".join(["fort"] * 64), None),
    (" ".join(["fort"] * 65), "64 atoms"),
    ("NEAR(" + " ".join(["fort"] * 64) + ")", None),
    ("NEAR(" + " ".join(["fort"] * 65) + ")", "64 atoms"),
    (" OR ".join([f"date[{1950 + i}]" for i in range(64)]), None),
    (" OR ".join([f"date[{1950 + i}]" for i in range(65)]), "64 atoms"),
    ("(" * 20 + "fort" + ")" * 20, None),
    ("(" * 21 + "fort" + ")" * 21, "20 levels"),
    ("fort " + "(castle " * 20 + ")" * 20, None),
])
def test_limits(engine: tuple[Engine, BruteForce], query: str, what: str | None) -> None:
    """BQL.md section 7: at most 1,000 characters, 64 atoms, 20 levels of parentheses; past a
    limit the refusal names the limit."""
    eng, brute = engine
    if what is None:
        node = eng.parse(query)
        assert eng.run_node(node) == brute.evaluate(node)
        return
    with pytest.raises(QueryError) as info:
        eng.parse(query)
    assert_clean_refusal(query, info.value)
    limit_number = what.split()[0]
    assert limit_number in str(info.value), f"the message does not name the limit: {info.value}"


@pytest.mark.parametrize("shape", ["and", "or", "not", "nested", "near", "mixed"])
def test_64_atom_queries_run(engine: tuple[Engine, BruteForce], shape: str) -> None:
    """The largest valid queries compile to SQL that SQLite accepts and that is right."""
    eng, brute = engine
    words = ["fort", "castle", "river", "glass", "city", "museum", "stained", "spain", "ab"]
    w = [words[i % len(words)] + ("*" if i % 5 == 0 else "") for i in range(64)]
    query = {
        "and": " ".join(w),
        "or": " OR ".join(w),
        "not": w[0] + " " + " ".join(f"-{x}[title]" for x in w[1:]),
        "nested": "(" * 20 + " OR ".join(w[:44]) + ")" * 20 + " " + " ".join(w[44:]),
        "near": " OR ".join(f"NEAR/3({a} {b})" for a, b in zip(w[::2], w[1::2], strict=True)),
        "mixed": " OR ".join(f"({a}[ti] -{b}[ab] \"{a.rstrip('*')} {b}\"[sec])"
                             for a, b in zip(w[:42:2], w[1:42:2], strict=True)),
    }[shape]
    node = eng.parse(query)
    assert eng.run_node(node) == brute.evaluate(node)


# ----------------------------------------------------------------------------------- CLI
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", COLUMNS="100", NO_COLOR="1")
    return subprocess.run([*CLI, *args], capture_output=True, timeout=timeout, env=env)


def _has_search_command() -> bool:
    try:
        return _cli("search", "--help").returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


CLI_CASES = ['"', "title:x", "NEAR(", "^", "*", "fort[nosuch]", "date[2019-02-29]",
             "(" * 200 + "fort" + ")" * 200, "fort " * 20_000, "NOT fort", "\udc80fort",
             "'; DROP TABLE documents; --", ""]


@pytest.fixture(scope="module")
def search_cli() -> None:
    if not _has_search_command():
        pytest.skip("no 'sieve-lite search' command yet")


@pytest.mark.parametrize("query", CLI_CASES, ids=[repr(q[:20]) for q in CLI_CASES])
def test_hostile_cli(search_cli: None, hostile_db: Path, query: str) -> None:
    before = collection_hash(hostile_db)
    # argv is bytes on POSIX: a lone low surrogate goes through as its surrogateescape byte.
    arg = os.fsencode(query) if "\udc80" in query else query
    proc = _cli("search", "--strict", "--ranker", "bm25", str(hostile_db),
                arg)  # type: ignore[arg-type]
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert proc.returncode in (0, 1, 2), (proc.returncode, err)
    if proc.returncode == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one line on stderr, got {lines}"
        assert "column" in lines[0] or query == "", lines[0]
    assert collection_hash(hostile_db) == before
