"""Which PDF library: text fidelity and speed of the permissive candidates on the same files.

    python bench/pdf_libs.py                 # the benchmark set of `make formats-bench`
    python bench/pdf_libs.py --files 8       # fewer files per kind (pdfminer is slow)

Each library extracts the plain text of every page of the generated one-column (outline) and
two-column PDFs, in one process; we report pages per CPU-second, and word recall and
precision in order against the source text (``bench/fidelity.py``). The libraries' own text is
taken as they give it (no header removal, no heading logic): this measures what each gives us
to build on. ``sieve-lite`` is our builder (``sources/pdf.py``, on pypdfium2) for comparison.
Licences: pypdfium2 Apache-2.0/BSD-3-Clause (PDFium BSD-3), pdftext Apache-2.0, pypdf
BSD-3-Clause, pdfplumber MIT, pdfminer.six MIT (PyMuPDF, AGPL, is not a candidate).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fidelity import flat_text, word_fidelity  # noqa: E402


def pdfium_text(path: Path) -> tuple[str, int]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    out = []
    for page in pdf:
        tp = page.get_textpage()
        out.append(tp.get_text_range())
        tp.close()
        page.close()
    n = len(pdf)
    pdf.close()
    return "\n".join(out), n


def pdftext_text(path: Path) -> tuple[str, int]:
    import pypdfium2 as pdfium
    from pdftext.extraction import plain_text_output

    n = len(pdfium.PdfDocument(str(path)))
    return plain_text_output(str(path), sort=True, hyphens=False), n


def pypdf_text(path: Path) -> tuple[str, int]:
    from pypdf import PdfReader

    r = PdfReader(path)
    return "\n".join(p.extract_text() or "" for p in r.pages), len(r.pages)


def plumber_text(path: Path) -> tuple[str, int]:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return "\n".join(p.extract_text() or "" for p in pdf.pages), len(pdf.pages)


def pdfminer_text(path: Path) -> tuple[str, int]:
    import pypdfium2 as pdfium
    from pdfminer.high_level import extract_text

    n = len(pdfium.PdfDocument(str(path)))
    return extract_text(str(path)), n


def ours(path: Path) -> tuple[str, int]:
    from sieve_lite.sources.pdf import parse_pdf

    obj = parse_pdf(path, path.stem)
    return flat_text(obj), obj["meta"]["pages"]


LIBS: dict[str, Callable[[Path], tuple[str, int]]] = {
    "pypdfium2": pdfium_text, "pdftext": pdftext_text, "pypdf": pypdf_text,
    "pdfplumber": plumber_text, "pdfminer.six": pdfminer_text, "sieve-lite": ours}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=12, help="files per kind")
    ap.add_argument("--folder", type=Path, default=ROOT / "bench" / "out" / "formats")
    args = ap.parse_args()
    truth_file = args.folder.parent / f"{args.folder.name}-truth.jsonl"
    if not truth_file.exists():
        sys.exit(f"no benchmark set at {args.folder}; run 'make formats-bench' first")
    truth = [json.loads(x) for x in truth_file.read_text().splitlines()]
    kinds: dict[str, list[dict]] = {}
    for t in truth:
        if t["kind"] == "pdf":
            kinds.setdefault(f"{t['columns']}-column", []).append(t)
    import os

    print(f"load average {os.getloadavg()[0]:.2f}; {args.files} files per kind")
    for kind, items in sorted(kinds.items()):
        items = items[: args.files]
        print(f"\n== {kind} PDFs: {len(items)} files")
        for name, fn in LIBS.items():
            try:
                fn(args.folder / items[0]["file"])  # imports and warm-up
            except ImportError as e:
                print(f"{name:13s} not installed ({e.name})")
                continue
            pages, cpu, rec, prec = 0, 0.0, [], []
            for t in items:
                c0 = time.process_time()
                text, n = fn(args.folder / t["file"])
                cpu += time.process_time() - c0
                pages += n
                r, p = word_fidelity(t["text"], text)
                rec.append(r)
                prec.append(p)
            print(f"{name:13s} {pages / cpu:7.1f} pages/CPU-s   word recall median "
                  f"{statistics.median(rec):.3f} min {min(rec):.3f}   precision median "
                  f"{statistics.median(prec):.3f} min {min(prec):.3f}")


if __name__ == "__main__":
    main()
