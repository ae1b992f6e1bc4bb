"""BQL compiler: AST -> one SQL SELECT over the collection's FTS5 tables (BQL.md sections 3-6).

The SQL is built as sqlglot expressions (dialect sqlite) and yields one column, ``doc``: the
distinct rowids of the admitted documents. User text never reaches the SQL: FTS5 match strings
are assembled here only from validated ``words()`` output, every word double-quoted (``"fort"``,
``"fort santiago"``, ``"fort sant"*``, ``NEAR("a" "b c", 5)``), and bound as ``?`` parameters;
table names come from the fixed whitelist ``TABLES``.

Semantics (see docs/bql.md):

* an atom in field f -> ``SELECT rowid >> 13 AS doc FROM fts_f WHERE fts_f MATCH ?`` (one FTS row
  is one field value, so a phrase or NEAR holds within one value); several fields -> UNION;
* a date -> ``SELECT rowid AS doc FROM documents WHERE date_lo <= ? AND date_hi >= ?`` (undated
  documents never match, so ``NOT date[...]`` admits them);
* document-level AND / OR / NOT -> INTERSECT / UNION / EXCEPT (measured faster than IN
  subqueries on a 100k-document collection; docs/bql.md has the figures);
* word and prefix atoms, and any AND/OR/NOT among them, become one MATCH on ``fts_doc`` (one
  row per document, rowids only, each word tagged with its field: ``store.layout.DOC_TAGS``):
  ``("_tfort") AND ("spain"*) NOT (("_smexico" OR "mexico"))`` for
  ``fort[title] AND spain* NOT mexico[section,body]``. One row per document makes FTS5's
  row-level Boolean the document-level Boolean of BQL, with no DISTINCT over hundreds of
  thousands of section rows (broad words: ~700 ms -> ~35 ms at 100k docs);
* phrases and NEAR keep the per-value tables; among those, atoms ORed in one field become one
  MATCH with OR, and AND/NOT among atoms that all search only the title (one row per document)
  become one MATCH. AND across sections of a multi-row field is never pushed into one MATCH.

A lone ``Not`` (e.g. a top-level AND clause, for the zero-hit fallback's per-clause counts)
compiles to "every document that does not match its child".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlglot import exp

from ..store.layout import DOC_TAGS, SHIFT  # rowid = doc_rowid << SHIFT | position
from .ast import TEXT_FIELDS, And, DateRange, Near, Node, Not, Or, Span, Term, expand_fields

TABLES: dict[str, str] = {f: f"fts_{f}" for f in TEXT_FIELDS}
DOC_TABLE = "fts_doc"  # one row per document; its columns are TEXT_FIELDS

# "setops": AND/NOT as INTERSECT/EXCEPT; "in": as doc IN (...) / NOT doc IN (...).
MODE = "setops"


@dataclass(frozen=True)
class Compiled:
    """``sql`` yields one column ``doc`` (distinct document rowids); ``params`` bind its ``?``."""

    sql: str
    params: tuple


def term_match(term: Term, tag: str = "") -> str:
    """The FTS5 string of one word, prefix or phrase: ``"fort sant"*``; ``tag``: the
    ``fts_doc`` field tag put before a word (``"_tfort"``)."""
    for w in term.words:  # words() output: letters and digits only, never a quote
        if not w or '"' in w:
            raise ValueError(f"not a BQL word: {w!r}")
    return '"' + tag + " ".join(term.words) + '"' + ("*" if term.prefix else "")


def doc_term(term: Term, fields: Sequence[str]) -> str:
    """The ``fts_doc`` string of a word or prefix searched in ``fields``: its token in each
    field, ORed (``("_tfort" OR "fort")``)."""
    if term.is_phrase:
        raise ValueError("fts_doc keeps no positions: a phrase cannot be searched there")
    parts = [term_match(term, DOC_TAGS[f]) for f in fields]
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def atom_match(atom: Term | Near) -> str:
    if isinstance(atom, Near):
        return f"NEAR({' '.join(term_match(t) for t in atom.items)}, {int(atom.distance)})"
    return term_match(atom)


class _Compiler:
    def __init__(self, fields: Sequence[str], mode: str, optimize: bool) -> None:
        self.text_fields = tuple(f for f in TEXT_FIELDS if f in fields)
        self.mode = mode
        self.optimize = optimize
        self.params: list = []

    # -- leaves --------------------------------------------------------------------------
    def param(self, value) -> exp.Placeholder:
        self.params.append(value)
        return exp.Placeholder(this=f"p{len(self.params) - 1}")

    def concrete(self, atom: Term | Near) -> tuple[str, ...]:
        return expand_fields(atom.fields, self.text_fields)

    def fts(self, f: str, match: str) -> exp.Select:
        table = TABLES[f]
        doc = exp.BitwiseRightShift(this=_col("rowid"), expression=exp.Literal.number(SHIFT))
        return _select(_as_doc(doc), _table(table),
                       exp.Match(this=_col(table), expression=self.param(match)))

    def docfts(self, match: str) -> exp.Select:
        return _select(_as_doc(_col("rowid")), _table(DOC_TABLE),
                       exp.Match(this=_col(DOC_TABLE), expression=self.param(match)))

    def doc_expr(self, node: Node) -> str | None:
        """An FTS5 expression over ``fts_doc`` whose row-level meaning is exactly the
        document-level meaning of ``node``; None when ``node`` holds a phrase, NEAR or date
        (those need positions within one field value) or when disabled."""
        if not self.optimize:
            return None
        if isinstance(node, Term):
            cols = self.concrete(node)
            if node.is_phrase or not cols:
                return None
            return doc_term(node, cols)
        if isinstance(node, Or):
            parts = [self.doc_expr(c) for c in node.children]
            if any(p is None for p in parts):
                return None
            return " OR ".join(f"({p})" for p in parts)
        if isinstance(node, And):
            pos = [self.doc_expr(c) for c in node.children if not isinstance(c, Not)]
            neg = [self.doc_expr(c.child) for c in node.children if isinstance(c, Not)]
            if not pos or any(p is None for p in pos + neg):
                return None
            expr = " AND ".join(f"({p})" for p in pos)
            if neg:
                expr = f"({expr}) NOT ({' OR '.join(f'({n})' for n in neg)})"
            return expr
        return None  # Near, DateRange; a Not is handled by the And around it

    def dates(self, node: DateRange) -> exp.Select:
        conds: list[exp.Expression] = []
        if node.hi is not None:
            conds.append(exp.LTE(this=_col("date_lo"), expression=self.param(int(node.hi))))
        if node.lo is not None:
            conds.append(exp.GTE(this=_col("date_hi"), expression=self.param(int(node.lo))))
        if not conds:
            conds.append(exp.Not(this=exp.Is(this=_col("date_lo"), expression=exp.Null())))
        where = conds[0] if len(conds) == 1 else exp.And(this=conds[0], expression=conds[1])
        return _select(_as_doc(_col("rowid")), _table("documents"), where)

    def every(self) -> exp.Select:
        return _select(_as_doc(_col("rowid")), _table("documents"))

    def union(self, parts: list[exp.Query]) -> exp.Query:
        return _union(parts)

    # -- row-level expressions -----------------------------------------------------------
    def row_expr(self, node: Node, f: str) -> tuple[str, bool] | None:
        """An FTS5 expression E such that "a row of fts_f matches E" is exactly the document-
        level meaning of ``node``; None when there is none. Returns (E, E is atomic)."""
        if isinstance(node, (Term, Near)):
            return (atom_match(node), True) if self.concrete(node) == (f,) else None
        if not self.optimize:
            return None
        if isinstance(node, Or):
            parts = [self.row_expr(c, f) for c in node.children]
            if any(p is None for p in parts):
                return None
            return " OR ".join(_paren(p) for p in parts), len(parts) == 1  # type: ignore[arg-type]
        if isinstance(node, And) and f == "title":  # title: one row per document
            pos, neg = [], []
            for c in node.children:
                target, out = (c.child, neg) if isinstance(c, Not) else (c, pos)
                r = self.row_expr(target, f)
                if r is None:
                    return None
                out.append(r)
            if not pos:
                return None
            expr = " AND ".join(_paren(p) for p in pos)
            if not neg:
                return expr, len(pos) == 1 and pos[0][1]
            left = _paren((expr, len(pos) == 1 and pos[0][1]))
            right = " OR ".join(_paren(n) for n in neg)
            return f"{left} NOT {_paren((right, len(neg) == 1 and neg[0][1]))}", False
        return None

    def single_field(self, node: Node) -> str | None:
        """The one field every atom of ``node`` searches, if there is exactly one."""
        seen: set[tuple[str, ...]] = set()

        def walk(n: Node) -> bool:
            if isinstance(n, (Term, Near)):
                seen.add(self.concrete(n))
                return True
            if isinstance(n, (And, Or)):
                return all(walk(c) for c in n.children)
            if isinstance(n, Not):
                return walk(n.child)
            return False  # a date

        if not walk(node) or len(seen) != 1:
            return None
        (only,) = seen
        return only[0] if len(only) == 1 else None

    # -- document-level ------------------------------------------------------------------
    def query(self, node: Node) -> exp.Query:
        whole = self.doc_expr(node)
        if whole is not None:
            return self.docfts(whole)
        if isinstance(node, (Term, Near)):
            match = atom_match(node)
            return self.union([self.fts(f, match) for f in self.concrete(node)])
        if isinstance(node, DateRange):
            return self.dates(node)
        if isinstance(node, Or):
            return self.or_(node.children)
        if isinstance(node, And):
            return self.and_(node)
        if isinstance(node, Not):
            return self.combine([self.every()], [self.query(node.child)])
        raise TypeError(f"not a BQL node: {node!r}")

    def or_(self, children: Sequence[Node]) -> exp.Query:
        buckets: dict[str, list[tuple[str, bool]]] = {f: [] for f in self.text_fields}
        others: list[Node] = []
        doc_parts: list[str] = []
        for c in children:
            if not self.optimize:
                others.append(c)
            elif (d := self.doc_expr(c)) is not None:
                doc_parts.append(d)
            elif isinstance(c, (Term, Near)):
                for f in self.concrete(c):
                    buckets[f].append((atom_match(c), True))
            elif (f := self.single_field(c)) and (r := self.row_expr(c, f)) is not None:
                buckets[f].append(r)
            else:
                others.append(c)
        parts: list[exp.Query] = []
        for f in self.text_fields:
            if buckets[f]:
                if len(buckets[f]) == 1:
                    parts.append(self.fts(f, buckets[f][0][0]))
                else:
                    parts.append(self.fts(f, " OR ".join(_paren(p) for p in buckets[f])))
        if doc_parts:
            parts.append(self.docfts(" OR ".join(f"({d})" for d in doc_parts)))
        parts.extend(self.query(o) for o in others)
        return self.union(parts)

    def and_(self, node: And) -> exp.Query:
        whole = self.row_expr(node, "title") if self.optimize else None
        if whole is not None:
            return self.fts("title", whole[0])
        pos = [c for c in node.children if not isinstance(c, Not)]
        neg = [c.child for c in node.children if isinstance(c, Not)]
        pos_q: list[exp.Query] = []
        neg_q: list[exp.Query] = []
        if self.optimize:
            # Word/prefix clauses: one fts_doc MATCH for the positives (with the eligible NOTs
            # folded in), or one for the NOTs alone when no positive is eligible.
            dpos = [c for c in pos if self.doc_expr(c) is not None]
            dneg = [c for c in neg if self.doc_expr(c) is not None]
            if dpos:
                merged = And(tuple(dpos) + tuple(Not(c, _NO_SPAN) for c in dneg))
                pos_q.append(self.docfts(self.doc_expr(merged)))  # type: ignore[arg-type]
            elif len(dneg) > 1:
                neg_q.append(self.docfts(" OR ".join(f"({self.doc_expr(c)})" for c in dneg)))
            else:
                dneg = []
            pos = [c for c in pos if not any(c is t for t in dpos)]
            neg = [c for c in neg if not any(c is t for t in dneg)]
        # Everything that searches only the title can be one MATCH, as long as it holds a
        # positive atom (a document without a title has no fts_title row).
        tpos = [c for c in pos if self.row_expr(c, "title") is not None]
        tneg = [c for c in neg if self.row_expr(c, "title") is not None]
        if self.optimize and tpos and len(tpos) + len(tneg) > 1:
            merged = And(tuple(tpos) + tuple(Not(c, _NO_SPAN) for c in tneg))
            pos_q.append(self.fts("title", self.row_expr(merged, "title")[0]))  # type: ignore[index]
            pos = [c for c in pos if not any(c is t for t in tpos)]
            neg = [c for c in neg if not any(c is t for t in tneg)]
        pos_q.extend(self.query(c) for c in pos)
        if not pos_q:
            pos_q.append(self.every())
        return self.combine(pos_q, neg_q + [self.query(c) for c in neg])

    def combine(self, pos: list[exp.Query], neg: list[exp.Query]) -> exp.Query:
        if self.mode == "in":
            if len(pos) == 1 and not neg:
                return pos[0]
            conds: list[exp.Expression] = [
                exp.In(this=_col("doc"), query=exp.Subquery(this=p)) for p in pos[1:]]
            conds += [exp.Not(this=exp.In(this=_col("doc"), query=exp.Subquery(this=n)))
                      for n in neg]
            where = conds[0]
            for cond in conds[1:]:
                where = exp.And(this=where, expression=cond)
            return _select(_col("doc"), exp.Subquery(this=pos[0]), where, distinct=True)
        result = pos[0]
        for p in pos[1:]:
            result = exp.Intersect(this=result, expression=_simple(p), distinct=True)
        for n in neg:
            result = exp.Except(this=result, expression=_simple(n), distinct=True)
        return result


class _ParamsOnly(_Compiler):
    """The same traversal, collecting bound parameters without building expressions: used
    when the SQL text of the query's shape is already known (see ``_compile``)."""

    def fts(self, f: str, match: str) -> Any:
        self.params.append(match)

    def docfts(self, match: str) -> Any:
        self.params.append(match)

    def dates(self, node: DateRange) -> Any:
        if node.hi is not None:
            self.params.append(int(node.hi))
        if node.lo is not None:
            self.params.append(int(node.lo))

    def every(self) -> Any:
        return None

    def union(self, parts: list[Any]) -> Any:
        return None

    def combine(self, pos: list[Any], neg: list[Any]) -> Any:
        return None


