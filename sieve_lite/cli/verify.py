"""``verify DB`` and ``get SOURCE -o DB``: check a collection file; fetch one and check it."""

from __future__ import annotations

from pathlib import Path

import click

from ..output import versioned
from ._common import EXIT_DAMAGED, EXIT_FOUND, print_json
from ._progress import download_progress


@click.command()
@click.argument("db", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def verify(db: Path, as_json: bool) -> None:
    """Check DB: SQLite integrity, the exact schema, the metadata, the content hash over every
    document, and the vectors against the embedding model. Exit 0 when all pass, 3 otherwise."""
    from ..display import clean
    from ..verify import verify as run_verify

    report = run_verify(db)
    if as_json:
        print_json(versioned("verify", report.to_dict()))
    else:
        for c in report.checks:
            status = "ok" if c.ok else "skipped" if c.ok is None else "FAILED"
            click.echo(f"{status:8} {c.name:10} {clean(c.detail)}")
        click.echo(f"{clean(str(db))}: " + ("sound" if report.ok else "damaged: do not use it; "
                                           "rebuild it or get a fresh copy"))
    raise SystemExit(EXIT_FOUND if report.ok else EXIT_DAMAGED)


@click.command()
@click.argument("source")
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path),
              help="Where to keep the collection (only once it is checked).")
@click.option("--sha256", default=None, metavar="HEX",
              help="The file's expected SHA-256 (default: from an index.json beside SOURCE).")
@click.option("--force", is_flag=True, help="Replace OUT when it is already a collection.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def get(source: str, out: Path, sha256: str | None, force: bool, as_json: bool,
        quiet: bool) -> None:
    """Fetch the collection at SOURCE (an http(s) URL or a path) to OUT: resume a cut-off
    download, check the checksum and the whole file (as verify does), then rename it into
    place. A file that fails is refused and not kept."""
    from ..get import get_collection

    with download_progress("get", quiet=quiet) as progress:
        report = get_collection(source, out, sha256=sha256, force=force, progress=progress)
    if as_json:
        print_json(versioned("get", report.to_dict()))
    elif not quiet:
        how = {"given": "the given sha256", "index.json": "the sha256 in index.json",
               "none": "no checksum (none given, no index.json)"}[report.checksum]
        click.echo(f"saved {report.path}: {report.bytes:,} bytes, checked against {how}, "
                   "verified", err=True)
