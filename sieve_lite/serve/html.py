"""Collection text made into HTML for the pages: escaped, cleaned, query words marked.

Text from a collection is untrusted. It is cleaned of control characters and bidi overrides
(``terminal.sanitize``, the terminal's own rule), escaped, and only then wrapped: ``<mark>``
around the query's words, found by the terminal's matcher (``terminal.WordMatch``, the
positive words of the BQL query as ``terminal.query_words`` reads them). Nothing from a
collection is ever emitted as markup. Links are made only for ``http``/``https`` URLs.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape as _html_escape
from urllib.parse import urlsplit

from markupsafe import Markup, escape

from ..terminal import WordMatch, one_line, sanitize
from ..words import word_spans, words


def escape_html(text: str) -> str:
    """HTML-escaped text (``& < > " '``), as a plain string."""
    return _html_escape(text, quote=True)


Words = Sequence[tuple[str, bool]]


def may_hold(match: WordMatch, text: str) -> bool:
    """False when ``text`` surely holds no query word: for ASCII text (BQL folds it to its
    lower case) no query word or prefix occurs in it even as a substring. Most headings and
    titles are passed over by this test alone, without splitting them into words."""
    if not text.isascii():
        return True
    needles = match.__dict__.get("_needles")
    if needles is None:  # once per query: its words and stems, as substrings to look for
        needles = match.__dict__["_needles"] = (*match.exact, *match.stems)
    low = text.lower()
    for w in needles:
        if w in low:
            return True
    return False


def marked(text: str | None, match: WordMatch | None = None, *, line: bool = False) -> Markup:
    """``text`` cleaned and escaped, with the query words in ``<mark>``."""
    clean = one_line(text) if line else sanitize(text)
    if not match or not clean or not may_hold(match, clean):
        return Markup(escape_html(clean))
    return with_marks(clean, match.spans(clean))


def with_marks(clean: str, spans: Sequence[tuple[int, int]]) -> Markup:
    """Clean text escaped, with ``<mark>`` around ``spans`` (``WordMatch.spans`` of it)."""
    # Plain strings joined once (a Markup object per piece costs more than the matching).
    out: list[str] = []
    at = 0
    for a, b in spans:
        out.append(escape_html(clean[at:a]))
        out.append("<mark>" + escape_html(clean[a:b]) + "</mark>")
        at = b
    out.append(escape_html(clean[at:]))
    return Markup("".join(out))


def marked_span(text: str, span: str, match: WordMatch | None = None) -> Markup:
    """``text`` with the first run of ``span``'s words (a cited answer: the loop's answers
    are spans copied from what was read, punctuation aside) in ``<mark class="cited"
    id="cited">``, and the query words marked elsewhere."""
    clean = sanitize(text)
    want = words(span or "")
    if not want:
        return marked(clean, match)
    found = word_spans(clean)
    keys = [w for _, _, w in found]
    n = len(want)
    for i in range(len(keys) - n + 1):
        if keys[i:i + n] == want:
            at, end = found[i][0], found[i + n - 1][1]
            return (marked(clean[:at], match) + Markup('<mark class="cited" id="cited">')
                    + escape(clean[at:end]) + Markup("</mark>") + marked(clean[end:], match))
    return marked(clean, match)


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) URL without control characters, else None."""
    if not url:
        return None
    url = url.strip()
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url) or sanitize(url) != url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


__all__ = ["escape_html", "marked", "marked_span", "may_hold", "safe_url", "with_marks"]
