"""The query read back in plain words, one line per top-level AND clause, naming the field(s)
each clause searches::

    1. "fort santiago" as a phrase in title
    2. AND documents dated 1570-01-01..1600-12-31
    3. AND NOT "spain" in any field (title, section, body)
"""

from __future__ import annotations

from collections.abc import Sequence

from .ast import TEXT_FIELDS, And, DateRange, Near, Node, Not, Or, Term, top_level_and_clauses
from .dates import AFTER_LAST, format_day


def _fields(fields: tuple[str, ...], available: Sequence[str] | None) -> str:
    names: list[str] = []
    for f in fields:
        if f == "all":
            text = [t for t in TEXT_FIELDS if available is None or t in available]
            return "any field" if available is None else f"any field ({', '.join(text)})"
        if f == "tiab":
            names.extend(n for n in ("title", "body") if n not in names)
        elif f not in names:
            names.append(f)
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _term(t: Term) -> str:
    text = " ".join(t.words)
    if t.prefix and len(t.words) == 1:
        return f'a word starting with "{text}"'
    if t.prefix:
        return f'"{text}*" as a phrase (its last word a prefix)'
    if len(t.words) > 1:
        return f'"{text}" as a phrase'
    return f'"{text}"'


def _item(t: Term) -> str:
    return '"' + " ".join(t.words) + ('*"' if t.prefix else '"')


def _date(d: DateRange) -> str:
    if d.lo is not None and d.hi is not None:
        if d.lo > d.hi:
            return "documents dated in an empty range (none)"
        return f"documents dated {format_day(d.lo)}..{format_day(d.hi)}"
    if d.lo is not None:
        if d.lo >= AFTER_LAST:
            return "documents dated after 9999-12-31 (none)"
        return f"documents dated {format_day(d.lo)} or later"
    if d.hi is not None:
        if d.hi <= 0:
            return "documents dated before 0001-01-01 (none)"
        return f"documents dated {format_day(d.hi)} or earlier"
    return "documents with a date"


def describe(node: Node, fields: Sequence[str] | None = None) -> str:
    """One node in plain words."""
    if isinstance(node, Term):
        return f"{_term(node)} in {_fields(node.fields, fields)}"
    if isinstance(node, Near):
        items = [_item(t) for t in node.items]
        listed = ", ".join(items[:-1]) + " and " + items[-1]
        return (f"{listed} within {node.distance} words of each other in one value of "
                f"{_fields(node.fields, fields)}")
    if isinstance(node, DateRange):
        return _date(node)
    if isinstance(node, Not):
        inner = describe(node.child, fields)
        if isinstance(node.child, DateRange):
            inner += " (undated documents pass)"
        return f"NOT ({inner})" if isinstance(node.child, (And, Or)) else f"NOT {inner}"
    if isinstance(node, And):
        return " AND ".join(f"({describe(c, fields)})" if isinstance(c, Or) else
                            describe(c, fields) for c in node.children)
    if isinstance(node, Or):
        return " OR ".join(f"({describe(c, fields)})" if isinstance(c, And) else
                           describe(c, fields) for c in node.children)
    raise TypeError(f"not a BQL node: {node!r}")


def explain(node: Node, fields: Sequence[str] | None = None) -> list[str]:
    """The query clause by clause: ``1. ...``, ``2. AND ...``, ``3. AND NOT ...``.

    With the collection's ``fields`` the scope ``all`` is spelled out as the fields it covers.
    """
    lines = []
    for i, clause in enumerate(top_level_and_clauses(node), 1):
        text = describe(clause, fields)
        lines.append(f"{i}. {text}" if i == 1 else f"{i}. AND {text}")
    return lines
