"""Server-rendered pages for people, each with its JSON twin.

Every page works with JavaScript off: searches are GET forms, everything else is a link
(``static/app.js`` only adds the as-you-type query check and the keyboard). Every page has
a JSON twin (``?format=json`` or ``Accept: application/json``) holding the CLI's objects
(``sieve_lite.output``): ``collections``, ``search``, ``fetch``, ``check`` and ``error``.

URLs (document ids and section names travel as query parameters, so any text is a URL):

* ``/``: the collections, and a box searching all of them;
* ``/c/NAME?q=QUERY&k=K&ranker=R``: one collection, its search box and result cards;
* ``/search?q=QUERY``: every collection at once, each card naming its collection;
* ``/c/NAME/doc?id=DOC``: a document's outline; ``&section=S`` one section (``&q=`` marks the
  query's words, ``&cite=SPAN`` marks a cited span);
* ``/c/NAME/check?q=QUERY``: the query checked without running it (JSON only);
* ``/ask``, ``/runs/...``: the ask runs (``runs.py``).

Text from collections goes through ``html.marked`` (cleaned, escaped, query words in
``<mark>``); Jinja2 autoescapes everything else. Error pages say what was wrong in fixed
words (and, for a query, the column), never echoing the request.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import CollectionError, QueryError, SectionError, SieveError
from ..options import MAX_K, RANKERS
from ..output import error_object, fetch_object, search_object, versioned
from ..terminal import WordMatch, one_line, query_words
from . import runs
from .html import marked, safe_url
from .negotiate import error_response, json_response, status_of, wants_json
from .views import (
    HERE,
    PAGE_K,
    card_view,
    coll_path,
    error_page,
    error_view,
    link,
    render,
)

PAGE_MAX_K = 100     # a page shows at most this many cards (the JSON API goes to MAX_K)
MAX_QUERY = 2000     # characters of a query a page accepts


# ------------------------------------------------------------------------------ limits
@contextmanager
def deadline(coll: Any, seconds: float) -> Iterator[None]:
    """Interrupt ``coll``'s SQLite statements once ``seconds`` have passed (a slow query
    must not hold a worker): SQLite calls the handler every 10k VM steps."""
    end = time.monotonic() + seconds

    def over() -> bool:
        return time.monotonic() > end

    coll.conn.set_progress_handler(over, 10_000)
    try:
        yield
    except Exception as e:  # apsw.InterruptError, raised inside the statement
        if type(e).__name__ == "InterruptError":
            raise QueryError(f"the query ran over its time limit ({seconds:g} s)") from None
        raise
    finally:
        coll.conn.set_progress_handler(None)


def _int(value: str | None, default: int, lo: int, hi: int) -> int:
    try:
        n = int(value) if value not in (None, "") else default
    except ValueError:
        raise QueryError(f"k must be a whole number from {lo} to {hi}") from None
    if not lo <= n <= hi:
        raise QueryError(f"k must be a whole number from {lo} to {hi}")
    return n


def drop_links(collection_href: str, counts: list[tuple[str, int]], k: Any,
               ranker: Any) -> list[dict[str, Any]]:
    """Each top-level clause with its count and the query without it."""
    clauses = [c for c, _ in counts]
    out = []
    for i, (clause, n) in enumerate(counts):
        rest = " AND ".join(c for j, c in enumerate(clauses) if j != i)
        out.append({"clause": clause, "count": n,
                    "drop": link(collection_href, q=rest, k=k, ranker=ranker)
                    if rest and len(clauses) > 1 else None})
    return out


# ------------------------------------------------------------------------------- pages
def routes(state: Any) -> list[Any]:
    pool = state.pool
    seconds = state.config.query_seconds
    summaries: dict[str, dict[str, Any]] = {}

    def summary(entry: Any) -> dict[str, Any]:
        """A collection as Home shows it; its dates are read once."""
        if entry.name not in summaries:
            from ..store import ranking

            with pool.borrow(entry.name) as (_, coll):
                ds = [(a, b) for _, a, b in ranking.document_dates(coll.conn)
                      if a is not None and b is not None]
            info = entry.info

            def day(n: int) -> str:
                s = str(n)
                return f"{s[:4]}-{s[4:6]}-{s[6:8]}"

            summaries[entry.name] = {
                "name": entry.name, "href": coll_path(entry.name),
                "title": one_line(info.get("name") or entry.name),
                "description": one_line(info.get("description")),
                "documents": info["documents"], "sections": info["sections"],
                "size_mb": f"{info.get('size_bytes', 0) / 1e6:.1f}",
                "fields": list(entry.fields),
                "dates": (day(min(a for a, _ in ds)), day(max(b for _, b in ds))) if ds
                else None,
                "built": one_line(str(info.get("build_time") or ""))[:10],
                "embeddings": entry.has_vectors,
            }
        return summaries[entry.name]

    def home(request: Request) -> Response:
        if wants_json(request):
            return json_response(versioned("collections", {"collections": pool.describe()}))
        return page("home.html", collections=[summary(e) for e in pool.entries.values()],
                      nav="home", query="", k=PAGE_K, ranker="")

    def run_search(name: str, query: str, k: int, ranker: str | None) -> tuple[str, Any]:
        with pool.borrow(name) as (entry, coll):
            rk = pool.ranker_for(entry, ranker)
            with deadline(coll, seconds):
                if rk in ("dense", "hybrid") and entry.has_vectors:
                    with pool._embed_lock:
                        return entry.name, coll.search(query, k=k, ranker=rk)
                return entry.name, coll.search(query, k=k, ranker=rk)

    def params(request: Request) -> tuple[str, str | None, str | None]:
        qp = request.query_params
        query = qp.get("q", "")
        ranker = qp.get("ranker") or None
        if len(query) > MAX_QUERY:
            raise QueryError(f"the query is longer than {MAX_QUERY} characters")
        if ranker is not None and ranker not in RANKERS:
            raise QueryError(f"unknown ranker; choose one of {', '.join(RANKERS)}")
        return query, qp.get("k"), ranker

    def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return render(name, status=status, names=list(pool.entries), **ctx)

    def collection(request: Request) -> Response:
        return collection_view(request, request.path_params["name"])

    def collection_view(request: Request, name: str) -> Response:
        as_json = wants_json(request)
        try:
            entry = pool.entry(name)
        except SieveError:
            return error_page(NOT_FOUND["collection"], as_json)
        href = coll_path(entry.name)
        ctx: dict[str, Any] = {"nav": "search", "coll": summary(entry), "query": "",
                               "k": PAGE_K, "ranker": "", "result": None, "error": None,
                               "action": href}
        try:
            query, k, ranker = read_form(request, ctx, as_json)
            if not query.strip():
                return page("collection.html", **ctx)
            cname, res = run_search(entry.name, query, k, ranker)
        except SieveError as e:
            if as_json:
                return error_response(e)
            ctx["error"] = error_view(e)
            return page("collection.html", status=status_of(e), **ctx)
        if as_json:
            return json_response(search_object(res, cname))
        ctx["result"] = result_view(res, cname, query, entry.fields, href, k, ranker)
        return page("collection.html", **ctx)

    def read_form(request: Request, ctx: dict[str, Any], as_json: bool
                  ) -> tuple[str, int, str | None]:
        """A search form's query, k and ranker, recorded in ``ctx`` for the page; a JSON
        twin asked without a query is a ``QueryError`` (a page shows the empty form)."""
        query, k_text, ranker = params(request)
        ctx.update(query=query, ranker=ranker or "")
        k = ctx["k"] = _int(k_text, PAGE_K, 1, MAX_K if as_json else PAGE_MAX_K)
        if not query.strip() and as_json:
            raise QueryError("give a query: ?q=QUERY")
        return query, k, ranker

    def result_view(res: Any, cname: str, query: str, fields: Any, href: str, k: int,
                    ranker: str | None) -> dict[str, Any]:
        match = WordMatch(query_words(query, fields))
        return {"total": res.total, "ranker": res.ranker, "fallback": res.fallback,
                "fallback_reason": res.fallback_reason, "notes": [one_line(n) for n in
                                                                   res.notes],
                "clauses": drop_links(href, res.clause_counts, k, ranker)
                if res.total == 0 else [],
                "cards": [card_view(h.card, cname, query, match, res.fallback)
                          for h in res.results]}

    def search_all(request: Request) -> Response:
        chosen = request.query_params.get("c")
        if chosen and chosen != "all":
            return collection_view(request, chosen)
        as_json = wants_json(request)
        ctx: dict[str, Any] = {"nav": "search", "query": "", "k": PAGE_K, "ranker": "",
                               "groups": [], "error": None}
        try:
            query, k, ranker = read_form(request, ctx, as_json)
            if not query.strip():
                return page("search_all.html", **ctx)
            found = [run_search(e.name, query, k, ranker) for e in pool.entries.values()]
        except SieveError as e:
            if as_json:
                return error_response(e)
            ctx["error"] = error_view(e)
            return page("search_all.html", status=status_of(e), **ctx)
        if as_json:
            return json_response(versioned("search-all", {
                "query": query, "searches": [search_object(r, n) for n, r in found]}))
        for cname, res in found:
            entry = pool.entry(cname)
            ctx["groups"].append({"coll": summary(entry),
                                  "result": result_view(res, cname, query, entry.fields,
                                                        coll_path(cname), k, ranker)})
        return page("search_all.html", **ctx)

    def document(request: Request) -> Response:
        name = request.path_params["name"]
        qp = request.query_params
        as_json = wants_json(request)
        doc, section = qp.get("id", ""), qp.get("section")
        query, cite = qp.get("q", "")[:MAX_QUERY], qp.get("cite", "")[:MAX_QUERY]
        try:
            entry = pool.entry(name)
        except SieveError:
            return error_page(NOT_FOUND["collection"], as_json)
        try:
            if not doc:
                raise SectionError("give a document: ?id=DOC")
            with pool.borrow(entry.name) as (_, coll):
                with deadline(coll, seconds):
                    if coll.doc_rowid(doc) is None:
                        return error_page(NOT_FOUND["document"], as_json)
                    res = coll.fetch(doc, section if section else None)
                    url = safe_url(reads_url(coll, res.id))
        except SectionError:
            return error_page(NOT_FOUND["section"], as_json)
        except SieveError as e:
            return error_page(e, as_json)
        if as_json:
            obj = fetch_object(res, entry.name)
            if res.section is None:
                obj["outline"] = [{"name": o.name, "tokens": o.tokens,
                                   "first_words": o.first_words} for o in res.outline]
            return json_response(obj)
        from .html import marked_span

        match = WordMatch(query_words(query, entry.fields)) if query else WordMatch()
        base = coll_path(entry.name) + "/doc"
        ctx = {"nav": "search", "coll": summary(entry), "query": query, "k": PAGE_K,
               "ranker": "", "action": coll_path(entry.name),
               "doc": {"id": one_line(res.id), "title": marked(res.title, match, line=True),
                       "href": link(base, id=res.id, q=query), "url": url},
               "section": None, "outline": None}
        if res.section is None:
            ctx["outline"] = [{"name": marked(o.name, match, line=True), "tokens": o.tokens,
                               "first": marked(o.first_words, match, line=True),
                               "href": link(base, id=res.id, section=o.name, q=query)}
                              for o in res.outline]
        else:
            i = res.sections.index(res.section) if res.section in res.sections else -1
            nearby = {"prev": res.sections[i - 1] if i > 0 else None,
                      "next": res.sections[i + 1] if 0 <= i < len(res.sections) - 1 else None}
            ctx["section"] = {
                "name": marked(res.section, match, line=True),
                "text": marked_span(res.text, cite, match) if cite else marked(res.text, match),
                "note": one_line(res.note), "tokens": res.tokens,
                **{k: ({"name": one_line(v), "href": link(base, id=res.id, section=v,
                                                         q=query)} if v else None)
                   for k, v in nearby.items()}}
        return page("document.html", **ctx)

    def check(request: Request) -> Response:
        """The query parsed (not run) against the chosen collection's fields (``c``; all of
        them by default): the as-you-type check. JSON only."""
        from ..bql import parse

        chosen = request.query_params.get("c") or "all"
        query = request.query_params.get("q", "")
        try:
            entries = (list(pool.entries.values()) if chosen == "all"
                       else [pool.entry(chosen)])
            if len(query) > MAX_QUERY:
                raise QueryError(f"the query is longer than {MAX_QUERY} characters")
            if query.strip():
                for entry in entries:
                    parse(query, tuple(entry.fields))
        except SieveError as e:
            return json_response(versioned("check", {"ok": False,
                                                     "error": error_object(e)["error"]}))
        return json_response(versioned("check", {"ok": True, "error": None}))

    return [Route("/", home), Route("/search", search_all),
            Route("/c/{name}", collection), Route("/c/{name}/doc", document),
            Route("/check", check),
            *runs.routes(state),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static")]


def reads_url(coll: Any, doc_id: str) -> str | None:
    """The document's source URL (the only link a page makes from collection data)."""
    from ..store import reads

    row = reads.document_row(coll.conn, doc_id)
    if row is None:
        return None
    _, url, _ = reads.document_details(coll.conn, row[0])
    return url


NOT_FOUND = {"collection": CollectionError("no such collection is served here"),
             "document": SectionError("no such document in this collection"),
             "section": SectionError("no such section in this document (its outline lists "
                                     "them)")}


__all__ = ["deadline", "routes"]
