"""The word rule of BQL.md section 2, shared by indexing, matching, snippets and attribution.

Text is put in NFKD form, combining marks are dropped, case is folded with ``str.casefold``;
a word is then a maximal run of Unicode letters and digits. We normalise in Python rather than
trusting FTS5's ``unicode61`` alone because unicode61 does no compatibility decomposition
(``ﬁ``) and no full case folding (``ß`` -> ``ss``); the FTS tables therefore index the
*normalised* text, words joined by single spaces, so FTS5 positions are exactly our word indices.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache

# [^\W_] = a character that is alphanumeric in Python's sense (letters L*, digits/numbers N*).
_WORD = re.compile(r"[^\W_]+")


def unmarked(text: str) -> str:
    """NFKD, combining marks dropped; case kept. Word boundaries are not touched."""
    decomposed = unicodedata.normalize("NFKD", text)
    if decomposed.isascii():
        return decomposed
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def fold(text: str) -> str:
    """NFKD, drop combining marks, casefold. Word boundaries are not touched."""
    return unmarked(text).casefold()


def words(text: str) -> list[str]:
    """The words of ``text`` under the BQL word rule, in order."""
    return _WORD.findall(fold(text))


# ASCII text (most of it) takes a fast path: every ASCII character that is not a letter or a
# digit becomes a space, then split. Same output as the regex, about twice as fast.
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
_ASCII_SEP = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})


def index_text(text: str) -> str:
    """What the FTS tables store for ``text``: its words joined by single spaces."""
    folded = fold(text)
    if folded.isascii():
        return " ".join(folded.translate(_ASCII_SEP).split())
    return " ".join(_WORD.findall(folded))


@lru_cache(maxsize=4096)
def term_words(term: str) -> tuple[str, ...]:
    """Words of a query term (cached: queries repeat terms)."""
    return tuple(words(term))


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """Words of ``text`` with their character spans in the *original* text.

    Used by snippets and attribution, which must show original text while matching folded words.
    Folding can change length (``ß`` -> ``ss``, ``ﬁ`` -> ``fi``), so we fold per character run.
    ASCII text takes a fast path with the same output: its words are the runs of ASCII letters
    and digits, lowercased.
    """
    if text.isascii():
        return [(m.start(), m.end(), m.group().lower()) for m in _ASCII_WORD.finditer(text)]
    return word_spans_general(text)


def span_words(text: str) -> list[str]:
    """The words of ``word_spans(text)`` without their spans (cheaper: for ASCII text, one C
    call); ``words_span`` gives the span of a run of them when one is needed."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    return [w for _, _, w in word_spans_general(text)]


def words_span(text: str, first: int, last: int) -> tuple[int, int]:
    """The character span of ``text``'s words ``first`` to ``last`` (0-based, inclusive; as
    ``word_spans(text)`` counts them): from the first one's start to the last one's end."""
    if text.isascii():
        it = _ASCII_WORD.finditer(text)
        a = next(itertools.islice(it, first, None))
        b = a if last == first else next(itertools.islice(it, last - first - 1, None))
        return a.start(), b.end()
    spans = word_spans_general(text)
    return spans[first][0], spans[last][1]


def word_spans_general(text: str) -> list[tuple[int, int, str]]:
    """``word_spans`` without the ASCII fast path (any text)."""
    out: list[tuple[int, int, str]] = []
    # A run of characters that are alphanumeric, or combining marks following them, in the original.
    for m in re.finditer(r"(?:[^\W_]|[\u0300-\u036f])+|[^\s]", text):
        chunk = m.group(0)
        ws = words(chunk)
        if not ws:
            continue
        if len(ws) == 1:
            out.append((m.start(), m.end(), ws[0]))
        else:  # rare: a compatibility character that decomposes into a separator
            for w in ws:
                out.append((m.start(), m.end(), w))
    return out


def stem5(word: str) -> str:
    """A word's crude stem: one ending off, then five letters ('making' and 'make': 'mak';
    'lines' and 'line': 'lin'). No stemmer: a fast match of a question's words to a title's
    or a heading's."""
    for suf in ("ings", "ing", "ions", "ion", "ed", "es", "e", "s"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)][:5]
    return word[:5]
