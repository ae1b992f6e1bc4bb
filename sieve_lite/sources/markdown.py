"""Markdown files -> documents.

Mapping:

* Headings -> sections, in order and flat. They are the top-level heading tokens of
  markdown-it-py's CommonMark parser (ATX ``#`` .. ``######`` and setext ``===``/``---``), so
  nothing inside a code fence, an indented code block, an HTML block (a ``<!-- ... -->``
  comment) or a block quote or list is a heading. A heading's text is its inline content as
  shown (```code```, ``*em*``, ``[text](url)`` -> ``code``, ``em``, ``text``; escapes and
  entities resolved; inline HTML dropped). Section texts are the raw Markdown
  between two headings, blank lines trimmed at both ends; link reference definitions to an
  in-page anchor (``[summary]: #summary``, a Rust RFC template habit) are dropped because
  they are invisible when rendered and would repeat the heading in every body.
* Text before the first heading -> ``(intro)``.
* YAML front matter (a ``---`` block on the first line, read with ``yaml.safe_load``):
  ``title`` -> title; ``author``/``authors`` (a string or a list) -> authors; ``date`` ->
  date (read loosely; an unreadable date is kept as an infobox entry instead); ``url`` ->
  url; every other scalar key, or list of scalars (joined with ``", "``), -> infobox, in
  order. Nested mappings are not kept.
* Title: the front-matter title; else the first heading when it is an H1 and the document's
  only H1 (that heading is then the title and **not** also a section: its text joins
  ``(intro)``); else the file stem. Several H1s are chapters, not a title.
* A metadata list at the top of ``(intro)``, like the Rust RFCs' ``- Start Date: 2014-03-11``
  / ``- RFC PR: [rust-lang/rfcs#1](...)`` block (a paragraph made only of two or more
  ``- Key: value`` items; a value may continue on indented lines, joined with a space, or as
  nested ``- item`` lines, joined with ``", "``), -> infobox entries in order (Markdown links
  reduced to their text, a trailing ``#`` dropped from keys: ``RFC PR #`` -> ``RFC PR``). The
  first key naming a date (``Start Date``, ``Date``, ``Created``) gives the date when it reads
  as one (``(2016-06-17)``, ``2020/05/18`` and ``23-07-2014`` do; ``2014-19-19`` does not and
  stays in the infobox only); ``Author(s)`` gives authors. The block is removed from
  ``(intro)``. When the file opens with a heading instead (an H2 standing for the title), the
  block is looked for at the top of that heading's text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..documents import Document
from ..errors import DocumentError
from ._common import loose_date, make_document, read_text, sections_from, tidy

_ANCHOR_REF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*#\S*\s*$")
_META_ITEM = re.compile(r"^[-*+]\s+([A-Za-z][\w .#/()-]{0,40}?)\s*:(?!//)\s*(.*?)\s*$")
_NESTED_ITEM = re.compile(r"^\s+[-*+]\s+(.*?)\s*$")
_DATE_KEY = re.compile(r"(?i)\b(date|created)\b")


def strip_inline(text: str) -> str:
    """Inline Markdown -> its visible text (for headings and metadata values)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)   # reference links
    text = re.sub(r"`+([^`]*?)`+", r"\1", text)
    text = re.sub(r"(?<![\w*])(\*\*|__)(\S.*?)\1(?!\w)", r"\2", text)
    text = re.sub(r"(?<![\w*])([*_])(\S.*?)\1(?![\w*])", r"\2", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)
    return " ".join(text.split())


def _front_matter(lines: list[str], where: str) -> tuple[dict[str, Any] | None, int]:
    """(front matter mapping, index of the first body line); (None, 0) when there is none."""
    if not lines or lines[0].rstrip() != "---":
        return None, 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            try:
                data = yaml.safe_load("\n".join(lines[1:i]))
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                line = mark.line + 2 if mark is not None else 1
                problem = getattr(e, "problem", None) or str(e).split("\n")[0]
                raise DocumentError(f"front matter is not valid YAML: {problem}",
                                    f"{where}:{line}") from None
            # A '---' rule followed by prose is not front matter.
            return (data, i + 1) if isinstance(data, dict) else (None, 0)
    return None, 0


_MD = MarkdownIt("commonmark")


def _plain(inline: Token) -> str:
    """The text an inline token shows, markup removed."""
    out: list[str] = []
    for t in inline.children or []:
        if t.type in ("text", "code_inline", "image"):
            out.append(t.content)  # an image shows its alt text
        elif t.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return " ".join("".join(out).split())


