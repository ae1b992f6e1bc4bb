"""Make the PDF, DOCX and EPUB test files from PEP text, with real tools.

    python tests/data/formats/make_fixtures.py                  # the fixtures, in files/
    python tests/data/formats/make_fixtures.py --bench 40       # a benchmark set in bench/out/

Needs (development only; the tests read the committed files): ``weasyprint`` and
``python-docx`` and ``pypdf`` (pip), Pillow (a weasyprint dependency), LibreOffice
(``apt-get install libreoffice-writer-nogui``) and pandoc (``apt-get install pandoc``), and the
shared PEP corpus (``../shared/data/corpora/peps``, or ``$SIEVE_SHARED/data/corpora/peps``),
read through sieve-lite's own reStructuredText builder.

What is made (in ``files/``), and why (``truth.jsonl`` beside that folder holds, per file, the
source text that went in: title, headings and section texts in order):

* ``pep-outline.pdf``: weasyprint, one column, an outline (bookmarks) from the HTML headings,
  a running header and a ``Page N of M`` footer, a table, automatic hyphenation.
* ``pep-two-column.pdf``: two columns, no outline, numbered bold headings (``2.1 ...``), no
  document metadata (title, authors and date are on the first page), running header and
  footer, a table, hyphenation.
* ``pep-image-page.pdf``: one column with an outline and one page that is only an image of
  text (the kind of page a scanner makes).
* ``pep-no-structure.pdf``: paragraphs only, no headings, no outline: pages are grouped.
* ``libreoffice.pdf``: ``report.docx`` exported by LibreOffice without bookmarks (another
  typesetter's layout: headings by font only).
* ``scanned.pdf``: two pages that are images only (Pillow's PDF writer).
* ``encrypted.pdf``: ``pep-outline.pdf`` encrypted with a user password (pypdf).
* ``damaged.pdf``: a PDF header followed by garbage.
* ``report.docx``: python-docx: core properties, Title, Heading 1/2 styles, a table.
* ``book.epub`` (EPUB 3: nav document and NCX) and ``book-epub2.epub`` (EPUB 2: NCX only):
  pandoc from Markdown, chapters with sections.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
# The shared folder beside the repository, or where SIEVE_SHARED says (a git worktree).
PEPS = Path(os.environ.get("SIEVE_SHARED") or ROOT.parent / "shared") / "data/corpora/peps"

from sieve_lite.documents import INTRO, Document  # noqa: E402
from sieve_lite.sources import iter_documents  # noqa: E402

CSS = """
@page { size: A4; margin: 2.2cm 2cm;
  @top-center { content: "%(header)s"; font-size: 8pt; color: #555 }
  @bottom-center { content: "Page " counter(page) " of " counter(pages); font-size: 8pt } }
body { font-family: "DejaVu Serif"; font-size: 10pt; line-height: 1.3; text-align: justify;
       hyphens: auto }
h1 { font-size: 20pt; text-align: left; hyphens: manual }
h2 { font-size: 14pt; text-align: left; hyphens: manual; margin: 1em 0 0.4em }
h3 { font-size: 12pt; text-align: left; hyphens: manual; margin: 0.8em 0 0.3em }
p.byline { text-align: left; font-size: 11pt; hyphens: manual }
pre { font-family: "DejaVu Sans Mono"; font-size: 8pt; white-space: pre-wrap;
      text-align: left; hyphens: manual }
table { border-collapse: collapse; margin: 0.8em 0 }
td, th { border: 0.5pt solid #888; padding: 2pt 9pt; text-align: left; hyphens: manual }
"""
TWO_COLUMNS = "body { columns: 2; column-gap: 0.9cm } h1, p.byline { column-span: all }"
NO_OUTLINE = "h1, h2, h3 { bookmark-level: none }"
IMAGE_PAGE = "div.scan { break-before: page; break-after: page } div.scan img { width: 16cm }"


# ------------------------------------------------------------------------------ sources
def pep(number: int) -> Document:
    path = PEPS / f"pep-{number:04d}.rst"
    return next(d for d in iter_documents([path], "rst") if isinstance(d, Document))


def paragraphs(text: str) -> list[tuple[str, str]]:
    """(kind, text): 'p' for prose (reflowed), 'pre' for an indented block."""
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        if block.startswith((" ", "\t")):
            out.append(("pre", block.strip("\n")))
        else:
            out.append(("p", " ".join(block.split())))
    return out


def trim(doc: Document, sections: int, words_per_section: int) -> list[tuple[str, list]]:
    """The first ``sections`` sections (intro kept), each cut to whole paragraphs of about
    ``words_per_section`` words, and sections left empty by the source dropped."""
    out = []
    for s in doc.sections:
        paras, n = [], 0
        for kind, text in paragraphs(s.text):
            if n >= words_per_section:
                break
            paras.append((kind, text))
            n += len(text.split())
        if paras:
            out.append((s.heading, paras))
        if len(out) >= sections:
            break
    return out


def truth_text(title: str, intro: list[str], sections: list[tuple[str, list]],
               table: list[list[str]] | None) -> str:
    parts = [title, *intro]
    if table:
        parts += [" ".join(row) for row in table]
    for heading, paras in sections:
        if heading != INTRO:
            parts.append(heading)
        parts += [t for _, t in paras]
    return "\n".join(parts)


def info_table(doc: Document) -> list[list[str]]:
    rows = [["Field", "Value"]]
    rows += [[k, v] for k, v in doc.infobox if k in ("PEP", "Status", "Type", "Created")]
    return rows


# ---------------------------------------------------------------------------------- PDF
def html_page(doc: Document, sections: list[tuple[str, list]], *, metadata: bool,
              numbered: bool, table: list[list[str]] | None, byline: list[str],
              image: str | None = None, headings: bool = True) -> tuple[str, list[str]]:
    """(HTML, the headings as they appear)."""
    head = ""
    if metadata:
        head = (f"<title>{html.escape(doc.title)}</title>"
                f"<meta name=author content=\"{html.escape(', '.join(doc.authors))}\">"
                f"<meta name=dcterms.created content=\"{doc.date}\">")
    body = [f"<h1>{html.escape(doc.title)}</h1>"]
    body += [f"<p class=byline>{html.escape(b)}</p>" for b in byline]
    if table:
        body.append("<table>" + "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in table) + "</table>")
    shown: list[str] = []
    n = 0
    for k, (heading, paras) in enumerate(sections):
        if heading != INTRO and headings:
            n += 1
            name = f"{n} {heading}" if numbered else heading
            shown.append(name)
            body.append(f"<h2>{html.escape(name)}</h2>")
        elif heading != INTRO:
            shown.append(heading)
        for kind, text in paras:
            tag = "pre" if kind == "pre" else "p"
            body.append(f"<{tag}>{html.escape(text)}</{tag}>")
        if image and k == 1:
            body.append(f"<div class=scan><img src=\"{image}\"></div>")
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8>{head}</head>"
            f"<body>{''.join(body)}</body></html>")
    return page, shown


def write_pdf(page: str, css: str, out: Path, base: Path) -> None:
    import weasyprint

    weasyprint.HTML(string=page, base_url=str(base)).write_pdf(
        out, stylesheets=[weasyprint.CSS(string=css)])


def text_image(lines: list[str], out: Path) -> None:
    """A page of text as a picture only (what a scanner would give)."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(img)
    try:
        font = ImageFont.truetype("DejaVuSerif.ttf", 28)
    except OSError:
        font = ImageFont.load_default()
    y = 120
    for line in lines:
        draw.text((100, y), line, fill=0, font=font)
        y += 44
    img.save(out)


def pdf_cases(out: Path, tmp: Path, doc: Document, stem: str, *, full: bool) -> list[dict]:
    """One-column with outline and two-column without, for one PEP (the benchmark set)."""
    secs = trim(doc, 10_000, 10_000) if full else trim(doc, 9, 160)
    rows = info_table(doc)
    cases = []
    page, shown = html_page(doc, secs, metadata=True, numbered=False, table=rows, byline=[])
    name = f"{stem}-outline.pdf"
    write_pdf(page, CSS % {"header": html.escape(doc.title)}, out / name, tmp)
    cases.append({"file": name, "kind": "pdf", "columns": 1, "outline": True,
                  "title": doc.title, "headings": shown,
                  "text": truth_text(doc.title, [], _as_shown(secs, shown), rows)})
    by = ["by " + " and ".join(doc.authors), f"Created {_long_date(doc.date)}"]
    page, shown = html_page(doc, secs, metadata=False, numbered=True, table=rows, byline=by)
    name = f"{stem}-two-column.pdf"
    write_pdf(page, CSS % {"header": f"PEP {doc.id[4:].lstrip('0')}"} + TWO_COLUMNS
              + NO_OUTLINE, out / name, tmp)
    cases.append({"file": name, "kind": "pdf", "columns": 2, "outline": False,
                  "title": doc.title, "headings": shown,
                  "text": truth_text(doc.title, by, _as_shown(secs, shown), rows)})
    return cases


def _as_shown(secs: list[tuple[str, list]], shown: list[str]) -> list[tuple[str, list]]:
    it = iter(shown)
    return [(h if h == INTRO else next(it), p) for h, p in secs]


def _long_date(date: str | None) -> str:
    import datetime

    if not date or len(date) != 10:
        return date or ""
    return datetime.date.fromisoformat(date).strftime("%d %B %Y")


# ----------------------------------------------------------------------------- DOCX, EPUB
def make_docx(doc: Document, secs: list[tuple[str, list]], rows: list[list[str]],
              out: Path) -> dict:
    import datetime

    import docx

    d = docx.Document()
    d.core_properties.title = doc.title
    d.core_properties.author = "; ".join(doc.authors)
    if doc.date and len(doc.date) == 10:
        d.core_properties.created = datetime.datetime.fromisoformat(doc.date + "T12:00:00")
    d.add_heading(doc.title, level=0)  # the 'Title' style
    table = d.add_table(rows=len(rows), cols=len(rows[0]))
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    shown = []
    for i, (heading, paras) in enumerate(secs):
        if heading != INTRO:
            d.add_heading(heading, level=1 if i % 3 != 2 else 2)
            shown.append(heading)
        for kind, text in paras:
            p = d.add_paragraph(text)
            if kind == "pre":
                p.style = d.styles["No Spacing"]
    d.save(out)
    return {"file": out.name, "kind": "docx", "title": doc.title, "headings": shown,
            "text": truth_text(doc.title, [], secs, rows)}


def make_epub(docs: list[tuple[Document, list]], title: str, out: Path, version: str) -> dict:
    """One book: each PEP a chapter (# heading), its sections ## headings; pandoc."""
    md = [f"---\ntitle: \"{title}\"\nauthor: [Python developers]\ndate: 2024-05-01\n"
          "lang: en\n---\n"]
    shown: list[str] = []
    text = [title]
    for doc, secs in docs:
        md.append(f"# {doc.title}\n")
        shown.append(doc.title)
        text.append(doc.title)
        for heading, paras in secs:
            if heading != INTRO:
                md.append(f"## {heading}\n")
                shown.append(heading)
                text.append(heading)
            for kind, t in paras:
                if kind == "pre":
                    md.append("```\n" + t + "\n```\n")
                else:
                    # Markdown would read these as emphasis, code, HTML, links or TeX math.
                    md.append("".join("\\" + c if c in "$*_`<[" else c for c in t) + "\n")
                text.append(t)
    src = out.with_suffix(".md")
    src.write_text("\n".join(md), encoding="utf-8")
    try:
        subprocess.run(["pandoc", "-f", "markdown", "-t", version, "--epub-chapter-level=1",
                        "-o", str(out), str(src)], check=True)
    finally:
        src.unlink()
    return {"file": out.name, "kind": "epub", "title": title, "headings": shown,
            "text": "\n".join(text)}


def libreoffice_pdf(docx_path: Path, out: Path, tmp: Path) -> None:
    flt = 'pdf:writer_pdf_Export:{"ExportBookmarks":{"type":"boolean","value":"false"}}'
    subprocess.run(["soffice", "--headless", "--convert-to", flt, "--outdir", str(tmp),
                    str(docx_path)], check=True, capture_output=True, timeout=300)
    shutil.move(tmp / (docx_path.stem + ".pdf"), out)


# ------------------------------------------------------------------------------------ main
def fixtures(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    truth: list[dict] = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        # 1. one column, outline, header/footer, table, hyphenation
        doc = pep(1)
        secs = trim(doc, 8, 140)
        rows = info_table(doc)
        page, shown = html_page(doc, secs, metadata=True, numbered=False, table=rows,
                                byline=[])
        write_pdf(page, CSS % {"header": "PEP 1 \u2013 PEP Purpose and Guidelines"},
                  out / "pep-outline.pdf", tmp)
        truth.append({"file": "pep-outline.pdf", "kind": "pdf", "columns": 1, "outline": True,
                      "title": doc.title, "headings": shown,
                      "text": truth_text(doc.title, [], _as_shown(secs, shown), rows)})
        # 2. two columns, no outline, numbered headings, no metadata
        doc = pep(257)
        secs = trim(doc, 8, 170)
        rows = info_table(doc)
        by = ["by " + " and ".join(doc.authors), f"Created {_long_date(doc.date)}"]
        page, shown = html_page(doc, secs, metadata=False, numbered=True, table=rows,
                                byline=by)
        # The running head repeats the title, small: it must not take the title away.
        write_pdf(page, CSS % {"header": doc.title} + TWO_COLUMNS + NO_OUTLINE,
                  out / "pep-two-column.pdf", tmp)
        truth.append({"file": "pep-two-column.pdf", "kind": "pdf", "columns": 2,
                      "outline": False, "title": doc.title, "headings": shown,
                      "authors": list(doc.authors), "date": doc.date,
                      "text": truth_text(doc.title, by, _as_shown(secs, shown), rows)})
        # 3. an image-only page inside a text PDF
        doc = pep(20)
        secs = trim(doc, 4, 200)
        scan = tmp / "scan.png"
        text_image(["This page is a picture of text.", "It has no text layer at all,",
                    "as a scanned page would."], scan)
        page, shown = html_page(doc, secs, metadata=True, numbered=False, table=None,
                                byline=[], image=scan.name)
        write_pdf(page, CSS % {"header": "PEP 20"} + IMAGE_PAGE, out / "pep-image-page.pdf",
                  tmp)
        truth.append({"file": "pep-image-page.pdf", "kind": "pdf", "columns": 1,
                      "outline": True, "title": doc.title, "headings": shown,
                      "text": truth_text(doc.title, [], _as_shown(secs, shown), None)})
        # 4. no structure: paragraphs only
        doc = pep(3)
        secs = trim(doc, 6, 400)
        page, _ = html_page(doc, secs, metadata=True, numbered=False, table=None, byline=[],
                            headings=False)
        write_pdf(page, CSS % {"header": "PEP 3"}, out / "pep-no-structure.pdf", tmp)
        truth.append({"file": "pep-no-structure.pdf", "kind": "pdf", "columns": 1,
                      "outline": True, "title": doc.title, "headings": [],
                      "text": truth_text(doc.title, [], [(INTRO, p) for _, p in secs],
                                         None)})
        # 5. DOCX, and LibreOffice's PDF of it without bookmarks
        doc = pep(12)
        secs = trim(doc, 8, 150)
        rows = info_table(doc)
        truth.append(make_docx(doc, secs, rows, out / "report.docx"))
        libreoffice_pdf(out / "report.docx", out / "libreoffice.pdf", tmp)
        entry = dict(truth[-1], file="libreoffice.pdf", kind="pdf", columns=1, outline=False)
        truth.append(entry)
        # 6. EPUB 3 and EPUB 2
        book = [(pep(n), trim(pep(n), 5, 120)) for n in (7, 9)]
        truth.append(make_epub(book, "Two Python Style PEPs", out / "book.epub", "epub3"))
        truth.append(make_epub(book, "Two Python Style PEPs", out / "book-epub2.epub",
                               "epub2"))
        # 7. files that must be skipped with a reason
        scans = []
        for i in range(2):
            img = tmp / f"scan{i}.png"
            text_image([f"Scanned page {i + 1}.", "No text layer here."], img)
            scans.append(img)
        from PIL import Image

        pics = [Image.open(p).convert("RGB") for p in scans]
        pics[0].save(out / "scanned.pdf", save_all=True, append_images=pics[1:],
                     resolution=150)
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(out / "pep-outline.pdf"))
        writer.encrypt(user_password="secret", owner_password="owner", algorithm="AES-128")
        buf = io.BytesIO()
        writer.write(buf)
        (out / "encrypted.pdf").write_bytes(buf.getvalue())
        (out / "damaged.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
    # Beside the folder, not in it: a build of files/ must see only the test files.
    with open(out.parent / "truth.jsonl", "w", encoding="utf-8") as f:
        for t in truth:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    print(f"wrote the fixtures to {out} and their source text to {out.parent}/truth.jsonl")


def bench_set(out: Path, count: int) -> None:
    """``count`` long PEPs, each as a one-column PDF with outline, a two-column PDF without,
    a DOCX and (in groups of four) EPUB chapters."""
    out.mkdir(parents=True, exist_ok=True)
    docs = []
    for path in sorted(PEPS.glob("pep-*.rst")):
        d = next((x for x in iter_documents([path], "rst") if isinstance(x, Document)), None)
        if d and sum(1 for s in d.sections if s.heading != INTRO and s.text.strip()) >= 5 \
                and 2500 <= sum(len(s.text.split()) for s in d.sections) <= 9000:
            docs.append(d)
        if len(docs) >= count:
            break
    truth = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for d in docs:
            truth += pdf_cases(out, tmp, d, d.id, full=True)
            truth.append(make_docx(d, trim(d, 10_000, 10_000), info_table(d),
                                   out / f"{d.id}.docx"))
        for k in range(0, len(docs), 4):
            group = docs[k:k + 4]
            truth.append(make_epub([(d, trim(d, 10_000, 10_000)) for d in group],
                                   f"PEPs {group[0].id} to {group[-1].id}",
                                   out / f"book-{k // 4 + 1:02d}.epub", "epub3"))
    with open(out.parent / f"{out.name}-truth.jsonl", "w", encoding="utf-8") as f:
        for t in truth:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    print(f"wrote {len(truth)} files to {out} and their source text beside it")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", type=int, default=0, help="make a benchmark set of N PEPs")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if not PEPS.is_dir():
        sys.exit(f"the PEP corpus is not at {PEPS}")
    if args.bench:
        bench_set(args.out or ROOT / "bench" / "out" / "formats", args.bench)
    else:
        fixtures(args.out or HERE / "files")


if __name__ == "__main__":
    main()
