"""PDF files -> documents, through PDFium (``pypdfium2``; Apache-2.0 / BSD-3-Clause).

Why PDFium and why our own layout pass: ``docs/formats.md`` (measured against pypdf,
pdfminer.six, pdfplumber and pdftext). PDFium gives every character with its box, font size
and font name, the outline (bookmarks) with their target page and position, and the metadata;
this module turns that into sections with page ranges:

1. **Characters -> segments.** A page's characters (in PDFium's order) are cut into segments:
   runs on one baseline without a wide gap. A gap wider than ``CELL_GAP`` font sizes starts a
   new segment (table cells, the other column).
2. **Reading order.** A page is two-column when a vertical gutter in its middle third is
   crossed by few segments while wide segments lie on both sides; then each band between
   full-width segments (titles, headings spanning both columns) is read left column first.
   Segments on one baseline within a column form a row; a row of several segments is a table
   row, its cells joined with `` | ``.
3. **Running headers and footers**: rows in the top or bottom ``MARGIN_ZONE`` of the page whose
   text, with digits masked, recurs on at least half the pages (two at least) are dropped, and
   so is a lone page number there.
4. **Lines -> text.** Lines of a paragraph are joined with spaces; a paragraph break is a gap
   larger than 1.5 times the usual line spacing. A word broken at a line end by the
   typesetter's hyphen (U+2010, soft hyphen) is joined; one broken at ``-`` is joined without
   the hyphen unless the document writes the hyphenated form elsewhere (``well-known``).
5. **Sections.** From the outline when there is one (every level, flat, in order): a section
   starts at the line that carries the bookmark's title on its target page (or at the target
   position); that heading line is not repeated in the text. Without an outline, from the
   layout: lines set larger than the body text, or wholly bold, short, not ending like a
   sentence (numbered headings such as ``3.2 Results`` included). Without either, pages are
   grouped into sections of at most ``GROUP_PAGES`` pages (``Pages 1–5``). Text before the
   first section is ``(intro)``. Every section keeps the range of pages it spans.
6. **Metadata.** Title, authors (``Author`` split at ``;``, ``,`` and ``and``) and date
   (``CreationDate``) from the document information; a missing or placeholder one is taken
   from the first page (the largest line; the name line under it; the first written date).
   ``meta.title_from``, ``authors_from`` and ``date_from`` say which: ``metadata``,
   ``first page`` or ``file name``.

A page without any text is listed in ``meta.pages_without_text`` (scanned pages; OCR is out of
scope). A file where no page has text, an encrypted file and a damaged file give a one-line
``DocumentError``.
"""

from __future__ import annotations

import ctypes
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..documents import INTRO, Document
from ..errors import DocumentError
from ._common import loose_date, make_document

CELL_GAP = 1.5        # a horizontal gap wider than this many font sizes starts a new segment
MARGIN_ZONE = 0.12    # running headers and footers are looked for in this share of the height
GROUP_PAGES = 5       # pages per section when the document has no structure at all
GROUP_WORDS = 3000    # ... or fewer when they hold this many words
HEADING_SIZE = 1.12   # a line this much larger than the body text may be a heading
HEADING_WORDS = 16    # a heading has at most this many words

_HYPHENS = "\u2010\u00ad\u2011"   # typesetter's hyphen, soft hyphen, non-breaking hyphen
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.I)
_MONO = re.compile(r"mono|courier|consol|code|typewriter|cmtt|menlo", re.I)
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVXLC]+\.)\s+\S")
_SENTENCE_END = re.compile(r"[.,;:!?]$")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?#+(?:\s*(?:of|/)\s*#+)?$"
                          r"|^[-\u2013\u2014 ]*#+[-\u2013\u2014 ]*$|^[ivxlc]+$")
_WORD = re.compile(r"\w+", re.U)
_PLACEHOLDER_TITLE = re.compile(r"^(untitled|microsoft word\b|document\d*$|title$|\W*$)"
                                r"|\.(pdf|docx?|odt|tex|dvi|ps|rtf|txt|indd)$", re.I)