_NO_SPAN = Span(0, 0)  # internal Not nodes built by the optimiser have no source text


def _paren(p: tuple[str, bool]) -> str:
    return p[0] if p[1] else f"({p[0]})"


_FROM = "from_" if "from_" in exp.Select.arg_types else "from"  # sqlglot < 26 says "from"


def _id(name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=False)


def _col(name: str) -> exp.Column:
    return exp.Column(this=_id(name))


def _as_doc(e: exp.Expression) -> exp.Alias:
    return exp.Alias(this=e, alias=_id("doc"))


def _table(name: str) -> exp.Table:
    return exp.Table(this=_id(name))


def _select(column: exp.Expression, source: exp.Expression, where: exp.Expression | None = None,
            distinct: bool = False) -> exp.Select:
    """SELECT column FROM source [WHERE where], built directly (sqlglot's builder helpers copy
    their arguments, which is quadratic for a 64-atom query)."""
    args: dict = {"expressions": [column], _FROM: exp.From(this=source)}
    if where is not None:
        args["where"] = exp.Where(this=where)
    if distinct:
        args["distinct"] = exp.Distinct()
    return exp.Select(**args)


def _simple(q: exp.Query) -> exp.Select:
    """A right-hand operand of a compound SELECT must be simple in SQLite (no parentheses
    allowed there, and compound operators are left-associative)."""
    if isinstance(q, exp.Select):
        return q
    return _select(_col("doc"), exp.Subquery(this=q))


