"""The JSON API for agents: ``POST /retrieve`` (Search-R1's batch contract), ``POST /search``
and ``POST /fetch`` (the CLI's JSON shapes). Shapes: ``docs/output.md`` ("The server's API").

``/retrieve`` takes ``{"queries": [...], "topk": k, "return_scores": true}`` (plus optional
``ranker``, ``strict`` and ``collection``) and answers
``{"result": [[{"document": {"id", "contents"}, "score", ...}, ...], ...]}``, one list per
query in order, so a Search-R1 or verl client reads it unchanged. A query that cannot run gets
an empty list and an ``errors`` entry ``{"index", "message"}``; the rest of the batch is
answered. At most ``ServeConfig.max_batch`` queries a call (413 beyond).

A batch runs on worker threads, never on the event loop: for dense and hybrid its queries
are embedded in one pass (``CollectionPool.embed_batch``), then it is split into at most
``connections`` parts, each searched on its own read-only connection. Every statement has the
``query_seconds`` budget (``store.connect``).
"""

from __future__ import annotations

import json
import math
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import SieveError
from ..options import MAX_K, RANKERS
from ..output import dumps, error_object, fetch_object, search_object, versioned
from .negotiate import error_response, json_response
from .security import BodyTooLarge

RETRIEVE_TOPK = 3  # Search-R1's retrieval server default
SEARCH_K = 5  # the CLI's default
MIN_PART = 8  # queries per thread at least: smaller parts cost more in hand-offs than they save


class RequestError(SieveError):
    """A request the API cannot take as sent; ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _refuse(err: RequestError) -> Response:
    return json_response(error_object(err), err.status)


async def _read_object(request: Request) -> dict[str, Any]:
    """The request body as a JSON object, or ``RequestError`` (413 over the body bound)."""
    try:
        raw = await request.body()
    except BodyTooLarge as e:
        raise RequestError(str(e), 413) from None
    try:
        data = json.loads(raw)
    except ValueError:
        raise RequestError("the request body must be a JSON object "
                           "(Content-Type: application/json)") from None
    if not isinstance(data, dict):
        raise RequestError("the request body must be a JSON object, not "
                           f"{type(data).__name__}")
    return data


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any,
         what: str) -> Any:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RequestError(f"{key!r} must be {what}")
    return value


def _k(data: dict[str, Any], key: str, default: int) -> int:
    k = _get(data, key, int, default, f"a whole number from 1 to {MAX_K}")
    if not 1 <= k <= MAX_K:
        raise RequestError(f"{key!r} must be a whole number from 1 to {MAX_K}, not {k}")
    return k


def _common(data: dict[str, Any]) -> tuple[str | None, bool, str | None]:
    """(ranker, strict, collection) of a request; None means the collection's default."""
    return (_get(data, "ranker", str, None, "a ranker name"),
            _get(data, "strict", bool, False, "true or false"),
            _get(data, "collection", str, None, "a collection name"))


# -------------------------------------------------------------------------------- retrieve
def _entry(hit: Any, res: Any, scores: bool) -> dict[str, Any]:
    """One hit of ``/retrieve``: Search-R1's document (``contents`` is the title, then the
    compact card the agent reads), its score, and the card, rank, ranker and total besides."""
    card = hit.card.to_dict()
    doc = {"id": hit.id, "contents": f"{hit.title}\n{hit.card.render_compact()}"}
    extra = {"rank": hit.rank, "ranker": res.ranker, "total": res.total,
             "fallback": res.fallback, "card": card}
    if scores:
        return {"document": doc, "score": card["score"], **extra}
    return {**doc, **extra}


def _summary(res: Any) -> dict[str, Any]:
    body = res.to_dict()
    body.pop("results")
    body["shown"] = len(res.results)
    return body


def _answer_part(state: Any, queries: list[Any], start: int, k: int, ranker: str | None,
                 strict: bool, collection: str | None, scores: bool,
                 vectors: dict[str, Any] | None) -> tuple[str, list[Any], list[Any], list[Any]]:
    """Search one part of a batch (on a worker thread) and build its JSON-ready pieces."""
    name, answers = state.pool.search_many(queries, k=k, ranker=ranker, collection=collection,
                                           strict=strict, vectors=vectors)
    result: list[Any] = []
    searches: list[Any] = []
    errors: list[Any] = []
    for i, ans in enumerate(answers):
        if isinstance(ans, SieveError):
            result.append([])
            searches.append(None)
            errors.append({"index": start + i, "message": str(ans),
                           "kind": type(ans).__name__})
        else:
            result.append([_entry(h, ans, scores) for h in ans.results])
            searches.append(_summary(ans))
    return name, result, searches, errors


