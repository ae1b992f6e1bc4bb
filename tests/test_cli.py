"""The command line as scripts use it (issue #12): exit codes, output formats, a reader that
goes away, the unquoted-query hint, the caret under a bad span, the config file and its
environment variables, colour, shell completion, and the package's shape (one package, no
import cycle, the library never imports it).

Searches run on the shipped ``collections/peps.db`` with ``--ranker bm25`` (no model load).
"""

from __future__ import annotations

import ast
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve_lite.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[1]
PEPS = ROOT / "collections" / "peps.db"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
ZEN = "zen[title]"
EMPTY = "zen[title] AND date[..1990]"  # admits nothing; zen[title] alone admits pep-0020

pytestmark = pytest.mark.skipif(not PEPS.exists(), reason="collections/peps.db is missing")


def run(*args: str, env: dict[str, str] | None = None,
        **kw: object) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONIOENCODING": "utf-8", "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full, timeout=120,
                          **kw)  # type: ignore[call-overload]


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


# ------------------------------------------------------------------------------ exit codes
def test_exit_0_when_the_query_admits_documents() -> None:
    r = invoke("search", str(PEPS), ZEN, "--ranker", "bm25", "--format", "compact")
    assert r.exit_code == 0 and r.stdout.startswith("1 admitted; ranked by bm25")
    assert "pep-0020 | The Zen of Python" in r.stdout
    r = invoke("search", str(PEPS), ZEN, "--ranker", "bm25")  # the default: cards for people
    assert r.exit_code == 0 and r.stdout.startswith("1 admitted, ranked by bm25")


def test_exit_1_when_nothing_is_admitted_and_the_fallback_is_flagged() -> None:
    r = invoke("search", str(PEPS), EMPTY, "--ranker", "bm25", "--format", "json")
    d = json.loads(r.stdout)
    assert r.exit_code == 1 and d["fallback"] is True and d["total"] == 0
    assert len(d["results"]) == 5 and d["ranked"] == 736
    assert d["clause_counts"] == [{"clause": "zen[title]", "count": 1},
                                  {"clause": "date[..1990]", "count": 0}]
    text = invoke("search", str(PEPS), EMPTY, "--ranker", "bm25", "--format", "compact").stdout
    assert text.startswith("0 admitted; FALLBACK") and f"[1] {d['results'][0]['id']}" in text
    human = invoke("search", str(PEPS), EMPTY, "--ranker", "bm25").stdout
    assert human.startswith("0 admitted - fallback: the whole collection (736)")


def test_no_fallback_hides_the_listing() -> None:
    for flag in ("--no-fallback", "--strict"):
        r = invoke("search", str(PEPS), EMPTY, "--ranker", "bm25", flag, "--format", "json")
        d = json.loads(r.stdout)
        assert r.exit_code == 1 and d["results"] == [] and not d["fallback"] and d["strict"]
    r = invoke("search", str(PEPS), EMPTY, "--ranker", "bm25", "--no-fallback",
               "--format", "tsv")
    assert r.exit_code == 1 and r.stdout.splitlines() == [
        "rank\tid\tscore\ttitle\tdate\tmatched_fields\tsnippet_section\tfallback"]


