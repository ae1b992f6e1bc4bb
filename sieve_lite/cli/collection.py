"""``build`` and ``info``: make a collection file and describe one."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import SieveError
from ..sources import FORMATS
from ._common import print_json


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
    from ..sources import read_sources

    def on_skip(err: SieveError) -> None:
        if not quiet:
            click.echo(f"skipped: {err}", err=True)

    label = ", ".join(str(s) for s in sources)
    docs = read_sources(list(sources), fmt)
    report = build_collection(docs, out, embed=not no_embed,
                              embed_model=embed_model, strict=strict, quiet=quiet,
                              on_skip=on_skip, source_label=f"{fmt}: {label}")
    if not quiet:
        for note in docs.stats.notes:
            click.echo(f"note: {note}", err=True)
        pages = f"; {docs.stats.pages:,} PDF pages" if docs.stats.pages else ""
        click.echo(f"read {docs.stats.files_done:,} files: {docs.stats.summary()}{pages}",
                   err=True)
        click.echo(f"built {report.path}: {report.documents} documents, {report.sections} "
                   f"sections, {len(report.skipped)} skipped, "
                   f"{'with' if report.embedded else 'without'} embeddings, "
                   f"{report.seconds:.1f}s", err=True)


@click.command()
@click.argument("db", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def info(db: Path, as_json: bool) -> None:
    """Describe a collection: documents, sections, fields, schema, model, size."""
    import sieve_lite

    with sieve_lite.open(db) as coll:
        data = coll.info()
    if as_json:
        print_json(data)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=False, box=None)
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(value)
        table.add_row(f"[bold]{key}[/bold]", escape("" if value is None else str(value)))
    Console().print(table)
