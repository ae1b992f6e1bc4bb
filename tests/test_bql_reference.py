"""The engine's selection against the brute-force reference of ``tests/bruteforce.py``.

Four layers, each independent of the engine's SQL:

1. the contract's examples (``tests/data/bql-examples``): the engine and the brute force must
   both admit exactly the ids given there, and bad queries must be refused at the column the
   example names;
2. hand-checked expectations and BQL.md equivalences over ``tests/fixture_corpus.jsonl``;
3. golden files of the parser author (``tests/golden/*.jsonl``), when there are any;
4. generated queries (hypothesis): each query is generated *together with its meaning* (an AST
   built by the generator from BQL.md, not by the engine's parser), so a divergence of either the
   parser or the compiler shows up. On failure the message says which of the two diverged.

The brute force's NEAR rule is itself checked against raw FTS5 (``test_near_rule_is_fts5s``).
"""

from __future__ import annotations

import datetime
import functools
import inspect
import json
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

try:
    from bruteforce import (
        BruteForce,
        Engine,
        build_collection_from_jsonl,
        engine_available,
        span_of,
    )
    from bruteforce import read_jsonl as read_docs
except ImportError:  # tests/ as a package
    from tests.bruteforce import (  # type: ignore[no-redef]
        BruteForce,
        Engine,
        build_collection_from_jsonl,
        engine_available,
        span_of,
    )
    from tests.bruteforce import read_jsonl as read_docs  # type: ignore[no-redef]

from sieve_lite.bql.ast import And, DateRange, Near, Node, Not, Or, Span, Term
from sieve_lite.errors import QueryError
from sieve_lite.words import words

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE / "data" / "bql-examples"
FIXTURE = HERE / "fixture_corpus.jsonl"
GOLDEN = HERE / "golden"

pytestmark = pytest.mark.skipif(not engine_available(),
                                reason="sieve_lite.bql.parse/compile_query not there yet")

NO_SPAN = Span(1, 1)


# ------------------------------------------------------------------------------- environments
@dataclass
class Env:
    name: str
    engine: Engine
    brute: BruteForce
    docs: list[dict[str, Any]]


def _env(name: str, src: Path, tmp: Path) -> Env:
    db = build_collection_from_jsonl(src, tmp / f"{name}.db")
    docs = read_docs(src)
    env = Env(name, Engine(db), BruteForce(docs), docs)
    assert env.engine.fields == env.brute.fields(), "collection fields differ from BQL.md sec. 1"
    return env


@pytest.fixture(scope="module")
def fixture_env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    env = _env("fixture", FIXTURE, tmp_path_factory.mktemp("bql-fixture"))
    yield env
    env.engine.close()


@pytest.fixture(scope="module")
def examples_env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    env = _env("examples", EXAMPLES / "corpus.jsonl", tmp_path_factory.mktemp("bql-examples"))
    yield env
    env.engine.close()


def _diverge(env: Env, query: str, want: set[str], got: set[str], what: str) -> str:
    return (f"{env.name}: {query!r}: {what}\n  missing (expected, not admitted): "
            f"{sorted(want - got)}\n  extra (admitted, not expected): {sorted(got - want)}")


# ------------------------------------------------------------------------- 1. shared examples
def _example_queries() -> list[dict[str, Any]]:
    path = EXAMPLES / "queries.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


EXAMPLE_QUERIES = _example_queries()
OK_EXAMPLES = [q for q in EXAMPLE_QUERIES if q["expect"] == "ok"]
BAD_EXAMPLES = [q for q in EXAMPLE_QUERIES if q["expect"] == "error"]


@pytest.mark.parametrize("case", OK_EXAMPLES, ids=[q["q"] for q in OK_EXAMPLES])
def test_shared_example(examples_env: Env, case: dict[str, Any]) -> None:
    query, want = case["q"], set(case["ids"])
    node = examples_env.engine.parse(query)
    brute = examples_env.brute.evaluate(node)
    got = examples_env.engine.run_node(node)
    problems = []
    if brute != want:  # the parser's AST does not mean what BQL.md says (or our reference errs)
        problems.append(_diverge(examples_env, query, want, brute, "brute force over the "
                                 "engine's AST vs the examples' ids"))
    if got != want:
        problems.append(_diverge(examples_env, query, want, got, "engine vs the examples' ids"))
    assert not problems, "\n".join(problems)


_COLUMN = re.compile(r"\bcolumn (\d+)")


@pytest.mark.parametrize("case", BAD_EXAMPLES, ids=[q["q"] for q in BAD_EXAMPLES])
def test_shared_example_error(examples_env: Env, case: dict[str, Any]) -> None:
    with pytest.raises(QueryError) as info:
        examples_env.engine.parse(case["q"])
    err = info.value
    assert "\n" not in str(err)
    m = _COLUMN.search(case["message"])
    if m:
        assert err.column == int(m.group(1)), (str(err), case["message"])
        assert f"column {m.group(1)}" in str(err), (str(err), case["message"])


