"""HTML files -> documents (standard library ``html.parser``; no network, no JavaScript).

Mapping:

* ``<title>`` -> title (else the first ``<h1>``, else the file stem).
* ``<h1>`` .. ``<h6>`` -> sections, in order and flat; text before the first heading ->
  ``(intro)``. A first heading that is the page's only ``<h1>`` and repeats the title (or
  gives it, when there is no ``<title>``) is not also a section. Permalink marks (``¶``)
  are dropped from headings.
* Section text: the visible text, blocks (``p``, ``div``, ``li``, ``tr``, ...) on their own
  lines, the cells of a table row on one line separated by `` | ``, whitespace collapsed
  except inside ``<pre>``. ``script``, ``style``, ``noscript``,
  ``template``, ``svg``, ``nav``, ``aside``, ``footer`` and ``iframe`` are ignored; when the page
  marks its main content (``<main>``, ``role="main"``), only that content is read, so that
  navigation bars and side bars (e.g. Sphinx's) stay out of the text.
* ``<meta name="author">`` (also ``dc.creator``, ``article:author``) -> authors, one per tag;
  ``<meta name="date">``, ``dc.date``, ``dcterms.date``, ``dcterms.created``,
  ``citation_publication_date``, ``article:published_time`` -> date (the first readable one);
  ``description`` and ``keywords`` -> infobox; ``<link rel="canonical">`` or ``og:url`` -> url.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ..documents import Document
from ..errors import DocumentError
from ._common import loose_date, make_document, sections_from

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "nav", "aside", "footer",
                   "iframe", "object", "canvas"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "param", "source", "track", "wbr"})
_BLOCK = frozenset({"p", "div", "br", "li", "tr", "pre", "section", "article", "table", "ul",
                    "ol", "dl", "dt", "dd", "blockquote", "hr", "header", "main", "figure",
                    "figcaption", "form", "fieldset", "address", "details", "summary", "caption",
                    "thead", "tbody", "tfoot", "body", "h1", "h2", "h3", "h4", "h5", "h6"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_AUTHOR_KEYS = ("author", "dc.creator", "dcterms.creator", "article:author")
_DATE_KEYS = ("date", "dc.date", "dcterms.date", "dc.date.issued", "dcterms.issued",
              "dcterms.created", "citation_publication_date", "article:published_time",
              "og:published_time")
_CELL = "\ue000"  # marks a cell boundary until _clean turns it and the spaces around into ' | '
_MAIN = re.compile(r"<main\b|\brole\s*=\s*[\"']?main\b", re.I)


class PageParser(HTMLParser):
    """An HTML page's title, metadata and sections (also an EPUB chapter's: ``epub``)."""

    def __init__(self, main_only: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.main_only = main_only
        self.main_tag: str | None = None  # the element holding the main content, while inside
        self.main_depth = 0
        self.seen_main = False
        self.skip = 0
        self.pre = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.meta: list[tuple[str, str]] = []
        self.canonical: str | None = None
        self.heading: list[str] | None = None  # text of the heading being read
        self.heading_level = 0
        self.sections: list[tuple[str | None, int, str]] = []  # (heading, level, text)
        self.current: tuple[str | None, int] = (None, 0)
        self.buf: list[str] = []
        self.cells = 0  # cells begun in the current table row

    # -- structure -------------------------------------------------------------------------
    def _reading(self) -> bool:
        return self.skip == 0 and (not self.main_only or self.main_tag is not None)

    def _newline(self, n: int = 1) -> None:
        target = self.heading if self.heading is not None else self.buf
        target.append("\n" * n)

    def _flush(self) -> None:
        self.sections.append((*self.current, _clean("".join(self.buf))))
        self.buf = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            key = (a.get("name") or a.get("property") or "").strip().lower()
            if key and "content" in a:
                self.meta.append((key, a["content"].strip()))
            return
        if tag == "link" and "canonical" in a.get("rel", "").lower().split():
            self.canonical = self.canonical or a.get("href") or None
            return
        if tag == "title" and self.heading is None and self.skip == 0 and not self.title_parts:
            self.in_title = True  # the page title, not an <svg> <title>
            return
        if self.main_only and self.main_tag is None and not self.seen_main and \
                (tag == "main" or a.get("role", "").lower() == "main"):
            self.main_tag, self.main_depth, self.seen_main = tag, 0, True
        if self.main_tag == tag:
            self.main_depth += 1
        if tag in _SKIP:
            self.skip += 1
            return
        if not self._reading():
            return
        if tag in _HEADINGS:
            self._flush()
            self.heading, self.heading_level = [], _HEADINGS[tag]
            return
        if tag == "pre":
            self.pre += 1
        if tag in _BLOCK:
            self._newline(2 if tag in ("p", "pre", "blockquote", "table", "ul", "ol", "dl")
                          else 1)
            if tag == "li":
                self.buf.append("* ")
            if tag == "tr":
                self.cells = 0
        elif tag in ("td", "th"):
            # Cells of a row stay on its line, separated: '<td>Rye</td><td>80</td>' is
            # 'Rye | 80', never 'Rye80'.
            if self.cells:
                target = self.heading if self.heading is not None else self.buf
                target.append(_CELL)
            self.cells += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif self._reading():
            if tag in _HEADINGS and self.heading is not None:
                self.current = (_heading_text("".join(self.heading)), self.heading_level)
                self.heading = None
            elif tag == "pre":
                self.pre = max(0, self.pre - 1)
                self._newline(2)
            elif tag in _BLOCK:
                self._newline()
        if self.main_tag == tag:
            self.main_depth -= 1
            if self.main_depth <= 0:
                self.main_tag = None

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if not self._reading():
            return
        if self.heading is not None:
            self.heading.append(data)
            return
        if not self.pre:
            data = re.sub(r"\s+", " ", data)
        self.buf.append(data)

    def close(self) -> None:
        super().close()
        if self.heading is not None:  # an unclosed heading at the end of the file
            self.current = (_heading_text("".join(self.heading)), self.heading_level)
            self.heading = None
        self._flush()


def _heading_text(raw: str) -> str:
    return " ".join(raw.replace(_CELL, " | ").split()).strip(" ¶#§")


def _clean(text: str) -> str:
    """Collapse the block breaks and stray spaces of the collected text."""
    text = re.sub(f"[ \t]*{_CELL}[ \t]*", " | ", text)
    lines = [ln.rstrip() for ln in text.split("\n")]
    out: list[str] = []
    blank = 0
    for ln in lines:
        if not ln.strip():
            blank += 1
            continue
        if out:
            out.append("\n\n" if blank > 1 else "\n")
        # A line that starts after a collapsed break keeps no leading space; pre text keeps
        # its indentation (it never starts with exactly the one collapsed space).
        out.append(ln[1:] if ln.startswith(" ") and not ln.startswith("  ") else ln)
        blank = 0
    return "".join(out)


def decode_html(raw: bytes) -> str | None:
    """UTF-8, else the charset the page declares; None if neither decodes. Newlines -> ``\\n``."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        m = re.search(rb"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", raw[:4096])
        if not m:
            return None
        try:
            text = raw.decode(m.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_html(text: str, path: Path, doc_id: str) -> dict[str, Any]:
    page = PageParser(main_only=bool(_MAIN.search(text)))
    page.feed(text)
    page.close()
    title = " ".join("".join(page.title_parts).split())
    secs = page.sections
    intro = secs[0][2] if secs and secs[0][0] is None else ""
    rest = [s for s in secs if s[0] is not None]
    if rest and rest[0][1] == 1 and sum(s[1] == 1 for s in rest) == 1 and \
            (not title or rest[0][0].casefold() in title.casefold()):
        title = title or rest[0][0]
        intro = "\n\n".join(t for t in (intro, rest[0][2]) if t)
        rest = rest[1:]
    obj: dict[str, Any] = {"id": doc_id, "title": title or path.stem,
                           "sections": sections_from(intro, [(h or "", t) for h, _, t in rest])}
    meta = page.meta
    authors = [v for k, v in meta if k in _AUTHOR_KEYS and v]
    if authors:
        obj["author"] = authors
    for key in _DATE_KEYS:
        date = next((loose_date(v) for k, v in meta if k == key and loose_date(v)), None)
        if date:
            obj["date"] = date
            break
    infobox = [[k, v] for k, v in meta if k in ("description", "keywords") and v]
    if infobox:
        obj["infobox"] = infobox
    url = page.canonical or next((v for k, v in meta if k == "og:url" and v), None)
    if url:
        obj["url"] = url
    return obj


def read_html(path: Path, doc_id: str) -> Document | DocumentError:
    try:
        raw = path.read_bytes()
    except OSError as e:
        return DocumentError(f"cannot read: {e.strerror or e}", str(path))
    text = decode_html(raw)
    if text is None:
        return DocumentError("not valid UTF-8 and no usable charset declared", str(path))
    if not text.strip():
        return DocumentError("empty file; nothing to index", str(path))
    return make_document(parse_html(text, path, doc_id), str(path))
