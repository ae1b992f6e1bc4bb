"""The command line: each command parses options, calls one library function, and renders.

One package, one module per command group (``collection``: build, info; ``search``: search,
fetch; ``ask``: the agent; ``eval``: the evaluation). Command modules import ``_common`` only;
this module imports them and registers each command in ``COMMANDS``, the one place commands
are added. The library never imports this package.

Typed errors become one line on stderr and an exit code here, in ``main``, and nowhere else.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from ..errors import SieveError
from . import ask as _ask
from . import collection as _collection
from . import eval as _eval
from . import search as _search
from ._common import EXIT_DAMAGED, EXIT_ERROR, EXIT_FOUND, EXIT_NOTHING, print_json

EXIT_HELP = f"""\b
Exit codes:
  {EXIT_FOUND}  results admitted, or the work is done
  {EXIT_NOTHING}  nothing admitted (a fallback listing, when shown, is flagged as one)
  {EXIT_ERROR}  a usage or query error (one line on stderr)
  {EXIT_DAMAGED}  a damaged collection or an internal error (one line on stderr)
"""


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or "no message"


class SieveGroup(click.Group):
    """The one place where outcomes become exit codes: a ``SieveError`` is one line on stderr
    and its own code; anything else is our bug, still one line, exit 3 (``SIEVE_LITE_DEBUG=1``
    shows the traceback); a reader that went away (``| head``) ends quietly."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except SieveError as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            # Point stdout at /dev/null so that the interpreter's final flush cannot raise again.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(EXIT_FOUND)
        except Exception as e:
            if os.environ.get("SIEVE_LITE_DEBUG"):
                raise
            click.echo(f"error: internal error ({type(e).__name__}: {_one_line(e)[:300]}); "
                       "set SIEVE_LITE_DEBUG=1 to see the traceback", err=True)
            ctx.exit(EXIT_DAMAGED)


@click.group(cls=SieveGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_HELP)
@click.version_option(package_name="sieve-lite")
def cli() -> None:
    """sieve-lite: Search, Inspect, Fetch over one-file SQLite collections, offline."""


COMMANDS: tuple[click.Command, ...] = (
    _collection.build, _collection.info, _search.search, _search.fetch, _ask.ask,
    _eval.eval_,
)
for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI; usage errors become one line and exit 2."""
    try:
        sys.exit(cli.main(args=argv, standalone_mode=False) or 0)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as e:
        click.echo(f"error: {e.format_message()}", err=True)
        sys.exit(EXIT_ERROR)


__all__ = ["COMMANDS", "EXIT_DAMAGED", "EXIT_ERROR", "EXIT_FOUND", "EXIT_NOTHING", "cli",
           "main", "print_json"]
