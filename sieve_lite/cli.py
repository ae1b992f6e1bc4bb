"""The command line: each command parses options, calls one library function, renders.

Exit codes: 0 found / done, 1 nothing found, 2 error. Every ``SieveError`` becomes one line on
stderr and exit 2 here, in one place; any other exception is our bug and keeps its traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .errors import SieveError
from .sources import FORMATS

EXIT_FOUND, EXIT_NOTHING, EXIT_ERROR = 0, 1, 2


def default_collection() -> Path:
    """The shipped demo collection (collections/peps.db next to the package, or installed)."""
    here = Path(__file__).resolve().parent.parent / "collections" / "peps.db"
    return here


class SieveGroup(click.Group):
    """Turns typed errors into one line and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SieveError as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            ctx.exit(0)


def print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


@click.group(cls=SieveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sieve-lite")
def cli() -> None:
    """sieve-lite: Search, Inspect, Fetch over one-file SQLite collections, offline."""


# --------------------------------------------------------------------------------------- build
@cli.command()
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
    from .build import build_collection
    from .sources import iter_documents

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


# ---------------------------------------------------------------------------------------- info
@cli.command()
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
    from rich.table import Table

    table = Table(show_header=False, box=None)
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(value)
        table.add_row(f"[bold]{key}[/bold]", "" if value is None else str(value))
    Console().print(table)


# -------------------------------------------------------------------------------------- search
# (implemented by the search/ranking work; see sieve_lite.search)


def main() -> None:
    """Console-script entry point."""
    try:
        sys.exit(cli.main(standalone_mode=False) or 0)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as e:
        # Usage errors: one line, exit 2 (click's own convention too).
        click.echo(f"error: {e.format_message()}", err=True)
        sys.exit(EXIT_ERROR)
    except SieveError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(EXIT_ERROR)


# Register the commands that live in their own modules (search, fetch, ask).
from . import commands as _commands  # noqa: E402,F401
from .agent import command as _agent_command  # noqa: E402,F401
