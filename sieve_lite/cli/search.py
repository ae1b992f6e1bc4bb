"""``search`` and ``fetch``: run a BQL query and show cards; read one section.

``search [DB] QUERY``: exit 0 when the query admitted documents; 1 when it admitted none (the
zero-hit fallback listing may still be shown, flagged as one; ``--no-fallback`` hides it);
2 on a usage or query error; 3 on a damaged collection.

``fetch [DB] DOC [SECTION]``: DOC is a document id. A rank ("2") only means something inside a
session that remembers the last listing (the library and the agent); the command line has no
session, so a number is looked up as an id and, when no document has it, refused with a
message saying to give the id from a card. Without SECTION, fetch prints the document's
outline: every section name with its length, the names to fetch.
"""

from __future__ import annotations

import click

from ..options import MAX_K, RANKERS
from . import _render
from ._common import (
    EXIT_CODES_HELP,
    EXIT_FOUND,
    EXIT_NOTHING,
    color_option,
    complete_file,
    finish,
    format_option,
    open_collection,
    pick_format,
    ray_option,
    split_db,
)
from ._spinner import spinner


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("args", nargs=-1, metavar="[DB] QUERY", shell_complete=complete_file)
@click.option("-k", "k", type=click.IntRange(1, MAX_K), default=5, show_default=True,
              help="How many results (cards) to show.")
@click.option("--ranker", type=click.Choice(RANKERS), default=None,
              help="Order of the admitted set (hybrid = RRF of bm25 and dense). Default: "
                   "SIEVE_LITE_RANKER, the config file, else hybrid.")
@click.option("--no-fallback", "--strict", "no_fallback", is_flag=True,
              help="When the query admits nothing, show nothing (no fallback listing).")
@format_option(_render.SEARCH_FORMATS, piped="rich")
@click.option("--compact", is_flag=True, hidden=True, help="Short for --format compact.")
@color_option
@click.option("--explain", "show_explain", is_flag=True,
              help="Show the query read back, clause by clause.")
@click.option("--sql", "show_sql", is_flag=True, help="Show the compiled SQL and its parameters.")
@click.option("--qid", default="1", show_default=True, help="The query id of --format trec.")
@click.option("--run-tag", default=None,
              help="The run tag of --format trec. Default: sieve-lite.RANKER.")
@ray_option
def search(args: tuple[str, ...], k: int, ranker: str | None, no_fallback: bool,
           fmt: str | None, as_json: bool, compact: bool, color: str, show_explain: bool,
           show_sql: bool, qid: str, run_tag: str | None, ray_address: str | None) -> None:
    """Run the BQL QUERY on the collection DB and show the top K as cards.

    Quote the query: it is one argument (sieve-lite search peps.db 'walrus operator').
    DB may be left out when a default collection is set (sieve-lite config set collection
    PATH, or SIEVE_LITE_COLLECTION); the first argument is DB when it names a file or ends
    in .db. A query that admits nothing exits 1; its fallback listing (the best matches for
    its words) is shown flagged, unless --no-fallback.
    """
    from .. import bql, config
    from ..terminal import query_words

    db, (query,) = split_db(args, ("QUERY",), "search")
    fmt = fmt or ("compact" if compact else None)
    framed = True if fmt == "rich" else None  # asked for: framed even in a pipe
    fmt = pick_format(fmt, as_json, choices=_render.SEARCH_FORMATS, piped="rich")
    ranker = ranker or config.default("ranker") or "hybrid"
    with spinner(f"searching {db.name}"), open_collection(db, ray_address) as coll:
        extra: dict = {}
        if show_explain or show_sql:
            node = bql.parse(query, coll.fields)
            if show_explain:
                extra["explain"] = bql.explain(node, coll.fields)
            if show_sql:
                c = bql.compile_query(node, coll.fields)
                extra["sql"] = {"sql": c.sql, "params": list(c.params)}
        # coll.search reads one snapshot of the file (an update may commit meanwhile)
        res = coll.search(query, k=k, ranker=ranker, strict=no_fallback)
        words = query_words(query, coll.fields)
    code = EXIT_FOUND if res.total else EXIT_NOTHING
    finish(lambda: _render.search(res, fmt, color, extra, str(db), qid, run_tag, words, framed),
           code)


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("args", nargs=-1, metavar="[DB] DOC [SECTION]",
                shell_complete=complete_file)
@format_option(_render.FETCH_FORMATS, piped="rich")
@color_option
@click.option("--highlight", metavar="QUERY", default=None,
              help="Highlight the positive words of this BQL query (the search you came from).")
def fetch(args: tuple[str, ...], fmt: str | None, as_json: bool, color: str,
          highlight: str | None) -> None:
    """Print one SECTION of document DOC (its id); without SECTION, its outline.

    Quote a section name that has spaces. DB may be left out when a default collection is
    set (see search).
    """
    import sieve_lite

    from ..markup import markup_of_source
    from ..terminal import query_words

    db, rest = split_db(args, ("DOC", "SECTION"), "fetch", optional=1)
    framed = True if fmt == "rich" else None
    fmt = pick_format(fmt, as_json, choices=_render.FETCH_FORMATS, piped="rich")
    with spinner(f"reading {db.name}"), sieve_lite.open(db) as coll:
        res = coll.fetch(rest[0], rest[1] if len(rest) > 1 else None)
        markup = markup_of_source(coll.meta.get("source", ""))
        words = query_words(highlight, coll.fields) if highlight else []
    finish(lambda: _render.fetch(res, fmt, color, str(db), words, markup, framed), EXIT_FOUND)
