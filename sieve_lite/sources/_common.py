"""Helpers shared by the builders: reading files, trimming section texts, loose dates."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..documents import INTRO, Document, date_span
from ..errors import DocumentError

__all__ = ["INTRO", "loose_date", "make_document", "read_text", "strip_emails", "tidy"]


def read_text(path: Path) -> str | DocumentError:
    """The file as text (UTF-8, a BOM dropped, newlines made ``\\n``), or the reason it is not."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        return DocumentError(f"cannot read: {e.strerror or e}", str(path))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        return DocumentError(f"not valid UTF-8 ({e.reason} at byte {e.start})", f"{path}:{line}")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def tidy(lines: list[str], start: int = 0, end: int | None = None) -> str:
    """``lines[start:end]`` as one text without blank lines at either end, right-stripped.

    Indentation of the first kept line is preserved (a literal block stays a literal block);
    this is also what the reference PEP converter of ``bql-examples/corpus.jsonl`` does.
    """
    if end is None:
        end = len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end]).rstrip()


# An address in angle brackets, written plainly or spelled out against harvesting
# ('<vinay_sajip at red-dove.com>', as 27 PEPs do); a URL (it has a '/') is not one.
_EMAIL = re.compile(r"\s*<[^<>\s@/]+(?:@|\s+at\s+)[^<>\s/]+>")


def strip_emails(value: str) -> str:
    """``'Ann <ann@x.org>, Bob <b at y.org>'`` -> ``'Ann, Bob'`` (only ``<...@...>`` and
    ``<... at ...>``; URLs stay)."""
    return _EMAIL.sub("", value).strip()


_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_ISO = re.compile(r"(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?(?![\d])")
_DMY = re.compile(r"(\d{1,2})[-/. ]([A-Za-z]{3})[A-Za-z]*\.?[-/. ,]*(\d{4})")
_DMY_NUM = re.compile(r"(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})")


def loose_date(value: Any) -> str | None:
    """A date written by hand -> ``YYYY``/``YYYY-MM``/``YYYY-MM-DD``, or None if unreadable.

    Accepts ``2014-03-11``, ``(2016-06-17)``, ``2020/05/18``, ``2023-10-3``, ``11-Mar-2001``,
    ``23-07-2014`` (day first when unambiguous), ISO timestamps and ``datetime.date`` objects.
    An impossible date (``2019-02-29``) gives None: converted sources never fail on a date, the
    raw value stays readable wherever the builder also keeps it (infobox).
    """
    if value is None:
        return None
    if hasattr(value, "isoformat") and not isinstance(value, str):
        value = value.isoformat()
    s = str(value).strip().strip("()[]").strip()
    if not s:
        return None
    out: str | None = None
    m = _DMY.match(s)
    if m and m.group(2).lower() in _MONTHS:
        out = f"{int(m.group(3)):04d}-{_MONTHS[m.group(2).lower()]:02d}-{int(m.group(1)):02d}"
    elif (m := _DMY_NUM.match(s)) and int(m.group(1)) > 12:
        out = f"{int(m.group(3)):04d}-{int(m.group(2)):02d}-{int(m.group(1)):02d}"
    elif m := _ISO.match(s):
        y, mo, d = m.groups()
        out = y if mo is None else f"{y}-{int(mo):02d}" if d is None \
            else f"{y}-{int(mo):02d}-{int(d):02d}"
    if out is None:
        return None
    try:
        date_span(out)
    except ValueError:
        return None
    return out


def make_document(obj: dict[str, Any], where: str) -> Document | DocumentError:
    """Validate a converted document; tag it with where it came from (build strips ``_where``)."""
    try:
        doc = Document.from_dict(obj, where)
    except DocumentError as e:
        return e
    doc.meta["_where"] = where
    return doc


def sections_from(intro: str, rest: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """``(intro)`` first when it has text, then every heading (empty texts kept: a heading is
    still a heading)."""
    out = [{"heading": INTRO, "text": intro}] if intro.strip() else []
    out.extend({"heading": h, "text": t} for h, t in rest)
    return out
