"""Which renderer runs for which format: the plumbing between a command's result and stdout.

``rich`` is for people (cards and sections drawn by ``sieve_lite.terminal``; each rich call
site is one function here, ``rich_search`` / ``rich_fetch`` / ``rich_info``): framed on a
terminal, the same lines without box drawing in a pipe (the default there), framed anyway
when ``--format rich`` is given. ``compact`` is the text the agent and MCP clients read.
``json`` / ``jsonl`` / ``tsv`` / ``trec`` are for programs; their shapes live in
``sieve_lite.output`` and ``docs/output.md``.

Formats that have no room for notes (``tsv``, ``trec``) send them to stderr, so stdout holds
only the rows.
"""

from __future__ import annotations

from typing import Any

import click

from ..display import clean
from ._common import make_console, note, print_json, print_jsonl, print_lines

SEARCH_FORMATS = ("rich", "compact", "json", "jsonl", "tsv", "trec")
FETCH_FORMATS = ("rich", "compact", "json", "jsonl")
INFO_FORMATS = ("rich", "compact", "json", "jsonl", "tsv")


# ------------------------------------------------------------------------ rich call sites
def rich_search(res: Any, console: Any, words: Any = (), framed: bool | None = None) -> None:
    """Cards for people (``sieve_lite.terminal``): framed on a terminal, plain in a pipe,
    framed anyway when ``framed``."""
    from ..terminal import print_search

    print_search(res, console, words, boxed=framed)


def rich_fetch(res: Any, console: Any, words: Any = (), markup: str | None = None,
               framed: bool | None = None) -> None:
    """A section for people: rendered on a terminal, the plain text in a pipe."""
    from ..terminal import print_fetch

    print_fetch(res, console, words, markup, boxed=framed)


def rich_info(data: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    from ..display import for_rich

    table = Table(show_header=False, box=None)
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        table.add_row(f"[bold]{for_rich(key)}[/bold]",
                      for_rich("" if value is None else str(value)))
    console.print(table)


# ------------------------------------------------------------------------------- search
def _explain_lines(extra: dict[str, Any]) -> list[str]:
    lines = []
    if "explain" in extra:
        lines.append("query:")
        lines += [f"  {line}" for line in extra["explain"]]
    if "sql" in extra:
        lines.append("sql: " + extra["sql"]["sql"])
        lines.append("params: " + repr(extra["sql"]["params"]))
    return lines


def _search_notes(res: Any) -> None:
    if res.fallback:
        note(f"0 admitted: FALLBACK listing, ranked by {res.ranker} on the query's words; "
             "these documents do not satisfy the query")
    elif not res.results:
        note("0 admitted")
    for clause, n in res.clause_counts:
        note(f"clause {clause} admits {n}")
    for n in res.notes:
        note(n)


def search(res: Any, fmt: str, color: str, extra: dict[str, Any], collection: str,
           qid: str, run_tag: str | None, words: Any = (), framed: bool | None = None) -> None:
    from .. import output
    from ..search import render_compact

    if fmt == "json":
        print_json(output.search_object(res, collection, extra))
    elif fmt == "jsonl":
        print_jsonl(output.search_lines(res, collection, extra))
    elif fmt in ("tsv", "trec"):
        for line in _explain_lines(extra):
            click.echo(line, err=True)
        _search_notes(res)
        print_lines(output.search_tsv(res) if fmt == "tsv"
                    else output.search_trec(res, qid=qid, tag=run_tag))
    else:
        print_lines(_explain_lines(extra))
        if fmt == "compact":
            click.echo(clean(render_compact(res)))
        else:
            rich_search(res, make_console(color), words, framed)


def fetch(res: Any, fmt: str, color: str, collection: str, words: Any = (),
          markup: str | None = None, framed: bool | None = None) -> None:
    from .. import output

    if fmt == "json":
        print_json(output.fetch_object(res, collection))
    elif fmt == "jsonl":
        print_jsonl([output.fetch_object(res, collection)])
    elif fmt == "compact":
        click.echo(clean(res.render()))
    else:
        rich_fetch(res, make_console(color), words, markup, framed)


def info(data: dict[str, Any], fmt: str, color: str) -> None:
    from .. import output

    if fmt == "json":
        print_json(output.info_object(data))
    elif fmt == "jsonl":
        print_jsonl([output.info_object(data)])
    elif fmt == "tsv":
        print_lines(output.info_tsv(data))
    elif fmt == "compact":
        print_lines(line.replace("\t", ": ", 1) for line in output.info_tsv(data))
    else:
        rich_info(data, make_console(color))