def _union(parts: list[exp.Query]) -> exp.Query:
    if not parts:  # a hand-built atom whose fields this collection lacks: nothing matches
        return _select(_as_doc(_col("rowid")), _table("documents"), exp.false())
    result = parts[0]
    for p in parts[1:]:
        result = exp.Union(this=result, expression=_simple(p), distinct=True)
    return result


_PLACEHOLDER = re.compile(r":p(\d+)\b")


def compile_query(node: Node, fields: Sequence[str], *, mode: str | None = None,
                  optimize: bool = True) -> Compiled:
    """Compile a parsed query for a collection with BQL ``fields`` (``Collection.fields``).

    Any node compiles, including one top-level AND clause on its own: a lone ``Not`` means
    "documents that do not match its child" (what the zero-hit fallback counts per clause).
    ``mode`` ("setops" or "in") and ``optimize=False`` (one MATCH per atom and field, no
    merging) exist for tests and benchmarks; every combination admits the same documents.
    """
    key = (node, tuple(fields), mode or MODE, optimize)
    try:
        hash(key)
    except TypeError:  # a hand-built node holding lists: compile it uncached
        return _compile.__wrapped__(*key)
    return _compile(*key)


@lru_cache(maxsize=512)
def _compile(node: Node, fields: tuple[str, ...], mode: str, optimize: bool) -> Compiled:
    """Cached: ASTs are frozen and hashable, and search compiles the same clauses again for
    the zero-hit fallback."""
    # Building and printing the sqlglot tree is nearly all of the cost, and the SQL text
    # depends only on the query's shape: words and dates are bound parameters. So the text and
    # its placeholder order are memoised by shape; a query of a known shape only walks the AST
    # to collect its parameters in the same traversal order.
    shape_key: tuple | None = (_shape(node), fields, mode, optimize)
    try:
        cached = _SQL_BY_SHAPE.get(shape_key)  # type: ignore[arg-type]
    except TypeError:  # a hand-built node holding lists: no memo
        shape_key, cached = None, None
    if cached is not None:
        c: _Compiler = _ParamsOnly(fields, mode, optimize)
        c.query(node)
    else:
        c = _Compiler(fields, mode, optimize)
        q = c.query(node)
        if isinstance(q, exp.Select) and not q.args.get("distinct") and not _unique_rows(q):
            q.set("distinct", exp.Distinct())
        order: list[int] = []

        def positional(m: re.Match[str]) -> str:
            order.append(int(m.group(1)))
            return "?"

        sql = _PLACEHOLDER.sub(positional, q.sql(dialect="sqlite"))
        if sorted(order) != list(range(len(c.params))):  # pragma: no cover - our invariant
            raise AssertionError("placeholder mismatch in compiled BQL")
        cached = (sql, tuple(order))
        if shape_key is not None:
            if len(_SQL_BY_SHAPE) > 4096:
                _SQL_BY_SHAPE.clear()
            _SQL_BY_SHAPE[shape_key] = cached
    sql, order_t = cached
    if len(order_t) != len(c.params):  # pragma: no cover - _shape missed a distinction
        raise AssertionError("compiled BQL shape cache mismatch")
    return Compiled(sql, tuple(c.params[i] for i in order_t))