# --------------------------------------------------------------- 2. hand-checked on the fixture
# Checked by hand against tests/fixture_corpus.jsonl and BQL.md (the brute force agrees too).
HAND: list[tuple[str, set[str]]] = [
    # word rule: NFKD, marks dropped, casefold; letters without decomposition stay themselves
    ("orsted", set()),
    ("ørsted", {"fx-orsted"}),
    ("ØRSTED[author]", {"fx-orsted"}),
    ("łódź", {"fx-lodz"}),
    ("ŁÓDŹ[section]", {"fx-lodz"}),
    ("lodz", {"fx-lodz-ascii"}),
    ("Straße[title]", {"fx-strasse"}),
    ("strasse", {"fx-strasse", "fx-lodz-ascii"}),
    ("WEISS[section]", {"fx-strasse"}),
    ("ﬁnal[title]", {"fx-ligature"}),
    ("fi", {"fx-ligature"}),
    ("office", {"fx-ligature"}),
    ("x2", {"fx-numbers"}),
    ("zurich[title]", {"fx-zurich"}),
    ("\"sao paulo\"[infobox]", {"fx-zurich", "fx-saopaulo"}),
    ("σοφια", {"fx-greek"}),
    ("σοφιας", {"fx-greek"}),
    ("ΣΩΚΡΑΤΗΣ", {"fx-greek"}),
    ("москва", {"fx-greek"}),
    ("istanbul", {"fx-cjk"}),
    ("東京", {"fx-cjk"}),
    ("dzemal", {"fx-cjk"}),
    ("aesir", {"fx-cjk"}),
    # New Tai Lue vowel signs are letters (Lo) since Unicode 8: 'ᦂᦱ' is one word
    ("ᦂᦱ", {"fx-tai-lue"}),
    ("ᦂ", {"fx-tai-lue-2"}),
    ("æsir", {"fx-cjk"}),
    # separators inside a bare term make a phrase
    ("O'Brien", {"fx-zurich", "fx-apostrophe"}),
    ("O'Brien[author]", {"fx-apostrophe"}),
    ("obrien", {"fx-apostrophe"}),
    ("O’Neill[title]", {"fx-apostrophe"}),
    ("COVID-19", {"fx-zurich", "fx-numbers", "fx-years"}),
    ("3.14", {"fx-numbers"}),
    ("3.14[infobox]", {"fx-numbers"}),
    ("C++", {"fx-numbers"}),
    ("e-mail[body]", {"fx-zurich", "fx-hyphen"}),
    ("email", {"fx-hyphen"}),
    ("stained-glass", {"fx-stained-glass"}),
    ("Jean-Paul[author]", {"fx-sartre"}),
    # phrases hold within one value only
    ("\"stained glass\"", {"fx-stained-glass"}),
    ("\"stained glass\"[tiab]", {"fx-stained-glass"}),
    ("stained glass", {"fx-split-sections", "fx-split-headings", "fx-split-title-body",
                       "fx-stained-glass", "fx-museum-glass", "fx-long"}),
    ("stained[section] glass[section]", {"fx-split-headings", "fx-stained-glass"}),
    ("\"status final\"[infobox]", {"fx-infobox", "fx-long"}),
    ("\"final type\"[infobox]", set()),
    ("\"final type\"", {"fx-infobox", "fx-infobox-draft"}),
    ("\"lovelace charles\"[author]", set()),
    ("\"ada lovelace\"[author]", {"fx-authors", "fx-nodate-flat", "fx-long"}),
    ("\"van rossum\"[au]", {"fx-infobox"}),
    ("van rossum[au]", {"fx-infobox", "fx-infobox-draft"}),
    # (intro) is a label, not a heading; a heading 'Intro' is one
    ("intro[section]", {"fx-intro-heading"}),
    ("intro", {"fx-intro-only", "fx-intro-heading", "fx-intro-middle"}),
    ("overview[section]", {"fx-intro-middle"}),
    # lowercase operators are words; uppercase ones in the text are words too
    ("and[title] or[title] not[title] near[title]", {"fx-andornot"}),
    ("\"and or not\"[section]", {"fx-andornot"}),
    ("neither", {"fx-andornot"}),
    # prefixes
    ("fort*[title]", {"fx-fort-santiago", "fx-fort-mexico", "fx-fortress"}),
    ("fortif*", {"fx-fortress"}),
    ("\"fort sant*\"", {"fx-fort-santiago"}),
    ("\"fort sant\"*", {"fx-fort-santiago"}),
    ("14*", {"fx-numbers"}),
    ("zür*[title]", {"fx-zurich"}),
    # NEAR: at most d words between the end of the first and the start of the last
    ("NEAR/5(alpha beta)", {"fx-near-distances"}),
    ("NEAR/4(alpha beta)", set()),
    ("NEAR/5(beta alpha)", {"fx-near-distances"}),
    ("NEAR(zeta eta)", {"fx-near-distances"}),
    ("NEAR(theta iota)", set()),
    ("NEAR/11(theta iota)", {"fx-near-distances"}),
    ("NEAR/0(delta epsilon)", {"fx-near-distances"}),
    ("NEAR/0(alpha one)", {"fx-near-distances"}),
    ("NEAR/3(red green blue)", {"fx-near-three"}),
    ("NEAR/2(red green blue)", {"fx-near-three"}),
    ("NEAR/2(red green yellow)", set()),
    ("NEAR/3(\"new york\" jersey)", set()),
    ("NEAR/4(\"new york\" jersey)", {"fx-near-three"}),
    ("NEAR/0(\"new york\" \"york city\")", {"fx-near-three"}),
    ("NEAR/0(alph* bet*)", set()),
    ("NEAR/5(alph* bet*)", {"fx-near-distances"}),
    ("NEAR/10(stained glass)[section]", {"fx-stained-glass"}),
    ("NEAR(marmot bagpipe)", {"fx-split-sections", "fx-split-title-body"}),
    ("NEAR(glass marmot)", {"fx-split-sections", "fx-split-title-body"}),
    # fields and aliases
    ("castles[ti]", {"fx-castle-spain", "fx-long"}),
    ("castle[heading]", {"fx-fort-mexico"}),
    ("castle[tiab] -castle[body]", set()),
    ("river[section, body] -river[body]", set()),
    ("glass[by]", {"fx-stained-glass"}),
    ("poland[ib]", {"fx-lodz"}),
    ("Country: Poland[infobox]", {"fx-lodz"}),
    ("history[SEC] AND castle[TEXT]", {"fx-repeat-headings"}),
    ("(fort OR castle)[title]", {"fx-fort-santiago", "fx-fort-mexico"}),
    ("fort santiago[title]", {"fx-fort-santiago"}),
    # dates: partial dates cover their span; undated documents never match
    ("date[2002]", {"fx-zurich", "fx-repeat-headings"}),
    ("2002[date]", {"fx-zurich", "fx-repeat-headings"}),
    ("date[2002-12..2003-01]", {"fx-repeat-headings", "fx-split-sections"}),
    ("date[..1989-12-31] AND date[1989..]", {"fx-stained-glass"}),
    ("date[<1990] date[>1988]", {"fx-stained-glass"}),
    ("date[<=1990-06] date[>=1990]", {"fx-strasse"}),
    ("date[2020-05] river", {"fx-river-city"}),
    ("date[>=2020-05] river", {"fx-river-city", "fx-empty-title"}),
    ("date[>2020-04] river", {"fx-river-city", "fx-empty-title"}),
    ("date[2020-02-29]", {"fx-greek", "fx-numbers"}),
    ("date[2000-02]", {"fx-intro-only", "fx-intro-heading"}),
    ("castle NOT date[1000..2100]", set()),
    ("fort NOT date[1000..2100]", {"fx-nodate-2"}),
    ("glass NOT date[1000..2100]", {"fx-nodate-2"}),
    ("NOT date[..2100] AND flat", {"fx-nodate-flat"}),
    # operators
    ("jazz NOT rock", set()),
    ("jazz -rock", set()),
    ("jazz rock", {"fx-nodate-flat"}),
    ("marmot -(bagpipe OR glass)", set()),
    ("marmot (NOT bagpipe)", {"fx-split-headings"}),
    ("marmot -\"marmot and bagpipe\"", {"fx-split-headings", "fx-split-title-body"}),
    ("NOT marmot AND bagpipe", set()),
    ("bagpipe OR jazz marmot", {"fx-split-sections", "fx-split-title-body"}),
]


