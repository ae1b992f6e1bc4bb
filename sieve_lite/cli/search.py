"""``search`` and ``fetch``: run a BQL query and show cards; read one section.

``search DB QUERY``: exit 0 when it lists results (a zero-hit fallback lists results too, and
says so), 1 when it lists none, 2 on an error.

``fetch DB DOC [SECTION]``: DOC is a document id. A rank ("2") only means something inside a
session that remembers the last listing (the library and the agent); the command line has no
session, so a number is looked up as an id and, when no document has it, refused with a
message saying to give the id from a card. Without SECTION, fetch prints the document's
outline: every section name with its length, the names to fetch.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..rank import RANKERS
from ..search import MAX_K
from ._common import EXIT_FOUND, EXIT_NOTHING, print_json


@click.command()
@click.argument("db", type=click.Path(path_type=Path))
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, MAX_K), default=5, show_default=True,
              help="How many results (cards) to show.")
@click.option("--ranker", type=click.Choice(RANKERS), default="hybrid", show_default=True,
              help="Order of the admitted set (hybrid = RRF of bm25 and dense).")
@click.option("--strict", is_flag=True, help="No zero-hit fallback: an empty selection is empty.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.option("--compact", is_flag=True, help="The agent's compact text instead of rich cards.")
@click.option("--explain", "show_explain", is_flag=True,
              help="Print the query read back, clause by clause.")
@click.option("--sql", "show_sql", is_flag=True, help="Print the compiled SQL and its parameters.")
def search(db: Path, query: str, k: int, ranker: str, strict: bool, as_json: bool,
           compact: bool, show_explain: bool, show_sql: bool) -> None:
    """Run the BQL QUERY on the collection DB and show the top K as cards."""
    import sieve_lite

    from .. import bql
    from ..search import render_compact
    from ..search import search as run_search
    from ..terminal import print_search, query_words

    with sieve_lite.open(db) as coll:
        words = query_words(query, coll.fields)
        extra: dict = {}
        if show_explain or show_sql:
            node = bql.parse(query, coll.fields)
            if show_explain:
                extra["explain"] = bql.explain(node, coll.fields)
            if show_sql:
                c = bql.compile_query(node, coll.fields)
                extra["sql"] = {"sql": c.sql, "params": list(c.params)}
        res = run_search(coll, query, k=k, ranker=ranker, strict=strict)
    if as_json:
        print_json({**res.to_dict(), **extra})
    else:
        if "explain" in extra:
            click.echo("query:")
            for line in extra["explain"]:
                click.echo(f"  {line}")
        if "sql" in extra:
            click.echo("sql: " + extra["sql"]["sql"])
            click.echo("params: " + repr(extra["sql"]["params"]))
        if compact:
            click.echo(render_compact(res))
        else:
            from rich.console import Console

            print_search(res, Console(highlight=False), words)
    raise SystemExit(EXIT_FOUND if res.results else EXIT_NOTHING)


@click.command()
@click.argument("db", type=click.Path(path_type=Path))
@click.argument("doc")
@click.argument("section", required=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.option("--highlight", metavar="QUERY", default=None,
              help="Highlight the positive words of this BQL query (the search you came from).")
def fetch(db: Path, doc: str, section: str | None, as_json: bool, highlight: str | None) -> None:
    """Print one SECTION of document DOC (its id); without SECTION, its outline."""
    import sieve_lite

    from ..markup import markup_of_source
    from ..terminal import print_fetch, query_words

    with sieve_lite.open(db) as coll:
        res = coll.fetch(doc, section)
        markup = markup_of_source(coll.meta.get("source", ""))
        words = query_words(highlight, coll.fields) if highlight else []
    if as_json:
        print_json(res.to_dict())
    else:
        from rich.console import Console

        print_fetch(res, Console(highlight=False), words, markup)

