"""The command line: each command parses options, calls one library function, and renders.

One package, one module per command group (``collection``: build, info; ``search``: search,
fetch; ``ask``: the agent; ``model``: list, get, check; ``eval``: the evaluation; ``config``;
``mcp``; ``verify``: verify, get; ``update``: add, remove). Command modules import only the
shared underscore modules (``_common``: exit codes, arguments, output plumbing; ``_render``:
which renderer runs for which format; ``_spinner``; ``_progress``: download progress); this
module imports them and registers each command in ``COMMANDS``, the one place commands are
added. The library never imports this package.

Typed errors become one line on stderr and an exit code here, in ``SieveGroup`` and ``main``,
and nowhere else. ``docs/cli.md`` is generated from these commands (``reference.py``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from ..errors import QueryError, SieveError
from . import ask as _ask
from . import collection as _collection
from . import config as _config
from . import eval as _eval
from . import mcp as _mcp
from . import model as _model
from . import search as _search
from . import serve as _serve
from . import update as _update
from . import verify as _verify
from ._common import (
    EXIT_CODES_HELP,
    EXIT_DAMAGED,
    EXIT_ERROR,
    EXIT_FOUND,
    EXIT_NOTHING,
    print_json,
)

EXIT_HELP = EXIT_CODES_HELP + """

\b
Defaults (collection, ranker, model, backbone): sieve-lite config.
Shell completion: eval "$(_SIEVE_LITE_COMPLETE=bash_source sieve-lite)" (see docs/cli.md).
"""


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _one_line(e: BaseException) -> str:
    from ..display import clean

    return " ".join(clean(str(e)).split()) or "no message"


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
            if isinstance(e, QueryError) and e.highlight() and _stderr_is_terminal():
                # The caret under the bad span, for a person; a script reading stderr still
                # gets exactly one line.
                from ..display import clean

                for line in clean(e.highlight()).splitlines():
                    click.echo(f"  {line}", err=True)
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
            if type(e).__module__ == "apsw" and type(e).__name__ in ("CorruptError",
                                                                    "NotADBError"):
                click.echo(f"error: the collection is damaged ({_one_line(e)[:300]}); rebuild "
                           "it with 'sieve-lite build'", err=True)
                ctx.exit(EXIT_DAMAGED)
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
    _config.config, _mcp.mcp, _serve.serve, _model.model,
    _verify.verify, _verify.get, _update.add, _update.remove,
    _eval.eval_,
)
for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI; usage errors become one line and exit 2."""
    try:
        sys.exit(cli.main(args=argv, prog_name="sieve-lite", standalone_mode=False) or 0)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as e:
        message = e.format_message()
        hint = _hint(e)
        click.echo(f"error: {message.rstrip('.') if hint else message}{hint}", err=True)
        sys.exit(EXIT_ERROR)


def _hint(e: click.ClickException) -> str:
    """A fix for the usage errors people make most with queries."""
    if isinstance(e, click.NoSuchOption) and not e.option_name.startswith("--"):
        return ("; a query that starts with '-' (NOT) goes after '--', options before it: "
                "sieve-lite search [OPTIONS] DB -- '-word'")
    if isinstance(e, click.UsageError) and "unexpected extra argument" in e.format_message():
        return "; quote a value that has spaces"
    return ""


__all__ = ["COMMANDS", "EXIT_DAMAGED", "EXIT_ERROR", "EXIT_FOUND", "EXIT_NOTHING", "cli",
           "main", "print_json"]
