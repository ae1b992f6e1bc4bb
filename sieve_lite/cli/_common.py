"""What every command shares: exit codes, the output plumbing (formats, colour, a reader that
goes away), and finding the collection among the arguments. Command modules import this, never
the package ``__init__`` (which imports them), so the CLI has no import cycle."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import click

# Exit codes scripts can rely on (documented in ``sieve-lite --help`` and docs/cli.md).
EXIT_FOUND = 0     # results admitted / work done
EXIT_NOTHING = 1   # nothing admitted (a flagged fallback listing may still be shown)
EXIT_ERROR = 2     # a usage or query error: one line on stderr
EXIT_DAMAGED = 3   # a damaged collection or an internal error: one line on stderr

EXIT_CODES_HELP = f"""\b
Exit codes:
  {EXIT_FOUND}  results admitted, or the work is done
  {EXIT_NOTHING}  nothing admitted (a fallback listing, when shown, is flagged as one)
  {EXIT_ERROR}  a usage or query error (one line on stderr)
  {EXIT_DAMAGED}  a damaged collection or an internal error (one line on stderr)"""

COLLECTION_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def print_json(obj: Any) -> None:
    """One JSON document, indented (``--format json``)."""
    from ..output import dumps

    click.echo(dumps(obj, indent=2))


def print_lines(lines: Iterable[str]) -> None:
    """Text lines on stdout, without the control characters a terminal would act on."""
    from ..display import clean

    for line in lines:
        click.echo(clean(line))


def print_jsonl(objs: Iterable[Any]) -> None:
    """JSON Lines: one object per line (``--format jsonl``)."""
    from ..output import dumps

    for obj in objs:
        click.echo(dumps(obj))


def note(message: str) -> None:
    """A note for the person at the terminal: stderr, never stdout."""
    click.echo(f"note: {message}", err=True)


def warning(message: str) -> None:
    """A warning (the run goes on, but not as it should): one line on stderr."""
    from ..display import clean

    click.echo(f"warning: {' '.join(clean(message).split())}", err=True)


# ---------------------------------------------------------------------------------- output
def _piped_default(choices: tuple[str, ...], piped: str | None) -> str:
    return piped or ("compact" if "compact" in choices else choices[0])


def format_option(choices: tuple[str, ...], human: str = "rich",
                  piped: str | None = None) -> Callable[[Any], Any]:
    """``--format`` with ``choices`` and ``--json`` as its short form. Without either, the
    output is ``human`` on a terminal and ``piped`` (default ``compact``) in a pipe."""
    piped = _piped_default(choices, piped)

    def deco(f: Any) -> Any:
        f = click.option("--json", "as_json", is_flag=True,
                         help="Short for --format json.")(f)
        return click.option(
            "--format", "fmt", type=click.Choice(choices), default=None,
            help=("Output format. Default: rich, framed on a terminal and plain text (no box "
                  "drawing) in a pipe; --format rich frames it in a pipe too."
                  if human == piped == "rich" else
                  f"Output format. Default: {human}." if human == piped else
                  f"Output format. Default: {human} on a terminal, {piped} when piped."))(f)

    return deco


def color_option(f: Any) -> Any:
    return click.option(
        "--color", type=click.Choice(("auto", "always", "never")), default="auto",
        show_default=True,
        help="Colour in rich output: auto = on a terminal unless NO_COLOR is set.")(f)


def pick_format(fmt: str | None, as_json: bool, human: str = "rich",
                choices: tuple[str, ...] = ("rich", "compact"), piped: str | None = None) -> str:
    if as_json:
        if fmt not in (None, "json"):
            raise click.UsageError(f"--json and --format {fmt} disagree; give one")
        return "json"
    if fmt:
        return fmt
    if sys.stdout.isatty():
        return human
    return _piped_default(choices, piped)


def make_console(color: str = "auto", stderr: bool = False) -> Any:
    """A rich console that honours ``--color`` and ``NO_COLOR``, and lets a broken pipe
    reach ``finish`` (rich's own handler would exit 1 whatever was found)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    kw: dict[str, Any] = {"stderr": stderr, "highlight": False}
    if color == "always":
        # An explicit --color always beats NO_COLOR (the flag is the later, narrower choice).
        kw.update(force_terminal=True, no_color=False)
    elif color == "never":
        kw.update(color_system=None, no_color=True)
    return _Console(**kw)


def _quiet_stdout() -> None:
    # Point stdout at /dev/null so that the interpreter's final flush cannot raise again.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def finish(render: Callable[[], None], code: int) -> NoReturn:
    """Write the output and exit with ``code``. A reader that went away (``| head``) ends the
    command quietly, with the same code: what was found does not change."""
    try:
        render()
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    raise SystemExit(code)


# ------------------------------------------------------------------------ the collection
def complete_file(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of file names for the ``[DB] ...`` arguments."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="file")]


def looks_like_collection(arg: str) -> bool:
    """An argument is a collection path when it names a file or ends like one."""
    from ..shards.manifest import is_sharded  # a folder of shards (--shards) is one too

    return arg.lower().endswith(COLLECTION_SUFFIXES) or Path(arg).is_file() or is_sharded(arg)


def default_collection(required: bool = True, fallback: Path | None = None) -> Path | None:
    """The configured collection (environment, then config file), else ``fallback``."""
    from .. import config

    value = config.default("collection")
    if value:
        return Path(value)
    if fallback is not None or not required:
        return fallback
    raise click.UsageError("give the collection DB, or set a default one: "
                           "sieve-lite config set collection PATH.db")


def split_db(args: tuple[str, ...], names: tuple[str, ...], command: str,
             optional: int = 0) -> tuple[Path, list[str]]:
    """Split ``[DB] A B...`` into the collection and the other arguments (``names`` of them,
    the last ``optional`` of which may be left out). DB may be left out when a default
    collection is configured; the first argument is DB when it names a file or ends in .db.
    More arguments than names are an unquoted multi-word value: say how to quote it."""
    need = len(names) - optional
    given = bool(args) and looks_like_collection(args[0])
    if given:
        db, rest = Path(args[0]), list(args[1:])
    else:
        configured = default_collection(required=False)
        if configured is None:
            if not args:
                default_collection()  # raises: give DB or set a default
            more = (f", and quote a {names[-1].lower()} that has spaces"
                    if len(args) > 1 else "")
            raise click.UsageError(
                f"{args[0]!r} is not a collection file and no default collection is set; "
                f"give DB first{more}: sieve-lite {command} DB {' '.join(names)}")
        db, rest = configured, list(args)
    if len(rest) < need:
        raise click.UsageError(f"missing {' '.join(names[len(rest):need])}: "
                               f"sieve-lite {command} [DB] {' '.join(names)}")
    if len(rest) > len(names):
        last = names[-1].lower()
        keep, joined = rest[: len(names) - 1], " ".join(rest[len(names) - 1:])
        shown = " ".join(shlex.quote(a) for a in [*([str(db)] if given else []), *keep,
                                                   joined])
        raise click.UsageError(f"the {last} is split over {len(rest) - len(names) + 1} "
                               f"arguments; quote the {last}: sieve-lite {command} {shown}")
    return db, rest


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)


class SkipPrinter:
    """For ``build`` and ``add``: print the first ``limit`` bad records as they come (none when
    ``quiet``), then, through ``finish``, how many more there were."""

    def __init__(self, quiet: bool, limit: int) -> None:
        self.quiet, self.limit, self.shown = quiet, limit, 0

    def __call__(self, err: Any) -> None:
        if not self.quiet and self.shown < self.limit:
            self.shown += 1
            # sys.stderr as it is now, not click's stream: while the build's progress bar is
            # live on a terminal, rich has replaced sys.stderr to print lines above the bar;
            # click's own stream wrote them into the bar's line.
            click.echo(f"skipped: {err}", file=sys.stderr)

    def finish(self, total: int) -> None:
        if not self.quiet and total > self.shown:
            click.echo(f"skipped: ... and {total - self.shown:,} more bad records not shown",
                       err=True)


# ------------------------------------------------------------------- sharded collections
def ray_option(f: Any) -> Any:
    """``--ray [ADDRESS|local]``: serve a sharded collection's shards from Ray actors."""
    return click.option(
        "--ray", "ray_address", is_flag=False, flag_value="auto", default=None,
        metavar="[ADDRESS|local]",
        help="Run one Ray actor per shard of a sharded collection (built with --shards): "
             "'local' starts a throwaway local cluster, 'auto' (the default value) joins this "
             "machine's cluster, else a cluster address. Needs sieve-lite[ray].")(f)


def open_collection(db: Path, ray_address: str | None = None) -> Any:
    """``sieve_lite.open(db)``, or the sharded collection on Ray actors with ``--ray``."""
    import sieve_lite

    if ray_address is None:
        return sieve_lite.open(db)
    from ..shards.ray import open_ray

    return open_ray(db, ray_address)
