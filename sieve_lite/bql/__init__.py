"""BQL, the Boolean Query Language of BQL.md: tokens -> parser -> AST -> compiler (SQL).

    from sieve_lite.bql import parse, compile_query, explain, Compiled
    node = parse(query, collection.fields)      # raises sieve_lite.errors.QueryError
    c = compile_query(node, collection.fields)  # c.sql yields column `doc`; c.params bind its ?
    explain(node, collection.fields)            # the query read back, clause by clause

Design choices where BQL.md is silent are written down in docs/bql.md.

The compiler's names are loaded on first use (PEP 562): ``sieve_lite.bql.ast`` is imported
by code that only needs field names (opening a collection, ``fetch``, ``info``), which must not
pay for the compiler's sqlglot import (~0.1 s). The other modules are light and imported here,
so that a submodule never shadows the function of the same name (``explain``, ``dump``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
from .dump import dump
from .explain import describe, explain
from .parser import parse

_LAZY = ("Compiled", "atom_match", "compile_clauses", "compile_query")  # from .compiler

if TYPE_CHECKING:
    from .compiler import Compiled, atom_match, compile_clauses, compile_query


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".compiler", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ALIASES", "TEXT_FIELDS", "And", "Compiled", "DateRange", "Near", "Node", "Not", "Or",
    "QueryError", "Span", "Term", "atom_match", "compile_clauses", "compile_query", "describe",
    "dump", "expand_fields", "explain", "parse", "positive_atoms", "positive_words",
    "top_level_and_clauses",
]
