"""Result rows -> the summary: per run, per mode and per question kind, as the paper reports.

Agent runs: EM, F1, containment, accuracy (by ``correct``: em or contains), gold recall
searched and read, distinct and accumulated tokens, LLM calls, searches, reads, the fallback
rate, BQL operator and field use, the failure split, seconds per question and the engine's
share; McNemar's exact test between each pair of modes and a paired t-test on distinct tokens.

Oracle runs: the share of questions reached per mode and their distinct tokens, and the
paired comparison on the questions every mode reached (the fair one: same questions).

One-shot runs: recall@k of the gold documents.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from ..options import MODES
from . import metrics
from .oracle import ONESHOT_KS


def _mean(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return round(statistics.fmean(xs), 4) if xs else None


def _median(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return round(float(statistics.median(xs)), 1) if xs else None


def group_by(rows: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    """``rows`` grouped by the text of their ``key`` value, groups in order of first sight."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[str(r.get(key))].append(r)
    return dict(out)


def ordered_modes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The modes present in ``rows``: the known ones in their usual order, then the rest."""
    present = list(dict.fromkeys(r["mode"] for r in rows))
    return [m for m in MODES if m in present] + [m for m in present if m not in MODES]


# -- agent ---------------------------------------------------------------------------------
def correct_of(row: dict[str, Any], correct: str) -> bool:
    return float(row.get("contains" if correct == "contains" else "em", 0.0)) == 1.0


def agent_stats(rows: Sequence[dict[str, Any]], correct: str) -> dict[str, Any]:
    searches = sum(r.get("searches", 0) for r in rows)
    wall = sum(r.get("wall_seconds", 0.0) for r in rows)
    ops: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    for r in rows:
        ops.update(r.get("operators") or {})
        fields.update(r.get("fields") or {})
    fail = Counter(metrics.failure(correct_of(r, correct), r.get("gold_searched", 0),
                                   r.get("gold_read", 0)) for r in rows)
    return {
        "questions": len(rows),
        "accuracy": _mean(correct_of(r, correct) for r in rows),
        "em": _mean(r.get("em", 0.0) for r in rows),
        "f1": _mean(r.get("f1", 0.0) for r in rows),
        "contains": _mean(r.get("contains", 0.0) for r in rows),
        "gold_searched": _mean(r.get("gold_searched", 0.0) for r in rows),
        "gold_read": _mean(r.get("gold_read", 0.0) for r in rows),
        "distinct_tokens_mean": _mean(r.get("distinct_tokens", 0) for r in rows),
        "distinct_tokens_median": _median(r.get("distinct_tokens", 0) for r in rows),
        "accumulated_tokens_mean": _mean(r.get("accumulated_prompt_tokens", 0) for r in rows),
        "accumulated_tokens_median": _median(r.get("accumulated_prompt_tokens", 0)
                                             for r in rows),
        "llm_calls": _mean(r.get("llm_calls", 0) for r in rows),
        "searches": _mean(r.get("searches", 0) for r in rows),
        "reads": _mean(r.get("fetches", 0) for r in rows),
        "fallback_rate": round(sum(r.get("fallbacks", 0) for r in rows) / searches, 4)
        if searches else None,
        "forced_rate": _mean(bool(r.get("forced")) for r in rows),
        "errors": _mean(r.get("errors", 0) for r in rows),
        "stop_reasons": dict(Counter(r.get("stop_reason", "") for r in rows)),
        "failures": {f: fail.get(f, 0) for f in metrics.FAILURES},
        # share of searches that used each operator / field (sieve mode writes BQL)
        "operators": {k: round(v / searches, 4) for k, v in sorted(ops.items())}
        if searches else {},
        "fields": {k: round(v / searches, 4) for k, v in sorted(fields.items())}
        if searches else {},
        "seconds_mean": _mean(r.get("wall_seconds", 0.0) for r in rows),
        "seconds_median": _median(r.get("wall_seconds", 0.0) for r in rows),
        "engine_share": round(sum(r.get("engine_seconds", 0.0) for r in rows) / wall, 4)
        if wall else None,
        "model_share": round(sum(r.get("model_seconds", 0.0) for r in rows) / wall, 4)
        if wall else None,
    }


def agent_summary(rows: Sequence[dict[str, Any]], correct: str) -> dict[str, Any]:
    modes = ordered_modes(rows)
    by_mode = group_by(rows, "mode")
    out: dict[str, Any] = {"correct": correct, "modes": {}, "kinds": {}, "mcnemar": [],
                           "tokens_paired_t": []}
    for m in modes:
        out["modes"][m] = agent_stats(by_mode[m], correct)
        out["kinds"][m] = {k: agent_stats(rs, correct)
                           for k, rs in sorted(group_by(by_mode[m], "kind").items())}
    for a, b in combinations(modes, 2):
        oa = {r["id"]: correct_of(r, correct) for r in by_mode[a]}
        ob = {r["id"]: correct_of(r, correct) for r in by_mode[b]}
        out["mcnemar"].append(metrics.mcnemar(a, b, oa, ob).to_json())
        ta = {r["id"]: r.get("distinct_tokens", 0) for r in by_mode[a]}
        tb = {r["id"]: r.get("distinct_tokens", 0) for r in by_mode[b]}
        ids = sorted(set(ta) & set(tb))
        p = metrics.paired_t([ta[i] for i in ids], [tb[i] for i in ids])
        out["tokens_paired_t"].append({"a": a, "b": b, "n": len(ids),
                                       "p_value": None if p is None else round(p, 6)})
    return out


# -- oracle --------------------------------------------------------------------------------
def oracle_stats(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    live = [r for r in rows if not r.get("skipped")]
    reached = [r for r in live if r.get("reached")]
    return {
        "questions": len(live),
        "skipped": len(rows) - len(live),
        "reached": _mean(bool(r.get("reached")) for r in live),
        "hops_reached": _mean(r.get("hops_reached", 0) / max(1, len(r.get("gold") or [1]))
                              for r in live),
        "distinct_tokens_mean": _mean(r["distinct_tokens"] for r in reached),
        "distinct_tokens_median": _median(r["distinct_tokens"] for r in reached),
        "search_tokens_mean": _mean(r["search_tokens"] for r in reached),
        "read_tokens_mean": _mean(r["read_tokens"] for r in reached),
        "reads_cut": _mean(any(x.get("cut") for h in r["hops"] for x in h["reads"])
                           for r in reached),
        "engine_seconds_mean": _mean(r.get("engine_seconds", 0.0) for r in live),
    }


def oracle_paired(rows: Sequence[dict[str, Any]], baseline: str = "search-visit"
                  ) -> dict[str, Any]:
    """Tokens on the questions every mode reached; each mode against ``baseline``."""
    by_mode = group_by([r for r in rows if not r.get("skipped")], "mode")
    modes = ordered_modes(rows)
    reached = [{r["id"] for r in by_mode.get(m, []) if r.get("reached")} for m in modes]
    common = sorted(set.intersection(*reached)) if reached else []
    tok = {m: {r["id"]: r["distinct_tokens"] for r in by_mode.get(m, [])} for m in modes}
    out: dict[str, Any] = {"questions": len(common), "baseline": baseline, "modes": {}}
    for m in modes:
        xs = [tok[m][i] for i in common]
        entry: dict[str, Any] = {"distinct_tokens_mean": _mean(xs),
                                 "distinct_tokens_median": _median(xs),
                                 "distinct_tokens_total": sum(xs)}
        if baseline in tok and m != baseline and common:
            base = [tok[baseline][i] for i in common]
            entry["fewer_tokens_than_baseline"] = round(1 - sum(xs) / sum(base), 4) \
                if sum(base) else None
            per_q = [1 - x / b for x, b in zip(xs, base, strict=True) if b]
            entry["fewer_tokens_median_per_question"] = round(statistics.median(per_q), 4) \
                if per_q else None
            p = metrics.paired_t(xs, base)
            entry["paired_t_p"] = None if p is None else round(p, 6)
        out["modes"][m] = entry
    return out


def oracle_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    by_mode = group_by(rows, "mode")
    modes = ordered_modes(rows)
    return {
        "modes": {m: oracle_stats(by_mode[m]) for m in modes},
        "kinds": {m: {k: oracle_stats(rs) for k, rs in sorted(group_by(by_mode[m], "kind").items())}
                  for m in modes},
        "paired": oracle_paired(rows),
        "paired_kinds": {k: oracle_paired(rs) for k, rs in sorted(group_by(rows, "kind").items())},
    }


# -- one-shot ------------------------------------------------------------------------------
def oneshot_stats(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    live = [r for r in rows if r.get("gold")]
    out: dict[str, Any] = {"questions": len(live), "no_gold": len(rows) - len(live)}
    for k in ONESHOT_KS:
        out[f"recall@{k}"] = _mean(r.get(f"recall@{k}", 0.0) for r in live)
    out["all_gold_at_5"] = _mean(bool(r.get("all_gold_at_5")) for r in live)
    out["gold_rank_median"] = _median(r["gold_rank"] for r in live if r.get("gold_rank"))
    out["engine_seconds_mean"] = _mean(r.get("engine_seconds", 0.0) for r in live)
    return out


def oneshot_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"all": oneshot_stats(rows),
            "kinds": {k: oneshot_stats(rs) for k, rs in sorted(group_by(rows, "kind").items())}}


def summarize(rows: Sequence[dict[str, Any]], correct: str = "em") -> dict[str, Any]:
    """The summary of every run present in ``rows``."""
    runs = group_by(rows, "run")
    out: dict[str, Any] = {}
    if "oracle" in runs:
        out["oracle"] = oracle_summary(runs["oracle"])
    if "oneshot" in runs:
        out["oneshot"] = oneshot_summary(runs["oneshot"])
    if "agent" in runs:
        out["agent"] = agent_summary(runs["agent"], correct)
    return out
