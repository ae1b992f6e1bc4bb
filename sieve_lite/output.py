"""Machine-readable renderings of results: JSON, JSON Lines, TSV and TREC run lines.

Every JSON object written here carries ``"format": FORMAT_VERSION`` and a ``"type"`` naming
its shape (``search``, ``hit``, ``fetch``, ``info``, ``answer``, ``config``, ``collections``,
``error``). The version changes only when a key is removed or changes meaning; new keys may
appear without a new version. The shapes are documented, key by key, in ``docs/output.md``
(a test checks that document against real output).

The command line and the MCP server both use these, so a script and an MCP client see the
same objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import SieveError

FORMAT_VERSION = 1

TSV_COLUMNS = ("rank", "id", "score", "title", "date", "matched_fields", "snippet_section",
               "fallback")

_WS = re.compile(r"\s")


def versioned(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` with ``format`` and ``type`` first (so ``head -c`` shows what it is)."""
    return {"format": FORMAT_VERSION, "type": kind, **obj}


def dumps(obj: Any, indent: int | None = None) -> str:
    """JSON text: UTF-8 as is (no ``\\u`` escapes), one line unless ``indent``."""
    return json.dumps(obj, ensure_ascii=False, indent=indent)


# ------------------------------------------------------------------------------- search
def search_object(res: Any, collection: str | None = None,
                  extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The whole search result as one object (``--format json``)."""
    body = res.to_dict()
    return versioned("search", {"collection": collection, **body, **(extra or {})})


def search_lines(res: Any, collection: str | None = None,
                 extra: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """JSON Lines: one ``search`` object (the result without its cards, plus ``shown``),
    then one ``hit`` object per card, each with the query and the fallback flag, so a line
    taken alone still says what it answers and whether it satisfies the query."""
    body = res.to_dict()
    hits = body.pop("results")
    yield versioned("search", {"collection": collection, **body, "shown": len(hits),
                               **(extra or {})})
    for card in hits:
        yield versioned("hit", {"query": res.query, "fallback": res.fallback, **card})


def _cell(value: Any) -> str:
    """One TSV cell: no tab or newline inside (they become spaces), lists comma-joined."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return " ".join(str(value).replace("\t", " ").splitlines())


def search_tsv(res: Any) -> Iterator[str]:
    """A header line (``TSV_COLUMNS``), then one line per card."""
    yield "\t".join(TSV_COLUMNS)
    for h in res.results:
        d = h.card.to_dict()
        row = {**d, "score": f"{h.score:.6g}", "fallback": res.fallback}
        yield "\t".join(_cell(row[c]) for c in TSV_COLUMNS)


def search_trec(res: Any, qid: str = "1", tag: str | None = None) -> Iterator[str]:
    """TREC run lines: ``QID Q0 DOCID RANK SCORE TAG``. The score is the ranker's (higher is
    better); trec_eval re-sorts by score, so equal scores may be re-ordered there."""
    tag = tag or f"sieve-lite.{res.ranker}"
    for field, value in (("query id", qid), ("run tag", tag)):
        if not value or _WS.search(value):
            raise SieveError(f"a TREC {field} must be one word, not {value!r}")
    for h in res.results:
        if _WS.search(h.id):
            raise SieveError(f"document id {h.id!r} holds whitespace, which a TREC run line "
                             "cannot carry; use --format tsv or jsonl")
        yield f"{qid} Q0 {h.id} {h.rank} {h.score:.6f} {tag}"


# ------------------------------------------------------------------------- fetch and info
def fetch_object(res: Any, collection: str | None = None) -> dict[str, Any]:
    return versioned("fetch", {"collection": collection, **res.to_dict()})


def info_object(info: Mapping[str, Any]) -> dict[str, Any]:
    return versioned("info", info)


def info_tsv(info: Mapping[str, Any]) -> Iterator[str]:
    """``key<TAB>value`` lines (lists comma-joined, None empty), no header."""
    for key, value in info.items():
        yield f"{key}\t{_cell(value)}"


def error_object(err: SieveError) -> dict[str, Any]:
    """A typed error as data (the MCP server's structured content for a failed call)."""
    data: dict[str, Any] = {"kind": type(err).__name__, "message": str(err)}
    column = getattr(err, "column", 0)
    if column:
        data.update(column=column, length=getattr(err, "length", 1),
                    query=getattr(err, "query", ""))
    return versioned("error", {"error": data})


__all__ = ["FORMAT_VERSION", "TSV_COLUMNS", "dumps", "error_object", "fetch_object",
           "info_object", "info_tsv", "search_lines", "search_object", "search_trec",
           "search_tsv", "versioned"]
