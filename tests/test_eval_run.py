"""``sieve-lite eval`` end to end on a small real collection (tests/data/eval/toy.jsonl):
the oracle replay with hand-computed token counts, the real tokenizer, the agent modes with
a scripted backbone, resuming an interrupted run, worker processes, the outputs, and the
command line (including bad input and one real-model episode)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sieve_lite
from sieve_lite.agent.backbones import ScriptedBackbone
from sieve_lite.errors import QuestionError
from sieve_lite.eval.runner import EvalOptions, read_results, run_eval, safe_name
from sieve_lite.eval.tokens import GGUFTokenizer, WordCounter

DATA = Path(__file__).parent / "data" / "eval"
QUESTIONS = DATA / "toy-questions.jsonl"
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]


@pytest.fixture(scope="module")
def toy_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    out = tmp_path_factory.mktemp("eval") / "toy.db"
    build_collection(iter_documents([DATA / "toy.jsonl"], "jsonl"), out, embed=False,
                     strict=True, quiet=True)
    return out


@pytest.fixture(scope="module")
def gguf() -> GGUFTokenizer:
    return GGUFTokenizer()


def rows_of(out: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["run"], r["mode"], r["id"]): r for r in read_results(out / "results.jsonl")}


# -- the oracle ----------------------------------------------------------------------------
def test_oracle_reads_hand_counted(toy_db: Path, tmp_path: Path) -> None:
    """Word counts by hand: the gold section 'History' of 'fort' is 'The fort was built in
    1590 by Spanish engineers.' (9 words); search-visit reads the whole document: title (2),
    date (2), author (3), two infobox lines (3 + 2), intro (6), '## History' + its text
    (2 + 9), '## Restoration' + its text (2 + 9) = 40 words."""
    run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oracle=True), counter=WordCounter())
    rows = rows_of(tmp_path)
    sieve, visit = rows[("oracle", "sieve", "q1")], rows[("oracle", "search-visit", "q1")]
    assert sieve["reached"] and visit["reached"]
    assert sieve["hops"][0]["reads"] == [{"section": "History", "tokens": 9, "cut": False,
                                          "rule": "gold"}]
    assert visit["hops"][0]["reads"][0]["tokens"] == 40
    assert rows[("oracle", "search-fetch", "q1")]["read_tokens"] == 9
    for r in (sieve, visit):
        assert r["distinct_tokens"] == r["search_tokens"] + r["read_tokens"]
        assert r["search_tokens"] > 0

    # Two hops: the second searches the next gold document's title (a title phrase in
    # sieve mode), then fetches the gold sections: Design (10 words), Ortiz's intro (8).
    q2 = rows[("oracle", "sieve", "q2")]
    assert [h["doc"] for h in q2["hops"]] == ["bridge", "ortiz"]
    assert q2["hops"][1]["query"] == '"carla ortiz"[title]'
    assert rows[("oracle", "search-fetch", "q2")]["hops"][1]["query"] == "Carla Ortiz"
    assert [h["reads"][0]["tokens"] for h in q2["hops"]] == [10, 8]
    assert q2["reached"] and q2["hops_reached"] == 2

    # Without gold_sections the section that holds the answer is fetched: 'The clock was
    # installed in 1720 and still runs.' (9 words).
    q3 = rows[("oracle", "sieve", "q3")]
    assert q3["hops"][0]["reads"] == [{"section": "Clock", "tokens": 9, "cut": False,
                                       "rule": "answer"}]

    s = json.loads((tmp_path / "summary.json").read_text())["oracle"]
    assert s["modes"]["sieve"]["reached"] == 1.0
    paired = s["paired"]
    assert paired["questions"] == 3
    total = {m: sum(rows[("oracle", m, q)]["distinct_tokens"] for q in ("q1", "q2", "q3"))
             for m in ("sieve", "search-visit")}
    assert paired["modes"]["sieve"]["fewer_tokens_than_baseline"] == pytest.approx(
        round(1 - total["sieve"] / total["search-visit"], 4))


def test_oracle_search_tokens_are_the_cards_shown(toy_db: Path, tmp_path: Path) -> None:
    from sieve_lite.agent.tools import CollectionTools, or_words

    run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oracle=True, modes=("sieve",)),
             counter=WordCounter())
    row = rows_of(tmp_path)[("oracle", "sieve", "q1")]
    with sieve_lite.open(toy_db) as coll:
        hits = CollectionTools(coll, "sieve").search(or_words(row["question"]), 5).hits
    assert row["search_tokens"] == WordCounter().count("\n".join(h.card for h in hits))


def test_oracle_counts_with_the_models_tokenizer(toy_db: Path, tmp_path: Path,
                                                 gguf: GGUFTokenizer) -> None:
    # SmolLM2's BPE: Hello | ' world' | ',' | ' this' | ' is' | ' a' | ' test' | '.'
    assert gguf.count("Hello world, this is a test.") == 8
    assert gguf.count("") == 0
    run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oracle=True, modes=("sieve",)),
             counter=gguf)
    row = rows_of(tmp_path)[("oracle", "sieve", "q1")]
    assert row["tokenizer"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    with sieve_lite.open(toy_db) as coll:
        text = coll.fetch("fort", "History").text
    assert row["read_tokens"] == gguf.count(text) == gguf.count(
        "The fort was built in 1590 by Spanish engineers.")


def test_oracle_missed_hop_and_missing_gold(toy_db: Path, tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        json.dumps({"id": "miss", "question": "storms", "answer": "x",
                    "gold_docs": ["fort"]}) + "\n"
        + json.dumps({"id": "nogold", "question": "Alpha Fort?", "answer": "x",
                      "gold_docs": ["no-such-doc"]}) + "\n")
    run_eval(toy_db, q, tmp_path / "out", EvalOptions(oracle=True, k=1), counter=WordCounter())
    rows = rows_of(tmp_path / "out")
    miss = rows[("oracle", "sieve", "miss")]
    assert not miss["reached"] and miss["hops"][0]["rank"] is None and miss["read_tokens"] == 0
    nogold = rows[("oracle", "sieve", "nogold")]
    assert nogold["skipped"] and nogold["gold_missing"] == ["no-such-doc"]
    assert "1 questions name gold documents this collection does not have" in \
        (tmp_path / "out" / "report.md").read_text()


# -- the agent modes, scripted -------------------------------------------------------------
class ByQuestion(ScriptedBackbone):
    """Replies chosen by the question and the number of replies so far in the episode, so
    that any subset of episodes, in any order (a resumed run), gets the same replies."""

    def __init__(self, scripts: dict[str, list[str]]) -> None:
        super().__init__([])
        self.scripts = scripts

    def complete(self, messages: list[dict[str, str]], **kw: Any) -> Any:
        question = next(m["content"] for m in messages
                        if m["role"] == "user" and m["content"].startswith("Question: "))
        n = sum(m["role"] == "assistant" for m in messages)
        # the question is the message's first paragraph (the seed search's cards follow it)
        self.replies = [self.scripts[question[len("Question: "):].split("\n\n")[0]][n]]
        return super().complete(messages, **kw)


Q1 = "In which year was Alpha Fort built?"
Q2 = "Where was the designer of Beta Bridge born?"
Q3 = "When was the clock of Gamma Tower installed?"
SCRIPTS = {
    "sieve": {Q1: ["search: alpha fort", "fetch: 1 | History",
                   "answer: 1590\ncite: fort | History"],
              Q2: ["search: beta bridge", "fetch: 1 | Design",
                   "answer: Carla Ortiz\ncite: bridge | Design"],
              # a 'when' question answered with a word that is no date: refused each
              # time, until the loop gives up without an answer
              Q3: ["search: delta harbour", "fetch: 1 | (intro)"]
                  + ["answer: storms\ncite: harbour | (intro)"] * 4},
    "search-visit": {Q1: ["search: alpha fort", "visit: 1",
                          "answer: in 1590\ncite: fort | (document)"],
                     # two hops; an answer must be copied from what was read (the
                     # agent refuses an ungrounded one), so it reads Ortiz's page too
                     Q2: ["search: beta bridge", "visit: 1", "search: carla ortiz",
                          "visit: 1", "answer: Valencia\ncite: ortiz | (document)"],
                     Q3: ["search: delta harbour", "visit: 1"]
                         + ["answer: storms\ncite: harbour | (document)"] * 4},
}


def factory(mode: str) -> ByQuestion:
    return ByQuestion(SCRIPTS[mode])


AGENT = EvalOptions(modes=("sieve", "search-visit"), max_steps=5)


def test_agent_modes_metrics(toy_db: Path, tmp_path: Path) -> None:
    run = run_eval(toy_db, QUESTIONS, tmp_path, AGENT, backbone_factory=factory)
    rows = rows_of(tmp_path)
    r1 = rows[("agent", "sieve", "q1")]
    assert (r1["answer"], r1["em"], r1["f1"], r1["contains"]) == ("1590", 1.0, 1.0, 1.0)
    assert r1["gold_searched"] == 1.0 and r1["gold_read"] == 1.0
    assert r1["failure_em"] == "correct" and r1["citations"] == ["fort | History"]
    # searches: the engine's seed search (step 0) and the model's
    assert r1["llm_calls"] == 3 and r1["searches"] == 2 and r1["fetches"] == 1
    assert r1["stop_reason"] == "answer" and r1["backbone"] == "scripted"
    transcript = tmp_path / r1["transcript"]
    assert transcript.exists() and '"event": "end"' in transcript.read_text()
    # 'in 1590' is not an exact match but contains the answer (F1 2/3)
    v1 = rows[("agent", "search-visit", "q1")]
    assert (v1["em"], v1["contains"], v1["f1"]) == (0.0, 1.0, pytest.approx(0.6667))
    # q2: sieve's bridge route read both gold documents (the bridge's Design section names
    # its designer, whose page is read next), and the script answered wrong; search-visit
    # is right
    r2 = rows[("agent", "sieve", "q2")]
    assert r2["gold_read"] == 1.0 and r2["failure_em"] == "read-wrong"
    assert rows[("agent", "search-visit", "q2")]["em"] == 1.0
    # q3: the seed search surfaced the gold document, which the agent never read
    assert rows[("agent", "sieve", "q3")]["failure_em"] == "not-read"

    a = run.summary["agent"]
    assert a["modes"]["sieve"]["accuracy"] == pytest.approx(1 / 3, abs=1e-4)
    assert a["modes"]["search-visit"]["accuracy"] == pytest.approx(1 / 3, abs=1e-4)
    assert a["modes"]["sieve"]["failures"] == {"correct": 1, "never-retrieved": 0,
                                               "not-read": 1, "read-wrong": 1}
    t = a["mcnemar"][0]
    assert (t["a"], t["b"], t["both"], t["only_a"], t["only_b"], t["neither"]) == \
        ("sieve", "search-visit", 0, 1, 1, 1)
    assert t["p_value"] == pytest.approx(1.0)
    # each seed search is the planner's title phrase ('"alpha fort"[title]'); the scripted
    # model's own searches name no field (q2's bridge is read without one): 3 of 5
    assert a["modes"]["sieve"]["fields"] == {"title": 0.6}
    assert a["modes"]["sieve"]["searches"] == pytest.approx(5 / 3, abs=1e-4)
    assert a["kinds"]["sieve"]["two-hop"]["questions"] == 1
    report = (tmp_path / "report.md").read_text()
    assert "McNemar" in report and "| sieve |" in report
    for name in ("accuracy_tokens", "tokens", "failures"):
        assert (tmp_path / "plots" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("values,log", [
    ([1333, 1545, 4363], False),    # the PEP oracle's medians: no power of ten between them
    ([640, 893, 1094], False),
    ([800, 1400, 9000], True),      # a decade or more: logarithmic
    ([3, 40_000], True),
])
def test_token_axes_always_show_numbers(values: list[int], log: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sieve_lite.eval.report import token_scale

    for which in ("x", "y"):
        fig, ax = plt.subplots(figsize=(4.6, 3.6))
        ax.scatter(values, values)
        token_scale(ax.xaxis if which == "x" else ax.yaxis, values)
        fig.canvas.draw()
        axis = ax.xaxis if which == "x" else ax.yaxis
        lo, hi = sorted(axis.get_view_interval())
        shown = [t.get_text() for t in axis.get_ticklabels()
                 if t.get_text() and lo <= t.get_position()[0 if which == "x" else 1] <= hi]
        plt.close(fig)
        assert axis.get_scale() == ("log" if log else "linear")
        assert len(shown) >= 2, (which, values, shown)
        assert all(s.replace(",", "").isdigit() for s in shown), shown  # plain numbers


def _stable(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without the run's metadata and wall-clock figures."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if k != "meta" and "seconds" not in k and "share" not in k}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(summary)


def test_resume_gives_the_same_summary(toy_db: Path, tmp_path: Path) -> None:
    whole = run_eval(toy_db, QUESTIONS, tmp_path / "whole", AGENT, backbone_factory=factory)
    part = tmp_path / "part"
    first = run_eval(toy_db, QUESTIONS, part, AGENT, backbone_factory=factory, stop_after=2)
    assert len(read_results(part / "results.jsonl")) == 2 and first.resumed == 0
    # an interruption in the middle of writing a line leaves half a line: dropped
    with open(part / "results.jsonl", "a") as fh:
        fh.write('{"run": "agent", "mode": "sie')
    again = run_eval(toy_db, QUESTIONS, part, AGENT, backbone_factory=factory)
    assert again.resumed == 2 and again.tasks == 6
    assert len(read_results(part / "results.jsonl")) == 6
    assert _stable(again.summary) == _stable(whole.summary)
    # nothing left to do: the outputs are written again from the results
    done = run_eval(toy_db, QUESTIONS, part, AGENT, backbone_factory=factory)
    assert done.resumed == 6 and _stable(done.summary) == _stable(whole.summary)


def test_other_settings_are_refused_not_mixed(toy_db: Path, tmp_path: Path) -> None:
    run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oracle=True, modes=("sieve",)),
             counter=WordCounter())
    before = (tmp_path / "results.jsonl").read_bytes()
    with pytest.raises(QuestionError, match=r"other settings \(k\)"):
        run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oracle=True, k=3),
                 counter=WordCounter())
    assert (tmp_path / "results.jsonl").read_bytes() == before
    run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oracle=True, k=3, modes=("sieve",)),
             counter=WordCounter(), fresh=True)
    assert len(read_results(tmp_path / "results.jsonl")) == 3


def test_worker_processes_give_the_same_rows(toy_db: Path, tmp_path: Path) -> None:
    opts = EvalOptions(oneshot=True, oracle=True, modes=("sieve", "search-visit"))
    run_eval(toy_db, QUESTIONS, tmp_path / "one", opts)
    opts.jobs = 2
    run_eval(toy_db, QUESTIONS, tmp_path / "two", opts)

    def strip(rows: dict) -> dict:
        return {k: {f: v for f, v in r.items() if f != "engine_seconds"}
                for k, r in rows.items()}
    assert strip(rows_of(tmp_path / "one")) == strip(rows_of(tmp_path / "two"))


def test_oneshot_recall(toy_db: Path, tmp_path: Path) -> None:
    run = run_eval(toy_db, QUESTIONS, tmp_path, EvalOptions(oneshot=True))
    rows = rows_of(tmp_path)
    q2 = rows[("oneshot", "oneshot", "q2")]
    assert q2["top"][0] == "bridge" and q2["recall@1"] == 0.5
    assert q2["recall@10"] == 1.0 and q2["gold_rank"] == 1
    assert run.summary["oneshot"]["all"]["questions"] == 3
    assert (tmp_path / "plots" / "recall.png").exists()


def test_safe_names() -> None:
    assert safe_name("q1") == "q1"
    odd = safe_name("../a b/c")
    assert "/" not in odd and odd != safe_name("../a b/d")


# -- the command line ----------------------------------------------------------------------
def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_cli_oracle_and_oneshot(toy_db: Path, tmp_path: Path) -> None:
    p = cli("eval", str(toy_db), str(QUESTIONS), "--oracle", "--oneshot", "-o", "out",
            "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert (summary["format"], summary["type"]) == (1, "eval")  # as every --json output
    assert summary["oracle"]["modes"]["sieve"]["reached"] == 1.0
    assert summary["oneshot"]["all"]["recall@10"] == 1.0
    names = {f.name for f in (tmp_path / "out").rglob("*")}
    assert {"results.jsonl", "summary.json", "report.md", "run.json", "tokens.png",
            "accuracy_tokens.png", "failures.png"} <= names
    # no -k, no --max-steps: the report says what the defaults are, not "None"
    settings = next(line for line in (tmp_path / "out" / "report.md").read_text().splitlines()
                    if line.startswith("Settings:"))
    assert "None" not in settings and "k as ask sets it" in settings
    p = cli("eval", str(toy_db), str(QUESTIONS), "--oracle", "-o", "out", "--open",
            cwd=tmp_path)
    assert p.returncode == 0 and "Oracle replay" in p.stdout
    assert "reached" in p.stdout
    # --report-only runs nothing: with the oracle rows gone, the report has none either
    results = tmp_path / "out" / "results.jsonl"
    results.write_text("".join(line for line in results.read_text().splitlines(True)
                               if '"run": "oneshot"' in line))
    p = cli("eval", str(toy_db), str(QUESTIONS), "--oracle", "--oneshot", "-o", "out",
            "--report-only", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert "oracle" not in summary and summary["oneshot"]["all"]["questions"] == 3
    assert len(read_results(results)) == 3


@pytest.mark.parametrize("args,message", [
    (["--modes", "sieve,visit"], "visit"),
    (["--limit", "0"], "--limit"),
])
def test_cli_usage_errors(toy_db: Path, tmp_path: Path, args: list[str], message: str) -> None:
    p = cli("eval", str(toy_db), str(QUESTIONS), "--oracle", *args, cwd=tmp_path)
    assert p.returncode == 2 and message in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_bad_input_is_one_line(toy_db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "q?", "answer": "x"}\nnot json\n')
    p = cli("eval", str(toy_db), str(bad), "--oracle", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert f"{bad}:2: not valid JSON" in p.stderr and not (tmp_path / "eval-runs").exists()
    p = cli("eval", str(tmp_path / "none.db"), str(QUESTIONS), "--oracle", cwd=tmp_path)
    assert p.returncode == 2 and "collection not found" in p.stderr
    p = cli("eval", str(bad), str(QUESTIONS), "--oracle", cwd=tmp_path)  # not a collection
    assert p.returncode in (2, 3) and p.stderr.count("\n") == 1
    assert "Traceback" not in p.stderr


def test_the_model_from_the_environment_is_a_setting(toy_db: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """$SIEVE_LITE_MODEL picks the backbone's model; run.json records it, so a run resumed
    without it (another model) is refused rather than mixed, and the oracle counts with its
    vocabulary, not the default's."""
    from sieve_lite.errors import ModelError

    opts = EvalOptions(oracle=True, modes=("sieve",))
    other = tmp_path / "other.gguf"
    monkeypatch.setenv("SIEVE_LITE_MODEL", str(other))
    run_eval(toy_db, QUESTIONS, tmp_path / "out", opts, counter=WordCounter(), stop_after=1)
    assert json.loads((tmp_path / "out" / "run.json").read_text())["settings"]["model"] == \
        str(other)
    with pytest.raises(ModelError, match="model file not found: .*other.gguf"):
        run_eval(toy_db, QUESTIONS, tmp_path / "tok", opts)  # no such vocabulary to count with
    monkeypatch.delenv("SIEVE_LITE_MODEL")
    with pytest.raises(QuestionError, match=r"other settings \(model\)"):
        run_eval(toy_db, QUESTIONS, tmp_path / "out", opts, counter=WordCounter())


