"""sieve-lite collections as a Model Context Protocol server (the official ``mcp`` SDK, 2.x).

``build_server(paths)`` returns an ``mcp.server.mcpserver.MCPServer`` with four tools:

* ``search(query, k, ranker, collection)``: a BQL query; the text content is the compact cards
  the agent reads, the structured content the ``search`` object of ``docs/output.md``;
* ``fetch(doc, section, collection)``: one section (or, without a section, the outline);
* ``manual(collection)``: the manual sieve-lite's own agent reads, generated from that
  collection's real fields and verified examples (``sieve_lite.agent.manual``);
* ``collections()``: what is served.

A request that cannot be answered (a BQL error, an unknown document or section, an unknown
collection) comes back as a tool result with ``isError`` set, the message (with the column and
a caret line for a query error) as text and an ``error`` object as structured content: the
model can read it and try again, and the server goes on. Anything unexpected is caught by the
SDK, logged on stderr and reported as a failed call; the server goes on then too.

Concurrency. ``search`` and ``fetch`` run through ``CollectionPool.run``: on the event loop
when the server is idle (a thread hand-off cost more than the search on a loaded machine),
on a worker thread when another call is in flight; ``manual`` and ``collections`` run on the
SDK's worker threads. ``sieve_lite.pool.CollectionPool`` (shared with ``sieve-lite serve``)
lends each call a read-only ``Collection`` of its own. Each call sees no listing of another
call's: ``fetch`` takes document ids, never ranks.

Over HTTP the server is stateless with JSON answers (no session, no SSE stream per call), so
any process behind a load balancer answers any call; its socket has TCP_NODELAY (without it
every call waited ~40 ms for the client's delayed ACK: issue 23).

Every collection is opened read-only through ``sieve_lite.open`` (the defensive open); a file
that cannot be opened stops the server before it starts, with one line.
"""

from typing import Annotated, Any, Literal

from .errors import EnvironmentProblem, QueryError, SieveError
from .output import error_object, fetch_object, search_object, versioned
from .pool import CollectionPool
from .version import __version__

MAX_MCP_K = 50


# ------------------------------------------------------------------------------------ tools
def _error_result(err: SieveError) -> Any:
    from mcp.types import CallToolResult, TextContent

    text = str(err)
    if isinstance(err, QueryError) and err.column:
        if "column" not in text:
            text = f"at column {err.column}: {text}"
        text += "\n" + err.highlight()
    return CallToolResult(content=[TextContent(text=text)],
                          structured_content=error_object(err), is_error=True)


def _result(text: str, structured: dict[str, Any]) -> Any:
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(text=text)], structured_content=structured)


def _fields_line(pool: CollectionPool) -> str:
    return "; ".join(f"{e.name} ({e.info['documents']:,} documents): {', '.join(e.fields)}"
                     for e in pool.entries.values())


