"""BQL parser: tokens -> the frozen AST of ``sieve_lite.bql.ast`` (BQL.md sections 3-6).

Recursive descent over the tokens of ``tokens.tokenize``::

    query   := or EOF
    or      := and (OR and)*
    and     := unary ((AND)? unary)*          -- NOT binds tighter than AND, AND than OR
    unary   := (NOT | '-') primary | primary   -- 'A NOT B' is 'A AND NOT B'
    primary := term scope? | phrase scope? | '(' or ')' scope? | NEAR(items) scope? | date

The parser first builds small mutable nodes (so that a ``[field]`` after a run of bare terms
can scope the whole run, and a group's scope can be handed down), then ``_finish`` turns them
into the AST, flattens nested AND/OR, and enforces the NOT rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import QueryError
from .ast import ALIASES, ALL_FIELDS_ORDER, And, DateRange, Near, Node, Not, Or, Span, Term
from .dates import looks_like_date, parse_range
from .tokens import (
    AND,
    LPAREN,
    NEAR,
    NEG,
    NOT,
    OR,
    PHRASE,
    RPAREN,
    SCOPE,
    WORD,
    Token,
    show,
    tokenize,
)

_EMPTY = "the query is empty at column 1; type some words, e.g. fort santiago"
_NOT_HINT = "a NOT needs a positive term in the same AND group, e.g. 'fort NOT spain'"


# -- intermediate nodes ----------------------------------------------------------------------
@dataclass(eq=False)
class _PTerm:
    tok: Token
    fields: tuple[str, ...] | None = None
    scope_col: int = 0
    date: DateRange | None = None


@dataclass(eq=False)
class _PNear:
    tok: Token
    items: list[Token]
    end: int  # column of the closing ')'
    fields: tuple[str, ...] | None = None
    scope_col: int = 0


@dataclass(eq=False)
class _PDate:
    node: DateRange


@dataclass(eq=False)
class _PGroup:
    inner: object
    fields: tuple[str, ...] | None = None
    scope_col: int = 0


@dataclass(eq=False)
class _PNot:
    child: object
    tok: Token


@dataclass(eq=False)
class _PAnd:
    children: list = field(default_factory=list)


@dataclass(eq=False)
class _POr:
    children: list = field(default_factory=list)


def _describe(tok: Token) -> str:
    if tok.kind in (AND, OR, NOT):
        return tok.kind
    if tok.kind == NEG:
        return "'-'"
    if tok.kind == SCOPE:
        return f"'[{show(tok.text)}]'"
    if tok.kind == NEAR:
        return "NEAR("
    return f"'{show(tok.text)}'"


def _not_name(tok: Token) -> str:
    return "'-'" if tok.kind == NEG else "NOT"


class _Parser:
    def __init__(self, query: str, fields: Sequence[str]) -> None:
        self.query = query
        self.fields = tuple(fields)
        self.toks = tokenize(query)
        self.pos = 0

    # -- helpers -------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else None

    def advance(self) -> Token:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def error(self, message: str, column: int, length: int = 1) -> QueryError:
        return QueryError(message, column, length, self.query)

    def has_fields(self) -> str:
        return f"this collection has: {', '.join(self.fields)}"

    # -- grammar -------------------------------------------------------------------------
    def parse(self) -> Node:
        if not self.toks:
            raise self.error(_EMPTY, 1)
        tree = self.parse_or()
        if self.pos < len(self.toks):  # pragma: no cover - the tokenizer balances parentheses
            tok = self.advance()
            raise self.error(f"unexpected {_describe(tok)} at column {tok.column}; remove it",
                             tok.column, tok.length)
        node = self.finish(tree, None, 0)
        if _negative(node):
            first = _first_not(node)
            raise self.error(f"{self.not_label(first)} at column {first.span.column} stands "
                             f"alone; {_NOT_HINT}", first.span.column, first.span.length)
        return node

    def not_label(self, node: Not) -> str:
        return "'-'" if self.query[node.span.column - 1] == "-" else "NOT"

    def parse_or(self):
        first = self.parse_and()
        if not first:
            tok = self.peek()
            if tok is not None and tok.kind == OR:
                raise self.error(f"OR at column {tok.column} has nothing before it; put a term "
                                 "on each side, e.g. fort OR castle", tok.column, 2)
            # an empty group is caught where it opens; nothing else gets here
            raise self.error(_EMPTY, 1)
        items = [_PAnd(first) if len(first) > 1 else first[0]]
        while (tok := self.peek()) is not None and tok.kind == OR:
            self.advance()
            nxt = self.parse_and()
            if not nxt:
                after = self.peek()
                what = "nothing after it" if after is None or after.kind == RPAREN else \
                    f"{_describe(after)} right after it"
                raise self.error(f"OR at column {tok.column} has {what}; put a term on each "
                                 "side, e.g. fort OR castle", tok.column, 2)
            items.append(_PAnd(nxt) if len(nxt) > 1 else nxt[0])
        return _POr(items) if len(items) > 1 else items[0]

    def parse_and(self) -> list:
        children: list = []
        run: list[_PTerm] = []
        while (tok := self.peek()) is not None and tok.kind not in (OR, RPAREN):
            if tok.kind == AND:
                if not children:
                    raise self.error(f"AND at column {tok.column} has nothing before it; put a "
                                     "term on each side, e.g. fort AND castle", tok.column, 3)
                self.advance()
                nxt = self.peek()
                if nxt is None or nxt.kind in (AND, OR, RPAREN):
                    what = "nothing after it" if nxt is None or nxt.kind == RPAREN else \
                        f"{_describe(nxt)} right after it"
                    raise self.error(f"AND at column {tok.column} has {what}; put a term on "
                                     "each side, e.g. fort AND castle", tok.column, 3)
                run = []
                continue
            if tok.kind == SCOPE:
                raise self.error(f"field scope '[{show(tok.text)}]' at column {tok.column} "
                                 "follows no term; write it right after a term or group, e.g. "
                                 "fort[title]", tok.column, tok.length)
            node, run = self.parse_unary(run)
            children.append(node)
        return children

    def parse_unary(self, run: list[_PTerm]):
        tok = self.peek()
        assert tok is not None
        if tok.kind in (NOT, NEG):
            self.advance()
            nxt = self.peek()
            name = _not_name(tok)
            if nxt is None:
                raise self.error(f"{name} at column {tok.column} has nothing after it; write the "
                                 f"term to exclude after it, e.g. 'fort NOT spain'", tok.column,
                                 tok.length)
            if nxt.kind in (NOT, NEG):
                raise self.error(f"{_not_name(nxt)} at column {nxt.column} follows {name} at "
                                 f"column {tok.column}; a double negation is not allowed: remove "
                                 "both, or write e.g. 'fort NOT spain'", nxt.column, nxt.length)
            if nxt.kind not in (WORD, PHRASE, LPAREN, NEAR):
                raise self.error(f"{name} at column {tok.column} is followed by "
                                 f"{_describe(nxt)}; write the term to exclude right after it, "
                                 "e.g. 'fort NOT spain'", tok.column, tok.length)
            child, run = self.parse_primary([], negated=tok.kind == NEG)
            return _PNot(child, tok), run
        return self.parse_primary(run, negated=False)

    def parse_primary(self, run: list[_PTerm], negated: bool):
        tok = self.advance()
        if tok.kind == WORD:
            nxt = self.peek()
            if (tok.text.casefold() == "date" and nxt is not None and nxt.kind == SCOPE
                    and looks_like_date(nxt.text)):
                self.advance()
                if "date" not in self.fields:
                    raise self.error(f"field 'date' at column {tok.column} is not in this "
                                     f"collection (no document has a date); {self.has_fields()}",
                                     tok.column, 4)
                lo, hi, text = parse_range(nxt.text, nxt.column + 1, self.query)
                node = DateRange(lo, hi, Span(tok.column, nxt.column + nxt.length - tok.column),
                                 text)
                self.no_second_scope()
                return _PDate(node), []
            term = _PTerm(tok)
            if (nxt is not None and nxt.kind == SCOPE and looks_like_date(tok.text)
                    and self.resolve_scope(nxt) == ("date",)):
                # BQL.md section 5: a date written before [date] is one date atom and never
                # part of a run, so 'war 2002[date]' is 'war AND date[2002]'; it also ends the
                # run before it, as date[...] does.
                self.apply_scope([term], self.advance())
                return term, []
            run = [term] if negated else run + [term]
            if nxt is not None and nxt.kind == SCOPE:
                self.apply_scope(run, self.advance())
                return term, []
            return term, ([] if negated else run)
        if tok.kind == PHRASE:
            term = _PTerm(tok)
            if (nxt := self.peek()) is not None and nxt.kind == SCOPE:
                self.apply_scope([term], self.advance())
            return term, []
        if tok.kind == LPAREN:
            nxt = self.peek()
            if nxt is not None and nxt.kind == RPAREN:
                raise self.error(f"empty group '()' at column {tok.column}; put terms inside or "
                                 "remove it", tok.column, 2)
            inner = self.parse_or()
            close = self.peek()
            if close is None or close.kind != RPAREN:  # pragma: no cover - tokenizer balances
                raise self.error(f"unclosed '(' opened at column {tok.column}; add the closing "
                                 "')'", tok.column)
            self.advance()
            group = _PGroup(inner)
            if (nxt := self.peek()) is not None and nxt.kind == SCOPE:
                self.apply_scope([group], self.advance())
            return group, []
        if tok.kind == NEAR:
            near = self.parse_near(tok)
            if (nxt := self.peek()) is not None and nxt.kind == SCOPE:
                self.apply_scope([near], self.advance())
            return near, []
        # AND/OR/RPAREN/SCOPE/NOT are handled by the callers; this is a safety net.
        raise self.error(f"unexpected {_describe(tok)} at column {tok.column}; remove it",
                         tok.column, tok.length)  # pragma: no cover

    def parse_near(self, tok: Token) -> _PNear:
        items: list[Token] = []
        while True:
            item = self.peek()
            if item is None:  # pragma: no cover - the tokenizer balances parentheses
                raise self.error(f"unclosed NEAR( opened at column {tok.column}; add the "
                                 "closing ')'", tok.column, tok.length)
            if item.kind == RPAREN:
                end = self.advance().column
                break
            if item.kind in (WORD, PHRASE):
                self.advance()
                nxt = self.peek()
                if nxt is not None and nxt.kind == SCOPE:
                    raise self.error(f"field scope '[{show(nxt.text)}]' at column {nxt.column} "
                                     f"is inside NEAR( of column {tok.column}; scope the whole "
                                     "NEAR after its ')', e.g. NEAR(manila fort)[title]",
                                     nxt.column, nxt.length)
                items.append(item)
                continue
            raise self.error(f"{_describe(item)} at column {item.column} is inside NEAR( of "
                             f"column {tok.column}; NEAR takes only words, prefixes and "
                             "phrases, e.g. NEAR/5(manila \"fort santiago\")", item.column,
                             item.length)
        if len(items) < 2:
            raise self.error(f"NEAR at column {tok.column} needs two or more words or phrases, "
                             "e.g. NEAR/5(manila fort)", tok.column, end + 1 - tok.column)
        return _PNear(tok, items, end)

    def no_second_scope(self) -> None:
        nxt = self.peek()
        if nxt is not None and nxt.kind == SCOPE:
            raise self.error(f"a second field scope '[{show(nxt.text)}]' at column {nxt.column}; "
                             "give one list instead, e.g. fort[title,body]", nxt.column,
                             nxt.length)

    # -- field scopes ----------------------------------------------------------------------
    def resolve_scope(self, tok: Token) -> tuple[str, ...]:
        content = tok.text
        if not content.strip():
            raise self.error(f"empty field scope '[{show(content)}]' at column {tok.column}; name "
                             f"a field, e.g. fort[title]; {self.has_fields()}", tok.column,
                             tok.length)
        if looks_like_date(content):
            raise self.error(f"'[{show(content)}]' at column {tok.column} is a date range without "
                             "the date field; write date[...] or ...[date], e.g. date[2018..2023] "
                             "or 2018..2023[date]", tok.column, tok.length)
        out: list[str] = []
        offset = 0
        for piece in content.split(","):
            col = tok.column + 1 + offset + (len(piece) - len(piece.lstrip()))
            offset += len(piece) + 1
            name = piece.strip()
            if not name:
                raise self.error(f"empty field name at column {col} in '[{show(content)}]'; "
                                 f"separate field names with single commas; {self.has_fields()}",
                                 col)
            canonical = ALIASES.get(name.casefold())
            if canonical is None:
                raise self.error(f"unknown field '{show(name)}' at column {col}; "
                                 f"{self.has_fields()}", col, len(name))
            if canonical not in self.fields:
                alias = "" if canonical == name.casefold() else f" ({canonical})"
                raise self.error(f"field '{show(name)}'{alias} at column {col} is not in this "
                                 f"collection; {self.has_fields()}", col, len(name))
            if canonical not in out:
                out.append(canonical)
        if "date" in out and len(out) > 1:
            raise self.error(f"the date field in '[{show(content)}]' at column {tok.column} "
                             "cannot share a scope with other fields; scope dates alone, e.g. "
                             "2018..2023[date] AND fort[title]", tok.column, tok.length)
        return tuple(sorted(out, key=ALL_FIELDS_ORDER.index))

    def date_only_error(self, column: int) -> QueryError:
        return self.error(f"the date field at column {column} takes ranges only, e.g. "
                          "date[2018..2023] or 2018..2023[date]", column)

    def apply_scope(self, targets: list, tok: Token) -> None:
        fields = self.resolve_scope(tok)
        self.no_second_scope()
        for t in targets:
            if fields == ("date",):
                if isinstance(t, _PTerm) and t.tok.kind == WORD and looks_like_date(t.tok.text):
                    lo, hi, text = parse_range(t.tok.text, t.tok.column, self.query)
                    t.date = DateRange(lo, hi, Span(t.tok.column,
                                                    tok.column + tok.length - t.tok.column), text)
                elif not isinstance(t, _PGroup):
                    raise self.date_only_error(tok.column)
            t.fields = fields
            t.scope_col = tok.column

    # -- to the AST ------------------------------------------------------------------------
    def finish(self, node, inherited: tuple[str, ...] | None, scope_col: int) -> Node:
        if isinstance(node, _PTerm):
            if node.date is not None:
                return node.date
            fields = node.fields or inherited
            tok = node.tok
            if fields == ("date",):
                col = node.scope_col or scope_col
                if tok.kind == WORD and looks_like_date(tok.text):
                    lo, hi, text = parse_range(tok.text, tok.column, self.query)
                    return DateRange(lo, hi, Span(tok.column, tok.length), text)
                raise self.date_only_error(col)
            return Term(tok.words, tok.prefix, fields or ("all",), Span(tok.column, tok.length),
                        quoted=tok.kind == PHRASE)
        if isinstance(node, _PNear):
            fields = node.fields or inherited or ("all",)
            if fields == ("date",):
                raise self.date_only_error(node.scope_col or scope_col)
            items = tuple(Term(t.words, t.prefix, fields, Span(t.column, t.length),
                               quoted=t.kind == PHRASE) for t in node.items)
            return Near(items, node.tok.distance, fields,
                        Span(node.tok.column, node.end + 1 - node.tok.column))
        if isinstance(node, _PDate):
            return node.node
        if isinstance(node, _PGroup):
            if node.fields:
                return self.finish(node.inner, node.fields, node.scope_col)
            return self.finish(node.inner, inherited, scope_col)
        if isinstance(node, _PNot):
            child = self.finish(node.child, inherited, scope_col)
            if _negative(child):
                inner = _first_not(child)
                raise self.error(f"{self.not_label(inner)} at column {inner.span.column} is "
                                 f"negated again by {_not_name(node.tok)} at column "
                                 f"{node.tok.column}; a double negation is not allowed: remove "
                                 "both, or write e.g. 'fort NOT spain'", inner.span.column,
                                 inner.span.length)
            return Not(child, Span(node.tok.column, node.tok.length))
        if isinstance(node, _PAnd):
            kids: list[Node] = []
            for c in node.children:
                n = self.finish(c, inherited, scope_col)
                kids.extend(n.children if isinstance(n, And) else (n,))
            return And(tuple(kids)) if len(kids) > 1 else kids[0]
        if isinstance(node, _POr):
            kids = []
            for c in node.children:
                n = self.finish(c, inherited, scope_col)
                if _negative(n):
                    first = _first_not(n)
                    raise self.error(f"{self.not_label(first)} at column {first.span.column} is "
                                     f"an OR operand; {_NOT_HINT}", first.span.column,
                                     first.span.length)
                kids.extend(n.children if isinstance(n, Or) else (n,))
            return Or(tuple(kids))
        raise TypeError(f"unknown parse node {node!r}")  # pragma: no cover


def _negative(node: Node) -> bool:
    """A NOT, or an AND made only of NOTs: it needs a positive clause beside it."""
    if isinstance(node, Not):
        return True
    return isinstance(node, And) and all(isinstance(c, Not) for c in node.children)


def _first_not(node: Node) -> Not:
    if isinstance(node, Not):
        return node
    assert isinstance(node, And)
    return min((c for c in node.children if isinstance(c, Not)), key=lambda n: n.span.column)


def parse(query: str, fields: Sequence[str]) -> Node:
    """Parse a BQL query for a collection whose BQL fields are ``fields`` (BQL.md order, e.g.
    ``Collection.fields``). Returns the normalised AST; raises ``QueryError``."""
    return _Parser(query, fields).parse()
