"""What every command shares: exit codes and JSON output. Command modules import this, never
the package ``__init__`` (which imports them), so the CLI has no import cycle."""

from __future__ import annotations

import json
from typing import Any

import click

# Exit codes scripts can rely on (documented in ``sieve-lite --help``).
EXIT_FOUND = 0     # results admitted / work done
EXIT_NOTHING = 1   # nothing admitted (a flagged fallback listing may still be shown)
EXIT_ERROR = 2     # a usage or query error: one line on stderr
EXIT_DAMAGED = 3   # a damaged collection or an internal error: one line on stderr


# The version of every --json output's shape; it goes up when a key changes meaning or goes.
JSON_FORMAT_VERSION = 1


def print_json(obj: Any) -> None:
    """One JSON document on stdout; an object gets ``format_version`` as its first key."""
    if isinstance(obj, dict):
        obj = {"format_version": JSON_FORMAT_VERSION, **obj}
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False))


class SkipPrinter:
    """For ``build`` and ``add``: print the first ``limit`` bad records as they come (none when
    ``quiet``), then, through ``finish``, how many more there were."""

    def __init__(self, quiet: bool, limit: int) -> None:
        self.quiet, self.limit, self.shown = quiet, limit, 0

    def __call__(self, err: Any) -> None:
        if not self.quiet and self.shown < self.limit:
            self.shown += 1
            click.echo(f"skipped: {err}", err=True)

    def finish(self, total: int) -> None:
        if not self.quiet and total > self.shown:
            click.echo(f"skipped: ... and {total - self.shown:,} more bad records not shown",
                       err=True)