def find_headings(lines: list[str], start: int) -> list[tuple[int, int, int, str]]:
    """Headings in ``lines[start:]`` as (first line, line after, level, text shown)."""
    tokens = _MD.parse("\n".join(lines[start:]))
    heads: list[tuple[int, int, int, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            first, after = tok.map
            heads.append((start + first, start + after, int(tok.tag[1:]),
                          _plain(tokens[i + 1])))
    return heads


def _text(lines: list[str], start: int, end: int) -> str:
    return tidy([ln for ln in lines[start:end] if not _ANCHOR_REF.match(ln)])


def _meta_items(para: str) -> list[list[str]] | None:
    """A paragraph made only of ``- Key: value`` items (values may continue on indented lines
    or as nested ``- item`` lines) -> [[key, value], ...]; None when it is anything else."""
    items: list[list[str]] = []
    for line in para.strip("\n").split("\n"):
        m = _META_ITEM.match(line)
        if m:
            key = strip_inline(m.group(1)).rstrip("# ").strip()
            items.append([key, strip_inline(m.group(2) or "")])
        elif items and line.startswith("[^"):
            continue  # a footnote definition inside the block
        elif items and line[:1] in (" ", "\t") and line.strip():
            nested = _NESTED_ITEM.match(line)
            value = strip_inline(nested.group(1) if nested else line)
            sep = ", " if nested else " "
            items[-1][1] = f"{items[-1][1]}{sep}{value}" if items[-1][1] else value
        else:
            return None
    return items if len(items) >= 2 else None


def _metadata_block(intro: str) -> tuple[list[list[str]], str]:
    """Split a leading ``- Key: value`` list off the intro -> (pairs, rest of the intro)."""
    paragraphs = re.split(r"\n[ \t]*\n", intro)
    for k, para in enumerate(paragraphs):
        items = _meta_items(para) if para.strip() else None
        if items:
            rest = "\n\n".join(paragraphs[:k] + paragraphs[k + 1:])
            return items, tidy(rest.split("\n"))
        if para.strip() and not para.lstrip().startswith("<!--") and k > 0:
            break  # only the top of the intro (after an optional title line or comment)
    return [], intro


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, list) and value and all(_scalar(v) is not None and
                                                 not isinstance(v, list) for v in value):
        return ", ".join(_scalar(v) or "" for v in value)
    return None


def parse_markdown(text: str, path: Path, doc_id: str) -> dict:
    """One Markdown file -> a DOCUMENTS.md object (raises DocumentError on bad front matter)."""
    lines = text.split("\n")
    front, body_start = _front_matter(lines, str(path))
    heads = find_headings(lines, body_start)
    obj: dict[str, Any] = {"id": doc_id}
    infobox: list[list[str]] = []
    authors: list[str] = []
    date: str | None = None
    title: str | None = None

    if front:
        for key, value in front.items():
            k = str(key)
            low = k.lower()
            if low == "title" and value is not None:
                title = str(value)
            elif low in ("author", "authors") and value:
                authors = [str(a) for a in value] if isinstance(value, list) else [str(value)]
            elif low == "date" and loose_date(value):
                date = loose_date(value)
            elif low == "url" and isinstance(value, str):
                obj["url"] = value
            elif (v := _scalar(value)) is not None:
                infobox.append([k, v])

    intro_end = heads[0][0] if heads else len(lines)
    intro = _text(lines, body_start, intro_end)
    if title is None and heads and heads[0][2] == 1 and sum(h[2] == 1 for h in heads) == 1:
        title = heads[0][3]
        after = heads[0][1]
        heads = heads[1:]
        below = _text(lines, after, heads[0][0] if heads else len(lines))
        intro = "\n\n".join(t for t in (intro, below) if t)

    rest = []
    for k, (_s, after, _level, raw) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
        rest.append((raw, _text(lines, after, end)))

    pairs, intro = _metadata_block(intro)
    if not pairs and not intro and rest:
        # Some RFCs open with a heading (an H2 standing for the title), then the block.
        pairs, below = _metadata_block(rest[0][1])
        if pairs:
            rest[0] = (rest[0][0], below)
    for key, value in pairs:
        infobox.append([key, value])
        if date is None and _DATE_KEY.search(key) and loose_date(value):
            date = loose_date(value)
        if not authors and key.lower() in ("author", "authors") and value:
            authors = [a.strip() for a in value.split(",") if a.strip()]

    obj["title"] = title if title is not None else path.stem
    obj["sections"] = sections_from(intro, rest)
    if infobox:
        obj["infobox"] = infobox
    if authors:
        obj["author"] = authors
    if date:
        obj["date"] = date
    return obj


def read_markdown(path: Path, doc_id: str) -> Document | DocumentError:
    text = read_text(path)
    if isinstance(text, DocumentError):
        return text
    if not text.strip():
        return DocumentError("empty file; nothing to index", str(path))
    try:
        obj = parse_markdown(text, path, doc_id)
    except DocumentError as e:
        return e
    return make_document(obj, str(path))
