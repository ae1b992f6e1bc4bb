"""A compact, stable text form of the AST (for golden tests and debugging)::

    AND(fort[title], "fort santiago"*, NOT(spain), date[20180101..20231231], NEAR/5(a "b c"))
"""

from __future__ import annotations

from .ast import And, DateRange, Near, Node, Not, Or, Term


def _scope(fields: tuple[str, ...]) -> str:
    return "" if fields == ("all",) else f"[{','.join(fields)}]"


def _term(t: Term) -> str:
    text = " ".join(t.words)
    if t.quoted or len(t.words) > 1:
        text = f'"{text}"'
    return text + ("*" if t.prefix else "")


def dump(node: Node) -> str:
    if isinstance(node, Term):
        return _term(node) + _scope(node.fields)
    if isinstance(node, Near):
        return f"NEAR/{node.distance}({' '.join(_term(t) for t in node.items)})" + \
            _scope(node.fields)
    if isinstance(node, DateRange):
        lo = "" if node.lo is None else str(node.lo)
        hi = "" if node.hi is None else str(node.hi)
        return f"date[{lo}..{hi}]"
    if isinstance(node, Not):
        return f"NOT({dump(node.child)})"
    if isinstance(node, (And, Or)):
        name = "AND" if isinstance(node, And) else "OR"
        return f"{name}({', '.join(dump(c) for c in node.children)})"
    raise TypeError(f"not a BQL node: {node!r}")