@dataclass
class _Seg:
    """A run of characters on one baseline (a line of a column, or a table cell)."""

    text: list[str]
    x0: float
    x1: float
    bottom: float
    top: float
    size: float
    bold: bool
    first_char: int
    mono: bool = False


@dataclass
class _Line:
    """A row in reading order: one segment, or several (a table row) joined with `` | ``."""

    text: str
    page: int            # 0-based
    top: float
    bottom: float
    size: float
    bold: bool
    cells: int
    mono: bool = False       # set in a monospaced font: code, kept line by line
    pitch: float = 0.0       # baseline distance to the line before it in the same flow
    para: bool = False       # starts a paragraph


@dataclass
class _Page:
    lines: list[_Line] = field(default_factory=list)
    height: float = 0.0
    has_text: bool = False


# --------------------------------------------------------------------------- characters
def _page_segments(raw: Any, textpage: Any) -> list[_Seg]:
    """Cut a page's characters into segments (see the module docstring, step 1)."""
    n = raw.FPDFText_CountChars(textpage)
    segs: list[_Seg] = []
    cur: _Seg | None = None
    space = False
    rect = raw.FS_RECTF()
    get_unicode, get_box = raw.FPDFText_GetUnicode, raw.FPDFText_GetLooseCharBox
    get_size = raw.FPDFText_GetFontSize
    for i in range(n):
        code = get_unicode(textpage, i)
        if code in (13, 10):  # PDFium's line break
            cur, space = None, False
            continue
        if code in (32, 9, 0xA0, 0) or code == 2:  # spaces; 2 = PDFium's marker of a hyphen
            space = code != 2 or space
            if code == 2 and cur is not None:
                cur.text.append("\u00ad")
            continue
        if code == 0xFFFE or code == 0xFEFF:
            continue
        get_box(textpage, i, rect)
        size = get_size(textpage, i) or (rect.top - rect.bottom)
        x0, x1, bottom, top = rect.left, rect.right, rect.bottom, rect.top
        if cur is not None:
            gap = x0 - cur.x1
            same_line = abs(bottom - cur.bottom) < 0.5 * max(size, cur.size) or \
                (bottom < cur.top and top > cur.bottom and abs(size - cur.size) > 1)
            # Overlap within the run is fine (ligatures, kerning, combining marks); a jump
            # back before the run's start is a new segment.
            if same_line and x0 >= cur.x0 - 0.5 and gap < CELL_GAP * max(size, cur.size):
                if space or gap > 0.25 * size:
                    cur.text.append(" ")
                cur.text.append(chr(code))
                cur.x1 = max(cur.x1, x1)
                cur.top, cur.bottom = max(cur.top, top), min(cur.bottom, bottom)
                space = False
                continue
        cur = _Seg([chr(code)], x0, x1, bottom, top, size, False, i)
        segs.append(cur)
        space = False
    return segs


def _mark_bold(raw: Any, textpage: Any, segs: list[_Seg]) -> None:
    """Bold by font name (or weight) of each segment's first character: enough for headings,
    and one call per segment instead of one per character."""
    buf = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    for s in segs:
        weight = raw.FPDFText_GetFontWeight(textpage, s.first_char)
        raw.FPDFText_GetFontInfo(textpage, s.first_char, buf, 256, ctypes.byref(flags))
        name = buf.value.decode("latin-1", "replace").split("+")[-1]
        s.bold = weight >= 600 or bool(_BOLD.search(name))
        s.mono = bool(_MONO.search(name))


