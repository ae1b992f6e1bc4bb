"""The library's layers, read from its code: no import circles, no private names taken.

The import graph of ``sieve_lite/`` is read with ``ast`` (no module is imported): every
``import`` and ``from ... import`` at module level and inside functions, relative and absolute.
``from pkg import name`` is an arrow to the submodule ``pkg.name`` when there is one, else to
``pkg`` itself. On that graph:

* no strongly connected group of more than one module (a circle, however long);
* no module takes another module's private name: ``from x import _name``, ``x._name`` on an
  imported module, or a private module (``pkg._x``) imported from outside ``pkg``;
* the floors of ``docs/architecture.md`` are true: every module is on one floor, and every
  arrow between floors points down.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "sieve_lite"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Packages allowed to take other modules' private names while they are being rewritten (none
# now). An entry that no longer covers any private import fails the test below, so the list
# cannot outlive its reason.
PRIVATE_NAMES_PENDING: tuple[str, ...] = ()


@dataclass(frozen=True)
class Import:
    source: str          # the importing module
    target: str          # the imported module
    name: str | None     # the name taken from it (None: the module itself)
    line: int


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _known(dotted: str) -> str:
    """The longest prefix of ``dotted`` that is a module of the package."""
    while dotted not in modules():
        dotted = dotted.rpartition(".")[0]
    return dotted


def _from_base(source: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = source if _is_package(source) else source.rpartition(".")[0]
    parts = package.split(".")
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def read_imports(source: str, tree: ast.AST) -> tuple[Import, ...]:
    """The imports in ``tree`` (the code of module ``source``) that reach a module of the
    package, wherever they stand: module level, functions, classes, ``try`` blocks."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    out.append(Import(source, _known(alias.name), None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(source, node)
            if base != PACKAGE and not base.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules():
                    out.append(Import(source, sub, None, node.lineno))
                else:
                    out.append(Import(source, _known(base), alias.name, node.lineno))
    return tuple(out)


@cache
def tree_of(module: str) -> ast.AST:
    return ast.parse(modules()[module].read_text(encoding="utf-8"))


@cache
def imports(source: str) -> tuple[Import, ...]:
    return read_imports(source, tree_of(source))


def graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (itself excluded)."""
    return {m: {i.target for i in imports(m) if i.target != m} for m in modules()}


def strongly_connected(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``g`` (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(g):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    out.append(sorted(group))
    return out


def a_cycle(group: list[str], g: dict[str, set[str]]) -> list[str]:
    """One circle through the first module of a strongly connected ``group``, as a path that
    ends where it starts (breadth first: the shortest)."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(g[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"{group} is not strongly connected")


def describe_cycle(path: list[str]) -> str:
    steps = []
    for a, b in zip(path, path[1:], strict=False):
        lines = sorted({i.line for i in imports(a) if i.target == b})
        steps.append(f"{a} -> {b} (line {', '.join(map(str, lines))})")
    return "; ".join(steps)


# ------------------------------------------------------------------------------ the reader
def test_the_reader_resolves_every_kind_of_import() -> None:
    found = read_imports("sieve_lite.rank", ast.parse(
        "from . import store, errors\n"
        "from .store import reads\n"
        "from .errors import QueryError\n"
        "import sieve_lite.bql.parser\n"
        "import json\n"
        "from json import loads\n"
        "def f():\n"
        "    from .serve import views\n"))
    got = {(i.target, i.name) for i in found}
    assert got == {("sieve_lite.store", None), ("sieve_lite.errors", None),
                   ("sieve_lite.store.reads", None), ("sieve_lite.errors", "QueryError"),
                   ("sieve_lite.bql.parser", None), ("sieve_lite.serve.views", None)}


def test_the_reader_resolves_relative_imports_in_a_package() -> None:
    found = read_imports("sieve_lite.serve", ast.parse(
        "from . import pages\nfrom .. import rank as rk\nfrom ..store import _x\n"))
    assert {(i.target, i.name) for i in found} == {
        ("sieve_lite.serve.pages", None), ("sieve_lite.rank", None),
        ("sieve_lite.store", "_x")}


def test_a_circle_is_found_and_named() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    groups = [s for s in strongly_connected(g) if len(s) > 1]
    assert groups == [["a", "b", "c"]]
    assert a_cycle(groups[0], g) == ["a", "b", "c", "a"]


