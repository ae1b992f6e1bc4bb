"""One JSON shape everywhere: a page's JSON twin, the API's answers and its errors.

``wants_json`` decides between a page and its twin (``?format=json``, or an ``Accept`` header
that prefers ``application/json`` to HTML). Bodies are the objects of ``sieve_lite.output``
(``format`` and ``type`` keys first), so a script reading the server reads what
``sieve-lite ... --json`` prints. A typed error becomes an ``error`` object and the status
``status_of`` gives it.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..errors import CollectionError, DamagedCollection, QueryError, SectionError, SieveError
from ..output import dumps, error_object


def wants_json(request: Request) -> bool:
    fmt = request.query_params.get("format")
    if fmt is not None:
        return fmt == "json"
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(dumps(obj), status_code=status,
                    media_type="application/json; charset=utf-8")


def status_of(err: SieveError) -> int:
    if isinstance(err, DamagedCollection):
        return 500
    if isinstance(err, (SectionError, CollectionError)):
        return 404
    if isinstance(err, QueryError):
        return 400
    return 400


def error_response(err: SieveError) -> Response:
    return json_response(error_object(err), status_of(err))


__all__ = ["error_response", "json_response", "status_of", "wants_json"]
