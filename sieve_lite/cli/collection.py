"""``build`` and ``info``: make a collection file and describe one."""

from __future__ import annotations

from pathlib import Path

import click

from ..sources import FORMATS
from . import _render
from ._common import (
    EXIT_CODES_HELP,
    EXIT_FOUND,
    SkipPrinter,
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
@click.option("--force", is_flag=True, help="Replace OUT when it is already a collection.")
@click.option("--name", default=None, help="Manifest: the collection's name (default: OUT's stem).")
@click.option("--description", default=None, help="Manifest: what the collection holds.")
@click.option("--collection-version", "version", default=None,
              help="Manifest: the collection's own version.")
@click.option("--license", "license_", default=None, help="Manifest: the data's licence.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no skip reports.")
@click.option("--shards", type=click.IntRange(1, 4096), default=None, metavar="N",
              help="Write OUT as a folder of N shard files built in parallel processes, split "
                   "by document id, with a manifest of global statistics (docs/shards.md).")
def build(sources: tuple[Path, ...], out: Path, fmt: str, no_embed: bool,
          embed_model: str | None, strict: bool, force: bool, name: str | None,
          description: str | None, version: str | None, license_: str | None,
          quiet: bool, shards: int | None) -> None:
    """Build a collection file from SOURCES (files or folders). Bad records are skipped and
    reported (the first few, then a count); with --strict the first one stops the build."""
    from ..build import SKIPS_KEPT, build_collection
    from ..display import clean
    from ..sources import Meter, read_sources

    on_skip = SkipPrinter(quiet, SKIPS_KEPT)

    label = ", ".join(str(s) for s in sources)
    manifest = {k: v for k, v in (("name", name), ("description", description),
                                  ("version", version), ("license", license_)) if v}
    docs = read_sources(list(sources), fmt, meter=Meter())
    if shards is not None:
        from ..shards.build import sharded_build

        with spinner(f"building {shards} shards"):
            rep = sharded_build(docs, out, shards, embed=not no_embed, embed_model=embed_model,
                                strict=strict, on_skip=on_skip, source_label=f"{fmt}: {label}",
                                force=force, inputs=sources, manifest=manifest)
        if not quiet:
            on_skip.finish(rep.skipped_count)
            click.echo(f"built {rep.path}: {rep.shards} shards "
                       f"({', '.join(f'{n:,}' for n in rep.per_shard)} documents), "
                       f"{rep.documents:,} documents, {rep.sections:,} sections, "
                       f"{rep.skipped_count:,} skipped, "
                       f"{'with' if rep.embedded else 'without'} embeddings, "
                       f"{rep.seconds:.1f}s", err=True)
        return
    report = build_collection(docs, out, embed=not no_embed, embed_model=embed_model,
                              strict=strict, quiet=quiet, on_skip=on_skip,
                              source_label=f"{fmt}: {label}", force=force, inputs=sources,
                              manifest=manifest, meter=docs.meter)
    if quiet:
        return
    on_skip.finish(report.skipped_count)
    for note in docs.stats.notes:
        click.echo(f"note: {clean(note)}", err=True)
    st = docs.stats
    if st.files_done > 1 or st.pages or len(set(st.documents) | set(st.skipped)) > 1:
        # per format, for folders and mixed sources (one JSONL file says nothing new here)
        pages = f"; {st.pages:,} PDF pages" if st.pages else ""
        click.echo(f"read {st.files_done:,} file{'s' if st.files_done != 1 else ''}: "
                   f"{st.summary()}{pages}", err=True)
    click.echo(f"built {report.path}: {report.documents:,} documents, {report.sections:,} "
               f"sections, {report.skipped_count:,} skipped, "
               f"{'with' if report.embedded else 'without'} embeddings, "
               f"{report.seconds:.1f}s", err=True)
    if report.reused_vectors:
        click.echo(f"resumed: {report.reused_vectors:,} vectors from an interrupted build "
                   "were reused", err=True)
    if report.skipped_count > report.documents:
        click.echo(f"hint: most records were skipped; were the sources read in the right "
                   f"format? They were read as --format {fmt} (choose from "
                   f"{', '.join(FORMATS)})", err=True)


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
