"""``config``: show and set the defaults (collection, ranker, model, backbone)."""

from __future__ import annotations

import os

import click

from ._common import (
    EXIT_FOUND,
    color_option,
    finish,
    format_option,
    make_console,
    pick_format,
    print_json,
)

CONFIG_FORMATS = ("rich", "compact", "json")


def _show(fmt: str, color: str) -> None:
    from .. import config
    from ..output import versioned

    path = config.config_path()
    rows = config.settings(path)
    if fmt == "json":
        print_json(versioned("config", {"path": str(path), "exists": path.exists(),
                                        "settings": [s.to_dict() for s in rows]}))
        return
    where = {"env": "from {env}", "file": "from the config file", None: "not set"}
    if fmt == "compact":
        click.echo(f"# config file: {path}{'' if path.exists() else ' (not created yet)'}")
        for s in rows:
            value = s.value if s.value is not None else ""
            click.echo(f"{s.key} = {value}  # {where[s.source].format(env=s.env)}")
        return
    from rich.markup import escape
    from rich.table import Table

    console = make_console(color)
    console.print(f"[bold]config file[/bold] {escape(str(path))}"
                  + ("" if path.exists() else " [dim](not created yet)[/dim]"))
    table = Table(box=None)
    for col in ("setting", "value", "source", "environment variable"):
        table.add_column(col)
    for s in rows:
        table.add_row(f"[bold]{s.key}[/bold]", escape(s.value or "-"),
                      where[s.source].format(env="the environment"), s.env)
    console.print(table)


@click.group(invoke_without_command=True)
@format_option(CONFIG_FORMATS)
@color_option
@click.pass_context
def config(ctx: click.Context, fmt: str | None, as_json: bool, color: str) -> None:
    """Show the defaults and where each comes from; set or unset one.

    \b
    Settings, each also read from an environment variable (which wins over the file):
      collection  SIEVE_LITE_COLLECTION  the collection used when a command is given none
      ranker      SIEVE_LITE_RANKER      a ranker, as --ranker takes it (search, ask, eval, mcp)
      model       SIEVE_LITE_MODEL       the GGUF file of ask and eval, or a backbone's model
      backbone    SIEVE_LITE_BACKBONE    the OpenAI-compatible endpoint of ask and eval
    The file is config.toml in the user's config folder, or SIEVE_LITE_CONFIG.
    """
    if ctx.invoked_subcommand is None:
        fmt = pick_format(fmt, as_json, choices=CONFIG_FORMATS)
        finish(lambda: _show(fmt, color), EXIT_FOUND)


@config.command("set")
@click.argument("key")
@click.argument("value")
def set_(key: str, value: str) -> None:
    """Set KEY to VALUE in the config file (a collection or .gguf path is stored absolute)."""
    from .. import config as cfg

    stored = cfg.set_value(key, value)
    click.echo(f"{key} = {stored}  (in {cfg.config_path()})", err=True)
    env = cfg.KEYS[key].env
    if os.environ.get(env, "").strip():
        click.echo(f"note: {env} is set and wins over the file", err=True)


@config.command("unset")
@click.argument("key")
def unset(key: str) -> None:
    """Remove KEY from the config file."""
    from .. import config as cfg

    if cfg.unset_value(key):
        click.echo(f"{key} removed from {cfg.config_path()}", err=True)
    else:
        click.echo(f"note: {key} was not set in {cfg.config_path()}", err=True)


@config.command("path")
def path() -> None:
    """Print the config file's path (it may not exist yet)."""
    from .. import config as cfg

    click.echo(str(cfg.config_path()))