def test_cli_takes_the_defaults_ask_takes(toy_db: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'model = "{tmp_path / "configured.gguf"}"\nranker = "bm25-doc"\n')
    env = {**os.environ, "SIEVE_LITE_CONFIG": str(cfg)}
    p = subprocess.run([*CLI, "eval", str(toy_db), str(QUESTIONS), "--oracle", "-o", "a"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "model file not found" in p.stderr and "configured.gguf" in p.stderr
    p = subprocess.run([*CLI, "eval", str(toy_db), str(QUESTIONS), "--oneshot", "-o", "b"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600,
                       env={**env, "SIEVE_LITE_RANKER": "bm25"})
    assert p.returncode == 0, p.stderr
    run = json.loads((tmp_path / "b" / "run.json").read_text())["settings"]
    assert run["ranker"] == "bm25" and run["model"].endswith("configured.gguf")


@pytest.mark.slow
def test_cli_agent_with_the_real_model(toy_db: Path, tmp_path: Path) -> None:
    """One real episode (the default GGUF, one step, final answer) through the command. The
    one step is the engine's first read (a small model's, in sieve mode); the final answer
    is the model's call."""
    p = cli("eval", str(toy_db), str(QUESTIONS), "--modes", "sieve", "--limit", "1",
            "--max-steps", "1", "-o", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = read_results(tmp_path / "out" / "results.jsonl")
    assert len(rows) == 1 and rows[0]["run"] == "agent" and rows[0]["llm_calls"] >= 1
    assert rows[0]["backbone"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert (tmp_path / "out" / rows[0]["transcript"]).exists()
    assert "agent   sieve" in p.stdout


def test_one_writer_per_folder(toy_db: Path, tmp_path: Path) -> None:
    import fcntl

    opts = EvalOptions(oracle=True, modes=("sieve",))
    run_eval(toy_db, QUESTIONS, tmp_path, opts, counter=WordCounter(), stop_after=1)
    results = tmp_path / "results.jsonl"
    with open(results, "a") as fh:  # a writer in the middle of a line
        fh.write('{"run": "oracle", "mo')
    before = results.read_bytes()
    with open(tmp_path / ".lock", "w") as held:  # another run is writing
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(QuestionError, match="another sieve-lite eval is writing"):
            run_eval(toy_db, QUESTIONS, tmp_path, opts, counter=WordCounter())
        with pytest.raises(QuestionError, match="another sieve-lite eval is writing"):
            run_eval(toy_db, QUESTIONS, tmp_path, opts, counter=WordCounter(), fresh=True)
        # a look at the results so far reads around the half line and changes nothing
        look = run_eval(toy_db, QUESTIONS, tmp_path, opts, counter=WordCounter(),
                        stop_after=0)
        assert look.summary["meta"]["tasks_done"] == 1 and results.read_bytes() == before
    done = run_eval(toy_db, QUESTIONS, tmp_path, opts, counter=WordCounter())
    assert done.resumed == 1 and len(read_results(results)) == 3


def test_model_processes_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs N gives each model process cores / N llama.cpp threads (its threads spin while
    waiting for each other, so oversubscribed cores slow every episode down)."""
    from sieve_lite.agent import backbones
    from sieve_lite.eval import runner

    monkeypatch.setattr(backbones.os, "cpu_count", lambda: 8)
    assert backbones.threads_per_job(1) is None
    assert backbones.threads_per_job(2) == 4
    assert backbones.threads_per_job(16) == 1
    made: list[dict] = []
    monkeypatch.setattr(backbones, "LlamaBackbone",
                        lambda model, **kw: made.append(kw) or object())
    runner.default_backbone_factory(EvalOptions(jobs=4))("sieve")
    assert made[-1]["n_threads"] == 2
