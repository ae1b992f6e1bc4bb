"""Word (.docx) files -> documents, through python-docx (MIT).

Mapping:

* Body paragraphs and tables are read in document order. A paragraph whose style is a heading
  (``Heading 1`` .. ``Heading 9``, or a style based on one) starts a section, flat, in order;
  text before the first heading is ``(intro)``. A ``Title`` paragraph gives the title when the
  core properties have none, and is not repeated in the text.
* Tables are kept as rows, one per line, cells joined with `` | `` (a merged cell once).
* Core properties: ``title`` -> title (else the ``Title`` paragraph, else the file name);
  ``author`` -> authors (split at ``;`` and ``,``); ``created`` -> date; ``subject``,
  ``keywords``, ``category`` -> infobox. ``meta.title_from`` says where the title came from.
* Pages: a .docx has no fixed pages. When the file records where Word or LibreOffice last
  broke its pages (``w:lastRenderedPageBreak``), sections get those page ranges
  (``meta.pages_from = "rendered page breaks"``); otherwise sections have none.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from ..documents import INTRO, Document
from ..errors import DocumentError, EnvironmentProblem
from ._common import loose_date, make_document

_HEADING = re.compile(r"^heading\s*\d$", re.I)


def _is_heading(style: Any) -> bool:
    depth = 0
    while style is not None and depth < 8:  # a custom style based on a heading style
        if _HEADING.match(style.name or ""):
            return True
        style = style.base_style
        depth += 1
    return False


def _row_text(row: Any) -> str:
    cells: list[str] = []
    last = None
    for cell in row.cells:
        if cell._tc is last:  # a merged cell appears once per grid column it spans
            continue
        last = cell._tc
        cells.append(" ".join(cell.text.split()))
    return " | ".join(cells)


def parse_docx(path: Path, doc_id: str) -> dict[str, Any]:
    try:
        import docx
        from docx.table import Table
    except ImportError:  # pragma: no cover - an install without the formats extra
        raise EnvironmentProblem("reading .docx needs python-docx: pip install "
                                 "'sieve-lite[formats]'") from None
    d = docx.Document(str(path))
    props = d.core_properties
    title = " ".join((props.title or "").split())
    meta: dict[str, Any] = {"format": "docx", "file": path.name}
    if title:
        meta["title_from"] = "metadata"
    sections: list[tuple[str, list[str], int, int]] = []  # heading, paragraphs, first, last
    heading, paras = INTRO, []
    page = 1
    first_page = 1
    saw_breaks = False

    def close() -> None:
        if heading != INTRO or any(p.strip() for p in paras):
            sections.append((heading, paras, first_page, page))

    for block in d.iter_inner_content():
        if isinstance(block, Table):
            rows = [_row_text(r) for r in block.rows]
            paras.append("\n".join(r for r in rows if r.strip(" |")))
            continue
        breaks = len(block.rendered_page_breaks)
        if breaks:
            saw_breaks = True
            page += breaks
        text = block.text.strip()
        style = block.style
        name = (style.name if style is not None else "") or ""
        if name.lower() == "title" and text:
            if not title:
                title = " ".join(text.split())
                meta["title_from"] = "title paragraph"
                continue
            if " ".join(text.split()) == title:
                continue
        if text and _is_heading(style):
            close()
            heading, paras, first_page = " ".join(text.split()), [], page
            continue
        if text:
            paras.append(text)
    close()
    if not title:
        title = path.stem
        meta["title_from"] = "file name"
    out_sections = []
    for h, ps, first, last in sections:
        entry: dict[str, Any] = {"heading": h, "text": "\n\n".join(p for p in ps if p)}
        if saw_breaks:
            entry["pages"] = [first, max(first, last)]
        out_sections.append(entry)
    if saw_breaks:
        meta["pages_from"] = "rendered page breaks"
    obj: dict[str, Any] = {"id": doc_id, "title": title, "sections": out_sections,
                           "meta": meta}
    authors = [a.strip() for a in re.split(r"[;,]", props.author or "") if a.strip()]
    if authors:
        obj["author"] = authors
    if props.created is not None:
        date = loose_date(props.created.date())
        if date:
            obj["date"] = date
    infobox = [[k, " ".join(v.split())] for k, v in (
        ("Subject", props.subject), ("Keywords", props.keywords), ("Category", props.category))
        if v and v.strip()]
    if infobox:
        obj["infobox"] = infobox
    return obj


def read_docx(path: Path, doc_id: str) -> Document | DocumentError:
    """One .docx file as one document, or the one-line reason it is skipped."""
    try:
        obj = parse_docx(path, doc_id)
    except EnvironmentProblem:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        return DocumentError(f"damaged or not a Word document ({type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else 'unreadable'})", str(path))
    except OSError as e:
        return DocumentError(f"cannot read: {e.strerror or e}", str(path))
    except Exception as e:  # lxml and python-docx raise their own types on broken XML
        return DocumentError(f"damaged Word document ({type(e).__name__})", str(path))
    return make_document(obj, str(path))
