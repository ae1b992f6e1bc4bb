"""``mcp DB [DB...]``: serve collections to any agent over the Model Context Protocol."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..options import RANKERS
from ._common import EXIT_FOUND, default_collection


@click.command()
@click.argument("dbs", nargs=-1, metavar="[DB]...", type=click.Path(path_type=Path))
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="The HTTP port (0: any free port; the URL is printed on stderr).")
@click.option("--ranker", type=click.Choice(RANKERS), default=None,
              help="The search tool's default ranker. Default: SIEVE_LITE_RANKER, the config "
                   "file, else hybrid when a collection has embeddings, bm25 when not.")
@click.option("--connections", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Open connections per collection (concurrent calls beyond this wait).")
def mcp(dbs: tuple[Path, ...], http: bool, port: int, ranker: str | None,
        connections: int) -> None:
    """Serve the collections DB... as an MCP server with the tools search, fetch, manual
    and collections. Without DB, the default collection.

    Over stdio (the default) a desktop client or coding agent starts this command itself;
    nothing but the protocol is written to stdout. With --http it serves
    http://127.0.0.1:PORT/mcp until interrupted. Collections are opened read-only.
    """
    from .. import config
    from ..mcp_server import CollectionPool, build_server, mcp_available, serve_http, serve_stdio

    mcp_available()
    paths = list(dbs) or [default_collection()]
    ranker = ranker or config.default("ranker")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    with CollectionPool(paths, connections=connections, default_ranker=ranker) as pool:
        server = build_server(pool)
        names = ", ".join(pool.entries)
        if http:
            def ready(url: str) -> None:
                click.echo(f"serving {names} over streamable HTTP at {url} (Ctrl-C stops)",
                           err=True)

            serve_http(server, port=port, on_ready=ready)
        else:
            serve_stdio(server)
    raise SystemExit(EXIT_FOUND)
