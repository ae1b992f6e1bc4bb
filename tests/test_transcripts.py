"""The console transcripts of README.md and docs/*.md print what they show (tools/transcripts.py).

Every ```console block is run as a person would type it (a terminal of 80 columns, in a folder
laid out like a fresh clone) and compared with what is shown, times, scores and wrapping
forgiven. A stale one fails with the diff; ``make transcripts`` rewrites it. The block that
runs the shipped GGUF model is marked slow.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_tool():
    spec = importlib.util.spec_from_file_location("transcripts", ROOT / "tools" / "transcripts.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["transcripts"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


tr = _load_tool()
BLOCKS = tr.all_blocks()


def _param(block):
    marks = [pytest.mark.slow] if block.slow else []
    return pytest.param(block, marks=marks, id=block.name)


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_transcript_prints_what_it_shows(block) -> None:
    missing = [t for t in block.tools() if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (make test installs them)")
    stale = tr.check(block)
    assert not stale, "\n\n".join(s.diff() for s in stale) + f"\n\n{tr.HINT}"


# ------------------------------------------------------------------ the tool's own pieces
def test_the_documents_have_transcripts_of_what_the_issue_named() -> None:
    names = [b.name for b in BLOCKS]
    assert any("sieve-lite info collections/peps.db" in n for n in names)
    assert any(b.slow and "make ask" in b.name for b in BLOCKS)
    assert all(b.path.parent in (ROOT, ROOT / "docs") for b in BLOCKS)


def test_the_readme_shows_the_schema_version_the_code_writes() -> None:
    from sieve_lite.store import SCHEMA_VERSION

    info = next(b for b in BLOCKS if b.path.name == "README.md"
                and b.steps[0].command.endswith("sieve-lite info collections/peps.db"))
    assert f" schema_version  {SCHEMA_VERSION}" in info.steps[0].shown


def test_parse_reads_commands_outputs_and_options(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n\n<!-- transcript: pipe port=8377 -->\n```console\n$ one\na\nb\n"
                   "$ two &\n```\n\n```python\nprint(1)\n```\n\n<!-- transcript: python -->\n"
                   "```console\n1\n```\n", encoding="utf-8")
    first, second = tr.parse(doc)
    assert first.options == {"pipe": "", "port": "8377"} and first.pipe and not first.slow
    assert [(s.command, s.shown) for s in first.steps] == [("one", ["a", "b"]), ("two &", [])]
    assert first.line == 4
    assert second.python == "print(1)\n" and second.steps[0].shown == ["1"]
    bad = tmp_path / "bad.md"
    bad.write_text("```console\noutput without a command\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="must begin"):
        tr.parse(bad)


def test_normalise_forgives_times_scores_rules_and_wrapping_only() -> None:
    a = ("step 1 fetch 1 | infobox (model 2.1s, engine 0ms)\n"
         "╰──────── pep-0572 · 2018-02-28 · score 0.03279 ─╯\n· 3.9s (model 3.6s, engine\n0.12s)")
    b = ("step 1 fetch 1 | infobox (model 20.1s, engine 16ms)\n"
         "╰─────── pep-0572 · 2018-02-28 · score 0.0328 ─╯\n· 47.2s (model\n46.8s, engine 0.2s)")
    assert tr.normalise(a) == tr.normalise(b)
    assert tr.normalise(" schema_version  3") != tr.normalise(" schema_version  5")
    assert tr.normalise("736 sections, 3 steps") == "736 sections, 3 steps"
    assert tr.normalise('"score": 4.991377, "total": 6') == '"score": <score>, "total": 6'
    assert tr.normalise("pep-0572") != tr.normalise("pep-0577")


def test_screen_applies_what_a_terminal_does() -> None:
    raw = ("\x1b[?25l\r\x1b[2Kindexing 3%\r\x1b[2Kindexing 50%\r\n\x1b[?25h\r\x1b[1A\x1b[2K"
           "\x1b[1mbuilt\x1b[0m x.db\r\n\x1b]8;;http://e.x\x1b\\link\x1b]8;;\x1b\\ text   \r\n")
    assert tr.screen(raw) == ["built x.db", "link text"]
    assert tr.screen("abc\rX\r\n") == ["Xbc"]
    assert tr.screen("a\tb\r\n\r\n\r\n") == ["a\tb"]


def test_a_cut_output_is_compared_and_written_on_the_lines_it_shows() -> None:
    shown = ["one", "two", "..."]
    assert tr._cut(shown, ["one", "two", "three"]) == (["one", "two"], ["one", "two"])
    assert tr.rendered(shown, ["1", "2", "3", "4"]) == ["1", "2", "..."]
    assert tr.rendered(shown, ["1"]) == ["1"]
    assert tr.rendered(["all"], ["1", "2"]) == ["1", "2"]


def test_make_runs_the_recipe_without_its_prerequisites(tmp_path: Path) -> None:
    mk = tmp_path / "Makefile"
    mk.write_text("VENV ?= .venv\nBIN := $(VENV)/bin\nQ ?= Why?\n\n"
                  "ask: install\n\tHF_HUB_OFFLINE=1 $(BIN)/sieve-lite ask \"$(Q)\"\n\n"
                  "install:\n\tpip install x\n", encoding="utf-8")
    assert tr.make_recipe("ask", mk) == ['HF_HUB_OFFLINE=1 .venv/bin/sieve-lite ask "Why?"']
    assert tr.make_recipe("ask")[0].endswith('sieve-lite ask --max-steps 3 '
                                             '"Which PEP introduced the walrus operator?"')


def test_a_stale_output_is_found_and_rewritten(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```console\n$ echo 'took 1.5s, score 0.123456'; echo two\n"
                   "took 9.9s, score 0.9\n...\n$ printf 'a\\nb\\n'\na\nc\n```\n",
                   encoding="utf-8")
    block = tr.parse(doc)[0]
    stale = tr.check(block)
    assert [s.step.command for s in stale] == ["printf 'a\\nb\\n'"]
    assert "-c" in stale[0].diff() and "+b" in stale[0].diff()
    changed, failed = tr.rewrite(doc)
    assert changed and not failed
    assert doc.read_text(encoding="utf-8") == (
        "```console\n$ echo 'took 1.5s, score 0.123456'; echo two\n"
        "took 9.9s, score 0.9\n...\n$ printf 'a\\nb\\n'\na\nb\n```\n")
    assert not tr.check(tr.parse(doc)[0])


def test_a_crash_is_not_a_transcript(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```console\n$ kill -SEGV $$\n```\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="ended with"):
        tr.check(tr.parse(doc)[0])