def build_server(pool: CollectionPool) -> Any:
    """An ``MCPServer`` over the pool's collections (the caller closes the pool)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, ToolAnnotations
    from pydantic import Field

    from .options import RANKERS
    from .search import render_compact

    Ranker = Literal[tuple(RANKERS)]  # type: ignore[valid-type]  # the rankers there are
    names = list(pool.entries)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                idempotent_hint=True, open_world_hint=False)
    server: Any = MCPServer(
        name="sieve-lite", version=__version__, log_level="WARNING",
        instructions=(
            "sieve-lite searches local document collections offline. Served: "
            f"{_fields_line(pool)}. Call manual once to learn the query language (BQL) and "
            "this collection's fields, then search (cards: id, title, section names, a "
            "snippet), then fetch the one section that holds the fact."))
    collection_help = (f"Which collection: one of {', '.join(names)} (default {names[0]}).")
    Collection = Annotated[str | None, Field(description=collection_help)]

    async def search(
        query: Annotated[str, Field(description=(
            "A BQL query. word, \"exact phrase\", prefix*, x[field], x[field1,field2], "
            "date[2018..2020], A AND B (or A B), A OR B, NOT A, (groups); operators in "
            "capitals. Fields: " + _fields_line(pool) + "."))],
        k: Annotated[int, Field(ge=1, le=MAX_MCP_K, description="How many cards to show.")]
        = 5,
        ranker: Annotated[Ranker | None, Field(description=(
            "Order of the admitted documents: bm25 (words, a document scored by its best "
            "passage), bm25-doc (words over the whole document), dense (embeddings), hybrid "
            "(bm25 and dense fused). Default: hybrid when the collection has embeddings."))]
        = None,
        collection: Collection = None,
    ) -> CallToolResult:
        """Search a collection with a Boolean query (BQL) and get compact result cards.

        The query decides which documents are admitted; the ranker orders all of them and the
        top k become cards: rank, id, title, date, authors, the fields the query matched, every
        section name and a short snippet naming its section. When the query admits nothing,
        the best matches for its words are shown instead, marked FALLBACK (they do not satisfy
        the query), with how many documents each AND clause admits alone: loosen the clause
        that admits 0. A malformed query returns an error with the column at fault."""
        def run() -> CallToolResult:
            try:
                name, res = pool.search(query, k=k, ranker=ranker, collection=collection)
            except SieveError as e:
                return _error_result(e)
            return _result(render_compact(res), search_object(res, collection=name))

        return await pool.run(run)

    async def fetch(
        doc: Annotated[str, Field(description="The document id, as a card shows it.")],
        section: Annotated[str | None, Field(description=(
            "A section name as the card lists it (case-insensitive; a unique prefix will do), "
            "'(intro)' or 'infobox'. Omit it to get the document's outline: every section "
            "with its length."))] = None,
        collection: Collection = None,
    ) -> CallToolResult:
        """Read one section of a document (cut at 12,000 words, with a note), or without a
        section its outline. An unknown document or section returns an error listing what
        there is."""
        def run() -> CallToolResult:
            try:
                name, res = pool.fetch(doc, section, collection=collection)
            except SieveError as e:
                return _error_result(e)
            return _result(res.render(), fetch_object(res, collection=name))

        return await pool.run(run)

    def manual(collection: Collection = None) -> CallToolResult:
        """The query-language manual for one collection: its real fields, examples verified to
        work on it, what a card shows and how to fetch. Read it before the first search."""
        try:
            entry, text = pool.manual(collection)
        except SieveError as e:
            return _error_result(e)
        return _result(text, versioned("manual", {"collection": entry.name,
                                                  "fields": list(entry.fields),
                                                  "manual": text}))

    def collections() -> CallToolResult:
        """The collections this server holds: name, documents, sections, fields, whether it
        has embeddings, and which one is the default."""
        listing = pool.describe()
        lines = [f"{c['name']}{' (default)' if c['default'] else ''}: {c['documents']:,} "
                 f"documents, {c['sections']:,} sections; fields {', '.join(c['fields'])}; "
                 f"ranker {c['default_ranker']}" for c in listing]
        return _result("\n".join(lines), versioned("collections", {"collections": listing}))

    for fn, title in ((search, "Search a collection (BQL)"), (fetch, "Read one section"),
                      (manual, "The query manual of a collection"),
                      (collections, "The served collections")):
        server.add_tool(fn, title=title, annotations=read_only)
    return server


# ------------------------------------------------------------------------------ transports
def serve_stdio(server: Any) -> None:
    """Serve over stdin/stdout until the client closes them."""
    server.run("stdio")


def serve_http(server: Any, port: int = 8765, host: str = "127.0.0.1",
               on_ready: Any = None) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted. ``port`` 0 takes
    a free port; ``on_ready(url)`` is called once the server accepts connections."""
    import anyio
    import uvicorn

    from .listen import bind

    # Bind here rather than in uvicorn: a taken port is then one clear error, not uvicorn's
    # log line and exit, and port 0 tells us the port it got. ``bind`` sets TCP_NODELAY:
    # without it every call waited ~40 ms for the client's delayed ACK (issue 23).
    sock = bind(host, port)
    url = f"http://{host}:{sock.getsockname()[1]}/mcp"
    # Stateless with JSON answers: no session to set up or keep, no SSE stream per call, and
    # any process behind a load balancer can answer any call.
    app = server.streamable_http_app(host=host, stateless_http=True, json_response=True)
    userver = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                            lifespan="on"))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(userver.serve, [sock])
            while not userver.started and not userver.should_exit:
                await anyio.sleep(0.02)
            if userver.started and on_ready is not None:
                on_ready(url)

    import importlib.util

    # uvloop (installed with uvicorn's extras) when there: less CPU per call than asyncio's.
    uvloop = importlib.util.find_spec("uvloop") is not None
    try:
        anyio.run(main, backend_options={"use_uvloop": uvloop})
    except KeyboardInterrupt:
        # uvicorn has already shut down gracefully and re-raised the signal: Ctrl-C is how
        # an HTTP server is meant to stop, so it is a normal end.
        pass
    finally:
        sock.close()


def mcp_available() -> None:
    """Raise ``EnvironmentProblem`` unless the ``mcp`` SDK is installed."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise EnvironmentProblem("the MCP server needs the 'mcp' package: pip install "
                                 "'sieve-lite[mcp]' (or 'mcp>=2.3,<3')") from None


__all__ = ["CollectionPool", "build_server", "mcp_available", "serve_http", "serve_stdio"]
