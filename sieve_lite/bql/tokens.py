"""BQL tokenizer: query text -> tokens with 1-based columns (BQL.md sections 2-7).

The tokenizer is context free and strict about the things only it can see: quotes, brackets,
parenthesis depth, the length and atom limits, and where a ``*`` may stand. It never raises
anything but ``QueryError``. Structure (operators, runs, scopes, NOT rules) is the parser's job.

Special characters: whitespace, ``"``, ``(``, ``)``, ``[``, ``]``. Everything else is part of a
bare term; a bare term's words come from ``sieve_lite.words.words`` (so ``O'Brien``, ``C++``,
``title:x`` are literal terms: the phrase of their words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import QueryError
from ..words import fold, words

MAX_CHARS = 1000
MAX_ATOMS = 64
MAX_DEPTH = 20
MAX_NEAR = 1_000_000  # larger NEAR distances are clamped: no field value is that long

# Token kinds
WORD = "WORD"  # a bare term (word, prefix, or term with separators); .text is as written
PHRASE = "PHRASE"  # a quoted phrase; .text is the whole "..."(*) as written
LPAREN = "LPAREN"
RPAREN = "RPAREN"
NEAR = "NEAR"  # NEAR( or NEAR/d( ; .distance
SCOPE = "SCOPE"  # [ ... ] ; .text is the content between the brackets
AND = "AND"
OR = "OR"
NOT = "NOT"
NEG = "NEG"  # a leading '-'

OPERATORS = {"AND": AND, "OR": OR, "NOT": NOT}
_SPECIAL = set('"()[]')
_NEAR = re.compile(r"NEAR(?:/([0-9]+))?\(")
_NEAR_BAD = re.compile(r"NEAR/([^\s\"()\[\]]*)\(")
_ALNUM = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Token:
    kind: str
    text: str  # as written (for SCOPE: the content between the brackets)
    column: int  # 1-based column of the token's first character
    length: int  # characters covered in the query
    words: tuple[str, ...] = ()  # WORD/PHRASE: the normalised words
    prefix: bool = False  # WORD/PHRASE: the last word is a prefix
    distance: int = 10  # NEAR


def show(text: str, limit: int = 40) -> str:
    """User text made safe for a one-line message: control and unpaired characters escaped,
    long text shortened."""
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    out = []
    for ch in text:
        if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def _ends_with_word(text: str) -> bool:
    """True when the last character of ``text`` (after folding) is a letter or digit."""
    folded = fold(text)
    return bool(folded) and bool(_ALNUM.match(folded[-1]))


def _star_error(column: int, query: str) -> QueryError:
    return QueryError(f"'*' at column {column} is not at the end of a word; '*' may only end a "
                      "word, e.g. fort*", column, 1, query)


def term_words(raw: str, column: int, query: str, *, quoted: bool,
               star_outside: bool = False, star_column: int = 0) -> tuple[tuple[str, ...], bool]:
    """Words and prefix flag of a bare term (``raw`` as written) or of a phrase's content.

    ``column`` is the column of ``raw[0]``. Raises ``QueryError`` for a misplaced ``*``, a
    too-short prefix stem, or a term without any letter or digit.
    """
    stars = [i for i, ch in enumerate(raw) if ch == "*"]
    prefix = False
    body = raw
    if stars:
        last = stars[-1]
        tail = raw[last + 1:]
        # Inside quotes, spaces may follow the star ("fort sant* "); in a bare term nothing may.
        tail_ok = (tail.strip() == "") if quoted else (tail == "")
        if len(stars) > 1:
            raise _star_error(column + stars[0], query)
        if not tail_ok or not _ends_with_word(raw[:last]):
            raise _star_error(column + last, query)
        if star_outside:
            raise _star_error(star_column, query)
        prefix = True
        body = raw[:last]
    elif star_outside:
        if not _ends_with_word(raw.rstrip()):
            raise _star_error(star_column, query)
        prefix = True
    ws = tuple(words(body))
    if not ws:
        if quoted:
            raise QueryError(f"the phrase at column {column - 1} has no letter or digit; put "
                             "words between the quotes, e.g. \"fort santiago\", or remove them",
                             column - 1, len(raw) + 2, query)
        raise QueryError(f"term '{show(raw)}' at column {column} has no letter or digit; search "
                         "for words, e.g. fort, or remove it", column, len(raw), query)
    if prefix and len(ws[-1]) < 2:
        written = f'"{raw.strip()}"' if quoted else raw
        if star_outside:
            written += "*"
        start = column - 1 if quoted else column
        raise QueryError(f"prefix '{show(written)}' at column {start} is too short: the stem "
                         "needs at least 2 letters or digits, e.g. fort*", start, len(written),
                         query)
    return ws, prefix


def tokenize(query: str) -> list[Token]:
    """Split ``query`` into tokens. Checks the length, depth and atom limits."""
    if not isinstance(query, str):
        raise QueryError(f"a query must be text, not {type(query).__name__}", 0, 1, "")
    n = len(query)
    if n > MAX_CHARS:
        raise QueryError(f"the query is {n:,} characters long, past the limit of "
                         f"{MAX_CHARS:,} characters at column {MAX_CHARS + 1}; shorten it",
                         MAX_CHARS + 1, n - MAX_CHARS, query)
    tokens: list[Token] = []
    opens: list[int] = []  # columns of the open '(' / NEAR(
    atoms = 0
    i = 0

    def count_atom(col: int, length: int) -> None:
        nonlocal atoms
        atoms += 1
        if atoms > MAX_ATOMS:
            raise QueryError(f"the query has more than {MAX_ATOMS} atoms (the 65th starts at "
                             f"column {col}); the limit is {MAX_ATOMS} words, prefixes, phrases, "
                             "NEAR items and dates: split the query", col, length, query)

    def open_paren(col: int) -> None:
        opens.append(col)
        if len(opens) > MAX_DEPTH:
            raise QueryError(f"'(' at column {col} opens level {len(opens)} of parentheses, past "
                             f"the limit of {MAX_DEPTH} levels; remove some parentheses", col, 1,
                             query)

    while i < n:
        ch = query[i]
        col = i + 1
        if ch.isspace():
            i += 1
            continue
        if ch == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise QueryError(f"unclosed quote opened at column {col}; add the closing \" or "
                                 "remove this one", col, n - i, query)
            content = query[i + 1:end]
            star_outside = end + 1 < n and query[end + 1] == "*"
            stop = end + 2 if star_outside else end + 1
            ws, prefix = term_words(content, col + 1, query, quoted=True,
                                    star_outside=star_outside, star_column=end + 2)
            count_atom(col, stop - i)
            tokens.append(Token(PHRASE, query[i:stop], col, stop - i, ws, prefix))
            i = stop
            continue
        if ch == "(":
            open_paren(col)
            tokens.append(Token(LPAREN, ch, col, 1))
            i += 1
            continue
        if ch == ")":
            if not opens:
                raise QueryError(f"')' at column {col} has no matching '('; remove it or add the "
                                 "'(' it closes", col, 1, query)
            opens.pop()
            tokens.append(Token(RPAREN, ch, col, 1))
            i += 1
            continue
        if ch == "[":
            end = query.find("]", i + 1)
            inner = query.find("[", i + 1)
            if end < 0 or (0 <= inner < end):
                raise QueryError(f"unclosed '[' at column {col}; close the field list with ']', "
                                 "e.g. fort[title]", col, (end if end >= 0 else n) - i, query)
            tokens.append(Token(SCOPE, query[i + 1:end], col, end + 1 - i))
            i = end + 1
            continue
        if ch == "]":
            raise QueryError(f"']' at column {col} has no matching '['; remove it, or write a "
                             "field scope like fort[title]", col, 1, query)
        if ch == "-":
            nxt = query[i + 1] if i + 1 < n else ""
            if nxt == "" or nxt.isspace() or nxt in ")]":
                raise QueryError(f"'-' at column {col} is not followed by a term; write it right "
                                 "before the term it excludes, e.g. fort -spain", col, 1, query)
            tokens.append(Token(NEG, ch, col, 1))
            i += 1
            continue
        m = _NEAR.match(query, i)
        if m:
            distance = min(int(m.group(1)), MAX_NEAR) if m.group(1) is not None else 10
            open_paren(col)
            tokens.append(Token(NEAR, m.group(0), col, m.end() - i, distance=distance))
            i = m.end()
            continue
        m = _NEAR_BAD.match(query, i)
        if m:
            raise QueryError(f"NEAR at column {col} has distance '{show(m.group(1))}'; the "
                             "distance is a whole number of words, e.g. NEAR/5(manila fort)",
                             col, m.end() - i, query)
        j = i
        while j < n and not query[j].isspace() and query[j] not in _SPECIAL:
            j += 1
        raw = query[i:j]
        if raw in OPERATORS:
            tokens.append(Token(OPERATORS[raw], raw, col, j - i))
        else:
            ws, prefix = term_words(raw, col, query, quoted=False)
            count_atom(col, j - i)
            tokens.append(Token(WORD, raw, col, j - i, ws, prefix))
        i = j
    if opens:
        col = opens[-1]
        what = "NEAR(" if query.startswith("NEAR", col - 1) else "'('"
        raise QueryError(f"unclosed {what} opened at column {col}; add the closing ')' or remove "
                         "it", col, 1, query)
    return tokens