def _unique_rows(q: exp.Select) -> bool:
    """A plain SELECT over fts_doc or documents yields each document once: no DISTINCT (which
    would cost a temporary b-tree over every admitted document)."""
    source = q.args.get(_FROM)
    table = source.this if source is not None else None
    return isinstance(table, exp.Table) and table.name in (DOC_TABLE, "documents")


_SQL_BY_SHAPE: dict[tuple, tuple[str, tuple[int, ...]]] = {}


def _shape(node: Node) -> tuple:
    """What the compiled SQL text depends on: node kinds, field scopes, phrase flags and open
    date bounds. Words, NEAR distances and date values only become bound parameters."""
    if isinstance(node, Term):  # a phrase cannot use fts_doc (no positions there)
        return ("T", node.fields, node.is_phrase)
    if isinstance(node, Near):
        return ("N", node.fields)
    if isinstance(node, DateRange):
        return ("D", node.lo is None, node.hi is None)
    if isinstance(node, Not):
        return ("!", _shape(node.child))
    if isinstance(node, (And, Or)):
        return ("&" if isinstance(node, And) else "|", *(_shape(c) for c in node.children))
    raise TypeError(f"not a BQL node: {node!r}")


def compile_clauses(node: Node, fields: Sequence[str]) -> list[Compiled]:
    """One ``Compiled`` per top-level AND clause (a NOT clause counts the documents it admits
    on its own: those that do not match it)."""
    from .ast import top_level_and_clauses

    return [compile_query(c, fields) for c in top_level_and_clauses(node)]
