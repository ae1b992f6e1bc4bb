"""``build`` and ``info``: make a collection file and describe one."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import SieveError
from ..sources import FORMATS
from . import _render
from ._common import (
    EXIT_CODES_HELP,
    EXIT_FOUND,
    color_option,
    default_collection,
    finish,
    format_option,
    pick_format,
)
from ._spinner import spinner


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path),
              help="The collection file to write (replaced atomically).")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="auto",
              show_default=True)
@click.option("--no-embed", is_flag=True, help="Lexical only: no embeddings, no torch import.")
@click.option("--embed-model", default=None, help="sentence-transformers model id or folder.")
@click.option("--strict", is_flag=True, help="Stop at the first bad document; write nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no skip reports.")
def build(sources: tuple[Path, ...], out: Path, fmt: str, no_embed: bool,
          embed_model: str | None, strict: bool, quiet: bool) -> None:
    """Build a collection file from SOURCES (files or folders)."""
    from ..build import build_collection
    from ..sources import iter_documents

    def on_skip(err: SieveError) -> None:
        if not quiet:
            click.echo(f"skipped: {err}", err=True)

    label = ", ".join(str(s) for s in sources)
    report = build_collection(iter_documents(list(sources), fmt), out, embed=not no_embed,
                              embed_model=embed_model, strict=strict, quiet=quiet,
                              on_skip=on_skip, source_label=f"{fmt}: {label}")
    if not quiet:
        click.echo(f"built {report.path}: {report.documents} documents, {report.sections} "
                   f"sections, {len(report.skipped)} skipped, "
                   f"{'with' if report.embedded else 'without'} embeddings, "
                   f"{report.seconds:.1f}s", err=True)


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("db", required=False, type=click.Path(path_type=Path))
@format_option(_render.INFO_FORMATS)
@color_option
def info(db: Path | None, fmt: str | None, as_json: bool, color: str) -> None:
    """Describe a collection: documents, sections, fields, schema, model, size.

    DB may be left out when a default collection is set.
    """
    import sieve_lite

    db = db or default_collection()
    fmt = pick_format(fmt, as_json, choices=_render.INFO_FORMATS)
    with spinner(f"opening {db.name}"), sieve_lite.open(db) as coll:
        data = coll.info()
    finish(lambda: _render.info(data, fmt, color), EXIT_FOUND)
