"""What the pages and the ask runs both render with: the templates, links, a card as its
template needs it, and error pages. ``pages`` (search, documents) and ``runs`` (ask) import
these; neither imports the other's helpers.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup
from starlette.responses import HTMLResponse, Response

from ..errors import SieveError
from ..options import RANKERS
from ..output import error_object
from ..terminal import WordMatch, one_line
from .html import escape_html, marked, may_hold, safe_url, with_marks
from .negotiate import error_response, status_of

HERE = Path(__file__).resolve().parent
PAGE_K = 10          # cards shown by default
HEADINGS_SHOWN = 8   # section links on a card; the outline lists them all


@lru_cache(maxsize=1)
def templates() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.globals.update(link=link, rankers=RANKERS)
    return env


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = templates().get_template(name).render(**context)
    return HTMLResponse(html, status_code=status)


def link(path: str, **params: Any) -> str:
    """``path`` with the non-empty ``params`` as its query string (values URL-encoded)."""
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


def coll_path(name: str) -> str:
    return "/c/" + quote(name, safe="")


def card_view(card: Any, collection: str, query: str, match: WordMatch,
              fallback: bool) -> dict[str, Any]:
    """What a card's template needs: every text already cleaned, escaped and marked. The
    sections holding a query word come first, as on the terminal's cards."""
    base = coll_path(collection) + "/doc?id=" + quote(card.id, safe="")
    tail = "&q=" + quote(query, safe="") if query else ""
    names = list(card.headings)
    marks: dict[str, Markup] = {}  # the headings holding a query word, marked
    if match:
        for h in names:
            # The substring test on the raw heading passes over most of them before they
            # are cleaned (cleaning only removes characters, so it can hardly add a word).
            if not may_hold(match, h):
                continue
            clean = one_line(h)
            spans = match.spans(clean)
            if spans:
                marks[h] = with_marks(clean, spans)
    order = [*marks, *(h for h in names if h not in marks)] if marks else names

    def section_href(name: str) -> str:
        return f"{base}&section={quote(name, safe='')}{tail}"

    authors = ", ".join(one_line(a) for a in card.authors[:6])
    if len(card.authors) > 6:
        authors += f" +{len(card.authors) - 6}"
    return {
        "id": one_line(card.id), "rank": card.rank, "score": f"{card.score:.3g}",
        "collection": collection,
        "title": marked(card.title, match, line=True),
        "href": base + tail,
        "authors": marked(authors, match, line=True),
        "date": one_line(card.date),
        "matched": card.matched_fields,
        # One string for the line of section links: a template loop per link costs more.
        # (hrefs escaped here; names are Markup already: cleaned, escaped, marked)
        "sections": Markup(" · ".join(
            f'<a href="{escape_html(section_href(h))}">{marks.get(h) or marked(h)}</a>'
            for h in order[:HEADINGS_SHOWN])),
        "more_sections": max(0, len(names) - HEADINGS_SHOWN),
        "n_sections": len(names),
        "snippet": marked(card.snippet, match, line=True),
        "snippet_section": one_line(card.snippet_section),
        "snippet_href": (section_href(card.snippet_section)
                         if card.snippet_section in names else None),
        "url": safe_url(card.url),
        "fallback": fallback,
    }


def error_view(err: SieveError) -> dict[str, Any]:
    """An error for a page: its message and, for a query, the column and a caret line."""
    obj = error_object(err)["error"]
    caret = None
    if obj.get("column"):
        caret = " " * (obj["column"] - 1) + "^" * obj.get("length", 1)
    return {"kind": obj["kind"], "message": obj["message"], "column": obj.get("column"),
            "caret": caret, "query": one_line(obj.get("query")) if caret else None}


def error_page(err: SieveError, as_json: bool, status: int | None = None) -> Response:
    """An error page or object: fixed words from the error, never the request echoed."""
    if as_json:
        resp = error_response(err)
        if status:
            resp.status_code = status
        return resp
    return render("error.html", status=status or status_of(err), nav="", query="",
                  k=PAGE_K, ranker="", names=[], error=error_view(err))


__all__ = ["HEADINGS_SHOWN", "PAGE_K", "card_view", "coll_path", "error_page", "error_view", "link",
           "render", "templates"]