async def _retrieve(state: Any, data: dict[str, Any]) -> Response:
    queries = data.get("queries")
    if isinstance(queries, str):
        queries = [queries]  # one query given as a string: a batch of one
    if not isinstance(queries, list):
        raise RequestError("'queries' must be a list of BQL queries")
    limit = state.config.max_batch
    if len(queries) > limit:
        raise RequestError(f"{len(queries)} queries in one call is over this server's limit "
                           f"of {limit}: split the batch", 413)
    k = _k(data, "topk", RETRIEVE_TOPK)
    scores = _get(data, "return_scores", bool, False, "true or false")
    ranker, strict, collection = _common(data)
    if ranker is not None and ranker not in RANKERS:
        raise RequestError(f"unknown ranker {ranker!r}; choose one of {', '.join(RANKERS)}")
    state.pool.entry(collection)  # an unknown collection: 404 before any work
    if not queries:
        return json_response(versioned("retrieve", {
            "collection": state.pool.entry(collection).name, "result": [], "errors": [],
            "searches": []}))
    parts = max(1, min(state.config.connections, len(queries) // MIN_PART))
    size = math.ceil(len(queries) / parts)
    limiter = state.limiter()
    vectors = None
    if parts > 1:  # embed the whole batch in one pass, then split it
        vectors = await anyio.to_thread.run_sync(
            partial(state.pool.embed_batch, queries, ranker, collection), limiter=limiter)
    pieces: list[Any] = [None] * parts

    async def run(j: int) -> None:
        lo = j * size
        try:
            pieces[j] = await anyio.to_thread.run_sync(
                partial(_answer_part, state, queries[lo:lo + size], lo, k, ranker, strict,
                        collection, scores, vectors), limiter=limiter)
        except SieveError as e:  # for the whole call (the task group would wrap it)
            pieces[j] = e

    async with anyio.create_task_group() as tg:
        for j in range(parts):
            tg.start_soon(run, j)
    for piece in pieces:
        if isinstance(piece, SieveError):
            raise piece
    result: list[Any] = []
    searches: list[Any] = []
    errors: list[Any] = []
    for _, r, s, e in pieces:
        result += r
        searches += s
        errors += e
    body = versioned("retrieve", {"collection": pieces[0][0], "result": result,
                                  "errors": errors, "searches": searches})
    if len(queries) > MIN_PART:  # a big answer is encoded off the event loop
        text = await anyio.to_thread.run_sync(dumps, body, limiter=limiter)
        return Response(text, media_type="application/json; charset=utf-8")
    return json_response(body)


# ---------------------------------------------------------------------------------- routes
def routes(state: Any) -> list[Any]:
    """``POST /retrieve``, ``POST /search``, ``POST /fetch``."""

    async def retrieve(request: Request) -> Response:
        try:
            return await _retrieve(state, await _read_object(request))
        except RequestError as e:
            return _refuse(e)
        except SieveError as e:  # an unknown collection, a bad ranker or k: the whole call
            return error_response(e)

    async def search(request: Request) -> Response:
        try:
            data = await _read_object(request)
            query = data.get("query")
            if not isinstance(query, str):
                raise RequestError("'query' must be a BQL query (a string)")
            k = _k(data, "k", SEARCH_K)
            ranker, strict, collection = _common(data)
            name, res = await state.pool.run(state.pool.search, query, k=k, ranker=ranker,
                                             collection=collection, strict=strict)
            return json_response(search_object(res, collection=name))
        except RequestError as e:
            return _refuse(e)
        except SieveError as e:
            return error_response(e)

    async def fetch(request: Request) -> Response:
        try:
            data = await _read_object(request)
            doc = data.get("doc", data.get("id"))
            if not isinstance(doc, str) or not doc:
                raise RequestError("'doc' must be a document id (a string)")
            section = _get(data, "section", str, None, "a section name")
            collection = _get(data, "collection", str, None, "a collection name")
            name, res = await state.pool.run(state.pool.fetch, doc, section,
                                             collection=collection)
            return json_response(fetch_object(res, collection=name))
        except RequestError as e:
            return _refuse(e)
        except SieveError as e:
            return error_response(e)

    return [Route("/retrieve", retrieve, methods=["POST"]),
            Route("/search", search, methods=["POST"]),
            Route("/fetch", fetch, methods=["POST"])]


__all__ = ["RETRIEVE_TOPK", "RequestError", "routes"]