@pytest.mark.parametrize("query,want", HAND, ids=[q for q, _ in HAND])
def test_hand_checked(fixture_env: Env, query: str, want: set[str]) -> None:
    node = fixture_env.engine.parse(query)
    brute = fixture_env.brute.evaluate(node)
    got = fixture_env.engine.run_node(node)
    problems = []
    if brute != want:
        problems.append(_diverge(fixture_env, query, want, brute,
                                 "brute force over the engine's AST vs the hand-checked ids"))
    if got != want:
        problems.append(_diverge(fixture_env, query, want, got, "engine vs the hand-checked ids"))
    assert not problems, "\n".join(problems)


# Pairs BQL.md says mean the same.
EQUIVALENT: list[tuple[str, str]] = [
    ("date[2018..2023]", "2018..2023[date]"),
    ("date[2002]", "2002[date]"),
    ("date[2002-05]", "2002-05[date]"),
    ("date[..2002]", "date[<=2002]"),
    ("date[..2002]", "date[<2003]"),
    ("date[2018..]", "date[>=2018]"),
    ("date[>1999]", "date[>=2000]"),
    ("date[<1990-06]", "date[<=1990-05]"),
    ("date[2002]", "date[2002-01-01..2002-12-31]"),
    ("fort santiago[title]", "fort[title] AND santiago[title]"),
    ("fort santiago [title]", "fort[title] santiago[title]"),
    ("fort*[title,body]", "fort*[title] OR fort*[body]"),
    ("fort*[title, body]", "fort*[TITLE,Body]"),
    ("river[tiab]", "river[title] OR river[body]"),
    ("river[all]", "river"),
    ("river[any]", "river[title] OR river[section] OR river[body] OR river[infobox] OR "
                   "river[author]"),
    ("(fort OR castle)[title]", "fort[title] OR castle[title]"),
    ("(fort OR castle[body])[title]", "fort[title] OR castle[body]"),
    ("\"fort sant*\"", "\"fort sant\"*"),
    ("O'Brien", "\"o brien\""),
    ("COVID-19", "\"covid 19\""),
    ("Zürich", "zurich"),
    ("ﬁnal", "FINAL"),
    ("Straße", "STRASSE"),
    ("river NOT castle", "river AND NOT castle"),
    ("river -castle", "river NOT castle"),
    ("river -\"stained glass\"", "river NOT \"stained glass\""),
    ("river -(castle OR fort)", "river NOT (castle OR fort)"),
    ("river (NOT castle)", "river NOT castle"),
    ("river castle", "river AND castle"),
    ("NEAR(alpha beta)", "NEAR/10(alpha beta)"),
    ("river OR castle fort", "river OR (castle AND fort)"),
    ("NOT castle river", "river NOT castle"),
    ("river castle OR glass fort", "(river castle) OR (glass fort)"),
    ("NEAR(alpha beta)[body]", "NEAR(alpha beta)[text]"),
    ("rock and roll[title]", "rock[title] and[title] roll[title]"),
]


@pytest.mark.parametrize("env_name", ["fixture_env", "examples_env"])
@pytest.mark.parametrize("left,right", EQUIVALENT, ids=[f"{a} == {b}" for a, b in EQUIVALENT])
def test_equivalent_forms(request: pytest.FixtureRequest, env_name: str, left: str,
                          right: str) -> None:
    env: Env = request.getfixturevalue(env_name)
    a, b = env.engine.run(left), env.engine.run(right)
    assert a == b, _diverge(env, f"{left} vs {right}", a, b, "BQL.md says these are equal")
    assert a == env.brute.evaluate(env.engine.parse(left)), left


FLAT_DOCS = [
    {"id": "flat-1", "title": "Fort Santiago", "text": "A fort in Manila, near the river."},
    {"id": "flat-2", "title": "Rock and roll", "text": "Music about a castle."},
    {"id": "flat-3", "title": "", "sections": [{"heading": "(intro)", "text": "Only intro."}]},
]


def test_collection_without_optional_fields(tmp_path: Path) -> None:
    """BQL.md section 1: title, body, tiab and all always; the others only when some document
    has them, and naming a missing one is an error that lists the fields there are."""
    src = tmp_path / "flat.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in FLAT_DOCS), encoding="utf-8")
    env = _env("flat", src, tmp_path)
    try:
        assert env.engine.fields == ("title", "body", "tiab", "all")
        for query in ("fort[section]", "fort[author]", "fort[by]", "fort[ib]", "date[2002]",
                      "2002[date]", "fort NOT date[2002]", "(fort OR castle)[heading]"):
            with pytest.raises(QueryError) as info:
                env.engine.parse(query)
            assert "title, body, tiab, all" in str(info.value), str(info.value)
        for query, want in [("fort", {"flat-1"}), ("intro", {"flat-3"}),
                            ("intro[all]", {"flat-3"}), ("castle -fort", {"flat-2"}),
                            ("\"rock and roll\"[tiab]", {"flat-2"})]:
            node = env.engine.parse(query)
            assert env.brute.evaluate(node) == want, query
            assert env.engine.run_node(node) == want, query
    finally:
        env.engine.close()


