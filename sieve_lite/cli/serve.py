"""``serve [DB|DIR]...``: the web page for people and the API for agents, on one port."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..options import RANKERS
from ._common import EXIT_FOUND, default_collection, ray_option


@click.command()
@click.argument("dbs", nargs=-1, metavar="[DB|DIR]...", type=click.Path(path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on. Anything but loopback needs --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8377, show_default=True,
              help="The port (0: any free port; the URL is printed on stderr).")
@click.option("--token", envvar="SIEVE_LITE_TOKEN", default=None,
              help="A secret every request must carry (Authorization: Bearer, or ?token= once "
                   "in a browser). Default: SIEVE_LITE_TOKEN.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Another Host name the server answers to (besides localhost, 127.0.0.1 "
                   "and [::1]). Repeatable.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes, each with its own read-only connections.")
@click.option("--connections", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Open connections per collection in each worker.")
@click.option("--ranker", type=click.Choice(RANKERS), default=None,
              help="The default ranker. Default: SIEVE_LITE_RANKER, the config file, else "
                   "hybrid when a collection has embeddings, bm25 when not.")
@click.option("--data-dir", type=click.Path(path_type=Path), default=None,
              help="Where past ask runs are kept. Default: the user's data folder.")
@ray_option
def serve(dbs: tuple[Path, ...], host: str, port: int, token: str | None,
          allow_hosts: tuple[str, ...], workers: int, connections: int, ranker: str | None,
          data_dir: Path | None, ray_address: str | None) -> None:
    """Serve the collections DB... (default: the default collection) as a web page and a
    JSON API at http://127.0.0.1:PORT/ until Ctrl-C.

    Collections are opened read-only. Only requests naming this machine (or --allow-host)
    are answered; with any --host other than loopback, --token is required.
    """
    from .. import config
    from ..serve import ServeConfig
    from ..serve.server import run

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    paths = tuple(str(p) for p in dbs) or (str(default_collection(fallback=_shipped())),)
    cfg = ServeConfig(paths=paths, host=host, port=port, token=token,
                      allow_hosts=allow_hosts, workers=workers, connections=connections,
                      ranker=ranker or config.default("ranker"),
                      data_dir=str(data_dir) if data_dir else None,
                      ray=ray_address).check()

    def ready(url: str) -> None:
        click.echo(f"serving {', '.join(Path(p).name for p in paths)} at {url} "
                   "(Ctrl-C stops)", err=True)

    run(cfg, on_ready=ready)
    raise SystemExit(EXIT_FOUND)


def _shipped() -> Path:
    from ..collection import default_collection as shipped

    return shipped()
