"""EPUB files -> documents, with the standard library only (``zipfile``, ``xml.etree``,
``html.parser``). EbookLib is AGPL, so it is not used.

Mapping:

* ``META-INF/container.xml`` names the package document (OPF). Its ``metadata`` gives the
  title (``dc:title``), authors (``dc:creator``, in order), date (``dc:date``) and, as infobox,
  ``dc:publisher``, ``dc:language``, ``dc:subject`` and ``dc:identifier``.
* The ``spine`` gives the reading order of the XHTML files; items marked ``linear="no"``
  (cover pages, notes) and the navigation document are left out.
* Each XHTML file is read like an HTML page (``sources/html.py``): every ``<h1>``..``<h6>``
  starts a section, flat, in order. Text before a file's first heading takes the title the
  table of contents gives that file (EPUB 3 ``nav`` document, else the EPUB 2 NCX), else it
  joins the section before it (``(intro)`` at the start of the book).
* Pages: an EPUB is reflowable and has none; sections carry no page range.

Limits against hostile files: at most ``MAX_MEMBER`` bytes are read from one zip member and
``MAX_TOTAL`` from one book (a zip bomb is skipped with that reason); XML is parsed with expat,
which refuses entity-expansion bombs, and never loads external entities.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from xml.etree import ElementTree as ET

from ..documents import INTRO, Document
from ..errors import DocumentError
from ._common import loose_date, make_document
from .html import PageParser, decode_html

MAX_MEMBER = 64 << 20
MAX_TOTAL = 512 << 20
_NS = {"c": "urn:oasis:names:tc:opendocument:xmlns:container",
       "opf": "http://www.idpf.org/2007/opf", "dc": "http://purl.org/dc/elements/1.1/",
       "ncx": "http://www.daisy.org/z3986/2005/ncx/", "x": "http://www.w3.org/1999/xhtml",
       "epub": "http://www.idpf.org/2007/ops"}


class EpubError(Exception):
    """A book that cannot be read (one line)."""


class _Book:
    def __init__(self, path: Path) -> None:
        try:
            self.zip = zipfile.ZipFile(path)
        except zipfile.BadZipFile:
            raise EpubError("damaged or not an EPUB (not a zip archive)") from None
        self.read_bytes = 0

    def read(self, name: str) -> bytes:
        try:
            info = self.zip.getinfo(name)
        except KeyError:
            raise EpubError(f"names {name!r}, which the archive does not hold") from None
        if info.file_size > MAX_MEMBER or self.read_bytes + info.file_size > MAX_TOTAL:
            raise EpubError(f"{name} is too large when unpacked ({info.file_size:,} bytes); "
                            "skipped as a possible zip bomb")
        with self.zip.open(info) as f:
            data = f.read(MAX_MEMBER + 1)  # the header's size may lie: cap what is read
        if len(data) > MAX_MEMBER:
            raise EpubError(f"{name} unpacks past {MAX_MEMBER:,} bytes; skipped as a possible "
                            "zip bomb")
        self.read_bytes += len(data)
        return data

    def xml(self, name: str) -> ET.Element:
        try:
            return ET.fromstring(self.read(name))
        except ET.ParseError as e:
            raise EpubError(f"{name} is not well-formed XML ({e})") from None


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _toc(book: _Book, manifest: dict[str, tuple[str, str, str]],
         spine_toc: str | None) -> dict[str, str]:
    """File (zip path) -> the table of contents' title for it (its first entry)."""
    out: dict[str, str] = {}
    nav = next((href for href, _t, props in manifest.values() if "nav" in props.split()), None)
    entries: list[tuple[str, str]] = []
    if nav:
        root = book.xml(nav)
        base = posixpath.dirname(nav)
        for el in root.iter(f"{{{_NS['x']}}}nav"):
            kind = el.get(f"{{{_NS['epub']}}}type", "")
            if "toc" not in kind.split():
                continue
            for a in el.iter(f"{{{_NS['x']}}}a"):
                if a.get("href"):
                    entries.append((posixpath.join(base, unquote(a.get("href", ""))),
                                    _text(a)))
    elif spine_toc and spine_toc in manifest:
        ncx = manifest[spine_toc][0]
        root = book.xml(ncx)
        base = posixpath.dirname(ncx)
        for point in root.iter(f"{{{_NS['ncx']}}}navPoint"):
            label = _text(point.find("ncx:navLabel/ncx:text", _NS))
            content = point.find("ncx:content", _NS)
            if content is not None and content.get("src"):
                entries.append((posixpath.join(base, unquote(content.get("src", ""))), label))
    for href, label in entries:
        file = posixpath.normpath(href.split("#", 1)[0])
        if label and file not in out:
            out[file] = label
    return out


