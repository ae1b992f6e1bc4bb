"""The strings a GBNF rule can make, when they are few: how a grammar-only constraint (the
span automaton of grounded answers, ``spans.SpanIndex.grammar``) becomes a JSON-schema enum
for servers that take a schema instead of a grammar.

``strings(grammar, rule)`` reads the grammar (literals, rule references, groups,
alternation, ``?``, ``*``, ``+``, ``{m,n}``; a character class makes it give up) and lists
the strings derivable with at most ``depth`` nested rule references, for the largest depth
whose strings still number at most ``limit``. Derivations that need more nesting are left
out whole, so every string listed is a string of the language: for the span automaton,
where each chunk of an answer is one more rule, depth ``d`` lists every span of up to ``d``
chunks. ``None`` when even the shallowest listing is too long or the grammar uses what this
reader does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|[A-Za-z][A-Za-z0-9_-]*'
                    r"|::=|\{\d*(?:,\d*)?\}|[()|?*+]")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]"}


class _Unsupported(Exception):
    """A construct this reader does not list (a character class), or a malformed grammar."""


class _TooMany(Exception):
    """More strings than the limit."""


@dataclass(frozen=True)
class _Lit:
    text: str


@dataclass(frozen=True)
class _Ref:
    name: str


@dataclass(frozen=True)
class _Seq:
    items: tuple[object, ...]


@dataclass(frozen=True)
class _Alt:
    options: tuple[object, ...]


@dataclass(frozen=True)
class _Rep:
    item: object
    lo: int
    hi: int | None


def _unescape(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif nxt == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            raise _Unsupported(f"escape \\{nxt}")
    return "".join(out)


class _Parser:
    def __init__(self, grammar: str) -> None:
        # Comments run to the end of a line; a rule ends where the next 'name ::=' starts.
        text = re.sub(r"#[^\n]*", "", grammar)
        self.tokens, at = [], 0
        for m in _TOKEN.finditer(text):
            if m.start() != at:
                raise _Unsupported(f"unreadable grammar text at {text[at:at + 20]!r}")
            at = m.end()
            if not m.group().isspace():
                self.tokens.append(m.group())
        if at != len(text):
            raise _Unsupported(f"unreadable grammar text at {text[at:at + 20]!r}")
        self.i = 0

    def rules(self) -> dict[str, object]:
        out: dict[str, object] = {}
        while self.i < len(self.tokens):
            name = self.tokens[self.i]
            if self.i + 1 >= len(self.tokens) or self.tokens[self.i + 1] != "::=":
                raise _Unsupported(f"expected a rule at {name!r}")
            self.i += 2
            out[name] = self._alt()
        return out

    def _peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _starts_rule(self) -> bool:
        return self.i + 1 < len(self.tokens) and self.tokens[self.i + 1] == "::="

    def _alt(self) -> object:
        options = [self._seq()]
        while self._peek() == "|":
            self.i += 1
            options.append(self._seq())
        return options[0] if len(options) == 1 else _Alt(tuple(options))

    def _seq(self) -> object:
        items = []
        while (tok := self._peek()) is not None and tok not in ("|", ")") \
                and not self._starts_rule():
            items.append(self._postfix(self._atom()))
        return items[0] if len(items) == 1 else _Seq(tuple(items))

    def _atom(self) -> object:
        tok = self.tokens[self.i]
        self.i += 1
        if tok.startswith('"'):
            return _Lit(_unescape(tok[1:-1]))
        if tok == "(":
            inner = self._alt()
            if self._peek() != ")":
                raise _Unsupported("unbalanced parentheses")
            self.i += 1
            return inner
        if tok.startswith("["):
            raise _Unsupported("a character class")
        if tok[0].isalpha():
            return _Ref(tok)
        raise _Unsupported(f"unexpected {tok!r}")

    def _postfix(self, item: object) -> object:
        while (tok := self._peek()) is not None and (tok in "?*+" or tok.startswith("{")):
            self.i += 1
            if tok == "?":
                item = _Rep(item, 0, 1)
            elif tok == "*":
                item = _Rep(item, 0, None)
            elif tok == "+":
                item = _Rep(item, 1, None)
            else:
                lo, sep, hi = tok[1:-1].partition(",")
                low = int(lo or 0)
                item = _Rep(item, low, (int(hi) if hi else None) if sep else low)
        return item


def strings(grammar: str, rule: str, *, limit: int = 500, max_chars: int = 120,
            depth: int = 12, min_depth: int = 1) -> list[str] | None:
    """The strings ``rule`` derives with the deepest nesting (at most ``depth``) that keeps
    them at most ``limit`` (each at most ``max_chars`` long), shortest first; None when
    there are none, when that depth is under ``min_depth`` (the listing would cut the
    language too short to stand for it), or when the grammar uses a construct this reader
    does not list."""
    try:
        rules = _Parser(grammar).rules()
    except (_Unsupported, ValueError, IndexError):
        return None
    if rule not in rules:
        return None
    best: list[str] | None = None
    for d in range(1, depth + 1):
        try:
            found = _Lister(rules, limit, max_chars).ref(rule, d)
        except (_TooMany, _Unsupported, RecursionError):
            if d <= min_depth:
                return None
            break
        best = sorted(dict.fromkeys(found), key=len)
    return best or None


class _Lister:
    """Every string of an expression within a nesting budget, memoised per rule."""

    def __init__(self, rules: dict[str, object], limit: int, max_chars: int) -> None:
        self.rules = rules
        self.limit = limit
        self.max_chars = max_chars
        self.memo: dict[tuple[str, int], list[str]] = {}

    def ref(self, name: str, depth: int) -> list[str]:
        if depth <= 0:
            return []
        key = (name, depth)
        if key not in self.memo:
            if name not in self.rules:
                raise _Unsupported(f"undefined rule {name}")
            self.memo[key] = self.expr(self.rules[name], depth - 1)
        return self.memo[key]

    def _keep(self, items: list[str]) -> list[str]:
        items = [s for s in dict.fromkeys(items) if len(s) <= self.max_chars]
        if len(items) > self.limit:
            raise _TooMany()
        return items

    def _concat(self, heads: list[str], tails: list[str]) -> list[str]:
        if len(heads) * len(tails) > self.limit * 4:
            raise _TooMany()
        return self._keep([h + t for h in heads for t in tails])

    def expr(self, node: object, depth: int) -> list[str]:
        if isinstance(node, _Lit):
            return [node.text]
        if isinstance(node, _Ref):
            return self.ref(node.name, depth)
        if isinstance(node, _Seq):
            out = [""]
            for item in node.items:
                out = self._concat(out, self.expr(item, depth))
                if not out:
                    return []
            return out
        if isinstance(node, _Alt):
            return self._keep([s for opt in node.options for s in self.expr(opt, depth)])
        if isinstance(node, _Rep):
            one = self.expr(node.item, depth)
            hi = node.hi if node.hi is not None else max(node.lo, 1) + depth
            out: list[str] = [""] if node.lo == 0 else []
            cur = [""]
            for n in range(1, hi + 1):
                cur = self._concat(cur, one)
                if not cur:
                    break
                if n >= node.lo:
                    out.extend(cur)
            return self._keep(out)
        raise _Unsupported(type(node).__name__)


__all__ = ["strings"]