# ------------------------------------------------------------------------- reading order
def _gutter(segs: list[_Seg], width: float) -> float | None:
    """The x of a two-column page's gutter, or None for a one-column page."""
    if len(segs) < 10:
        return None
    best: tuple[int, float] | None = None
    lo, hi = int(width * 0.3), int(width * 0.7)
    for x in range(lo, hi + 1, 2):
        crossing = sum(1 for s in segs if s.x0 < x < s.x1)
        key = (crossing, abs(x - width / 2))
        if best is None or key < (best[0], abs(best[1] - width / 2)):
            best = (crossing, float(x))
    assert best is not None
    crossing, x = best
    left = [s for s in segs if s.x1 <= x]
    right = [s for s in segs if s.x0 >= x]
    if crossing > 0.2 * len(segs) or len(left) < 5 or len(right) < 5:
        return None
    # Columns of prose have lines that fill them; table columns (short cells) do not.
    left_w = x - min(s.x0 for s in left)
    right_w = max(s.x1 for s in right) - x
    full_left = sum(1 for s in left if s.x1 - s.x0 >= 0.7 * left_w)
    full_right = sum(1 for s in right if s.x1 - s.x0 >= 0.7 * right_w)
    if full_left < 3 or full_right < 3 or min(left_w, right_w) < 0.2 * width:
        return None
    return x


def _rows(segs: list[_Seg], page: int) -> list[_Line]:
    """Segments of one flow (sorted top-down) -> rows: same baseline = one row."""
    segs = sorted(segs, key=lambda s: (-s.bottom, s.x0))
    rows: list[list[_Seg]] = []
    for s in segs:
        if rows:
            last = rows[-1]
            ref = last[0]
            if abs(s.bottom - ref.bottom) < 0.4 * max(s.size, ref.size):
                last.append(s)
                continue
        rows.append([s])
    out = []
    for row in rows:
        row.sort(key=lambda s: s.x0)
        text = _utf16(" | ".join("".join(s.text).strip() for s in row))
        main = max(row, key=lambda s: len(s.text))
        out.append(_Line(text, page, max(s.top for s in row), min(s.bottom for s in row),
                         main.size, all(s.bold for s in row), len(row),
                         all(s.mono for s in row)))
    return out


