"""``sieve-lite eval DB QUESTIONS``: accuracy and tokens per access mode, on your collection."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..options import MODES, RANKERS
from ._common import EXIT_FOUND, EXIT_NOTHING, print_json


def _modes(value: str) -> tuple[str, ...]:
    modes = tuple(dict.fromkeys(m.strip() for m in value.split(",") if m.strip()))
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise click.BadParameter(f"{', '.join(bad) or '(none)'}; use a comma-separated list "
                                 f"of {', '.join(MODES)}", param_hint="--modes")
    return modes


@click.command(name="eval")
@click.argument("db", type=click.Path(path_type=Path))
@click.argument("questions", type=click.Path(path_type=Path))
@click.option("--modes", default=",".join(MODES), show_default=True,
              help="Access modes to compare (comma-separated).")
@click.option("--oracle", is_flag=True,
              help="The LLM-free replay of an ideal agent's reads: tokens until the gold "
                   "evidence is in view, per mode.")
@click.option("--oneshot", is_flag=True,
              help="One ranked search of the question's words, no agent: gold recall@k.")
@click.option("--model", type=click.Path(path_type=Path), default=None,
              help="A GGUF file (default: as in ask, $SIEVE_LITE_MODEL or the config "
                   "file, else the agent's default model); its tokenizer counts the oracle's "
                   "tokens. With --backbone, the model name to ask for (the oracle then "
                   "counts with the default model's tokenizer).")
@click.option("--backbone", metavar="URL", default=None,
              help="An OpenAI-compatible endpoint instead of the in-process model (default: "
                   "$SIEVE_LITE_BACKBONE or the config file, as in ask).")
@click.option("--max-steps", type=click.IntRange(1, 100), default=None,
              help="Model steps per question (default: what fits the model, as in ask).")
@click.option("--n-ctx", type=click.IntRange(512, 1_048_576), default=8192, show_default=True)
@click.option("--ranker", type=click.Choice(RANKERS),
              default=None,
              help="Default: $SIEVE_LITE_RANKER or the config file, else hybrid when the "
                   "collection has embeddings, bm25 when not.")
@click.option("-k", "k", type=click.IntRange(1, 50), default=None,
              help="Results per search (default: the agent's for the model; the oracle's hop "
                   "counts when its gold is in the top 5).")
@click.option("--limit", type=click.IntRange(1, None), default=None,
              help="Evaluate this many questions, drawn with --seed (kept in file order).")
@click.option("--seed", type=int, default=42, show_default=True,
              help="Seeds the question draw and the model's sampling.")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes (each loads its own model).")
@click.option("--correct", type=click.Choice(["em", "contains"]), default="em",
              show_default=True, help="What counts as a right answer (accuracy, McNemar).")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: eval-runs/DB-QUESTIONS). An interrupted run "
                   "started again with the same settings goes on from its results.")
@click.option("--fresh", is_flag=True, help="Discard a previous run in the output folder.")
@click.option("--report-only", is_flag=True,
              help="Run nothing: write the summary, report and plots from the results so far "
                   "(a look at a long run while it goes on, or after it was stopped).")
@click.option("--open", "open_report", is_flag=True,
              help="Show the report in the terminal at the end.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json to stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def eval_(db: Path, questions: Path, modes: str, oracle: bool, oneshot: bool,
          model: Path | None, backbone: str | None, max_steps: int, n_ctx: int,
          ranker: str | None, k: int, limit: int | None, seed: int, jobs: int, correct: str,
          out: Path | None, fresh: bool, report_only: bool, open_report: bool, as_json: bool,
          quiet: bool) -> None:
    """Evaluate the research agent on DB with the questions of QUESTIONS (generic JSON Lines
    {id, question, answer, answer_aliases?, gold_docs?, gold_sections?, kind?}, or a shared
    2Wiki / HotpotQA / MuSiQue file as it is), per access mode: results.jsonl, summary.json,
    report.md and plots in the output folder. With --oracle and/or --oneshot, no language
    model answers: the engine alone is measured."""
    from .. import config

    # The defaults ``ask`` takes (environment, then config file), so that eval runs the agent
    # the user set up: same model, backbone and ranker.
    ranker = ranker or config.default("ranker")
    backbone = backbone or config.default("backbone")
    if model is None and config.default("model"):
        model = Path(config.default("model") or "")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    from ..eval.runner import EvalOptions, run_eval

    opts = EvalOptions(modes=_modes(modes), oracle=oracle, oneshot=oneshot,
                       model=str(model) if model else None, backbone=backbone,
                       max_steps=max_steps, n_ctx=n_ctx, ranker=ranker, k=k, limit=limit,
                       seed=seed, jobs=jobs, correct=correct)
    out = out or Path("eval-runs") / f"{db.stem}-{questions.stem}"
    if report_only and fresh:
        raise click.UsageError("--report-only and --fresh do not go together")
    show = not quiet and sys.stderr.isatty() and not report_only
    with _progress(show, " + ".join(opts.runs())) as progress:
        run = run_eval(db, questions, out, opts, fresh=fresh, progress=progress,
                       stop_after=0 if report_only else None)
    if as_json:
        from ..output import versioned

        print_json(versioned("eval", run.summary))
    else:
        click.echo(_brief(run.summary))
        click.echo(f"wrote {out}/: results.jsonl, " + ", ".join(
            str(p.relative_to(out)) for p in run.files))
    if open_report:
        from rich.console import Console
        from rich.markdown import Markdown

        text = (out / "report.md").read_text(encoding="utf-8")
        Console(stderr=as_json).print(Markdown(text))
    raise SystemExit(EXIT_FOUND if run.summary.get("meta", {}).get("tasks_done") else
                     EXIT_NOTHING)


class _progress:
    """A rich progress bar with an ETA on stderr (only on a terminal)."""

    def __init__(self, show: bool, label: str) -> None:
        self.show, self.label = show, label
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Any:
        if not self.show:
            return None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(), TimeElapsedColumn(),
                             TextColumn("eta"), TimeRemainingColumn(),
                             TextColumn("{task.fields[last]}"),
                             console=Console(stderr=True), transient=True)
        self._bar.__enter__()
        self._task = None
        return self.update

    def update(self, done: int, total: int, row: dict[str, Any] | None) -> None:
        if self._task is None:
            # The ETA counts only this session's work: resumed rows start the bar.
            self._task = self._bar.add_task(self.label, total=total, completed=done, last="")
            return
        last = f"{row['mode']} {row['id']}"[:40] if row else ""
        self._bar.update(self._task, completed=done, last=last)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _brief(s: dict[str, Any]) -> str:
    """A few lines for the terminal; report.md has everything."""
    lines = []
    if "agent" in s:
        for mode, x in s["agent"]["modes"].items():
            lines.append(f"agent   {mode:13s} n={x['questions']:<4d} acc "
                         f"{100 * (x['accuracy'] or 0):5.1f}%  F1 {100 * (x['f1'] or 0):5.1f}%"
                         f"  gold read {100 * (x['gold_read'] or 0):5.1f}%  distinct tokens "
                         f"{x['distinct_tokens_median'] or 0:,.0f}")
    if "oracle" in s:
        p = s["oracle"]["paired"]
        for mode, x in s["oracle"]["modes"].items():
            y = p["modes"].get(mode, {})
            fewer = y.get("fewer_tokens_than_baseline")
            lines.append(f"oracle  {mode:13s} n={x['questions']:<4d} reached "
                         f"{100 * (x['reached'] or 0):5.1f}%  tokens on the {p['questions']} "
                         f"reached by all {y.get('distinct_tokens_mean') or 0:,.0f}"
                         + (f" ({100 * fewer:.1f}% fewer than {p['baseline']})"
                            if fewer is not None else ""))
    if "oneshot" in s:
        x = s["oneshot"]["all"]
        lines.append(f"oneshot n={x['questions']:<4d} " + "  ".join(
            f"R@{k} {100 * (x[f'recall@{k}'] or 0):5.1f}%" for k in (1, 2, 5, 10)))
    return "\n".join(lines) or "nothing evaluated"