def test_exit_2_for_usage_and_query_errors(tmp_path: Path) -> None:
    cases = [
        (("search", str(PEPS), "walrus[auther]"), "error: unknown field 'auther' at column 8"),
        (("search", str(PEPS), "walrus", "-k", "0"), "error: Invalid value for '-k'"),
        (("search", str(PEPS), "walrus", "--format", "xml"), "error: Invalid value"),
        (("search", str(PEPS), "x", "--json", "--format", "tsv"), "disagree"),
        (("search", str(tmp_path / "nope.db"), "walrus"), "error: no collection at"),
        (("fetch", str(PEPS), "pep-9999"), "error: no document has the id 'pep-9999'"),
        (("fetch", str(PEPS), "pep-0020", "no such part"), "has no section"),
        (("search",), "give the collection DB"),
        (("nosuchcommand",), "No such command"),
    ]
    for args, expected in cases:
        r = run(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stdout == "" and r.stderr.count("\n") == 1, (args, r.stderr)
        assert expected in r.stderr, (args, r.stderr)


def test_exit_3_for_a_damaged_collection(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(PEPS.read_bytes()[:300_000])
    before = damaged.read_bytes()
    for args in (("search", str(damaged), "walrus", "--ranker", "bm25"), ("info", str(damaged)),
                 ("fetch", str(damaged), "pep-0020")):
        r = run(*args)
        assert r.returncode == 3, (args, r.returncode, r.stderr)
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert damaged.read_bytes() == before


def test_exit_3_for_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sieve_lite.search

    def broken(*a: object, **k: object) -> None:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(sieve_lite.search, "search", broken)
    r = invoke("search", str(PEPS), "walrus")
    assert r.exit_code == 3 and r.stdout == ""
    assert r.stderr == ("error: internal error (RuntimeError: a bug over two lines); set "
                        "SIEVE_LITE_DEBUG=1 to see the traceback\n")


def test_exit_codes_are_in_the_help() -> None:
    for args in ((), ("search",), ("fetch",), ("info",)):
        out = run(*args, "--help").stdout
        assert "Exit codes:" in out and "3  a damaged collection" in out, args


# ------------------------------------------------------------------------ a broken pipe
@pytest.mark.parametrize("fmt", ["rich", "compact", "json", "jsonl"])
@pytest.mark.parametrize("query,code", [("python", 0), ("python[title] AND date[..1990]", 1)])
def test_a_reader_that_goes_away_ends_quietly_with_the_found_code(fmt: str, query: str,
                                                                   code: int) -> None:
    # 150 cards (over 150 kB) are more than a pipe holds, so the writer meets the closed pipe.
    proc = subprocess.Popen([*CLI, "search", str(PEPS), query, "--ranker", "bm25", "-k", "150",
                             "--format", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == code, err
    assert first
    assert "Traceback" not in err and "Exception ignored" not in err and "error" not in err


# ------------------------------------------------------------------------------- formats
def test_default_format_is_plain_text_in_a_pipe_and_rich_can_be_forced() -> None:
    plain = run("search", str(PEPS), ZEN, "--ranker", "bm25")
    assert plain.returncode == 0 and "\x1b[" not in plain.stdout
    assert not set("╭╮╰╯│─") & set(plain.stdout)  # no box drawing in a pipe
    assert "1. The Zen of Python" in plain.stdout and "pep-0020" in plain.stdout
    rich = run("search", str(PEPS), ZEN, "--ranker", "bm25", "--format", "rich")
    assert "╭" in rich.stdout and "The Zen of Python" in rich.stdout
    fetched = run("fetch", str(PEPS), "pep-0020", "Easter Egg")
    assert fetched.stdout == invoke("fetch", str(PEPS), "pep-0020", "Easter Egg",
                                    "--format", "compact").stdout


def test_json_and_jsonl_carry_the_format_version() -> None:
    a = invoke("search", str(PEPS), ZEN, "--ranker", "bm25", "--json").stdout
    b = invoke("search", str(PEPS), ZEN, "--ranker", "bm25", "--format", "json").stdout
    assert a == b and json.loads(a)["format"] == 1 and json.loads(a)["type"] == "search"
    lines = invoke("search", str(PEPS), "zen OR aphorism*", "--ranker", "bm25", "-k", "3",
                   "--format", "jsonl").stdout.splitlines()
    objs = [json.loads(line) for line in lines]
    assert [o["type"] for o in objs] == ["search", "hit", "hit", "hit"]
    assert all(o["format"] == 1 for o in objs)
    assert objs[0]["shown"] == 3 and "results" not in objs[0]
    assert [o["rank"] for o in objs[1:]] == [1, 2, 3]
    for args in (("fetch", str(PEPS), "pep-0020", "Abstract"), ("info", str(PEPS))):
        one = invoke(*args, "--format", "jsonl").stdout
        assert one.count("\n") == 1 and json.loads(one)["format"] == 1
        assert json.loads(invoke(*args, "--json").stdout) == json.loads(one)


def test_tsv_and_trec_rows() -> None:
    tsv = invoke("search", str(PEPS), "zen OR aphorism*", "--ranker", "bm25", "-k", "4",
                 "--format", "tsv").stdout.splitlines()
    rows = [line.split("\t") for line in tsv]
    assert rows[0] == ["rank", "id", "score", "title", "date", "matched_fields",
                       "snippet_section", "fallback"]
    assert all(len(r) == 8 for r in rows) and [r[0] for r in rows[1:]] == ["1", "2", "3", "4"]
    assert rows[1][1] == "pep-0020" and rows[1][7] == "0"
    trec = invoke("search", str(PEPS), "zen OR aphorism*", "--ranker", "bm25", "-k", "4",
                  "--format", "trec", "--qid", "301", "--run-tag", "mine").stdout.splitlines()
    parts = [line.split(" ") for line in trec]
    assert all(len(p) == 6 and p[0] == "301" and p[1] == "Q0" and p[5] == "mine"
               for p in parts)
    assert [p[2] for p in parts] == [r[1] for r in rows[1:]]
    scores = [float(p[4]) for p in parts]
    assert scores == sorted(scores, reverse=True)
    bad = invoke("search", str(PEPS), "zen", "--format", "trec", "--qid", "a b")
    assert bad.exit_code == 2


def test_notes_go_to_stderr_when_the_format_has_no_room_for_them() -> None:
    r = run("search", str(PEPS), EMPTY, "--ranker", "bm25", "-k", "2", "--format", "trec",
            "--explain")
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 2 and r.stdout.startswith("1 Q0 pep-")
    assert "FALLBACK" in r.stderr and "clause date[..1990] admits 0" in r.stderr
    assert "query:" in r.stderr


def test_fetch_and_info_formats() -> None:
    plain = invoke("fetch", str(PEPS), "pep-0020", "easter egg").stdout
    assert plain.startswith("pep-0020 | The Zen of Python | Easter Egg\n")
    d = json.loads(invoke("fetch", str(PEPS), "pep-0020", "--json").stdout)
    assert d["type"] == "fetch" and d["section"] is None and "Easter Egg" in d["sections"]
    tsv = dict(line.split("\t", 1) for line in
               invoke("info", str(PEPS), "--format", "tsv").stdout.splitlines())
    assert tsv["documents"] == "736" and tsv["fields"].startswith("title,section,body")
    compact = invoke("info", str(PEPS)).stdout
    assert "documents: 736" in compact.splitlines()


# ---------------------------------------------------------------------- hints and carets
def test_an_unquoted_multi_word_query_gets_the_quoted_command() -> None:
    r = run("search", str(PEPS), "walrus", "operator")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.rstrip().endswith(f"quote the query: sieve-lite search {PEPS} "
                                      "'walrus operator'")
    r = run("fetch", str(PEPS), "pep-0572", "Rejected", "alternative", "proposals")
    assert r.returncode == 2 and r.stderr.rstrip().endswith(
        f"quote the section: sieve-lite fetch {PEPS} pep-0572 'Rejected alternative "
        "proposals'")
    r = run("search", str(PEPS), "-walrus")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "a query that starts with '-' (NOT) goes after '--'" in r.stderr
    r = run("search", str(PEPS), "--format", "tsv", "--ranker", "bm25", "--",
            "-zen AND aphorism*")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3  # header and two documents
    assert "\tpep-0020\t" not in r.stdout
    r = run("search", "walrus", "operator")  # no DB and no default collection
    assert r.returncode == 2 and "quote a query that has spaces" in r.stderr


def _stderr_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal (stdout a pipe); (exit code, what stderr showed)."""
    master, slave = pty.openpty()
    # No spinner: on a loaded machine opening the collection can pass the spinner's delay,
    # and its frames would sit above the error (test_cli_startup.py tests the spinner).
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=slave,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8",
                                 "SIEVE_LITE_SPINNER_DELAY": "600"})
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=60)
    return code, b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_query_error_shows_a_caret_at_a_terminal_and_one_line_in_a_pipe() -> None:
    code, err = _stderr_on_a_terminal("search", str(PEPS), "walrus[auther]")
    assert code == 2
    assert err.splitlines() == [
        "error: unknown field 'auther' at column 8; this collection has: title, section, "
        "body, infobox, author, date, tiab, all",
        "  walrus[auther]",
        "         ^^^^^^"]
    piped = run("search", str(PEPS), "walrus[auther]")
    assert piped.stderr.splitlines() == err.splitlines()[:1]


# ---------------------------------------------------------------------- config and env
def test_config_sets_shows_and_unsets_defaults(tmp_path: Path) -> None:
    env = {"SIEVE_LITE_CONFIG": str(tmp_path / "cfg" / "config.toml")}
    shown = json.loads(run("config", "--format", "json", env=env).stdout)
    assert shown["type"] == "config" and shown["exists"] is False
    assert [s["key"] for s in shown["settings"]] == ["collection", "ranker", "model", "backbone"]
    assert all(s["value"] is None for s in shown["settings"])
    assert run("search", ZEN, env=env).returncode == 2  # no default collection yet

    assert run("config", "set", "collection", str(PEPS), env=env).returncode == 0
    assert run("config", "set", "ranker", "bm25", env=env).returncode == 0
    text = (tmp_path / "cfg" / "config.toml").read_text()
    assert text == f'collection = "{PEPS}"\nranker = "bm25"\n'
    r = run("search", ZEN, "--json", env=env)  # DB and ranker from the file
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["ranker"] == "bm25" and d["collection"] == str(PEPS)
    r = run("fetch", "pep-0020", "Easter Egg", env=env)
    assert r.returncode == 0 and r.stdout.startswith("pep-0020 | The Zen of Python | Easter")
    assert json.loads(run("info", "--json", env=env).stdout)["documents"] == 736
    r = run("search", "walrus", "operator", env=env)
    assert r.returncode == 2 and "quote the query: sieve-lite search 'walrus operator'" in r.stderr

    # the environment wins over the file, the command line over both
    env_rank = {**env, "SIEVE_LITE_RANKER": "dense"}
    shown = json.loads(run("config", "--json", env=env_rank).stdout)
    ranker = next(s for s in shown["settings"] if s["key"] == "ranker")
    assert ranker == {"key": "ranker", "value": "dense", "source": "env",
                      "env": "SIEVE_LITE_RANKER", "meaning": ranker["meaning"]}
    d = json.loads(run("search", ZEN, "--json", "--ranker", "bm25", env=env_rank).stdout)
    assert d["ranker"] == "bm25"
    bad_env = run("search", ZEN, env={**env, "SIEVE_LITE_RANKER": "bm26"})
    assert bad_env.returncode == 2 and "environment variable SIEVE_LITE_RANKER" in bad_env.stderr

    assert run("config", "unset", "ranker", env=env).returncode == 0
    assert (tmp_path / "cfg" / "config.toml").read_text() == f'collection = "{PEPS}"\n'
    assert run("config", "path", env=env).stdout.strip() == env["SIEVE_LITE_CONFIG"]


def test_bad_config_is_refused_in_one_line_and_left_alone(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    env = {"SIEVE_LITE_CONFIG": str(cfg)}
    for content, expected in [('ranker = "bm25"\ncollection = [', "is not valid TOML"),
                              ('rankr = "bm25"\n', "unknown setting 'rankr'"),
                              ("ranker = 3\n", "ranker must be a non-empty string"),
                              ('backbone = "localhost:8080"\n', "backbone must be an http")]:
        cfg.write_text(content)
        r = run("search", str(PEPS), ZEN, env=env)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert expected in r.stderr and str(cfg) in r.stderr
        assert cfg.read_text() == content
    cfg.write_text('rankr = "bm25"\n')
    assert run("config", "unset", "rankr", env=env).returncode == 0  # how a typo is fixed
    assert cfg.read_text() == ""
    for args in (("set", "ranker", "bm26"), ("set", "colour", "x"), ("unset", "colour")):
        r = run("config", *args, env=env)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, (args, r.stderr)
    assert cfg.read_text() == ""


# --------------------------------------------------------------------------------- colour
def _stdout_on_a_terminal(*args: str, env: dict[str, str]) -> str:
    master, slave = pty.openpty()
    proc = subprocess.Popen([*CLI, *args], stdout=slave, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8", "TERM": "xterm",
                                 "COLUMNS": "80", **env})
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait(timeout=60)
    return b"".join(chunks).decode()


def test_colour_auto_always_never_and_no_color() -> None:
    import re

    colour = re.compile(r"\x1b\[[0-9;]*;3[0-7]m|\x1b\[3[0-7]m")  # a foreground colour
    args = ("search", str(PEPS), ZEN, "--ranker", "bm25")
    on_tty = _stdout_on_a_terminal(*args, env={})
    assert "╭" in on_tty and colour.search(on_tty)  # a terminal gets rich, in colour
    assert not colour.search(_stdout_on_a_terminal(*args, env={"NO_COLOR": "1"}))
    assert "\x1b[" not in _stdout_on_a_terminal(*args, "--color", "never", env={})
    forced = run(*args, "--format", "rich", "--color", "always", env={"NO_COLOR": "1"})
    assert colour.search(forced.stdout)
    assert "\x1b[" not in run(*args, "--format", "rich").stdout


# --------------------------------------------------------------------------- completion
def _complete(words: str, cword: int) -> list[str]:
    r = run(env={"_SIEVE_LITE_COMPLETE": "bash_complete", "COMP_WORDS": words,
                 "COMP_CWORD": str(cword)})
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_shell_completion() -> None:
    script = run(env={"_SIEVE_LITE_COMPLETE": "bash_source"})
    assert "_sieve_lite_completion" in script.stdout and "complete " in script.stdout
    assert "plain,search" in _complete("sieve-lite se", 1)
    assert {"plain,json", "plain,jsonl"} <= set(_complete("sieve-lite search --format j", 3))
    assert _complete("sieve-lite search coll", 2) == ["file,coll"]


# ----------------------------------------------------------------- the package's shape
LIBRARY = ROOT / "sieve_lite"


def _imports(path: Path, package: str) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _module_name(path: Path) -> tuple[str, str]:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def test_the_library_never_imports_the_cli() -> None:
    checked = 0
    for path in LIBRARY.rglob("*.py"):
        name, package = _module_name(path)
        if name == "sieve_lite.cli" or name.startswith("sieve_lite.cli."):
            continue
        bad = {m for m in _imports(path, package)
               if m == "sieve_lite.cli" or m.startswith("sieve_lite.cli.")}
        assert not bad, f"{name} imports {bad}"
        checked += 1
    assert checked > 30


def test_cli_modules_import_only_the_shared_modules() -> None:
    cli_dir = LIBRARY / "cli"
    modules = sorted(p for p in cli_dir.glob("*.py") if p.name != "__init__.py")
    assert {p.stem for p in modules} >= {"_common", "_render", "collection", "search", "ask",
                                         "config", "mcp", "reference"}
    for path in modules:
        name, package = _module_name(path)
        inside = {m.split(".")[2] for m in _imports(path, package)
                  if m.startswith("sieve_lite.cli.") and len(m.split(".")) > 2}
        # Shared helpers are the private modules (_common, _render, _spinner): a command module
        # may import them, never another command module; a helper imports only helpers.
        shared = {p.stem for p in modules if p.stem.startswith("_")}
        allowed = shared | ({"cli"} if path.stem == "reference" else set())
        if path.stem.startswith("_"):
            allowed = shared - {path.stem, "_render"}
        assert inside <= allowed, f"{name} imports {inside - allowed}"


@pytest.mark.parametrize("module", ["_common", "_render", "collection", "search", "ask",
                                    "config", "mcp", "reference", ""])
def test_each_cli_module_imports_alone(module: str) -> None:
    name = "sieve_lite.cli" + (f".{module}" if module else "")
    r = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_every_command_is_registered_once() -> None:
    names = [c.name for c in COMMANDS]
    assert sorted(names) == sorted(set(names)) == sorted(cli.commands)
    assert {"build", "info", "search", "fetch", "ask", "config", "mcp"} <= set(names)
