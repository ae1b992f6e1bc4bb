"""``add DB SOURCE...`` and ``remove DB ID...``: change a collection in place."""

from __future__ import annotations

from pathlib import Path

import click

from ..output import versioned
from ..sources import FORMATS
from ._common import SkipPrinter, print_json


@click.command()
@click.argument("db", type=click.Path(path_type=Path))
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="auto",
              show_default=True)
@click.option("--strict", is_flag=True, help="Stop at the first bad document; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.option("--quiet", "-q", is_flag=True, help="No report on stderr.")
def add(db: Path, sources: tuple[Path, ...], fmt: str, strict: bool, as_json: bool,
        quiet: bool) -> None:
    """Add the documents of SOURCES to the collection DB, in one transaction; a document
    whose id DB already has replaces it. Searches stay exactly those of a fresh build of the
    same documents, and programs reading DB meanwhile are not disturbed."""
    from ..build import SKIPS_KEPT
    from ..sources import iter_documents
    from ..update import add_documents

    on_skip = SkipPrinter(quiet, SKIPS_KEPT)
    report = add_documents(db, iter_documents(list(sources), fmt), strict=strict,
                           on_skip=on_skip)
    if as_json:
        print_json(versioned("add", report.to_dict()))
    if not quiet:
        on_skip.finish(report.skipped_count)
        click.echo(f"updated {db}: {report.added:,} added, {report.replaced:,} replaced, "
                   f"{report.skipped_count:,} skipped; {report.documents:,} documents, "
                   f"{report.seconds:.1f}s", err=True)


@click.command()
@click.argument("db", type=click.Path(path_type=Path))
@click.argument("ids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.option("--quiet", "-q", is_flag=True, help="No report on stderr.")
def remove(db: Path, ids: tuple[str, ...], as_json: bool, quiet: bool) -> None:
    """Remove the documents with these IDS from the collection DB, in one transaction (an id
    DB does not have refuses the whole removal)."""
    from ..update import remove_documents

    report = remove_documents(db, ids)
    if as_json:
        print_json(versioned("remove", report.to_dict()))
    if not quiet:
        click.echo(f"updated {db}: {report.removed:,} removed; {report.documents:,} "
                   f"documents, {report.seconds:.1f}s", err=True)