def _utf16(text: str) -> str:
    """PDFium gives characters beyond the BMP as UTF-16 surrogate pairs: join them; a lone
    surrogate (a broken font map) becomes U+FFFD."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _order(segs: list[_Seg], x: float | None, page: int) -> list[list[_Line]]:
    """The page's flows in reading order (each a list of rows top-down); ``x`` is the gutter
    of a two-column page."""
    if x is None:
        return [_rows(segs, page)]
    flows: list[list[_Line]] = []
    band: list[_Seg] = []

    def close_band() -> None:
        if band:
            flows.append(_rows([s for s in band if s.x1 <= x], page))
            flows.append(_rows([s for s in band if s.x0 >= x], page))
            band.clear()

    for s in sorted(segs, key=lambda s: -s.top):
        if s.x0 < x < s.x1:  # spans both columns: ends the band above it
            close_band()
            flows.append(_rows([s], page))
        else:
            band.append(s)
    close_band()
    return [f for f in flows if f]


def _mask(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()).casefold())


def _drop_running(pages: list[_Page]) -> None:
    """Drop running headers/footers and page numbers (module docstring, step 3)."""
    # Keyed by text and size: a title on page 1 set large is not the running head that
    # repeats its words small on the pages after it.
    counts: Counter[tuple[str, int]] = Counter()
    for p in pages:
        counts.update({(_mask(ln.text), round(ln.size)) for ln in p.lines if _in_margin(ln, p)})
    enough = max(2, (len([p for p in pages if p.has_text]) + 1) // 2)
    for p in pages:
        p.lines = [ln for ln in p.lines if not _in_margin(ln, p) or (
            counts[_mask(ln.text), round(ln.size)] < enough
            and not _PAGE_NUMBER.match(_mask(ln.text)))]


def _in_margin(line: _Line, page: _Page) -> bool:
    zone = page.height * MARGIN_ZONE
    return line.bottom >= page.height - zone or line.top <= zone


# ---------------------------------------------------------------------------------- text
def _paragraphs(lines: list[_Line]) -> None:
    """Mark the lines that start a paragraph: a baseline distance over 1.3 times the usual
    one for the font size, a change of size or weight, a table row, a new page or column."""
    ratios = [ln.pitch / ln.size for ln in lines if ln.pitch > 0 and ln.size > 0]
    usual = statistics.median(ratios) if ratios else 1.2
    for i, ln in enumerate(lines):
        prev = lines[i - 1] if i else None
        ln.para = prev is None or prev.page != ln.page or ln.cells > 1 or prev.cells > 1 or \
            ln.pitch <= 0 or ln.pitch > 1.3 * usual * max(ln.size, prev.size) or \
            abs(ln.size - prev.size) > 0.5 or ln.bold != prev.bold
        if prev is not None and (prev.page != ln.page or ln.pitch <= 0) and ln.cells == 1 \
                and prev.cells == 1 and abs(ln.size - prev.size) <= 0.5 \
                and not _SENTENCE_END.search(prev.text) and ln.text[:1].islower():
            ln.para = False  # a paragraph running on over a page or column break


def _join(lines: list[_Line], vocab: set[str]) -> str:
    """Lines -> text: paragraphs reflowed (hyphenated breaks joined), rows on their lines."""
    out: list[str] = []
    prev_mono = False
    for ln in lines:
        text = ln.text
        was_mono, prev_mono = prev_mono, ln.mono
        if not out or ln.para:
            if out:
                out.append("\n" if (ln.cells > 1 and out and _last_cells(out)) else "\n\n")
            out.append(text)
            continue
        prev = out[-1]
        if prev and prev[-1] in _HYPHENS and text[:1].isalpha():
            out[-1] = prev[:-1] + text
        elif ln.mono and was_mono:
            out[-1] = prev + "\n" + text  # code keeps its lines
        elif prev.endswith("-") and text[:1].islower() and prev[-2:-1].isalpha():
            head = _WORD.findall(prev)[-1] if _WORD.findall(prev) else ""
            tail = _WORD.match(text)
            joined = f"{head}-{tail.group(0)}".casefold() if tail else ""
            out[-1] = prev + text if joined in vocab else prev[:-1] + text
        else:
            out[-1] = prev + " " + text
    return "".join(out).replace("\u00ad", "")


def _last_cells(out: list[str]) -> bool:
    return " | " in out[-1]


# ---------------------------------------------------------------------------- the reader
class PdfError(Exception):
    """A PDF that cannot be read (the reason is one line)."""


def _open(path: Path) -> Any:
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as e:
        msg = str(e).lower()
        if "password" in msg:
            raise PdfError("encrypted (needs a password)") from None
        if "format" in msg or "file" in msg:
            raise PdfError(f"damaged or not a PDF ({str(e).strip().rstrip('.')})") from None
        raise PdfError(f"cannot be opened by PDFium ({e})") from None
    except OSError as e:
        raise PdfError(f"cannot read: {e.strerror or e}") from None


def _read_pages(pdf: Any) -> list[_Page]:
    import pypdfium2.raw as raw

    found: list[tuple[list[_Seg], float, float, float | None]] = []
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            width, height = page.get_size()
            textpage = page.get_textpage()
            try:
                segs = [s for s in _page_segments(raw, textpage) if "".join(s.text).strip()]
                _mark_bold(raw, textpage, segs)
            finally:
                textpage.close()
        finally:
            page.close()
        found.append((segs, width, height, _gutter(_body(segs, height), width)))
    # A page of a two-column document may not show its columns clearly (the last page, a page
    # of code): when most pages have one gutter, a page that nothing crosses there has it too.
    gutters = [g for _, _, _, g in found if g is not None]
    common = statistics.median(gutters) if len(gutters) * 2 >= len(found) and gutters \
        else None
    pages: list[_Page] = []
    for index, (segs, _width, height, gutter) in enumerate(found):
        if gutter is None and common is not None:
            body = _body(segs, height)
            if sum(1 for s in body if s.x0 < common < s.x1) <= 0.1 * len(body):
                gutter = common
        p = _Page(height=height, has_text=bool(segs))
        for flow in _order(segs, gutter, index):
            for i, ln in enumerate(flow):
                ln.pitch = flow[i - 1].bottom - ln.bottom if i else 0.0
            for ln in flow:
                # PDF y grows upwards; store distances from the top of the page.
                ln.top, ln.bottom = height - ln.top, height - ln.bottom
                p.lines.append(ln)
        pages.append(p)
    return pages


def _body(segs: list[_Seg], height: float) -> list[_Seg]:
    """Segments outside the margin zones (running headers may cross the gutter)."""
    zone = height * MARGIN_ZONE
    return [s for s in segs if zone < s.bottom and s.top < height - zone]


def _outline(pdf: Any) -> list[tuple[str, int, float | None]]:
    """(title, 0-based page, y from the top of the page or None) of every bookmark."""
    out = []
    try:
        for bm in pdf.get_toc(max_depth=16):
            title = " ".join((bm.get_title() or "").split())
            dest = bm.get_dest()
            if not title or dest is None:
                continue
            index = dest.get_index()
            if index is None or not 0 <= index < len(pdf):
                continue
            y = None
            try:
                _mode, view = dest.get_view()
                if len(view) >= 2 and view[1]:
                    y = float(view[1])
            except Exception:  # a destination without a usable view: the page start will do
                y = None
            out.append((title, index, y))
    except Exception:  # a damaged outline is no outline
        return []
    return out


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _find_heading(lines: list[_Line], start: int, title: str, page: int,
                  y: float | None, height: float) -> tuple[int, int] | None:
    """(first line, lines it spans) of the bookmark ``title`` on ``page``, searching from
    ``start``; failing that, the first line at or below the bookmark's position (0 lines)."""
    want = _words(title)
    if not want:
        return None
    first_on_page = None
    for i in range(start, len(lines)):
        ln = lines[i]
        if ln.page < page:
            continue
        if ln.page > page:
            break
        if first_on_page is None:
            first_on_page = i
        got: list[str] = []
        for j in range(i, min(i + 4, len(lines))):
            got += _words(lines[j].text)
            if got == want:
                return i, j - i + 1
            if want[: len(got)] != got:
                break
    if first_on_page is None:
        return None
    if y is not None:
        top = height - y
        for i in range(first_on_page, len(lines)):
            if lines[i].page != page:
                break
            if lines[i].bottom >= top:
                return i, 0
    return first_on_page, 0


