"""Run one question end to end: open the collection, make the backbone, pick the budgets that
fit its model, write the manual, run the loop. The ``ask`` command and the benchmarks call
this; it never touches the CLI."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any


def episode_setup(coll: Any, bb: Any, mode: str, ranker: str | None = None,
                  overrides: dict[str, Any] | None = None, budgets: Any = None
                  ) -> tuple[Any, Any, str]:
    """(budgets, tools, manual) for one backbone on one collection: the budgets that fit the
    model's size (``profile.budgets_for``) with ``overrides`` (non-None values) on top."""
    from .backbones import model_size
    from .manual import build_manual, build_short_manual
    from .profile import budgets_for
    from .tools import CollectionTools

    bud = budgets or budgets_for(model_size(bb), bb.n_ctx,
                                 capable=getattr(bb, "capable", None))
    extra = {k: v for k, v in (overrides or {}).items() if v is not None}
    if extra:
        bud = replace(bud, **extra)
    tools = CollectionTools(coll, mode=mode, ranker=ranker, compact=bud.compact,
                            sections_shown=bud.sections_shown)
    read_cap = max(64, min(bud.read_tokens, int(bud.read_share * bb.n_ctx)))
    if bud.compact:
        manual = build_short_manual(coll, mode, max_steps=bud.max_steps)
    else:
        manual = build_manual(coll, mode, k=bud.k, read_tokens=read_cap,
                              max_steps=bud.max_steps)
    return bud, tools, manual


def run_question(db: str | os.PathLike[str], question: str, *, model: Any = None,
                 backbone: str | None = None, mode: str = "sieve",
                 n_ctx: int = 8192, ranker: str | None = None,
                 transcript: str | os.PathLike[str] | None = None, live: Any = False,
                 overrides: dict[str, Any] | None = None, budgets: Any = None,
                 backbone_obj: Any = None, verbose: bool = False,
                 ray: str | None = None, allow_unconstrained: bool = False,
                 warn: Callable[[str], None] | None = None) -> Any:
    """Open the collection, make the backbone, build the manual, run one episode.

    ``live`` is False, True (a live view on stderr) or an event sink of the caller's.
    ``overrides`` are budget fields to set over the model's defaults (``max_steps``, ``k``,
    ``read_tokens``, ``thought_chars``, ``seed``, ``span_answer``, ...).
    ``ray``: serve a sharded collection from Ray actors (an address, or "local").
    ``allow_unconstrained``: run on a server that ignores the constraint (tolerant parsing);
    ``warn`` is told so (``make_backbone``)."""
    import sieve_lite

    from .backbones import make_backbone
    from .loop import Agent
    from .transcript import LiveView, TranscriptWriter

    if ray is not None:  # a sharded collection's shards on Ray actors (sieve_lite.shards.ray)
        from ..shards.ray import open_ray

        opened = open_ray(db, ray)
    else:
        opened = sieve_lite.open(db)
    with opened as coll:
        bb = backbone_obj or make_backbone(str(model) if model else None, backbone, n_ctx=n_ctx,
                                           allow_unconstrained=allow_unconstrained, warn=warn)
        bud, tools, manual = episode_setup(coll, bb, mode, ranker, overrides, budgets)
        warm(tools)
        sinks = []
        writer = TranscriptWriter(transcript) if transcript else None
        if writer:
            sinks.append(writer)
        if live is True:
            from ..markup import markup_of_source

            sinks.append(LiveView(verbose=verbose,
                                  markup=markup_of_source(coll.meta.get("source", ""))))
        elif callable(live):
            sinks.append(live)

        def on_event(event: dict[str, Any]) -> None:
            for sink in sinks:
                sink(event)

        try:
            return Agent(bb, tools, manual, bud, on_event=on_event).run(question)
        finally:
            if writer:
                writer.close()


def warm(tools: Any) -> None:
    """One throwaway search with the episode's ranker, so that one-time setup (loading the
    query embedder: seconds, with torch) is not billed to the first step's engine time, just
    as loading the model is not billed to the first model call."""
    import contextlib

    from ..errors import QueryError

    with contextlib.suppress(QueryError):
        tools.coll.search("python", k=1, ranker=tools.ranker)
