"""Regenerate the BQL golden files in tests/golden/ from the current parser and compiler.

    python tests/regen_golden.py          # rewrite the files, print a summary of what changed
    python tests/regen_golden.py --check  # only report differences (exit 1 if any)

Each file is JSON Lines, one case a line. To add a case, append a line with just the query,
e.g. ``{"q": "fort[title]"}`` (optionally ``"fields": [...]`` for a collection with fewer
fields), run this script, and review the diff it prints before committing.

* ``parse.jsonl``   query -> compact AST (``sieve_lite.bql.dump``) and ``explain`` lines
* ``compile.jsonl`` query -> SQL and its bound parameters
* ``errors.jsonl``  query -> the exact ``QueryError`` message and column
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sieve_lite.bql import compile_query, dump, explain, parse  # noqa: E402
from sieve_lite.errors import QueryError  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"
FULL_FIELDS = ("title", "section", "body", "infobox", "author", "date", "tiab", "all")


def fields_of(case: dict) -> tuple[str, ...]:
    return tuple(case.get("fields") or FULL_FIELDS)


def compute(kind: str, case: dict) -> dict:
    """The expected record for one case (the query and its fields are kept as given)."""
    out = {"q": case["q"]}
    if "fields" in case:
        out["fields"] = case["fields"]
    fields = fields_of(case)
    try:
        node = parse(case["q"], fields)
    except QueryError as e:
        if kind != "errors":
            out["unexpected_error"] = str(e)
            return out
        out["message"] = str(e)
        out["column"] = e.column
        return out
    if kind == "errors":
        out["unexpected_ok"] = dump(node)
    elif kind == "parse":
        out["ast"] = dump(node)
        out["explain"] = explain(node, fields)
    else:
        c = compile_query(node, fields)
        out["sql"] = c.sql
        out["params"] = list(c.params)
    return out


def load(kind: str) -> list[dict]:
    path = GOLDEN / f"{kind}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    total_changed = 0
    problems = 0
    for kind in ("parse", "compile", "errors"):
        cases = load(kind)
        new = [compute(kind, c) for c in cases]
        changed = [(o, n) for o, n in zip(cases, new, strict=True) if o != n]
        total_changed += len(changed)
        print(f"{kind}.jsonl: {len(cases)} cases, {len(changed)} changed")
        for old, rec in changed[:20]:
            print(f"  {rec['q']!r}")
            for key in sorted(set(old) | set(rec)):
                if key != "q" and old.get(key) != rec.get(key):
                    print(f"    {key}: {old.get(key)!r}\n      -> {rec.get(key)!r}")
        if len(changed) > 20:
            print(f"  ... and {len(changed) - 20} more")
        for rec in new:
            if "unexpected_error" in rec or "unexpected_ok" in rec:
                problems += 1
                print(f"  PROBLEM {rec['q']!r}: "
                      f"{rec.get('unexpected_error') or 'parses: ' + rec['unexpected_ok']}")
        if not check:
            (GOLDEN / f"{kind}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new), encoding="utf-8")
    if check and total_changed:
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
