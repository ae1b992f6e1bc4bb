"""Run one question end to end: open the collection, make the backbone, write the manual,
run the loop. The ``ask`` command and the benchmarks call this; it never touches the CLI."""

from __future__ import annotations

import os
from typing import Any


def run_question(db: str | os.PathLike[str], question: str, *, model: Any = None,
                 backbone: str | None = None, mode: str = "sieve", max_steps: int = 100,
                 n_ctx: int = 8192, ranker: str | None = None,
                 transcript: str | os.PathLike[str] | None = None, live: bool = False,
                 budgets: Any = None, backbone_obj: Any = None, verbose: bool = False) -> Any:
    """Open the collection, make the backbone, build the manual, run one episode."""
    import sieve_lite

    from .backbones import make_backbone
    from .loop import Agent, Budgets
    from .manual import build_manual
    from .tools import CollectionTools
    from .transcript import LiveView, TranscriptWriter

    bud = budgets or Budgets(max_steps=max_steps)
    with sieve_lite.open(db) as coll:
        tools = CollectionTools(coll, mode=mode, ranker=ranker)
        bb = backbone_obj or make_backbone(str(model) if model else None, backbone, n_ctx=n_ctx)
        read_cap = max(64, min(bud.read_tokens, int(bud.read_share * bb.n_ctx)))
        manual = build_manual(coll, mode, k=bud.k, read_tokens=read_cap,
                              max_steps=bud.max_steps)
        warm(tools)
        sinks = []
        writer = TranscriptWriter(transcript) if transcript else None
        if writer:
            sinks.append(writer)
        if live:
            from ..markup import markup_of_source

            sinks.append(LiveView(verbose=verbose,
                                  markup=markup_of_source(coll.meta.get("source", ""))))

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
