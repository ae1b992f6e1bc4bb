"""The LLM-free measurements: the oracle replay and one-shot retrieval.

**Oracle replay.** The reads an ideal agent would make, replayed through the same tools the
agent uses (``agent.tools.CollectionTools``), counting the tokens each mode shows before the
gold evidence is in view:

* hop 1 searches the question's words; hop *i* > 1 searches the title of the *i*-th gold
  document (in sieve mode as the BQL phrase ``"its words"[title]``, the query an agent that
  knows the entity writes; in the other modes the title's words, which they rank);
* a hop is reached when its gold document is among the top k;
* then sieve and search-fetch fetch the gold section(s) of that document (the question's
  ``gold_sections``; without them the first section holding the answer, else the first
  section), and search-visit reads the whole document;
* every result list (cards, or the plain list in search-visit) and every read is counted
  once with the model's tokenizer, each read cut at the agent's read cap.

A question is reached when every hop is. The loop's own framing ("Observation (step 2):", the
manual) is the same in every mode and is left out: this measures what the engine shows.

**One-shot.** One search of the question's words (ranked, no selection), no agent: the
recall of the gold documents at k = 1, 2, 5, 10 and the rank of the first gold document.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import QueryError, SectionError
from ..words import words
from .metrics import contains, recall_at
from .questions import EvalQuestion
from .tokens import TokenCounter

ONESHOT_KS = (1, 2, 5, 10)


@dataclass
class Hop:
    doc: str
    query: str
    rank: int | None                      # of the gold document in the top k; None = missed
    search_tokens: int
    reads: list[dict[str, Any]] = field(default_factory=list)  # section, tokens, cut, rule

    def to_json(self) -> dict[str, Any]:
        return {"doc": self.doc, "query": self.query, "rank": self.rank,
                "search_tokens": self.search_tokens, "reads": self.reads}


def question_query(question: str, mode: str) -> str:
    """Hop 1: the question's words. The non-sieve tools OR the words themselves; sieve gets
    them already ORed (the question's wording is not BQL)."""
    from ..agent.tools import or_words

    return or_words(question) if mode == "sieve" else question


def title_query(title: str, mode: str) -> str:
    """Hop i > 1: the gold document's title, as a title phrase in sieve mode."""
    ws = words(title)[:32]
    if mode != "sieve" or not ws:
        return title
    return (f'"{" ".join(ws)}"' if len(ws) > 1 else ws[0]) + "[title]"


def _answer_section(coll: Any, doc_id: str, answers: tuple[str, ...]) -> tuple[str, str]:
    """(section name, rule): the first section that holds the answer, else the first."""
    from ..fetch import section_names

    doc = coll.document(doc_id) or {"sections": []}
    names = section_names([s["heading"] for s in doc["sections"]])
    for name, s in zip(names, doc["sections"], strict=False):
        if contains(s["text"], answers):
            return name, "answer"
    if doc.get("infobox") and contains(" ; ".join(f"{k}: {v}" for k, v in doc["infobox"]),
                                       answers):
        return "infobox", "answer"
    return (names[0] if names else ""), "first"


def replay(tools: Any, coll: Any, q: EvalQuestion, gold_ids: list[str], counter: TokenCounter,
           k: int, read_cap: int) -> dict[str, Any]:
    """One question in one mode; returns the fields of its result row."""
    mode = tools.mode
    hops: list[Hop] = []
    t0 = time.perf_counter()
    error = ""
    for i, doc in enumerate(gold_ids):
        if i == 0:
            query = question_query(q.question, mode)
        else:
            title = (coll.document(doc) or {}).get("title") or doc
            query = title_query(title, mode)
        try:
            out = tools.search(query, k)
        except QueryError as e:  # a question with no words, a title BQL cannot say
            error = f"hop {i + 1}: {e}"
            break
        ids = [h.id for h in out.hits]
        hop = Hop(doc=doc, query=query, rank=ids.index(doc) + 1 if doc in ids else None,
                  search_tokens=counter.count("\n".join(h.card for h in out.hits)))
        hops.append(hop)
        if hop.rank is None:
            continue
        if mode == "search-visit":
            targets = [(None, "document")]
        else:
            given = [s for d, s in q.gold_sections if d == doc]
            targets = [(s, "gold") for s in dict.fromkeys(given)] or \
                [_answer_section(coll, doc, q.answers)]
        for section, rule in targets:
            try:
                res = tools.read(doc, section)
            except SectionError as e:
                error = f"hop {i + 1}: {e}"
                hop.rank = None  # the evidence cannot be shown: not reached
                break
            n = counter.count(res.text)
            hop.reads.append({"section": res.section, "tokens": min(n, read_cap),
                              "cut": n > read_cap or bool(res.truncated), "rule": rule})
    search_tokens = sum(h.search_tokens for h in hops)
    read_tokens = sum(r["tokens"] for h in hops for r in h.reads)
    reached = bool(gold_ids) and len(hops) == len(gold_ids) and \
        all(h.rank is not None for h in hops) and not error
    return {"reached": reached,
            "hops_reached": sum(h.rank is not None for h in hops),
            "distinct_tokens": search_tokens + read_tokens,
            "search_tokens": search_tokens, "read_tokens": read_tokens,
            "searches": len(hops), "reads": sum(len(h.reads) for h in hops),
            "hops": [h.to_json() for h in hops], "error": error,
            "engine_seconds": round(time.perf_counter() - t0, 4)}


def oneshot(tools: Any, q: EvalQuestion, gold_ids: list[str],
            ks: tuple[int, ...] = ONESHOT_KS) -> dict[str, Any]:
    """One ranked search of the question's words; recall of the gold documents at each k."""
    t0 = time.perf_counter()
    try:
        out = tools.search(q.question, max(ks))
        ids = [h.id for h in out.hits]
        error = ""
    except QueryError as e:
        ids, error = [], str(e)
    row: dict[str, Any] = {f"recall@{k}": round(recall_at(ids, gold_ids, k), 4) for k in ks}
    first = next((i + 1 for i, d in enumerate(ids) if d in gold_ids), None)
    row.update({"gold_rank": first, "top": ids, "error": error,
                "all_gold_at_5": bool(gold_ids) and set(gold_ids) <= set(ids[:5]),
                "engine_seconds": round(time.perf_counter() - t0, 4)})
    return row
