"""Server-rendered pages for people, each with its JSON twin. See issue 22."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..output import versioned
from .negotiate import json_response, wants_json


def routes(state: Any) -> list[Any]:
    async def home(request: Request) -> Response:
        data = versioned("collections", {"collections": state.pool.describe()})
        if wants_json(request):
            return json_response(data)
        # A placeholder page until the pages of issue 22 land; names are escaped.
        from html import escape

        items = "".join(f"<li>{escape(c['name'])}</li>" for c in data["collections"])
        return HTMLResponse(f"<!doctype html><title>sieve-lite</title><ul>{items}</ul>")

    return [Route("/", home)]


__all__ = ["routes"]
