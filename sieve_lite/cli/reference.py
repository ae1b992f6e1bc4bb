"""The generated command-line reference, ``docs/cli.md``, and the examples of ``docs/output.md``.

``python -m sieve_lite.cli.reference --write`` rewrites both from the commands themselves:
``docs/cli.md`` from every command's ``--help`` (rendered at a fixed width, independent of the
terminal and of any configuration), and the output under each ``$ sieve-lite ...`` line of
``docs/output.md`` by running that line. Without ``--write`` it exits 1 and names the files
that are out of date (``tests/test_cli_docs.py`` runs the same check).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click

WIDTH = 100
ROOT = Path(__file__).resolve().parents[2]
CLI_MD = ROOT / "docs" / "cli.md"
OUTPUT_MD = ROOT / "docs" / "output.md"

PREAMBLE = """\
# sieve-lite command-line reference

<!-- Generated from the commands by `python -m sieve_lite.cli.reference --write`; do not edit
by hand. tests/test_cli_docs.py fails when it is out of date. -->

Every command prints its result on stdout and nothing else; progress, notes and errors go to
stderr. An error is one line (`error: ...`); a query error at a terminal adds the query with a
caret under the bad span. No command prints a traceback (`SIEVE_LITE_DEBUG=1` shows ours).

## Exit codes

| code | meaning |
|---|---|
| 0 | results admitted, or the work is done |
| 1 | nothing admitted (a fallback listing, when shown, is flagged), or no answer |
| 2 | a usage or query error; an unknown document or section; a missing file |
| 3 | a damaged collection, or an internal error |

`--no-fallback` hides the fallback listing. A file that is not a collection (another SQLite
database) is a usage error, 2; a collection with corrupt pages or a missing table is 3. A
reader that stops early (`sieve-lite search ... | head -1`) ends the command quietly, with the
code of what was found.

## Output formats

`--format` picks the output of `search` (`rich`, `compact`, `json`, `jsonl`, `tsv`, `trec`),
`fetch` (`rich`, `compact`, `json`, `jsonl`), `info` (`rich`, `compact`, `json`, `jsonl`,
`tsv`), `config` (`rich`, `compact`, `json`) and `ask` (`compact`, `json`, `jsonl`); `--json`
is short for `--format json`. Without `--format`, a terminal gets `rich` (cards drawn with
boxes) and a pipe gets `compact` (plain text, no box drawing). Every JSON object carries
`"format": 1` and a `"type"`; the shapes are in [output.md](output.md).

## Defaults: config file and environment

`sieve-lite config` shows the defaults and where each comes from; `sieve-lite config set KEY
VALUE` and `sieve-lite config unset KEY` change the config file (`config.toml` in the user's
config folder, e.g. `~/.config/sieve-lite/config.toml`; `SIEVE_LITE_CONFIG` names another).
An environment variable wins over the file, and an option on the command line wins over both.

| setting | environment variable | used by |
|---|---|---|
| `collection` | `SIEVE_LITE_COLLECTION` | `search`, `fetch`, `info`, `ask`, `mcp` without DB |
| `ranker` | `SIEVE_LITE_RANKER` | `search`, `ask`, `mcp` (a name `--ranker` takes) |
| `model` | `SIEVE_LITE_MODEL` | `ask` (a GGUF file, or the model name for a backbone) |
| `backbone` | `SIEVE_LITE_BACKBONE` | `ask` (an OpenAI-compatible endpoint URL) |

With a default collection, DB may be left out: the first argument is taken as DB when it names
an existing file or ends in `.db`, `.sqlite` or `.sqlite3`. A query (or section name) is one
argument: quote it. `sieve-lite search peps.db walrus operator` is refused with the command
to type instead (`quote the query: sieve-lite search peps.db 'walrus operator'`).

## Colour

`--color auto` (the default) colours rich output on a terminal unless `NO_COLOR` is set;
`--color always` colours it even in a pipe (and over `NO_COLOR`); `--color never` never does.

## Shell completion

Commands, options, choices and file names complete in bash, zsh and fish (click's completion):

```sh
# bash, in ~/.bashrc
eval "$(_SIEVE_LITE_COMPLETE=bash_source sieve-lite)"
# zsh, in ~/.zshrc
eval "$(_SIEVE_LITE_COMPLETE=zsh_source sieve-lite)"
# fish, in ~/.config/fish/completions/sieve-lite.fish
_SIEVE_LITE_COMPLETE=fish_source sieve-lite | source
```

## Commands
"""


def _walk(cmd: click.Command, parent: click.Context | None,
          name: str) -> Iterator[tuple[str, str]]:
    settings = dict(cmd.context_settings) if parent is None else {}
    ctx = click.Context(cmd, parent=parent, info_name=name, terminal_width=WIDTH,
                        max_content_width=WIDTH, **settings)
    yield ctx.command_path, cmd.get_help(ctx)
    if isinstance(cmd, click.Group):
        for sub in cmd.list_commands(ctx):
            child = cmd.get_command(ctx, sub)
            if child is not None and not child.hidden:
                yield from _walk(child, ctx, sub)


def render_cli_md() -> str:
    """docs/cli.md: the preamble, then every command's help."""
    from . import cli

    parts = [PREAMBLE]
    for path, text in _walk(cli, None, "sieve-lite"):
        parts.append(f"\n### `{path}`\n\n```text\n{text.rstrip()}\n```\n")
    return "".join(parts)


# ----------------------------------------------------------------------------- output.md
# A block's first line only; a server started in the background (``... &``) is not an example.
_EXAMPLE = re.compile(r"(```console\n\$ (sieve-lite [^\n]*[^&\n])\n)(.*?)(```)", re.S)


def run_example(command: str) -> str:
    """Run one documented command line from the repository root; its stdout."""
    argv = shlex.split(command)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIEVE_LITE_")}
    env.update(SIEVE_LITE_CONFIG=os.devnull, HF_HUB_OFFLINE="1", COLUMNS=str(WIDTH),
               NO_COLOR="1", PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, "-c", "from sieve_lite.cli import main; main()",
                           *argv[1:]], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{command}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def render_output_md(text: str) -> str:
    """docs/output.md with the output under every ``$ sieve-lite ...`` example re-run."""
    return _EXAMPLE.sub(lambda m: m.group(1) + run_example(m.group(2)) + m.group(4), text)


def examples(text: str) -> list[tuple[str, str]]:
    """(command, documented output) of every example."""
    return [(m.group(2), m.group(3)) for m in _EXAMPLE.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    write = "--write" in args
    stale = []
    current = CLI_MD.read_text(encoding="utf-8") if CLI_MD.exists() else ""
    fresh = render_cli_md()
    if current != fresh:
        stale.append(CLI_MD)
        if write:
            CLI_MD.write_text(fresh, encoding="utf-8")
    if OUTPUT_MD.exists():
        current = OUTPUT_MD.read_text(encoding="utf-8")
        fresh = render_output_md(current)
        if current != fresh:
            stale.append(OUTPUT_MD)
            if write:
                OUTPUT_MD.write_text(fresh, encoding="utf-8")
    for p in stale:
        print(f"{'rewrote' if write else 'out of date'}: {p.relative_to(ROOT)}",
              file=sys.stderr)
    return 0 if write or not stale else 1


if __name__ == "__main__":
    raise SystemExit(main())