SAME_SHAPE: list[list[str]] = [
    ["fort[title] -castle[body]", "river[title] -glass[body]", '"stained glass"[title] -fo*[body]',
     "castles[title] -spain[body]"],
    ["NEAR/0(alpha one)", "NEAR/5(alpha beta)", "NEAR/4(alpha beta)", 'NEAR("new york" jersey)',
     "NEAR/3(red green)"],
    ["date[2002]", "date[1989]", "date[2020-02-29]", "date[1990-06..2002-05]", "2000[date]"],
    ["date[..2002]", "date[<1990]", "date[..1989-12-31]"],
    ["date[2002..]", "date[>2020-04]", "date[>=1990]"],
    ["(fort OR castle)[title] river", "(glass OR stained)[title] city", "(a OR b)[title] c"],
    ["fort river -castle", "glass river -fort", "river city -glass"],
    ["fort OR castle -spain", "glass OR river -fort", "intro OR overview -label"],
]


@pytest.mark.parametrize("group", SAME_SHAPE, ids=[g[0] for g in SAME_SHAPE])
def test_same_shape_queries(fixture_env: Env, group: list[str]) -> None:
    """Queries that differ only in words, distances and dates compile to the same SQL text
    (the compiler may memoise it by shape): each must still bind its own values."""
    for query in group + group[::-1]:
        node = fixture_env.engine.parse(query)
        got, want = fixture_env.engine.run_node(node), fixture_env.brute.evaluate(node)
        assert got == want, _diverge(fixture_env, query, want, got, "engine vs brute force")


