"""reStructuredText files -> documents.

Mapping:

* Section titles (underlined, or over- and underlined, with any punctuation character, the
  title not indented and preceded by a blank line) -> sections, in order and flat (a
  sub-section is a section of its own). Inline markup is removed from heading text
  (````x````, ``*x*``, ``:role:`x```, ```text <url>`__`` -> ``x``/``text``); section texts
  are the raw reStructuredText between two titles, blank lines trimmed at both ends.
  Text before the first title is ``(intro)``.
* An RFC 822 header at the top (PEPs: ``PEP:``, ``Title:``, ``Author:``, ``Created:``, ...)
  -> infobox: every field in order, continuation lines joined with one space, ``<e-mail>``
  addresses (also spelled ``<name at host>``) removed from every value (URLs in ``<...>``
  stay). ``Title`` -> title; ``Author`` -> authors (split on commas, a ``Jr.``-like suffix
  kept with its name, a trailing comma ignored: ``split_authors``) and its infobox value is
  those names joined by ``", "``; ``Created`` (else ``Date``) -> date (``11-Mar-2001`` ->
  ``2001-03-11``).
  A header with a ``PEP`` number also gives url ``https://peps.python.org/pep-NNNN/`` and
  meta ``{"source": "python/peps", "file": <file name>}``.
  This reproduces the reference converter of ``bql-examples/corpus.jsonl`` exactly for its 64
  PEPs (headings, infobox, authors, dates and section texts).
* Without a header title, a first section title that comes before any text and whose
  adornment style is used nowhere else is the document title (docutils' rule), not a section;
  otherwise the title is the file stem.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..documents import Document
from ..errors import DocumentError
from ._common import loose_date, make_document, read_text, sections_from, strip_emails, tidy

# Characters docutils accepts as section adornment.
_ADORN_CHARS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_HEADER_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):(?:\s+(.*))?$")


def _adornment(line: str) -> str | None:
    """The adornment character when ``line`` is a run of one punctuation character (>= 2)."""
    s = line.rstrip()
    if len(s) < 2 or s[0] not in _ADORN_CHARS or s.count(s[0]) != len(s):
        return None
    return s[0]


def _strip_inline(text: str) -> str:
    """Heading text without inline markup."""
    # :role:`text` and :role:`text <target>` -> text
    text = re.sub(r":[\w+.:-]+:`([^`]*)`",
                  lambda m: re.sub(r"\s*<[^>]*>$", "", m.group(1)).lstrip("~!"), text)
    text = re.sub(r"``(.+?)``", r"\1", text)
    text = re.sub(r"`([^`<]*?)\s*<[^>]*>`__?", r"\1", text)  # `text <url>`_
    text = re.sub(r"`([^`]+)`_{0,2}", r"\1", text)
    text = re.sub(r"(?<![\w*])\*\*(\S.*?)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\S.*?)\*(?!\w)", r"\1", text)
    return text.strip()


def parse_header(lines: list[str]) -> tuple[list[list[str]], int]:
    """An RFC 822 header at the top -> ([[field, value], ...], index of the first body line).

    Returns ``([], 0)`` when the file does not start with ``Field: value`` lines.
    """
    fields: list[list[str]] = []
    i = 0
    while i < len(lines) and lines[i].strip():
        line = lines[i]
        if line[0] in " \t":
            if not fields:
                return [], 0
            cont = line.strip()
            fields[-1][1] = f"{fields[-1][1]} {cont}" if fields[-1][1] else cont
        else:
            m = _HEADER_FIELD.match(line.rstrip())
            if not m:
                return [], 0
            fields.append([m.group(1), (m.group(2) or "").strip()])
        i += 1
    return fields, i


def find_titles(lines: list[str], start: int) -> list[tuple[int, int, str, str]]:
    """Section titles in ``lines[start:]`` as (first line, line after, title, style)."""
    heads: list[tuple[int, int, str, str]] = []
    n = len(lines)
    j = start
    while j < n:
        line = lines[j]
        if not line.strip() or (j > start and lines[j - 1].strip()):
            j += 1
            continue
        # Over- and underlined: adornment, title, the same adornment.
        over = _adornment(line)
        if over and j + 2 < n and lines[j + 1].strip() and not _adornment(lines[j + 1]) \
                and _adornment(lines[j + 2]) == over:
            heads.append((j, j + 3, lines[j + 1].strip(), over * 2))
            j += 3
            continue
        # Underlined: an unindented line, then an adornment as long (docutils also takes a
        # shorter one of 4+ characters, with a warning; '::' after a line is a literal block).
        if line[0] not in " \t" and not over and j + 1 < n:
            under = _adornment(lines[j + 1])
            width = len(lines[j + 1].rstrip())
            if under and (width >= len(line.rstrip()) or width >= 4):
                heads.append((j, j + 2, line.strip(), under))
                j += 2
                continue
        j += 1
    return heads


# A name suffix after a comma belongs to the name before it: 'Fred L. Drake, Jr.' is one author.
_SUFFIX = re.compile(r"(?i)(?:jr|sr|esq|ph\.?\s?d|m\.?\s?d)\.?|[IVX]{1,4}")


def split_authors(value: str) -> list[str]:
    """An ``Author:`` value (addresses already removed) -> names: split on commas, a name
    suffix (``Jr.``, ``Sr.``, ``III``, ``PhD``) kept with the name before it, empty pieces
    (a trailing comma) dropped."""
    names: list[str] = []
    for piece in value.split(","):
        piece = " ".join(piece.split())
        if not piece:
            continue
        if names and _SUFFIX.fullmatch(piece):
            names[-1] = f"{names[-1]}, {piece}"
        else:
            names.append(piece)
    return names


def parse_rst(text: str, path: Path, doc_id: str) -> dict:
    """One reStructuredText file -> a DOCUMENTS.md object."""
    lines = text.split("\n")
    header, body_start = parse_header(lines)
    heads = find_titles(lines, body_start)
    obj: dict = {"id": doc_id}
    fields = {k.lower(): v for k, v in header}
    title = fields.get("title")
    if title is None and heads:
        first, after, text0, style = heads[0]
        alone = all(h[3] != style for h in heads[1:])
        if alone and not tidy(lines, body_start, first):
            title = text0 and _strip_inline(text0)
            body_start = after
            heads = heads[1:]
    obj["title"] = title if title is not None else path.stem

    first = heads[0][0] if heads else len(lines)
    rest = []
    for k, (_s, after, heading, _style) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
        rest.append((_strip_inline(heading), tidy(lines, after, end)))
    obj["sections"] = sections_from(tidy(lines, body_start, first), rest)

    if header:
        infobox = []
        authors: list[str] = []
        for key, value in header:
            value = strip_emails(value)
            if key.lower() == "author":
                authors = split_authors(value)
                value = ", ".join(authors)
            infobox.append([key, value])
        obj["infobox"] = infobox
        if authors:
            obj["author"] = authors
        date = loose_date(fields.get("created") or fields.get("date"))
        if date:
            obj["date"] = date
        pep = fields.get("pep", "").strip()
        if pep.isdigit():
            obj["url"] = f"https://peps.python.org/pep-{int(pep):04d}/"
            obj["meta"] = {"source": "python/peps", "file": path.name}
    return obj


def read_rst(path: Path, doc_id: str) -> Document | DocumentError:
    text = read_text(path)
    if isinstance(text, DocumentError):
        return text
    if not text.strip():
        return DocumentError("empty file; nothing to index", str(path))
    return make_document(parse_rst(text, path, doc_id), str(path))
