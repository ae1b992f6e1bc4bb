"""The issue-11 measurements with ``sieve-lite eval``: the oracle replay and one-shot retrieval
on the three shared QA sets and the PEP development set, and the agent (20 questions per set,
three modes). Every figure comes from running the command itself (a subprocess of this
checkout's CLI), so the numbers are what a user gets with the same line.

    python bench/eval.py build                  # bench/out/eval-{2wiki,hotpotqa,musique}.db
    python bench/eval.py retrieval              # --oracle --oneshot on the four sets
    python bench/eval.py agent [--jobs 2]       # 20 questions per set, resumable; --modes M,M
    python bench/eval.py agent --report-only    # the reports of the episodes done so far
    python bench/eval.py table                  # the tables, from the summary.json files
    python bench/eval.py plot                   # docs/img/eval-oracle.png (the README's plot)

Collections: the shared passage files and the 736 PEPs (``shared/data/corpora/peps``, as for
the shipped demo collection) built with the normal path, lexical only (``--no-embed``: the
ranker is bm25; building and querying with embeddings took too long on 2 cores shared by
eight developers), as ``bench/out/eval-<set>.db``.
Outputs: ``bench/out/eval/<set>-retrieval/`` and ``bench/out/eval/<set>-agent/``
(results.jsonl, summary.json, report.md, plots/).

Agent budget: the default model (SmolLM2-135M-Instruct), ``--max-steps 3`` (not the paper's
100; as in bench/ask.py, so that 240 episodes of a 135M model fit a few hours of 2 shared
cores), the same for every mode; ``--limit 20`` draws 20 questions with seed 42. An
interrupted run is resumed by running the same line again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside a clone; a git worktree under wt/ has it one level further up.
SHARED = Path(os.environ.get("SIEVE_SHARED") or next(
    (p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()),
    ROOT.parent / "shared"))
OUT = ROOT / "bench" / "out"
QA = SHARED / "data" / "qa"
SETS = {
    # name: (collection, questions file)
    "2wiki": (OUT / "eval-2wiki.db", QA / "2wiki" / "questions.json"),
    "hotpotqa": (OUT / "eval-hotpotqa.db", QA / "hotpotqa" / "questions.jsonl"),
    "musique": (OUT / "eval-musique.db", QA / "musique" / "questions.json"),
    "pep-dev": (OUT / "eval-peps.db", ROOT / "bench" / "data" / "pep-dev.jsonl"),
}
SOURCES = {"pep-dev": (SHARED / "data" / "corpora" / "peps", "rst")}
CLI = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]


def env() -> dict[str, str]:
    e = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def sh(args: list[str]) -> None:
    print("$ sieve-lite " + " ".join(str(a) for a in args), flush=True)
    t0 = time.perf_counter()
    subprocess.run([*CLI, *map(str, args)], check=True, env=env(), cwd=ROOT)
    print(f"  ({time.perf_counter() - t0:.0f}s, load average {os.getloadavg()[0]:.1f})",
          flush=True)


def build(sets: list[str]) -> None:
    for name in sets:
        db, _ = SETS[name]
        if db.exists():
            continue
        db.parent.mkdir(parents=True, exist_ok=True)  # bench/out/ is not in git
        corpus, fmt = SOURCES.get(name) or (next(
            p for p in (QA / name / "corpus.json", QA / name / "corpus.jsonl") if p.exists()),
            name)
        sh(["build", corpus, "--format", fmt, "-o", db, "--no-embed", "-q"])


def retrieval(sets: list[str]) -> None:
    build(sets)
    for name in sets:
        db, questions = SETS[name]
        sh(["eval", db, questions, "--oracle", "--oneshot", "-o",
            OUT / "eval" / f"{name}-retrieval", "-q"])


def agent(sets: list[str], limit: int, max_steps: int, jobs: int, report_only: bool,
          modes: str) -> None:
    build(sets)
    for name in sets:
        db, questions = SETS[name]
        sh(["eval", db, questions, "--modes", modes, "--limit", limit, "--max-steps", max_steps,
            "--jobs", jobs,
            "-o", OUT / "eval" / f"{name}-agent", "-q", *(["--report-only"] if report_only
                                                         else [])])


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def num(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


def table(sets: list[str]) -> None:
    print("| set | questions | mode | reached | distinct tokens, mean on the questions all "
          "modes reached | fewer than search-visit | median per question |")
    print("|---|---|---|---|---|---|---|")
    for name in sets:
        path = OUT / "eval" / f"{name}-retrieval" / "summary.json"
        if not path.exists():
            continue
        o = json.loads(path.read_text())["oracle"]
        for mode, x in o["modes"].items():
            y = o["paired"]["modes"][mode]
            print(f"| {name} | {x['questions']} ({o['paired']['questions']} all reached) | "
                  f"{mode} | {pct(x['reached'])} | {num(y['distinct_tokens_mean'])} | "
                  f"{pct(y.get('fewer_tokens_than_baseline'))} | "
                  f"{pct(y.get('fewer_tokens_median_per_question'))} |")
    print()
    print("| set | questions | R@1 | R@2 | R@5 | R@10 | all gold in top 5 |")
    print("|---|---|---|---|---|---|---|")
    for name in sets:
        path = OUT / "eval" / f"{name}-retrieval" / "summary.json"
        if not path.exists():
            continue
        x = json.loads(path.read_text())["oneshot"]["all"]
        print(f"| {name} | {x['questions']} | " + " | ".join(
            pct(x[f"recall@{k}"]) for k in (1, 2, 5, 10)) + f" | {pct(x['all_gold_at_5'])} |")
    print()
    print("| set | mode | n | EM | contains | F1 | gold searched | gold read | distinct tok "
          "(median) | accumulated (median) | LLM calls | fallback | s/question (median) | "
          "engine share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in sets:
        path = OUT / "eval" / f"{name}-agent" / "summary.json"
        if not path.exists():
            continue
        a = json.loads(path.read_text())["agent"]
        for mode, x in a["modes"].items():
            print(f"| {name} | {mode} | {x['questions']} | {pct(x['em'])} | "
                  f"{pct(x['contains'])} | {pct(x['f1'])} | {pct(x['gold_searched'])} | "
                  f"{pct(x['gold_read'])} | {num(x['distinct_tokens_median'])} | "
                  f"{num(x['accumulated_tokens_median'])} | {x['llm_calls']:.1f} | "
                  f"{pct(x['fallback_rate'])} | {x['seconds_median']:.0f} | "
                  f"{pct(x['engine_share'])} |")


def plot(sets: list[str], path: Path) -> None:
    """One grouped bar chart for the README: the oracle's mean distinct tokens per mode on the
    questions every mode reached, per set, with the saving against search-visit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"sieve": "#1b7837", "search-fetch": "#2166ac", "search-visit": "#b2182b"}
    done = [(n, json.loads((OUT / "eval" / f"{n}-retrieval" / "summary.json").read_text()))
            for n in sets if (OUT / "eval" / f"{n}-retrieval" / "summary.json").exists()]
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    width = 0.26
    for j, mode in enumerate(colors):
        xs, ys = [], []
        for i, (_, s) in enumerate(done):
            y = s["oracle"]["paired"]["modes"].get(mode, {}).get("distinct_tokens_mean")
            if y is not None:
                xs.append(i + (j - 1) * width)
                ys.append(y)
        bars = ax.bar(xs, ys, width, color=colors[mode], label=mode)
        if mode == "sieve":
            for (_, s), bar in zip(done, bars, strict=True):
                fewer = s["oracle"]["paired"]["modes"]["sieve"].get("fewer_tokens_than_baseline")
                if fewer is not None:
                    ax.annotate(f"-{100 * fewer:.0f}%", (bar.get_x() + width / 2,
                                                          bar.get_height()),
                                textcoords="offset points", xytext=(0, 2), ha="center",
                                fontsize=8)
    ax.set_xticks(range(len(done)), [f"{n}\n({s['oracle']['paired']['questions']} q)"
                                     for n, s in done], fontsize=8)
    ax.set_ylabel("distinct tokens until the gold\nevidence is in view (mean)", fontsize=8)
    ax.set_title("Oracle replay: what each mode shows an ideal agent "
                 "(SmolLM2 tokenizer, k = 5)", fontsize=9)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["build", "retrieval", "agent", "table", "plot"])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--max-steps", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--modes", default="sieve,search-fetch,search-visit")
    ap.add_argument("--report-only", action="store_true",
                    help="agent: write the reports of the episodes done so far, run nothing")
    args = ap.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise SystemExit(f"unknown set {', '.join(unknown)}; use {', '.join(SETS)}")
    if args.what == "build":
        build(sets)
    elif args.what == "retrieval":
        retrieval(sets)
    elif args.what == "agent":
        agent(sets, args.limit, args.max_steps, args.jobs, args.report_only, args.modes)
    elif args.what == "plot":
        plot(sets, ROOT / "docs" / "img" / "eval-oracle.png")
    else:
        table(sets)


if __name__ == "__main__":
    main()
