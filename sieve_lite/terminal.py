"""Rendering for people at a terminal: result cards to scan at 80 columns, ``fetch`` as
formatted text, and the pieces of the ``ask`` live view.

The model reads ``Card.render_compact`` (``cards.py``); that text is its own rendering and is
not touched here. Everything in this module is a pure function of the data (a ``Card``, a
``FetchResult``), the query's positive words and a width, returning rich ``Text`` lines or
renderables; printing, and deciding between the framed and the plain form, is the caller's.

A card (``card_lines``) is at most ``CARD_LINES`` lines at any width from ``MIN_WIDTH`` up,
and no line is wider than the width (in terminal cells, so wide characters count twice):

    ╭─ 1. Title, cut with an ellipsis when it does not fit ───────────────────╮
    │ by First Author, Second Author +3 · matched title, body                 │
    │ 74 sections: Matched heading · Abstract · Motivation +71 more           │
    │ Section: … a snippet of at most 25 words with the query's words         │
    │ highlighted …                                                           │
    ╰──────────────────────────────────── pep-0622 · 2020-06-23 · score 3.4 ─╯

The plain form (``boxed=False``, for a pipe) has the same lines without the frame: the title
line, then the id, date and score, then the body, indented. Query words are highlighted
everywhere on the card (title, authors, headings, snippet); headings containing one come
first. Text from a collection is untrusted: it is stripped of control characters
(``sanitize``) and only ever enters rich as ``Text``, never as markup, so ``[bold]`` in a
title prints as written.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from io import StringIO
from typing import Any

from rich import box as rich_box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from .cards import Card
from .display import clean
from .documents import INFOBOX, format_pages
from .fetch import FetchResult
from .words import word_spans
from .words import words as bql_words

CARD_LINES = 8       # the most lines a card takes, frame included
MAX_WIDTH = 120      # cards and fetched text are not made wider than this: long lines tire
MIN_WIDTH = 32       # below this a card is laid out at this width (the terminal then wraps)
FOLD_AFTER = 3       # the live view shows this many cards in full, then one line each
LIVE_READ_LINES = 6  # the live view shows this many lines of a fetched section
AUTHORS_SHOWN = 2
HIT = Style(bold=True, color="magenta")
DIM = Style(dim=True)
SEP = " · "

Words = Sequence[tuple[str, bool]]  # (folded word, is_prefix): ``bql.ast.positive_words``


# ------------------------------------------------------------------------- safety, words
# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
# isolates that can make a line display in another order than it reads.
def sanitize(text: str | None) -> str:
    """Collection text made safe to print: control characters (an ``ESC [`` sequence could
    recolour or retitle the terminal) and bidi overrides removed, tabs as spaces."""
    if not text:
        return ""
    return clean(str(text).replace("\t", "    "))


def one_line(text: str | None) -> str:
    """``sanitize`` and every run of whitespace as one space."""
    return " ".join(sanitize(text).split())


def query_words(query: str, fields: Sequence[str] | None = None) -> list[tuple[str, bool]]:
    """The positive words of a BQL query, to highlight; [] when it does not parse (the words
    are a courtesy: a query that cannot be read highlights nothing)."""
    from .bql import parse
    from .bql.ast import ALL_FIELDS_ORDER, positive_words
    from .errors import QueryError

    try:
        node = parse(query, tuple(fields) if fields else ALL_FIELDS_ORDER)
    except QueryError:
        return []
    return positive_words(node)


class WordMatch:
    """Which words of a text are query words: exact (folded) words, or words beginning with
    a prefix word's stem, as BQL matches them."""

    def __init__(self, words: Words = ()) -> None:
        self.exact = {w for w, prefix in words if not prefix}
        self.stems = tuple(sorted({w for w, prefix in words if prefix}))

    def __bool__(self) -> bool:
        return bool(self.exact or self.stems)

    def word(self, folded: str) -> bool:
        return folded in self.exact or (bool(self.stems) and folded.startswith(self.stems))

    def terms(self, text: str) -> int:
        """How many of the query's words (an exact word, or a prefix) occur in ``text``."""
        found = {w for _, _, w in word_spans(text)}
        return (sum(1 for w in self.exact if w in found)
                + sum(1 for s in self.stems if any(w.startswith(s) for w in found)))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the query words in ``text``."""
        if not self:
            return []
        return [(a, b) for a, b, w in word_spans(text) if self.word(w)]


def highlight(text: str, match: WordMatch, style: Style | str = "") -> Text:
    """``text`` as rich ``Text`` (never markup) with the query words in ``HIT``."""
    out = Text(text, style=style)
    for a, b in match.spans(text):
        out.stylize(HIT, a, b)
    return out


def card_from_dict(d: dict[str, Any]) -> Card:
    """A ``Card`` again from ``Card.to_dict()`` (a transcript's search events); keys it does
    not know are ignored. ``ValueError`` when ``d`` is not a card."""
    names = {f.name for f in dataclasses.fields(Card)}
    try:
        card = Card(**{k: v for k, v in d.items() if k in names})
    except TypeError as e:
        raise ValueError(f"not a card: {e}") from None
    texts = (card.id, card.title, card.snippet)
    lists = (card.headings, card.authors, card.matched_fields)
    if not (isinstance(card.rank, int) and isinstance(card.score, (int, float))
            and all(isinstance(x, str) for x in texts)
            and all(isinstance(x, str) for x in (card.date, card.snippet_section) if x)
            and all(isinstance(x, list) and all(isinstance(y, str) for y in x)
                    for x in lists)
            and isinstance(card.pages, list) and all(
                p is None or (isinstance(p, (list, tuple)) and len(p) == 2
                              and all(isinstance(n, int) for n in p)) for p in card.pages)):
        raise ValueError("not a card: a field has the wrong type")
    return card


# ------------------------------------------------------------------------------------ cards
def card_width(width: int) -> int:
    return max(MIN_WIDTH, min(int(width), MAX_WIDTH))


def _fit(text: Text, width: int) -> Text:
    """One line of at most ``width`` cells, cut with an ellipsis."""
    text = text.copy()
    text.plain = text.plain.replace("\n", " ")
    text.truncate(width, overflow="ellipsis")
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def authors_short(authors: Sequence[str], shown: int = AUTHORS_SHOWN) -> str:
    """``A, B +3``: the first ``shown`` authors and how many more."""
    names = [one_line(a) for a in authors if one_line(a)]
    head = ", ".join(names[:shown])
    return head + (f" +{len(names) - shown}" if len(names) > shown else "")


def _meta_line(card: Card, match: WordMatch, width: int) -> Text:
    line = Text()
    if card.authors:
        line.append("by ", DIM)
        line.append_text(highlight(authors_short(card.authors), match))
        line.append(SEP, DIM)
    line.append("matched ", DIM)
    line.append(", ".join(card.matched_fields) or "nothing")
    return _fit(line, width)


def headings_line(headings: Sequence[str], match: WordMatch, width: int) -> Text:
    """One line of ``width`` cells: the headings that hold a query word first (those holding
    more of its words before the others), then the others in document order, as many as
    fit, then ``+N more`` counting every heading not shown. A heading too long for the room
    left is passed over for shorter ones after it, except the first of the line (the first
    holding a query word, if any): that one is cut with an ellipsis rather than left out (a
    unique prefix is enough to fetch it)."""
    names = [one_line(h) for h in headings]
    # Those holding more of the query's words first (``6 Handling Docstring Indentation``
    # before ``3 What is a Docstring?`` for ``docstring* AND indentation``), then in order.
    hit = sorted((n for n in names if match.spans(n)), key=lambda n: -match.terms(n))
    order = hit + [n for n in names if n not in hit]
    line = Text()  # the label dim, not the headings: a Text's own style covers all of it
    line.append(f"{len(names)} section{'s' if len(names) != 1 else ''}: ", DIM)
    sep = cell_len(SEP)
    room = width - cell_len(line.plain)
    shown: list[Text] = []
    if sum(map(cell_len, order)) + sep * (len(order) - 1) <= room:
        shown = [highlight(n, match) for n in order]
    else:
        room -= cell_len(f" +{len(order)} more")
        used = 0
        for i, name in enumerate(order):
            need = cell_len(name) + (sep if shown else 0)
            if used + need <= room:
                shown.append(highlight(name, match))
                used += need
            elif i == 0:  # the first (a query word's, if any): cut rather than left out
                piece = highlight(name, match)
                piece.truncate(max(1, min(room, max(room // 2, 24))), overflow="ellipsis")
                shown.append(piece)
                used += cell_len(piece.plain)
    for i, piece in enumerate(shown):
        if i:
            line.append(SEP, DIM)
        line.append_text(piece)
    if len(shown) < len(order):
        line.append(f" +{len(order) - len(shown)} more", DIM)
    return _fit(line, width)


def _ellipsis(text: str) -> str:
    """The data's ``... `` / `` ...`` cut marks as one character each."""
    if text.startswith("... "):
        text = "… " + text[4:]
    if text.endswith(" ..."):
        text = text[:-4] + " …"
    return text


def _snippet_text(card: Card, match: WordMatch, width: int) -> Text:
    body = _ellipsis(one_line(card.snippet))
    text = Text()
    if card.snippet_section:
        name = highlight(one_line(card.snippet_section), match, "bold")
        name.truncate(max(12, width // 2), overflow="ellipsis")  # leave the room to the words
        text.append_text(name)
        if card.snippet_pages():
            text.append(f", {card.snippet_pages()}", "bold")
        text.append(": ")
    text.append_text(highlight(body, match))
    return text


def _wrap(text: Text, width: int, max_lines: int) -> list[Text]:
    """``text`` wrapped at ``width`` cells into at most ``max_lines`` lines; when cut, the
    last line ends with an ellipsis."""
    console = Console(width=width, file=StringIO(), color_system=None, legacy_windows=False)
    lines = list(text.wrap(console, width, overflow="fold"))
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        last.rstrip()
        if cell_len(last.plain) >= width:
            last.truncate(width - 1)
        last.append("…")
    for line in lines:
        line.rstrip()
    if len(lines) > 1 and lines[-1].plain == "…":  # the data's cut mark wrapped alone
        lines.pop()
        last = lines[-1]
        if cell_len(last.plain) + 2 > width:
            last.truncate(width - 2)
            last.rstrip()
        last.append(" …")
    return lines


def _body(card: Card, match: WordMatch, width: int, room: int) -> list[Text]:
    """The card's content lines: meta, headings, snippet (wrapped into what room is left)."""
    lines = [_meta_line(card, match, width)]
    if card.headings:
        lines.append(headings_line(card.heading_labels(), match, width))
    if card.snippet and room - len(lines) > 0:
        lines += _wrap(_snippet_text(card, match, width), width, room - len(lines))
    return lines


def _footer(card: Card) -> str:
    parts = [one_line(card.id)]
    if card.date:
        parts.append(one_line(card.date))
    parts.append(f"score {card.score:.4g}")
    return SEP.join(parts)


def _title(card: Card, match: WordMatch) -> Text:
    title = Text()
    title.append(f"{card.rank}. ", "bold cyan")
    title.append_text(highlight(one_line(card.title) or "(untitled)", match, "bold"))
    return title


def card_lines(card: Card, words: Words = (), width: int = 80, *, boxed: bool = True,
               box: rich_box.Box = rich_box.ROUNDED) -> list[Text]:
    """The human card: at most ``CARD_LINES`` lines, none wider than ``width`` cells (the
    width is first held within ``MIN_WIDTH``..``MAX_WIDTH``). ``boxed`` draws the frame with
    ``box``; without it the lines are plain (for a pipe)."""
    width = card_width(width)
    match = WordMatch(words)
    if not boxed:
        head = _fit(_title(card, match), width)
        info = _fit(Text("   " + _footer(card), DIM), width)
        body = _body(card, match, width - 3, CARD_LINES - 2)
        return [head, info] + [_fit(Text("   ") + line, width) for line in body]
    inner = width - 4
    body = _body(card, match, inner, CARD_LINES - 2)
    edge = Style(dim=True)
    # The frame is dim, the card's text is not: style the edge pieces, not the whole line
    # (``Text(s, style)`` would make ``style`` the base of everything appended after).
    top = Text()
    top.append(box.top_left + box.top + " ", edge)
    title = _title(card, match)
    title.truncate(width - 6, overflow="ellipsis")
    top.append_text(title)
    top.append(" " + box.top * (width - cell_len(top.plain) - 2) + box.top_right, edge)
    lines = [top]
    for line in body:
        row = Text()
        row.append(box.mid_left + " ", edge)
        row.append_text(line)
        row.append(" " * (inner - cell_len(line.plain)))
        row.append(" " + box.mid_right, edge)
        lines.append(row)
    footer = Text(_footer(card), DIM)
    footer.truncate(width - 6, overflow="ellipsis")
    bottom = Text()
    bottom.append(box.bottom_left + box.bottom * (width - cell_len(footer.plain) - 5) + " ",
                  edge)
    bottom.append_text(footer)
    bottom.append(" " + box.bottom + box.bottom_right, edge)
    lines.append(bottom)
    return [_fit(line, width) for line in lines]


def card_line(card: Card, words: Words = (), width: int = 80) -> Text:
    """A card folded to one line: rank, id, title, score."""
    match = WordMatch(words)
    line = Text()
    line.append(f"{card.rank}. ", "bold cyan")
    line.append(one_line(card.id), "bold")
    line.append("  ")
    line.append_text(highlight(one_line(card.title) or "(untitled)", match))
    line.append(f"  score {card.score:.4g}", DIM)
    return _fit(line, card_width(width))


# ---------------------------------------------------------------------------------- search
def search_header(res: Any) -> list[Text]:
    """What the selection admitted, how it was ranked, clause counts and notes."""
    shown = f", showing {len(res.results)}" if res.results else ""
    if res.fallback:
        head = Text.assemble(("0 admitted", "bold yellow"),
                             f" - fallback: the whole collection ({res.ranked}) ranked by ",
                             (res.ranker, "bold"), f" on the query's positive words{shown}")
    else:
        head = Text.assemble((str(res.total), "bold"), " admitted, ranked by ",
                             (res.ranker, "bold"), shown)
    lines = [head]
    for clause, n in res.clause_counts:
        lines.append(Text.assemble("  clause ", (one_line(clause), "bold"), f" admits {n}"))
    lines += [Text(f"note: {one_line(n)}", DIM) for n in res.notes]
    return lines


def search_lines(res: Any, words: Words = (), width: int = 80, *,
                 boxed: bool = True) -> list[Text]:
    """A whole search result for people: the header, then one card per hit (a blank line
    between plain cards, where no frame separates them)."""
    lines = search_header(res)
    for i, hit in enumerate(res.results):
        if not boxed and i:
            lines.append(Text(""))
        lines += card_lines(hit.card, words, width, boxed=boxed)
    return lines


def print_search(res: Any, console: Console, words: Words = (),
                 boxed: bool | None = None) -> None:
    """Print a search result on ``console``: framed on a terminal (or when colour is forced),
    plain in a pipe, unless ``boxed`` says otherwise."""
    if boxed is None:
        boxed = console.is_terminal
    box = rich_box.ASCII if console.options.ascii_only else rich_box.ROUNDED
    head = search_header(res)
    for line in head:
        console.print(line, soft_wrap=not boxed, highlight=False)
    for i, hit in enumerate(res.results):
        if not boxed and i:
            console.print()
        for line in card_lines(hit.card, words, console.width, boxed=boxed, box=box):
            console.print(line, crop=False, highlight=False)


# ----------------------------------------------------------------------- highlighting output
class Highlighted:
    """Any renderable with the query's words in ``HIT``, found on its rendered lines (so it
    works for Markdown, code blocks and tables alike)."""

    def __init__(self, renderable: RenderableType, words: Words) -> None:
        self.renderable = renderable
        self.match = WordMatch(words)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in console.render_lines(self.renderable, options, pad=False):
            yield from highlight_segments(line, self.match)
            yield Segment.line()


def highlight_segments(line: list[Segment], match: WordMatch) -> list[Segment]:
    """One rendered line with the query words restyled; its text is unchanged."""
    plain = "".join(s.text for s in line if not s.control)
    spans = match.spans(plain)
    if not spans:
        return line
    out: list[Segment] = []
    pos = 0
    for seg in line:
        if seg.control:
            out.append(seg)
            continue
        start, end = pos, pos + len(seg.text)
        pos = end
        cuts = sorted({start, end, *(x for a, b in spans for x in (a, b) if start < x < end)})
        for a, b in zip(cuts, cuts[1:], strict=False):
            piece = seg.text[a - start: b - start]
            inside = any(s <= a and b <= e for s, e in spans)
            style = (seg.style + HIT) if (inside and seg.style) else (HIT if inside
                                                                      else seg.style)
            out.append(Segment(piece, style))
    return out


class Folded:
    """The first ``max_lines`` rendered lines of a renderable, then a dim count of the rest."""

    def __init__(self, renderable: RenderableType, max_lines: int, hint: str = "") -> None:
        self.renderable = renderable
        self.max_lines = max_lines
        self.hint = hint

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        while lines and not "".join(s.text for s in lines[-1]).strip():
            lines.pop()
        for line in lines[: self.max_lines]:
            yield from line
            yield Segment.line()
        rest = len(lines) - self.max_lines
        if rest > 0:
            yield Segment(f"… {rest} more line{'s' if rest != 1 else ''}{self.hint}", DIM)
            yield Segment.line()


# ----------------------------------------------------------------------------------- fetch
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s)>\]]+", re.I)


def _markdown(text: str) -> RenderableType:
    """rich's Markdown, but raw HTML is text: rich drops HTML tokens, and a collection's
    words must not vanish. Links show their address (no terminal hyperlinks: an address
    from a collection is shown, not hidden behind its text)."""
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    md = Markdown("", hyperlinks=False)  # parsed below, once, our way
    md.markup = text
    md.parsed = MarkdownIt("commonmark", {"html": False}).enable(
        ["strikethrough", "table"]).parse(text)
    return md


def _parsed_text(md: Any) -> str:
    """The text markdown-it kept of a Markdown source: what rich will show of it."""
    out: list[str] = []
    for token in md.parsed:
        if token.type in ("fence", "code_block"):
            out.append(token.content)
        for child in token.children or ():
            if child.type in ("text", "code_inline", "image"):  # an image shows its alt text
                out.append(child.content)
    return " ".join(out)


def _keeps_words(shown: str, source: str, share: float) -> bool:
    """Whether ``shown`` has at least ``share`` of the words of ``source``, addresses aside
    (an image's or a link definition's address is rightly not shown)."""
    want = Counter(bql_words(_URL.sub(" ", source)))
    if not want:
        return True
    have = Counter(bql_words(_URL.sub(" ", shown)))
    return sum(min(n, have[w]) for w, n in want.items()) >= share * sum(want.values())


def section_renderable(text: str, markup: str | None = None, words: Words = ()
                       ) -> RenderableType:
    """A section's text as people read it: Markdown and reStructuredText rendered as rich
    renders Markdown, plain text as it is; the query's words highlighted. ``markup`` None
    guesses it from the text (``markup.guess_markup``).

    A rendering that loses words gives way to the text as it is: reST written as Markdown
    that has no words left (a section made only of a link target), or rendered Markdown
    that shows less than 80% of its words (a parser's limit can drop a subtree: markdown-it
    stops at 100 nested lists or quotes). The reST writer drops some words on purpose:
    footnote names, role names, directive options."""
    from .markup import guess_markup, rst_to_markdown

    text = sanitize(text)
    kind = markup or guess_markup(text)
    body: RenderableType = Text(text)
    if kind in ("rst", "markdown"):
        md = rst_to_markdown(text) if kind == "rst" else text
        rendered = _markdown(md)
        if (bql_words(md) or not bql_words(text)) and \
                _keeps_words(_parsed_text(rendered), md, 0.8):
            body = rendered
    return Highlighted(body, words) if words else body


def infobox_table(text: str, words: Words = ()) -> RenderableType:
    """The infobox (``key: value`` lines) as a two-column table."""
    from rich.table import Table

    match = WordMatch(words)
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold", no_wrap=True, max_width=24, overflow="ellipsis")
    table.add_column(overflow="fold")
    for line in sanitize(text).split("\n"):
        key, _, value = line.partition(": ")
        table.add_row(highlight(key, match), highlight(value, match))
    return table


def outline_table(res: FetchResult, words: Words = (), boxed: bool = True,
                  width: int = 80) -> RenderableType:
    """A document's outline: each section with its tokens and first words, one row each;
    long headings wrap (they are what one types to fetch), the first words are cut."""
    from rich.table import Table

    match = WordMatch(words)
    table = Table(box=rich_box.SIMPLE_HEAD if boxed else None, expand=True, pad_edge=False,
                  show_edge=False, header_style="bold")
    names = [one_line(e.name) + (f" ({format_pages(e.pages)})" if e.pages else "")
             for e in res.outline]
    longest = max((cell_len(n) for n in names), default=8)
    # Headings get the room they need up to 40% of the line; the first words take the rest.
    cap = max(12, width * 2 // 5)
    table.add_column("section", overflow="fold", min_width=min(longest, cap), max_width=cap)
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("begins", ratio=1, no_wrap=True, overflow="ellipsis", style="dim")
    for name, entry in zip(names, res.outline, strict=True):
        table.add_row(highlight(name, match), f"{entry.tokens:,}",
                      highlight(_ellipsis(one_line(entry.first_words)), match))
    return table


def fetch_header(res: FetchResult) -> Text:
    head = Text()
    head.append(one_line(res.id), "bold")
    head.append(SEP)
    head.append(one_line(res.title) or "(untitled)", "bold")
    head.append(SEP)
    if res.section is None:
        n = len(res.sections)
        head.append(f"{n} section{'s' if n != 1 else ''}", "bold cyan")
        if len(res.outline) > n:
            head.append(" and the infobox", "bold cyan")
    else:
        head.append(one_line(res.section), "bold cyan")
        if res.pages:
            head.append(f"  {format_pages(res.pages)}", "cyan")
        head.append(f"  {res.tokens:,} tokens", DIM)
    return head


def fetch_renderables(res: FetchResult, words: Words = (), markup: str | None = None,
                      boxed: bool = True, width: int = 80) -> list[RenderableType]:
    """A fetch for people: a header line, then the section rendered (or the outline as a
    table, or the infobox as one), then the note when the text was cut."""
    out: list[RenderableType] = [fetch_header(res), Text("")]
    if res.section is None:
        out.append(outline_table(res, words, boxed, min(width, MAX_WIDTH)))
    elif res.section == INFOBOX and all(": " in x for x in res.text.split("\n") if x):
        out.append(infobox_table(res.text, words))
    else:
        out.append(section_renderable(res.text, markup, words))
    if res.note and res.section is not None:
        out += [Text(""), Text(f"[{one_line(res.note)}]", "yellow")]
    elif res.section is None:
        out += [Text(""), Text(f"{res.note}: sieve-lite fetch DB {one_line(res.id)} "
                               "'SECTION'", DIM)]
    return out


def print_fetch(res: FetchResult, console: Console, words: Words = (),
                markup: str | None = None, boxed: bool | None = None) -> None:
    """Print a fetch on ``console``: rendered on a terminal (or when colour is forced); in a
    pipe the plain text the agent reads (``FetchResult.render``), control characters
    removed."""
    if boxed is None:
        boxed = console.is_terminal
    if not boxed:
        console.out(sanitize(res.render()), highlight=False)
        return
    width = min(console.width, MAX_WIDTH)
    for part in fetch_renderables(res, words, markup, boxed, width):
        console.print(part, width=width, highlight=False)


# ------------------------------------------------------------------------------- live view
def live_hits(hits: Iterable[dict[str, Any]], words: Words, width: int, *,
              verbose: bool = False, boxed: bool = True) -> list[Text]:
    """The cards of one search in the ``ask`` live view: the first ``FOLD_AFTER`` in full,
    the rest folded to one line (all in full when ``verbose``). A hit without card data (a
    transcript from before cards were recorded) shows its compact text."""
    lines: list[Text] = []
    for i, hit in enumerate(hits):
        try:
            card = card_from_dict(hit["data"])
        except (KeyError, TypeError, ValueError):
            lines += [Text(one_line(x)) for x in str(hit.get("card", "")).split("\n")]
            continue
        if verbose or i < FOLD_AFTER:
            lines += card_lines(card, words, width, boxed=boxed)
        else:
            lines.append(card_line(card, words, width))
    return lines


def live_read(text: str, words: Words, *, markup: str | None = None,
              verbose: bool = False) -> RenderableType:
    """A fetched section in the ``ask`` live view: its first ``LIVE_READ_LINES`` rendered
    lines with the last search's words highlighted (all of it when ``verbose``); ``markup``
    None guesses it."""
    body = section_renderable(text, markup, words)
    return body if verbose else Folded(body, LIVE_READ_LINES, " (--verbose shows them)")


def render_text(renderables: RenderableType | Iterable[RenderableType], width: int = 80,
                color: bool = False) -> str:
    """Renderables as the text a terminal of ``width`` columns would show (for tests,
    golden files and captures); ``color`` keeps the ANSI styles."""
    out = StringIO()
    console = Console(file=out, width=width, color_system="truecolor" if color else None,
                      force_terminal=color, legacy_windows=False, highlight=False)
    items = [renderables] if isinstance(renderables, (str, Text)) or hasattr(
        renderables, "__rich_console__") else list(renderables)  # type: ignore[arg-type]
    for item in items:
        console.print(item, crop=False)
    return out.getvalue()


__all__ = ["CARD_LINES", "FOLD_AFTER", "HIT", "MAX_WIDTH", "MIN_WIDTH", "Folded", "Highlighted",
           "WordMatch", "authors_short", "card_from_dict", "card_line", "card_lines",
           "fetch_renderables", "headings_line", "highlight", "highlight_segments",
           "infobox_table", "live_hits", "live_read", "one_line", "outline_table",
           "print_fetch", "print_search", "query_words", "render_text", "sanitize",
           "search_header", "search_lines", "section_renderable"]