def _layout_headings(lines: list[_Line], title: str) -> list[tuple[int, int, str]]:
    """(first line, lines it spans, heading) found from the layout (module docstring, 5)."""
    sizes: Counter[float] = Counter()
    for ln in lines:
        sizes[round(ln.size, 1)] += len(ln.text)
    if not sizes:
        return []
    body = sizes.most_common(1)[0][0]
    title_words = _words(title)

    def candidate(ln: _Line) -> bool:
        n = len(ln.text.split())
        if ln.cells > 1 or not ln.para or n == 0 or n > HEADING_WORDS:
            return False
        if _SENTENCE_END.search(ln.text) and not _NUMBERED.match(ln.text):
            return False
        if not any(c.isalpha() for c in ln.text):  # '3 1.7': only when set larger
            return ln.size >= body * HEADING_SIZE and bool(_NUMBERED.match(ln.text))
        return ln.size >= body * HEADING_SIZE or (ln.bold and ln.size >= body * 0.95)

    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if not candidate(ln):
            i += 1
            continue
        j = i + 1  # a heading set on two or three lines: same style, no paragraph gap
        while j < len(lines) and j - i < 3 and lines[j].cells == 1 and not lines[j].para \
                and abs(lines[j].size - ln.size) < 0.5 and lines[j].bold == ln.bold \
                and lines[j].page == ln.page:
            j += 1
        text = " ".join(x.text for x in lines[i:j])
        if len(text.split()) <= HEADING_WORDS and not (ln.page == 0 and _words(text)
                                                       == title_words):
            out.append((i, j - i, text))
        i = j
    return out