# --------------------------------------------------------------------------- 3. golden files
def _golden_cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    if GOLDEN.is_dir():
        for path in sorted(GOLDEN.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    obj = json.loads(line)
                    if isinstance(obj, dict) and isinstance(obj.get("q"), str):
                        out.append((path.name, obj))
    return out


GOLDEN_CASES = _golden_cases()


@pytest.mark.skipif(not GOLDEN_CASES, reason="no tests/golden/*.jsonl with queries")
@pytest.mark.parametrize("case", GOLDEN_CASES, ids=[f"{n}:{c['q'][:60]}" for n, c in GOLDEN_CASES])
def test_golden_engine_vs_brute(fixture_env: Env, examples_env: Env,
                                case: tuple[str, dict[str, Any]]) -> None:
    """Golden error cases are refused at their column; every other golden query admits on
    both corpora exactly what the brute force admits for the engine's AST."""
    _, obj = case
    if "fields" in obj:  # meant for a collection with fewer fields
        if "message" in obj:
            from sieve_lite.bql import parse

            with pytest.raises(QueryError) as info:
                parse(obj["q"], obj["fields"])
            assert info.value.column == obj.get("column", info.value.column), str(info.value)
        return
    for env in (fixture_env, examples_env):
        if "message" in obj or obj.get("expect") == "error":
            with pytest.raises(QueryError) as info:
                env.engine.parse(obj["q"])
            if "column" in obj:
                assert info.value.column == obj["column"], (str(info.value), obj)
            continue
        node = env.engine.parse(obj["q"])
        got, want = env.engine.run_node(node), env.brute.evaluate(node)
        assert got == want, _diverge(env, obj["q"], want, got, "engine vs brute force")


# ------------------------------------------------------------- brute force self-check: NEAR
def test_near_rule_is_fts5s() -> None:
    """``bruteforce.near_match`` agrees with FTS5's own NEAR on random texts and groups."""
    rng = random.Random(20240603)
    alphabet = ["a", "b", "c", "d", "ab", "abc"]
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(v)")
    texts = [" ".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
             for _ in range(300)]
    conn.executemany("INSERT INTO t(rowid, v) VALUES (?, ?)", list(enumerate(texts)))
    docs = [{"id": str(i), "title": "", "text": t} for i, t in enumerate(texts)]
    brute = BruteForce(docs)
    for _ in range(400):
        items = []
        for _ in range(rng.randint(2, 4)):
            n = rng.choice([1, 1, 1, 2, 3])
            ws = tuple(rng.choice(alphabet) for _ in range(n))
            items.append(Term(ws, rng.random() < 0.2, ("body",), NO_SPAN))
        d = rng.randint(0, 5)
        fts = " ".join(
            (f'"{" ".join(t.words)}"' + ("*" if t.prefix else "")) for t in items)
        want = {str(r) for (r,) in conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ?", (f"NEAR({fts}, {d})",))}
        got = brute.evaluate(Near(tuple(items), d, ("body",), NO_SPAN))
        assert got == want, (f"NEAR({fts}, {d})", sorted(want - got), sorted(got - want))


def test_fts_tokenizer_keeps_every_bql_word(fixture_env: Env) -> None:
    """The FTS tables index words joined by spaces, so their tokenizer must give back every
    BQL word unchanged: one token, same text. Checked for every code point that is a word on
    its own (``words(ch) == [w]``), with the tokenizer the collection's FTS tables declare."""
    conn = fixture_env.engine.coll.conn
    (create,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'fts_body'").fetchone()
    m = re.search(r"tokenize\s*=\s*('(?:[^']|'')*'|\"[^\"]*\")", create)
    assert m, create
    mem = apsw.Connection(":memory:")
    mem.execute(f"CREATE VIRTUAL TABLE t USING fts5(v, tokenize={m.group(1)})")
    mem.execute("CREATE VIRTUAL TABLE tv USING fts5vocab(t, 'instance')")
    singles: list[tuple[int, str]] = []
    for cp in range(0x21, 0x110000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or not (ch.isalnum() or unicodedata.decomposition(ch)):
            continue
        ws = words(ch)
        if len(ws) == 1:
            singles.append((cp, ws[0]))
    # 1,000 words a row, then each word of a row whose tokens differ on its own.
    chunks = [singles[i:i + 1000] for i in range(0, len(singles), 1000)]
    mem.executemany("INSERT INTO t(rowid, v) VALUES (?, ?)",
                    [(i, " ".join(w for _, w in c)) for i, c in enumerate(chunks)])
    tokens: dict[int, list[str]] = {}
    for term, doc in mem.execute("SELECT term, doc FROM tv ORDER BY doc, offset"):
        tokens.setdefault(doc, []).append(term)
    suspects = [pair for i, c in enumerate(chunks) if tokens.get(i) != [w for _, w in c]
                for pair in c]
    mem.execute("DELETE FROM t")
    mem.executemany("INSERT INTO t(rowid, v) VALUES (?, ?)", suspects)
    tokens = {}
    for term, doc in mem.execute("SELECT term, doc FROM tv"):
        tokens.setdefault(doc, []).append(term)
    bad = [(f"U+{cp:04X}", w, tokens.get(cp)) for cp, w in suspects if tokens.get(cp) != [w]]
    assert len(singles) > 100_000
    assert not bad, (f"{len(bad)} BQL words the FTS tokenizer splits or changes "
                     f"(word, FTS tokens): {bad[:12]}")


# ---------------------------------------------------------------- 4. generated queries
_BARE_TOKEN = re.compile(r"[^\W_](?:[\w'’.+:\-]*[^\W_+]|[\w'’.+:\-]*\+)?")
_RESERVED = {"AND", "OR", "NOT", "NEAR"}
_PHRASE_TOKEN = re.compile(r'[^"*\\\s]+')


# Building hypothesis strategies is costly; the generator draws through cached ones.
BOOLS = st.booleans()
_SAMPLERS: dict[Any, tuple[Sequence[Any], st.SearchStrategy[Any]]] = {}


def pick(draw: Callable[..., Any], options: Sequence[Any]) -> Any:
    """``draw(st.sampled_from(options))`` with the strategy built once per option list."""
    key: Any = tuple(options) if len(options) <= 64 else id(options)
    hit = _SAMPLERS.get(key)
    if hit is None:
        hit = _SAMPLERS[key] = (options, st.sampled_from(options))
    return draw(hit[1])


@functools.cache
def ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@functools.cache
def perms(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(range(n))


@dataclass(frozen=True, eq=False)  # hashed by identity: strategies are cached per vocab
class Vocab:
    tokens: tuple[str, ...]  # distinct bare tokens as written in the corpus
    frequent: tuple[str, ...]  # bare tokens by occurrence (frequent ones repeat)
    values: tuple[str, ...]  # raw field values with at least two words (phrases, NEAR)
    dates: tuple[str, ...]  # date bounds to draw from


def _clean_token(raw: str) -> str | None:
    """A whitespace-separated piece of corpus text as a safe bare term, or None. Lowercase
    and/or/not/near stay (they are words); the uppercase operators do not."""
    tok = raw.strip(".,;:!?()[]{}<>\"'’`*«»")
    if (not tok or not _BARE_TOKEN.fullmatch(tok) or ".." in tok or tok in _RESERVED
            or not words(tok)):
        return None
    return tok


def _field_texts(doc: dict[str, Any]) -> list[str]:
    out = [doc.get("title") or ""]
    sections = doc.get("sections") or [{"heading": "(intro)", "text": doc.get("text", "")}]
    for s in sections:
        if s["heading"] != "(intro)":
            out.append(s["heading"])
        out.append(s.get("text", ""))
    ib = doc.get("infobox") or []
    out += [f"{k}: {v}" for k, v in (ib.items() if isinstance(ib, dict) else ib)]
    au = doc.get("author") or []
    out += [au] if isinstance(au, str) else au
    return out


def make_vocab(docs: Sequence[dict[str, Any]], max_values: int = 4000) -> Vocab:
    rng = random.Random(7)
    tokens: dict[str, None] = {}
    frequent: list[str] = []
    values: list[str] = []
    dates: set[str] = set()
    for doc in docs:
        if doc.get("date"):
            dates.add(doc["date"])
        for text in _field_texts(doc):
            for raw in text.split():
                tok = _clean_token(raw)
                if tok:
                    tokens.setdefault(tok)
                    frequent.append(tok)
            if len(words(text)) >= 2:
                values.append(text)
    if len(values) > max_values:
        values = rng.sample(values, max_values)
    if len(frequent) > 20000:
        frequent = rng.sample(frequent, 20000)
    for y in (1988, 1989, 1990, 1999, 2000, 2001, 2002, 2003, 2019, 2020, 2021, 2100):
        dates.update({str(y), f"{y}-01", f"{y}-12", f"{y}-06-30", f"{y}-02"})
    return Vocab(tuple(tokens), tuple(frequent), tuple(values), tuple(sorted(dates)))


@dataclass(frozen=True)
class Piece:
    """A rendered query fragment and what it means."""

    text: str
    node: Node
    positive: bool = True  # False: a NOT, or a group made only of NOTs
    starts_run: bool = False  # begins with a bare run that a following [field] scopes
    ends_bare: bool = False  # ends with an unscoped bare term (a following run could take it)
    bare_term: bool = False  # a single bare term, unscoped (may take a '-')
    kind: str = "atom"  # atom | run | near | date | and | or | not | group


FIELD_SPELLINGS: dict[str, tuple[str, ...]] = {
    "title": ("title", "ti", "Title", "TI"),
    "section": ("section", "sec", "heading", "Heading"),
    "body": ("body", "ab", "text", "BODY"),
    "infobox": ("infobox", "ib", "Infobox"),
    "author": ("author", "au", "by", "AU"),
    "tiab": ("tiab", "TIAB"),
    "all": ("all", "any"),
}
FIELD_WEIGHTS = ["title"] * 3 + ["section"] * 2 + ["body"] * 3 + ["infobox", "author"] * 2 + [
    "tiab", "all"]


def _recase(draw: Callable[..., Any], text: str) -> str:
    how = pick(draw, (["keep", "keep", "keep", "lower", "upper", "title"]))
    out = {"keep": text, "lower": text.lower(), "upper": text.upper(),
           "title": text.title()}[how]
    # Recasing must not turn a word into an operator (or break a prefix stem).
    if any(w in _RESERVED for w in re.split(r"[\s\"()*\[\]]+", out)) or words(out) != words(text):
        return text
    return out


@functools.cache
@st.composite
def scope_st(draw: Callable[..., Any]) -> tuple[tuple[str, ...], str]:
    n = pick(draw, ([1, 1, 1, 2]))
    fields = tuple(dict.fromkeys(pick(draw, (FIELD_WEIGHTS)) for _ in range(n)))
    spelled = [pick(draw, (FIELD_SPELLINGS[f])) for f in fields]
    sep = pick(draw, ([",", ", "]))
    before = pick(draw, (["", "", "", " "]))
    return fields, f"{before}[{sep.join(spelled)}]"


def _prefix_cut(draw: Callable[..., Any], tok: str) -> str | None:
    """Cut ``tok`` inside its last run of letters/digits, keeping a stem of >= 2 (raw and
    folded), for a prefix; None when the token cannot end a prefix."""
    m = re.search(r"[^\W_]+$", tok)
    if not m or len(m.group(0)) < 2:
        return None
    keep = draw(ints(2, len(m.group(0))))
    cut = tok[: m.start() + keep]
    ws = words(cut)
    if not ws or len(ws[-1]) < 2:
        return None
    return cut


@functools.cache
@st.composite
def bare_term_st(draw: Callable[..., Any], vocab: Vocab,
                 scope: tuple[str, ...]) -> tuple[str, Term]:
    """A bare term (word, separator term or prefix) meaning a Term over ``scope``."""
    pool = pick(draw, (["tokens", "frequent", "frequent", "miss"]))
    if pool == "miss":
        tok = pick(draw, (["xyzzy", "qwertz", "Fortt", "zz9", "ørstedd"]))
    else:
        tok = pick(draw, (vocab.tokens if pool == "tokens" else vocab.frequent))
    prefix = False
    if draw(ints(0, 5)) == 0:
        cut = _prefix_cut(draw, tok)
        if cut is not None:
            tok, prefix = cut, True
    tok = _recase(draw, tok)
    text = tok + ("*" if prefix else "")
    return text, Term(tuple(words(tok)), prefix, scope, NO_SPAN)


@functools.cache
@st.composite
def phrase_st(draw: Callable[..., Any], vocab: Vocab,
              scope: tuple[str, ...]) -> tuple[str, Term]:
    """A quoted phrase taken from a field value (so that it often matches)."""
    value = pick(draw, (vocab.values))
    raw = [t for t in value.split() if _PHRASE_TOKEN.fullmatch(t)]
    if not raw:
        raw = ["glass"]
    n = draw(ints(1, min(3, len(raw))))
    start = draw(ints(0, len(raw) - n))
    inner = " ".join(raw[start:start + n])
    prefix = False
    if draw(ints(0, 4)) == 0:
        cut = _prefix_cut(draw, inner)
        if cut is not None:
            inner, prefix = cut, True
    inner = _recase(draw, inner)
    ws = tuple(words(inner))
    if not ws:
        inner, ws, prefix = "glass", ("glass",), False
    star_inside = prefix and draw(BOOLS)
    pad = " " if star_inside and draw(ints(0, 3)) == 0 else ""  # "fort sant* " is allowed
    text = f'"{inner}{"*" + pad if star_inside else ""}"{"*" if prefix and not star_inside else ""}'
    return text, Term(ws, prefix, scope, NO_SPAN, quoted=True)


@functools.cache
@st.composite
def term_piece_st(draw: Callable[..., Any], vocab: Vocab,
                  inherited: tuple[str, ...] | None) -> Piece:
    """A term, a phrase, or a scoped run of bare terms."""
    form = pick(draw, (["bare", "bare", "bare", "phrase", "scoped", "scoped", "run",
                                 "scoped_phrase"]))
    unscoped = inherited or ("all",)
    if form == "bare":
        text, term = draw(bare_term_st(vocab, unscoped))
        return Piece(text, term, ends_bare=True, bare_term=True)
    if form == "phrase":
        text, term = draw(phrase_st(vocab, unscoped))
        return Piece(text, term)
    fields, spelled = draw(scope_st())
    if form == "scoped_phrase":
        text, term = draw(phrase_st(vocab, fields))
        return Piece(text + spelled, term)
    n = 1 if form == "scoped" else draw(ints(2, 3))
    parts = [draw(bare_term_st(vocab, fields)) for _ in range(n)]
    text = " ".join(p for p, _ in parts) + spelled
    node: Node = parts[0][1] if n == 1 else And(tuple(t for _, t in parts))
    return Piece(text, node, starts_run=True, kind="atom" if n == 1 else "run")


@functools.cache
@st.composite
def near_piece_st(draw: Callable[..., Any], vocab: Vocab,
                  inherited: tuple[str, ...] | None) -> Piece:
    """NEAR over words/prefixes/phrases drawn from one field value (so it sometimes holds)."""
    value = pick(draw, (vocab.values))
    ws = words(value)
    k = draw(ints(2, 3))
    window = draw(ints(k, min(len(ws), 16))) if len(ws) >= k else k
    if len(ws) < k:
        ws = ["alpha", "beta", "gamma"]
        window = 3
    start = draw(ints(0, max(0, len(ws) - window)))
    chunk = ws[start:start + window]
    items: list[Term] = []
    texts: list[str] = []
    for _ in range(k):
        i = draw(ints(0, len(chunk) - 1))
        n = pick(draw, ([1, 1, 1, 2]))
        iws = tuple(chunk[i:i + n])
        prefix = len(iws[-1]) >= 3 and draw(ints(0, 4)) == 0
        if prefix:
            stem = iws[-1][: draw(ints(2, len(iws[-1])))]
            iws = iws[:-1] + (stem,)
        if any(w.upper() in _RESERVED for w in iws):  # keep words, not operators
            iws = tuple(w.lower() for w in iws)
        body = " ".join(iws)
        if len(iws) > 1 and draw(ints(0, 3)) == 0:  # a bare term with separators: a phrase
            texts.append("-".join(iws) + ("*" if prefix else ""))
        elif len(iws) > 1:
            texts.append(f'"{body}"' + ("*" if prefix else ""))
        else:
            texts.append(body + ("*" if prefix else ""))
        items.append(Term(iws, prefix, ("all",), NO_SPAN, quoted=len(iws) > 1))
    if draw(ints(0, 3)) == 0:
        head, distance = "NEAR(", 10
    else:
        distance = draw(ints(0, 12))
        head = f"NEAR/{distance}("
    text = head + " ".join(texts) + ")"
    fields = inherited or ("all",)
    if draw(BOOLS):
        fields, spelled = draw(scope_st())
        text += spelled
    return Piece(text, Near(tuple(items), distance, fields, NO_SPAN), kind="near")


def _day(n: int) -> datetime.date:
    return datetime.date(n // 10000, n // 100 % 100, n % 100)


def _num(d: datetime.date) -> int:
    return d.year * 10000 + d.month * 100 + d.day


@functools.cache
@st.composite
def date_piece_st(draw: Callable[..., Any], vocab: Vocab) -> Piece:
    a, b = sorted((pick(draw, (vocab.dates)), pick(draw, (vocab.dates))),
                  key=span_of)
    (a_lo, a_hi), (_, b_hi) = span_of(a), span_of(b)
    form = pick(draw, (["range", "range", "single", "from", "to", "ge", "gt", "lt",
                                 "le"]))
    if form == "range" and b_hi < a_hi:  # e.g. 2002..2002-05: keep to plainly ordered ranges
        form = "single"
    lo: int | None
    hi: int | None
    if form == "range":
        inner, lo, hi = f"{a}..{b}", a_lo, b_hi
    elif form == "single":
        inner, lo, hi = a, a_lo, a_hi
    elif form == "from":
        inner, lo, hi = f"{a}..", a_lo, None
    elif form == "to":
        inner, lo, hi = f"..{a}", None, a_hi
    elif form == "ge":
        inner, lo, hi = f">={a}", a_lo, None
    elif form == "gt":
        inner, lo, hi = f">{a}", _num(_day(a_hi) + datetime.timedelta(days=1)), None
    elif form == "lt":
        inner, lo, hi = f"<{a}", None, _num(_day(a_lo) - datetime.timedelta(days=1))
    else:
        inner, lo, hi = f"<={a}", None, a_hi
    node = DateRange(lo, hi, NO_SPAN, inner)
    # date[...] mostly; every form may also be written the other way round (BQL.md sec. 4).
    if draw(ints(0, 2)) == 0:
        return Piece(f"{inner}[{pick(draw, ('date', 'Date'))}]", node,
                     starts_run=True, kind="date")
    name = pick(draw, ("date", "date", "date", "DATE", "date "))
    return Piece(f"{name}[{inner}]", node, kind="date")


@functools.cache
@st.composite
def atom_st(draw: Callable[..., Any], vocab: Vocab, inherited: tuple[str, ...] | None) -> Piece:
    kind = pick(draw, (["term"] * 8 + ["near", "date"]))
    if kind == "near":
        return draw(near_piece_st(vocab, inherited))
    if kind == "date":
        return draw(date_piece_st(vocab))
    return draw(term_piece_st(vocab, inherited))


def _group(inner: Piece, scope_text: str = "") -> Piece:
    return Piece(f"({inner.text}){scope_text}", inner.node, positive=inner.positive,
                 kind="group")


@functools.cache
@st.composite
def not_piece_st(draw: Callable[..., Any], vocab: Vocab,
                 inherited: tuple[str, ...] | None, depth: int) -> Piece:
    child = draw(positive_st(vocab, inherited, depth))
    node = Not(child.node, NO_SPAN)
    dash_ok = child.kind in ("atom", "group") and not child.text.startswith("NEAR")
    if child.kind in ("and", "or", "run"):
        child = _group(child)
        dash_ok = True
    if dash_ok and draw(BOOLS):
        return Piece("-" + child.text, node, positive=False, ends_bare=child.bare_term,
                     kind="not")
    return Piece("NOT " + child.text, node, positive=False, ends_bare=child.ends_bare,
                 kind="not")


@functools.cache
@st.composite
def and_st(draw: Callable[..., Any], vocab: Vocab, inherited: tuple[str, ...] | None,
           depth: int) -> Piece:
    n = draw(ints(2, 3))
    pieces: list[Piece] = [draw(positive_st(vocab, inherited, depth - 1))]
    for _ in range(n - 1):
        roll = draw(ints(0, 9))
        if roll < 3:
            pieces.append(draw(not_piece_st(vocab, inherited, depth - 1)))
        elif roll == 3:  # a group made only of NOTs belongs to the AND around it
            nots = [draw(not_piece_st(vocab, inherited, depth - 1))
                    for _ in range(draw(ints(1, 2)))]
            joined = " ".join(p.text for p in nots)
            node = nots[0].node if len(nots) == 1 else And(tuple(p.node for p in nots))
            pieces.append(Piece(f"({joined})", node, positive=False, kind="group"))
        else:
            pieces.append(draw(positive_st(vocab, inherited, depth - 1)))
    order = draw(perms(len(pieces)))
    pieces = [pieces[i] for i in order]
    if not pieces[0].positive and pieces[0].kind == "group":
        # '(NOT y) x' : keep the NOT-only group after a positive clause
        pieces = pieces[1:] + pieces[:1]
    for i, p in enumerate(pieces):
        if p.kind == "or":
            pieces[i] = _group(p)
    text = pieces[0].text
    for prev, cur in zip(pieces, pieces[1:], strict=False):
        implicit_ok = not (prev.ends_bare and cur.starts_run)
        space = pick(draw, (" ", " ", " ", " ", " ", "  ", "\t", "\n"))
        joiner = space if implicit_ok and draw(BOOLS) else f"{space}AND{space}"
        text += joiner + cur.text
    children: list[Node] = []
    for p in pieces:
        children.extend(p.node.children if isinstance(p.node, And) else [p.node])
    return Piece(text, And(tuple(children)), ends_bare=pieces[-1].ends_bare,
                 starts_run=pieces[0].starts_run, kind="and")


@functools.cache
@st.composite
def or_st(draw: Callable[..., Any], vocab: Vocab, inherited: tuple[str, ...] | None,
          depth: int) -> Piece:
    n = draw(ints(2, 3))
    pieces = [draw(positive_st(vocab, inherited, depth - 1)) for _ in range(n)]
    texts = []
    for p in pieces:
        if p.kind == "or" and draw(BOOLS):
            p = _group(p)
        elif p.kind == "and" and draw(ints(0, 2)) == 0:
            p = _group(p)
        texts.append(p.text)
    return Piece(" OR ".join(texts), Or(tuple(p.node for p in pieces)),
                 starts_run=pieces[0].starts_run, ends_bare=pieces[-1].ends_bare, kind="or")


@functools.cache
@st.composite
def positive_st(draw: Callable[..., Any], vocab: Vocab, inherited: tuple[str, ...] | None,
                depth: int) -> Piece:
    """A clause that admits documents on its own (no leading NOT)."""
    roll = draw(ints(0, 9)) if depth > 0 else 0
    if roll <= 4:
        return draw(atom_st(vocab, inherited))
    if roll <= 6:
        return draw(and_st(vocab, inherited, depth))
    if roll <= 8:
        return draw(or_st(vocab, inherited, depth))
    # a group, possibly scoping its unscoped atoms
    if draw(BOOLS):
        fields, spelled = draw(scope_st())
        inner = draw(positive_st(vocab, fields, depth - 1))
        return _group(inner, spelled.lstrip())
    inner = draw(positive_st(vocab, inherited, depth - 1))
    return _group(inner)


@dataclass(frozen=True)
class Generated:
    text: str
    node: Node


@functools.cache
@st.composite
def query_st(draw: Callable[..., Any], vocab: Vocab) -> Generated:
    piece = draw(positive_st(vocab, None, 3))
    text = piece.text
    assume(len(text) <= 1000 and _count_atoms(piece.node) <= 64)  # BQL.md section 7
    if draw(ints(0, 9)) == 0:
        text = f"  {text} "
    return Generated(text, piece.node)


def _count_atoms(node: Node) -> int:
    if isinstance(node, Near):
        return len(node.items)
    if isinstance(node, (Term, DateRange)):
        return 1
    if isinstance(node, Not):
        return _count_atoms(node.child)
    return sum(_count_atoms(c) for c in node.children)  # type: ignore[union-attr]


def check_generated(env: Env, q: Generated) -> None:
    note(f"query: {q.text!r}")
    want = env.brute.evaluate(q.node)
    try:
        node = env.engine.parse(q.text)
    except QueryError as e:
        pytest.fail(f"{env.name}: the engine refused a valid query {q.text!r}: {e}\n"
                    f"  meaning: {q.node!r}")
    got = env.engine.run_node(node)
    if got != want:
        via_parser = env.brute.evaluate(node)
        culprit = ("the compiler (brute force over the engine's own AST agrees with the "
                   "meaning)" if via_parser == want else
                   "the parser (its AST means something else)")
        pytest.fail(_diverge(env, q.text, want, got, f"engine vs meaning; diverging: {culprit}")
                    + f"\n  meaning: {q.node!r}\n  engine AST: {node!r}")


FIXTURE_VOCAB = make_vocab(read_docs(FIXTURE))
EXAMPLES_VOCAB = (make_vocab(read_docs(EXAMPLES / "corpus.jsonl"))
                  if (EXAMPLES / "corpus.jsonl").exists() else FIXTURE_VOCAB)
GEN_SETTINGS = settings(deadline=None, derandomize=True, database=None,
                        suppress_health_check=list(HealthCheck))


@settings(GEN_SETTINGS, max_examples=700)
@given(q=query_st(FIXTURE_VOCAB))
def test_generated_fixture(fixture_env: Env, q: Generated) -> None:
    check_generated(fixture_env, q)


@settings(GEN_SETTINGS, max_examples=400)
@given(q=query_st(EXAMPLES_VOCAB))
def test_generated_examples(examples_env: Env, q: Generated) -> None:
    check_generated(examples_env, q)


@settings(GEN_SETTINGS, max_examples=300)
@given(q=query_st(FIXTURE_VOCAB))
def test_generated_engine_ast_vs_brute(fixture_env: Env, q: Generated) -> None:
    """The compiler alone: whatever the parser made of the query, the SQL admits exactly what
    the brute force admits for that same AST, in every compiler variant there is."""
    node = fixture_env.engine.parse(q.text)
    want = fixture_env.brute.evaluate(node)
    for variant in COMPILER_VARIANTS:
        got = fixture_env.engine.run_node(node, **variant)
        assert got == want, _diverge(fixture_env, q.text, want, got, "engine vs brute force "
                                     f"over the engine's AST, compiler {variant or 'default'}"
                                     f"\n  AST: {node!r}")


def _compiler_variants() -> list[dict[str, Any]]:
    """Keyword variants ``compile_query`` offers (all must admit the same documents)."""
    try:
        from sieve_lite.bql import compile_query
    except ImportError:
        return [{}]
    params = inspect.signature(compile_query).parameters
    out: list[dict[str, Any]] = [{}]
    if "optimize" in params:
        out.append({"optimize": False})
    if "mode" in params:
        out.append({"mode": "in"})
    return out


COMPILER_VARIANTS = _compiler_variants()
