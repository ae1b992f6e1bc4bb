"""Wikipedia articles in the Wikimedia Enterprise "structured contents" JSON -> documents.

Mapping:

* ``name`` -> title; ``url`` -> url; the file's relative path (the article slug) -> id.
* ``abstract`` -> ``(intro)``. The first top-level section named ``Abstract`` holds the same
  lead (as paragraphs with link markup) and is not repeated as a section.
* ``sections`` (nested ``has_parts``) -> sections in document order, flattened depth first.
  Each heading keeps **its own name, not prefixed by its parents** (as the Markdown and
  reStructuredText builders do: ``section:`` queries behave the same whatever the source, and
  cards show the headings the article shows; headings may repeat, e.g. two ``Results``).
  A section's text is its own paragraphs and lists (items as ``* item`` lines), blank-line
  separated, without its sub-sections' text; a heading whose text is all in sub-sections is
  kept with an empty text.
* ``infobox`` -> infobox entries, flattened depth first: each ``field`` gives one entry whose
  key is the field's ``name``, else the name of the nearest enclosing named section, else the
  infobox's name (a ``#section-h:`` prefix dropped); its value is the field's ``value``.
  Images and empty values are skipped.
* ``date_modified`` -> date (``YYYY-MM-DD``: the date of the revision whose text this is;
  ``date_created`` is kept in meta).
* meta: ``{"source": "wikimedia-enterprise", "identifier", "version", "date_created",
  "wikidata", "description"}`` where present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..documents import INTRO, Document
from ..errors import DocumentError
from ._common import loose_date, make_document, read_text


def _own_text(parts: list[dict[str, Any]]) -> str:
    blocks: list[str] = []
    for p in parts:
        kind = p.get("type")
        if kind == "paragraph" and str(p.get("value", "")).strip():
            blocks.append(str(p["value"]).strip())
        elif kind == "list":
            items = [f"* {str(i.get('value', '')).strip()}" for i in p.get("has_parts", [])
                     if i.get("type") == "list_item" and str(i.get("value", "")).strip()]
            if items:
                blocks.append("\n".join(items))
    return "\n\n".join(blocks)


def _sections(parts: list[dict[str, Any]], out: list[dict[str, str]]) -> None:
    for s in parts:
        if s.get("type") != "section":
            continue
        sub = s.get("has_parts") or []
        out.append({"heading": str(s.get("name") or ""), "text": _own_text(sub)})
        _sections(sub, out)


def _infobox(part: dict[str, Any], key: str, out: list[list[str]]) -> None:
    for p in part.get("has_parts") or []:
        kind = p.get("type")
        if kind == "field":
            value = " ".join(str(p.get("value") or "").split())
            if value:
                out.append([str(p.get("name") or key), value])
        elif kind in ("section", "infobox"):
            _infobox(p, str(p.get("name") or key), out)


def parse_wikipedia(obj: dict[str, Any], doc_id: str) -> dict[str, Any]:
    abstract = str(obj.get("abstract") or "").strip()
    sections = [{"heading": INTRO, "text": abstract}] if abstract else []
    top = obj.get("sections") or []
    if abstract and top and top[0].get("name") == "Abstract":
        top = top[1:]
    body: list[dict[str, str]] = []
    _sections(top, body)
    sections.extend(body)
    infobox: list[list[str]] = []
    for box in obj.get("infobox") or []:
        name = str(box.get("name") or "infobox").removeprefix("#section-h:")
        _infobox(box, name, infobox)
    out: dict[str, Any] = {"id": doc_id, "title": str(obj.get("name") or doc_id),
                           "sections": sections}
    if infobox:
        out["infobox"] = infobox
    date = loose_date(obj.get("date_modified"))
    if date:
        out["date"] = date
    if isinstance(obj.get("url"), str):
        out["url"] = obj["url"]
    meta: dict[str, Any] = {"source": "wikimedia-enterprise"}
    for key, value in (("identifier", obj.get("identifier")),
                       ("version", (obj.get("version") or {}).get("identifier")),
                       ("date_created", obj.get("date_created")),
                       ("wikidata", (obj.get("main_entity") or {}).get("identifier")),
                       ("description", obj.get("description"))):
        if value is not None:
            meta[key] = value
    out["meta"] = meta
    return out


def is_structured_article(obj: Any) -> bool:
    """Does a parsed JSON value look like a Wikimedia Enterprise structured article?"""
    return isinstance(obj, dict) and "name" in obj and \
        ("sections" in obj or "abstract" in obj) and "id" not in obj


def read_wikipedia(path: Path, doc_id: str, text: str | None = None) -> Document | DocumentError:
    if text is None:
        loaded = read_text(path)
        if isinstance(loaded, DocumentError):
            return loaded
        text = loaded
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        return DocumentError(f"not valid JSON: {e.msg}", f"{path}:{e.lineno}")
    if not is_structured_article(obj):
        return DocumentError("not a Wikimedia Enterprise structured article (an object with "
                             "'name' and 'sections' or 'abstract')", str(path))
    return make_document(parse_wikipedia(obj, doc_id), str(path))