def _meta_date(value: str) -> str | None:
    m = re.match(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?", value.strip())
    if not m:
        return None
    y, mo, d = m.groups()
    return loose_date("-".join(x for x in (y, mo, d) if x))


_DATE_TEXT = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\.?\s+\d{4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+"
    r"\d{1,2},\s*\d{4})", re.I)


def _text_date(text: str) -> str | None:
    for m in _DATE_TEXT.finditer(text):
        s = m.group(1)
        mm = re.match(r"([A-Za-z]+)\.?\s+(\d{1,2}),\s*(\d{4})", s)
        if mm:
            s = f"{mm.group(2)} {mm.group(1)} {mm.group(3)}"
        d = loose_date(s)
        if d:
            return d
    return None


_NAME = re.compile(r"^[A-Z][\w.'\u2019-]*(?:\s+(?:(?:van|von|de|der|den|da|di|du|del|la|le|"
                   r"dos|ten|ter|bin|ibn)\s+)*[A-Z][\w.'\u2019-]*){1,3}$")


def _split_names(value: str) -> list[str]:
    value = re.sub(r"^\s*(?:by|authors?:?)\s+", "", value, flags=re.I)
    parts = re.split(r"\s*;\s*|\s*,\s*|\s+and\s+|\s*&\s*", value.strip())
    return [p.strip() for p in parts if p.strip()]


def parse_pdf(path: Path, doc_id: str) -> dict[str, Any]:
    """The DOCUMENTS.md object of one PDF; raises ``PdfError`` (one line) when it has none."""
    pdf = _open(path)
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            raise PdfError("has no pages")
        try:
            info = pdf.get_metadata_dict(skip_empty=True)
        except Exception:
            info = {}
        outline = _outline(pdf)
        pages = _read_pages(pdf)
    finally:
        pdf.close()
    if not any(p.has_text for p in pages):
        raise PdfError(f"no page of its {n_pages} has text (scanned?); OCR is out of scope")
    _drop_running(pages)
    # A scanned page inside a text PDF still carries the running header: judge it after.
    empty = [i + 1 for i, p in enumerate(pages) if not p.lines]
    lines = [ln for p in pages for ln in p.lines]
    _paragraphs(lines)
    vocab = {w.casefold() for ln in lines for w in re.findall(r"\w+(?:-\w+)+", ln.text)}
    meta: dict[str, Any] = {"format": "pdf", "pages": n_pages, "file": path.name}
    if empty:
        meta["pages_without_text"] = empty

    # -- title, authors, date
    title = " ".join(str(info.get("Title", "")).split())
    if title and not _PLACEHOLDER_TITLE.search(title):
        meta["title_from"] = "metadata"
    else:
        title = ""
    first = [ln for ln in lines if ln.page == 0]  # (page 0 lines come first in `lines`)
    title_lines: set[int] = set()  # indexes of the title's lines: not repeated as text
    top_line = None
    if first:
        biggest = max(ln.size for ln in first)
        head = [i for i, ln in enumerate(first) if ln.size >= biggest - 0.5 and ln.cells == 1]
        if head and biggest > min(ln.size for ln in first) + 0.5:
            top_line = head[0]
            k = top_line
            while k + 1 < len(first) and k + 1 in head and k - top_line < 2:
                k += 1
            if not title:
                title = " ".join(ln.text for ln in first[top_line:k + 1])
                meta["title_from"] = "first page"
            if _words(" ".join(ln.text for ln in first[top_line:k + 1])) == _words(title):
                title_lines.update(range(top_line, k + 1))  # not repeated in the intro
    if not title:
        title = path.stem
        meta["title_from"] = "file name"
    authors = _split_names(str(info.get("Author", "")))
    if authors:
        meta["authors_from"] = "metadata"
    elif top_line is not None:
        for ln in first[top_line + 1: top_line + 4]:
            names = _split_names(ln.text)
            if names and all(_NAME.match(n) for n in names) and ln.cells == 1:
                authors = names
                meta["authors_from"] = "first page"
                break
    date = _meta_date(str(info.get("CreationDate", "") or ""))
    if date:
        meta["date_from"] = "metadata"
    else:
        date = _text_date(" ".join(ln.text for ln in first))
        if date:
            meta["date_from"] = "first page"

    # -- sections
    starts: list[tuple[int, int, str]] = []  # (first line, heading lines, heading)
    if outline:
        meta["sections_from"] = "outline"
        pos = 0
        for k, (name, page, y) in enumerate(outline):
            if k == 0 and _words(name) == _words(title):
                # The document's own title as the top bookmark: a title, not a section.
                found = _find_heading(lines, pos, name, page, y, pages[page].height)
                if found and found[1]:
                    pos = found[0] + found[1]
                    title_lines.update(range(found[0], pos))
                continue
            found = _find_heading(lines, pos, name, page, y, pages[page].height)
            if found is None:
                found = (len(lines), 0)
            starts.append((found[0], found[1], name))
            pos = found[0] + found[1]
    else:
        starts = _layout_headings(lines, title)
        if starts:
            meta["sections_from"] = "layout"
    sections: list[dict[str, Any]] = []

    def add(heading: str, body: list[_Line], head: list[_Line]) -> None:
        span = [ln.page + 1 for ln in head + body]
        if not span and not heading:
            return
        text = _join(body, vocab)
        if heading == INTRO and not text.strip():
            return
        entry: dict[str, Any] = {"heading": heading, "text": text}
        if span:
            entry["pages"] = [min(span), max(span)]
        elif sections and "pages" in sections[-1]:
            last = sections[-1]["pages"][1]
            entry["pages"] = [last, last]
        sections.append(entry)

    if starts:
        add(INTRO, [ln for i, ln in enumerate(lines[:starts[0][0]]) if i not in title_lines],
            [])
        for k, (i, n_head, heading) in enumerate(starts):
            end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
            add(heading, lines[i + n_head:max(end, i + n_head)], lines[i:i + n_head])
    else:
        meta["sections_from"] = "pages"
        group: list[_Line] = []
        first_page = 0
        for index, _p in enumerate(pages):
            page_lines = [ln for ln in lines if ln.page == index]
            words = sum(len(ln.text.split()) for ln in group)
            if group and (index - first_page >= GROUP_PAGES or words >= GROUP_WORDS):
                _add_group(sections, group, first_page, index - 1, vocab)
                group, first_page = [], index
            group.extend(page_lines)
        _add_group(sections, group, first_page, len(pages) - 1, vocab)
    obj: dict[str, Any] = {"id": doc_id, "title": title, "sections": sections, "meta": meta}
    if authors:
        obj["author"] = authors
    if date:
        obj["date"] = date
    subject = " ".join(str(info.get("Subject", "")).split())
    keywords = " ".join(str(info.get("Keywords", "")).split())
    infobox = [[k, v] for k, v in (("Subject", subject), ("Keywords", keywords)) if v]
    if infobox:
        obj["infobox"] = infobox
    return obj


def _add_group(sections: list[dict[str, Any]], group: list[_Line], first: int, last: int,
               vocab: set[str]) -> None:
    name = f"Pages {first + 1}\u2013{last + 1}" if last > first else f"Page {first + 1}"
    sections.append({"heading": name, "text": _join(group, vocab),
                     "pages": [first + 1, last + 1]})


def read_pdf(path: Path, doc_id: str) -> Document | DocumentError:
    """One PDF file as one document, or the one-line reason it is skipped."""
    try:
        obj = parse_pdf(path, doc_id)
    except PdfError as e:
        return DocumentError(str(e), str(path))
    return make_document(obj, str(path))