# ------------------------------------------------------------------------------- the rules
def test_no_import_circles() -> None:
    g = graph()
    circles = [describe_cycle(a_cycle(s, g)) for s in strongly_connected(g) if len(s) > 1]
    assert not circles, "modules of sieve_lite import each other in a circle: move what " \
        "both sides need one floor down (docs/architecture.md):\n  " + "\n  ".join(circles)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_of(module: str) -> str:
    return module if _is_package(module) else module.rpartition(".")[0]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def private_uses(source: str, tree: ast.AST | None = None) -> list[str]:
    """Each private name of another module that ``source`` (or ``tree`` as its code) takes,
    as "file:line: what"."""
    out = []
    path = modules()[source].relative_to(ROOT)
    tree = tree_of(source) if tree is None else tree
    for i in read_imports(source, tree):
        if i.target == source:
            continue
        if i.name is not None and _private(i.name):
            out.append(f"{path}:{i.line}: from {i.target} import {i.name}")
        # A private module (pkg._x) belongs to pkg: only pkg's own modules import it.
        parts = i.target.split(".")
        for n, part in enumerate(parts):
            owner = ".".join(parts[:n])
            if _private(part) and not _inside(source, owner):
                out.append(f"{path}:{i.line}: imports {i.target}, private to {owner}")
    # module._name, on a name bound to an imported module of the package
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _from_base(source, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules():
                    bound[alias.asname or alias.name] = sub
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules():
                    bound[alias.asname] = alias.name
                elif not alias.asname and alias.name.split(".")[0] == PACKAGE:
                    bound[PACKAGE] = PACKAGE  # import sieve_lite.x binds sieve_lite
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            target = _module_of(node.value, bound)
            if target is not None and target != source:
                out.append(f"{path}:{node.lineno}: {target}.{node.attr}")
    return out


def _module_of(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The module an expression like ``rk`` or ``store.reads`` names, when it names one."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _module_of(node.value, bound)
        if base is not None and f"{base}.{node.attr}" in modules():
            return f"{base}.{node.attr}"
    return None


def _pending(module: str) -> str | None:
    return next((p for p in PRIVATE_NAMES_PENDING if module.startswith(p)), None)


def test_no_module_takes_another_modules_private_names() -> None:
    found = sorted(use for m in modules() if not _pending(m) for use in private_uses(m))
    assert not found, "a name another module uses is public (rename it and its users), " \
        "or the code that uses it moves:\n  " + "\n  ".join(found)


def test_the_pending_private_names_list_is_still_needed() -> None:
    stale = [p for p in PRIVATE_NAMES_PENDING
             if not any(private_uses(m) for m in modules() if m.startswith(p))]
    assert not stale, f"no private name is taken under {stale} any more: remove them from " \
        "PRIVATE_NAMES_PENDING in tests/test_layers.py"


def test_private_uses_are_found() -> None:
    code = ast.parse("from .fetch import _by_rank, fetch\n"
                     "from . import rank as rk\n"
                     "from .sources import _common\n"
                     "def f(coll):\n"
                     "    return rk._stats(coll), rk.bm25, store.reads._x, sieve_lite.fetch._y\n"
                     "from . import store\n"
                     "import sieve_lite.fetch\n")
    assert sorted(u.split(": ", 1)[1] for u in private_uses("sieve_lite.search", code)) == [
        "from sieve_lite.fetch import _by_rank",
        "imports sieve_lite.sources._common, private to sieve_lite.sources",
        "sieve_lite.fetch._y", "sieve_lite.rank._stats", "sieve_lite.store.reads._x"]
    # within its own package a private module is fine
    assert not private_uses("sieve_lite.sources.html",
                            ast.parse("from ._common import read_text\n"))


# ------------------------------------------------------------------------------ the floors
def floors() -> list[tuple[str, list[str]]]:
    """(floor, its units in order) from the table between the two ``<!-- floors -->`` marks
    of docs/architecture.md, top floor first. A unit is a module (``rank.py``) or a package
    with everything in it (``store/``); ``__init__.py`` is the package's own."""
    parts = ARCHITECTURE.read_text(encoding="utf-8").split("<!-- floors -->")
    assert len(parts) == 3, "docs/architecture.md: the floors table is not between two " \
        "<!-- floors --> marks"
    out = []
    for row in parts[1].splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0] or set(cells[0]) <= {"-", " ", ":"} \
                or cells[0] == "floor":
            continue
        out.append((cells[0], re.findall(r"`([a-z_][a-z_0-9]*(?:/|\.py))`", cells[1])))
    return out


def unit_of(module: str, units: list[str]) -> str | None:
    """The unit holding ``module``: the module itself, or the package it is in."""
    rel = module.removeprefix(PACKAGE).lstrip(".").replace(".", "/") or "__init__"
    for unit in units:
        name = unit.removesuffix("/").removesuffix(".py")
        if rel == name or (unit.endswith("/") and rel.startswith(name + "/")):
            return unit
    return None


def test_the_floors_of_architecture_md_are_true() -> None:
    table = floors()
    order = [u for _, units in table for u in units]  # top floor first, each row in order
    floor = {u: name for name, units in table for u in units}
    assert len(set(order)) == len(order), "a unit is on docs/architecture.md's floors twice"
    homeless = [m for m in modules() if unit_of(m, order) is None]
    assert not homeless, f"modules on no floor of docs/architecture.md: {homeless}"
    up = set()
    for m in modules():
        for i in imports(m):
            a, b = unit_of(m, order), unit_of(i.target, order)
            if a != b and order.index(b) < order.index(a):
                up.add(f"{a} (floor '{floor[a]}') imports {b} (floor '{floor[b]}'): "
                       f"{modules()[m].relative_to(ROOT)}:{i.line}")
    assert not up, "docs/architecture.md: an arrow points up its floors (a module imports " \
        "only what comes after it in the table):\n  " + "\n  ".join(sorted(up))
