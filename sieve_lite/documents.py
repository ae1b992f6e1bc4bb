"""The document model of DOCUMENTS.md and its validation.

Every builder produces ``Document`` objects through ``Document.from_dict`` so that one path
validates and indexes everything.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import DocumentError

INTRO = "(intro)"
INFOBOX = "infobox"
MAX_PAGE = 1_000_000  # a page number above this is a mistake, not a long book

_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def date_span(value: str) -> tuple[int, int]:
    """``YYYY``/``YYYY-MM``/``YYYY-MM-DD`` -> inclusive (first, last) day as YYYYMMDD ints.

    Raises ``ValueError`` with a reason for a malformed or impossible date.
    """
    m = _DATE.match(value)
    if not m:
        raise ValueError(f"date {value!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    year = int(m.group(1))
    if year < 1:
        raise ValueError(f"date {value!r} has year 0000")
    if m.group(2) is None:
        return year * 10000 + 101, year * 10000 + 1231
    month = int(m.group(2))
    if not 1 <= month <= 12:
        raise ValueError(f"date {value!r} has month {month:02d}; months run 01-12")
    last = calendar.monthrange(year, month)[1]
    if m.group(3) is None:
        return year * 10000 + month * 100 + 1, year * 10000 + month * 100 + last
    day = int(m.group(3))
    if not 1 <= day <= last:
        raise ValueError(f"date {value!r} does not exist; {year}-{month:02d} has {last} days")
    d = year * 10000 + month * 100 + day
    return d, d


@dataclass(frozen=True)
class Section:
    heading: str
    text: str
    # The inclusive range of 1-based physical pages the section spans (PDF), or None.
    pages: tuple[int, int] | None = None


def _page_range(value: Any) -> tuple[int, int] | None:
    """``[4, 6]`` (or a single page ``5``) -> (first, last); None when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value, value]
    if not isinstance(value, (list, tuple)) or len(value) != 2 or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    first, last = value
    if not 1 <= first <= last or last > MAX_PAGE:
        return None
    return first, last


def _section_dict(s: Section) -> dict[str, Any]:
    out: dict[str, Any] = {"heading": s.heading, "text": s.text}
    if s.pages is not None:
        out["pages"] = list(s.pages)
    return out


def format_pages(pages: tuple[int, int] | None) -> str:
    """``(4, 6)`` -> ``'p. 4–6'``, ``(5, 5)`` -> ``'p. 5'``, None -> ``''``."""
    if not pages:
        return ""
    first, last = pages
    return f"p. {first}" if first == last else f"p. {first}\u2013{last}"


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    sections: tuple[Section, ...]
    infobox: tuple[tuple[str, str], ...] = ()
    authors: tuple[str, ...] = ()
    date: str | None = None
    url: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def date_span(self) -> tuple[int, int] | None:
        return date_span(self.date) if self.date else None

    def to_dict(self) -> dict[str, Any]:
        """The DOCUMENTS.md JSON shape (round-trips through ``from_dict``)."""
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "sections": [_section_dict(s) for s in self.sections],
        }
        if self.infobox:
            out["infobox"] = [[k, v] for k, v in self.infobox]
        if self.authors:
            out["author"] = list(self.authors)
        if self.date:
            out["date"] = self.date
        if self.url:
            out["url"] = self.url
        if self.meta:
            out["meta"] = self.meta
        return out

    @classmethod
    def from_dict(cls, obj: Any, where: str = "") -> Document:
        """Validate one DOCUMENTS.md object; raise ``DocumentError`` naming what is wrong."""

        def bad(msg: str) -> DocumentError:
            return DocumentError(msg, where)

        if not isinstance(obj, dict):
            raise bad(f"a document must be a JSON object, got {type(obj).__name__}")
        doc_id = obj.get("id")
        if doc_id is None:
            raise bad("missing 'id'; every document needs a non-empty string id")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise bad("'id' must be a non-empty string")
        if "\x00" in doc_id:
            raise bad("'id' contains a NUL character")
        title = obj.get("title")
        if title is None:
            raise bad(f"document {doc_id!r} has no 'title' (use \"\" for an untitled document)")
        if not isinstance(title, str):
            raise bad(f"document {doc_id!r}: 'title' must be a string")

        sections: list[Section] = []
        if "sections" in obj and obj["sections"] is not None:
            raw = obj["sections"]
            if not isinstance(raw, list):
                raise bad(f"document {doc_id!r}: 'sections' must be a list of {{heading, text}}")
            for i, s in enumerate(raw):
                if not isinstance(s, dict) or not isinstance(s.get("heading"), str) \
                        or not isinstance(s.get("text", ""), str):
                    raise bad(f"document {doc_id!r}: section {i} must be "
                              "{\"heading\": string, \"text\": string}")
                pages = s.get("pages")
                if pages is not None:
                    pages = _page_range(pages)
                    if pages is None:
                        raise bad(f"document {doc_id!r}: section {i} has 'pages' "
                                  f"{s['pages']!r}; give [first, last] page numbers "
                                  "(whole numbers from 1, first <= last)")
                sections.append(Section(s["heading"], s.get("text", ""), pages))
            if "text" in obj and obj["text"]:
                raise bad(f"document {doc_id!r} has both 'sections' and 'text'; give one")
        elif "text" in obj:
            if not isinstance(obj["text"], str):
                raise bad(f"document {doc_id!r}: 'text' must be a string")
            sections.append(Section(INTRO, obj["text"]))
        else:
            raise bad(f"document {doc_id!r} has neither 'sections' nor 'text'")

        infobox: list[tuple[str, str]] = []
        raw_ib = obj.get("infobox")
        if raw_ib:
            items = raw_ib.items() if isinstance(raw_ib, dict) else raw_ib
            if not isinstance(raw_ib, (dict, list)):
                raise bad(f"document {doc_id!r}: 'infobox' must be [[key, value], ...] "
                          "or an object")
            for pair in items:
                if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                    raise bad(f"document {doc_id!r}: infobox entries must be [key, value] pairs")
                k, v = pair
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    v = str(v)
                if not isinstance(k, str) or not isinstance(v, str):
                    raise bad(f"document {doc_id!r}: infobox key and value must be strings")
                infobox.append((k, v))

        authors: list[str] = []
        raw_au = obj.get("author")
        if raw_au:
            if isinstance(raw_au, str):
                authors = [raw_au]
            elif isinstance(raw_au, list) and all(isinstance(a, str) for a in raw_au):
                authors = [a for a in raw_au if a.strip()]
            else:
                raise bad(f"document {doc_id!r}: 'author' must be a string or a list of strings")

        date = obj.get("date")
        if date is not None and date != "":
            if not isinstance(date, str):
                raise bad(f"document {doc_id!r}: 'date' must be a string YYYY, YYYY-MM "
                          "or YYYY-MM-DD")
            try:
                date_span(date)
            except ValueError as e:
                raise bad(f"document {doc_id!r}: {e}") from None
        else:
            date = None

        url = obj.get("url")
        if url is not None and not isinstance(url, str):
            raise bad(f"document {doc_id!r}: 'url' must be a string")
        meta = obj.get("meta") or {}
        if not isinstance(meta, dict):
            raise bad(f"document {doc_id!r}: 'meta' must be an object")
        return cls(doc_id, title, tuple(sections), tuple(infobox), tuple(authors), date,
                   url or None, meta)
