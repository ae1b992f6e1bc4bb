"""BQL, the Boolean Query Language of BQL.md: tokens -> parser -> AST -> compiler (SQL).

    from sieve_lite.bql import parse, compile_query, explain, Compiled
    node = parse(query, collection.fields)      # raises sieve_lite.errors.QueryError
    c = compile_query(node, collection.fields)  # c.sql yields column `doc`; c.params bind its ?
    explain(node, collection.fields)            # the query read back, clause by clause

Design choices where BQL.md is silent are written down in docs/bql.md.
"""

from __future__ import annotations

from ..errors import QueryError
from .ast import (
    ALIASES,
    TEXT_FIELDS,
    And,
    DateRange,
    Near,
    Node,
    Not,
    Or,
    Span,
    Term,
    expand_fields,
    positive_atoms,
    positive_words,
    top_level_and_clauses,
)
from .compiler import Compiled, atom_match, compile_clauses, compile_query
from .dump import dump
from .explain import describe, explain
from .parser import parse

__all__ = [
    "ALIASES", "TEXT_FIELDS", "And", "Compiled", "DateRange", "Near", "Node", "Not", "Or",
    "QueryError", "Span", "Term", "atom_match", "compile_clauses", "compile_query", "describe",
    "dump", "expand_fields", "explain", "parse", "positive_atoms", "positive_words",
    "top_level_and_clauses",
]