def parse_epub(path: Path, doc_id: str) -> dict[str, Any]:
    book = _Book(path)
    with book.zip:
        container = book.xml("META-INF/container.xml")
        rootfile = container.find(".//c:rootfile", _NS)
        if rootfile is None or not rootfile.get("full-path"):
            raise EpubError("META-INF/container.xml names no package document")
        opf_path = unquote(rootfile.get("full-path", ""))
        opf = book.xml(opf_path)
        opf_dir = posixpath.dirname(opf_path)
        md = opf.find("opf:metadata", _NS)
        manifest: dict[str, tuple[str, str, str]] = {}
        for item in opf.iterfind("opf:manifest/opf:item", _NS):
            href = posixpath.normpath(posixpath.join(opf_dir, unquote(item.get("href", ""))))
            manifest[item.get("id", "")] = (href, item.get("media-type", ""),
                                            item.get("properties", ""))
        spine = opf.find("opf:spine", _NS)
        if spine is None:
            raise EpubError("the package document has no spine (reading order)")
        toc = _toc(book, manifest, spine.get("toc"))
        sections: list[list[Any]] = []  # [heading, [texts]]
        first_h1 = ""
        for ref in spine.iterfind("opf:itemref", _NS):
            if ref.get("linear", "yes") == "no":
                continue
            entry = manifest.get(ref.get("idref", ""))
            if entry is None or "nav" in entry[2].split():
                continue
            href, media, _props = entry
            if "html" not in media and not href.endswith((".xhtml", ".html", ".htm")):
                continue
            raw = decode_html(book.read(href))
            if raw is None:
                raise EpubError(f"{href} is not valid UTF-8 and declares no usable charset")
            page = PageParser(main_only=False)
            page.feed(raw)
            page.close()
            for k, (heading, level, text) in enumerate(page.sections):
                if heading is None:
                    if not text.strip():
                        continue
                    label = toc.get(href) if k == 0 else None
                    if label:
                        sections.append([label, [text]])
                    elif sections:
                        sections[-1][1].append(text)
                    else:
                        sections.append([INTRO, [text]])
                    continue
                if level == 1 and not first_h1:
                    first_h1 = heading
                sections.append([heading, [text] if text.strip() else []])
    title = _text(md.find("dc:title", _NS)) if md is not None else ""
    meta: dict[str, Any] = {"format": "epub", "file": path.name,
                            "title_from": "metadata" if title else
                            "first heading" if first_h1 else "file name"}
    title = title or first_h1 or path.stem
    obj: dict[str, Any] = {"id": doc_id, "title": title, "meta": meta, "sections": [
        {"heading": h, "text": "\n\n".join(t for t in texts if t.strip())}
        for h, texts in sections]}
    if md is not None:
        authors = [_text(c) for c in md.findall("dc:creator", _NS) if _text(c)]
        if authors:
            obj["author"] = authors
        for d in md.findall("dc:date", _NS):
            date = loose_date(_text(d)[:10])
            if date:
                obj["date"] = date
                break
        infobox = []
        for key, tag in (("Publisher", "publisher"), ("Language", "language"),
                         ("Subject", "subject"), ("Identifier", "identifier")):
            infobox += [[key, _text(v)] for v in md.findall(f"dc:{tag}", _NS) if _text(v)]
        if infobox:
            obj["infobox"] = infobox
    return obj


def read_epub(path: Path, doc_id: str) -> Document | DocumentError:
    """One EPUB file as one document, or the one-line reason it is skipped."""
    try:
        obj = parse_epub(path, doc_id)
    except EpubError as e:
        return DocumentError(str(e), str(path))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
        return DocumentError(f"damaged EPUB ({type(e).__name__}: {e})", str(path))
    except OSError as e:
        return DocumentError(f"cannot read: {e.strerror or e}", str(path))
    return make_document(obj, str(path))
