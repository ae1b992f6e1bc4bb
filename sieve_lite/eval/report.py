"""The outputs of a run: ``summary.json``, ``report.md`` (a table shaped like the paper's
Table 1, then per kind, McNemar, the failure split, BQL use, the oracle and one-shot tables)
and PNG plots (matplotlib, Agg backend: no display needed):

* ``plots/accuracy_tokens.png``: accuracy (agent) or the share of questions reached (oracle)
  against median distinct tokens, one point per mode;
* ``plots/tokens.png``: the distribution of distinct tokens per mode;
* ``plots/failures.png``: the failure split per mode (agent), or where the oracle stopped.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import metrics
from .summary import correct_of, group_by, ordered_modes, summarize

COLORS = {"sieve": "#1b7837", "search-fetch": "#2166ac", "search-visit": "#b2182b",
          "oneshot": "#666666"}


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_outputs(out: Path, rows: Sequence[dict[str, Any]], meta: dict[str, Any]
                  ) -> tuple[dict[str, Any], list[Path]]:
    """Write summary.json, report.md and the plots; returns (summary, files written)."""
    correct = meta.get("options", {}).get("correct", "em")
    meta = {**meta, "questions_with_missing_gold": len(
        {r["id"] for r in rows if r.get("gold_missing")})}
    summary = {"meta": meta, **summarize(rows, correct)}
    pngs = plots(out / "plots", rows, summary)
    files = [out / "summary.json", out / "report.md", *pngs]
    _atomic_write(files[0], json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    _atomic_write(files[1], report_markdown(summary, [f"plots/{p.name}" for p in pngs]))
    return summary, files


# -- markdown ------------------------------------------------------------------------------
def _f(x: Any, pct: bool = False, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if pct:
        return f"{100 * x:.1f}%"
    if isinstance(x, float):
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.{digits}f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def _p(x: float | None) -> str:
    """A p-value as stored (rounded to 6 places): 0 means below 1e-6."""
    if x is None:
        return "–"
    return "<1e-6" if x < 1e-6 else f"{x:.3g}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines + [""]


def report_markdown(s: dict[str, Any], pngs: Sequence[str] = ()) -> str:
    m = s["meta"]
    opts = m.get("options", {})
    st = m.get("settings", {})
    lines = ["# sieve-lite eval", "",
             f"Collection `{m['collection']}`, questions `{m['questions']}` ({m['format']} "
             f"format; {m['questions_selected']} of {m['questions_in_file']} questions"
             + (f", {m['questions_skipped']} left out: {m['skipped_reason']}"
                if m.get("questions_skipped") else "") + "). "
             f"{m['tasks_done']} of {m['tasks']} question-mode pairs done."
             + (f" **{m['questions_with_missing_gold']} questions name gold documents this "
                "collection does not have** (see `gold_missing` in results.jsonl)."
                if m.get("questions_with_missing_gold") else ""), "",
             f"Settings: model {st.get('model')}" + (f" at {st['backbone']}"
                                                      if st.get("backbone") else "")
             + (f", k = {st['k']}" if st.get("k") else ", k as ask sets it for the model "
                "(the oracle: 5)")
             + (f", at most {st['max_steps']} steps" if st.get("max_steps")
                else ", the steps ask gives the model") + ", context "
             f"{st.get('n_ctx')} tokens, ranker {st.get('ranker')}, seed {st.get('seed')}"
             + (f", limit {opts['limit']}" if opts.get("limit") else "")
             + f"; load average {m.get('load_average')} when written ({m.get('written')}).",
             ""]
    if "agent" in s:
        lines += _agent_md(s["agent"])
    if "oracle" in s:
        lines += _oracle_md(s["oracle"])
    if "oneshot" in s:
        lines += _oneshot_md(s["oneshot"])
    lines += [f"![{Path(p).stem}]({p})" for p in pngs] + [""]
    return "\n".join(lines)


def _agent_md(a: dict[str, Any]) -> list[str]:
    acc_name = "EM" if a["correct"] == "em" else "containment"
    lines = ["## Agent", "",
             f"Accuracy is {acc_name}. Tokens are per question (medians); distinct counts "
             "each prompt segment and output once, accumulated adds up every call's prompt.",
             ""]
    head = ["mode", "n", "acc", "EM", "F1", "contains", "gold searched", "gold read",
            "distinct tok", "accum. tok", "LLM calls", "searches", "reads", "fallback",
            "forced", "s/question", "engine share"]
    rows = []
    for mode, x in a["modes"].items():
        rows.append([mode, _f(x["questions"]), _f(x["accuracy"], True), _f(x["em"], True),
                     _f(x["f1"], True), _f(x["contains"], True), _f(x["gold_searched"], True),
                     _f(x["gold_read"], True), _f(x["distinct_tokens_median"]),
                     _f(x["accumulated_tokens_median"]), _f(x["llm_calls"], digits=1),
                     _f(x["searches"], digits=1), _f(x["reads"], digits=1),
                     _f(x["fallback_rate"], True), _f(x["forced_rate"], True),
                     _f(x["seconds_median"], digits=1), _f(x["engine_share"], True)])
    lines += _table(head, rows)
    lines += ["### By question kind", ""]
    rows = []
    for mode, kinds in a["kinds"].items():
        for kind, x in kinds.items():
            rows.append([kind, mode, _f(x["questions"]), _f(x["accuracy"], True),
                         _f(x["f1"], True), _f(x["gold_read"], True),
                         _f(x["distinct_tokens_median"])])
    lines += _table(["kind", "mode", "n", "acc", "F1", "gold read", "distinct tok"],
                    sorted(rows))
    if a["mcnemar"]:
        lines += ["### McNemar's exact test (paired by question)", ""]
        lines += _table(["a", "b", "n", "both right", "only a", "only b", "neither", "p",
                         "tokens paired t p"],
                        [[x["a"], x["b"], _f(x["n"]), _f(x["both"]), _f(x["only_a"]),
                          _f(x["only_b"]), _f(x["neither"]), _p(x["p_value"]),
                          _p(t["p_value"])]
                         for x, t in zip(a["mcnemar"], a["tokens_paired_t"],
                                         strict=True)])
    lines += ["### Failure split", "",
              "never retrieved: no gold document in any result; not read: surfaced, never "
              "opened; read, wrong: a gold document was read and the answer is still wrong.",
              ""]
    lines += _table(["mode", "correct", "never retrieved", "not read", "read, wrong"],
                    [[mode, *(_f(x["failures"][f]) for f in metrics.FAILURES)]
                     for mode, x in a["modes"].items()])
    used = {mode: x for mode, x in a["modes"].items() if x["operators"] or x["fields"]}
    if used:
        lines += ["### BQL use (share of searches)", ""]
        for mode, x in used.items():
            ops = ", ".join(f"{k} {100 * v:.0f}%" for k, v in x["operators"].items()) or "none"
            flds = ", ".join(f"{k} {100 * v:.0f}%" for k, v in x["fields"].items()) or "none"
            lines += [f"- {mode}: operators {ops}; fields {flds}"]
        lines += [""]
    return lines


def _oracle_md(o: dict[str, Any]) -> list[str]:
    p = o["paired"]
    lines = ["## Oracle replay (no language model)", "",
             "Hop 1 searches the question's words, each later hop the next gold document's "
             "title; a hop is reached when its gold document is in the top k; then the gold "
             "section is fetched (sieve, search-fetch) or the whole document read "
             "(search-visit). Tokens: every result list and read, counted once with the "
             "model's tokenizer.", ""]
    head = ["mode", "questions", "reached", "distinct tok (median, reached)", "mean",
            "search tok", "read tok", f"mean on the {p['questions']} reached by all",
            f"fewer than {p['baseline']}", "median per question", "paired t p"]
    rows = []
    for mode, x in o["modes"].items():
        y = p["modes"].get(mode, {})
        rows.append([mode, _f(x["questions"]), _f(x["reached"], True),
                     _f(x["distinct_tokens_median"]), _f(x["distinct_tokens_mean"]),
                     _f(x["search_tokens_mean"]), _f(x["read_tokens_mean"]),
                     _f(y.get("distinct_tokens_mean")),
                     _f(y.get("fewer_tokens_than_baseline"), True),
                     _f(y.get("fewer_tokens_median_per_question"), True),
                     _p(y.get("paired_t_p"))])
    lines += _table(head, rows)
    lines += ["### By question kind", ""]
    rows = []
    for kind, pk in o["paired_kinds"].items():
        for mode, y in pk["modes"].items():
            x = o["kinds"][mode].get(kind, {})
            rows.append([kind, mode, _f(x.get("questions")), _f(x.get("reached"), True),
                         _f(pk["questions"]), _f(y.get("distinct_tokens_mean")),
                         _f(y.get("fewer_tokens_than_baseline"), True)])
    lines += _table(["kind", "mode", "questions", "reached", "reached by all",
                     "mean distinct tok", f"fewer than {p['baseline']}"], rows)
    return lines


def _oneshot_md(o: dict[str, Any]) -> list[str]:
    lines = ["## One-shot retrieval (the question's words, ranked; no agent)", ""]
    head = ["kind", "questions", "R@1", "R@2", "R@5", "R@10", "all gold in top 5",
            "median rank of first gold"]

    def row(kind: str, x: dict[str, Any]) -> list[str]:
        return [kind, _f(x["questions"]), *(_f(x[f"recall@{k}"], True) for k in (1, 2, 5, 10)),
                _f(x["all_gold_at_5"], True), _f(x["gold_rank_median"], digits=1)]

    rows = [row("all", o["all"])] + [row(k, x) for k, x in o["kinds"].items()]
    return lines + _table(head, rows)


# -- plots ---------------------------------------------------------------------------------
def token_scale(axis: Any, values: Sequence[float | None]) -> None:
    """Token counts on ``axis`` as plain numbers. Logarithmic when they span a decade or more,
    with ticks at 1, 2 and 5 times the powers of ten; linear when they do not, where a log
    axis would often show no number at all (say 1,333 to 4,363: no power of ten between)."""
    import matplotlib.ticker

    xs = [v for v in values if v is not None and v > 0]
    if xs and max(xs) >= 10 * min(xs):
        if axis.axis_name == "x":
            axis.axes.set_xscale("log")
        else:
            axis.axes.set_yscale("log")
        axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:,.0f}"))


def plots(folder: Path, rows: Sequence[dict[str, Any]], s: dict[str, Any]) -> list[Path]:
    """The three PNGs (the ones the run's data allow)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    runs = group_by(rows, "run")
    written: list[Path] = []
    title = f'{Path(str(s["meta"].get("collection", ""))).stem} / ' \
        f'{Path(str(s["meta"].get("questions", ""))).name}'

    def save(fig: Any, name: str) -> None:
        path = folder / name
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)

    panels = [r for r in ("agent", "oracle") if r in runs]
    if panels:
        # accuracy (or reach) against tokens
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6),
                                 squeeze=False)
        for ax, run in zip(axes[0], panels, strict=True):
            if run == "agent":
                pts = {m: (x["distinct_tokens_median"], x["accuracy"])
                       for m, x in s["agent"]["modes"].items()}
                ax.set_ylabel("accuracy (" + s["agent"]["correct"] + ")")
                ax.set_title(f"agent · {title}", fontsize=9)
            else:
                pts = {m: (x["distinct_tokens_median"], x["reached"])
                       for m, x in s["oracle"]["modes"].items()}
                ax.set_ylabel("questions reached")
                ax.set_title(f"oracle · {title}", fontsize=9)
            for i, (m, (x, y)) in enumerate(pts.items()):
                if x is None or y is None:
                    continue
                ax.scatter([x], [y], s=60, color=COLORS.get(m, "black"), label=m, alpha=0.8)
                # stacked labels: modes often tie (sieve and search-fetch in the oracle)
                ax.annotate(m, (x, y), textcoords="offset points", xytext=(6, 4 - 11 * i),
                            fontsize=8)
            token_scale(ax.xaxis, [x for x, _ in pts.values()])
            ax.set_xlabel("distinct tokens per question (median)")
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
        save(fig, "accuracy_tokens.png")

        # token distributions
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6),
                                 squeeze=False)
        for ax, run in zip(axes[0], panels, strict=True):
            rs = runs[run] if run == "agent" else [r for r in runs[run] if r.get("reached")]
            modes = ordered_modes(runs[run])
            data = [[max(1, r["distinct_tokens"]) for r in rs if r["mode"] == m] for m in modes]
            keep = [(m, d) for m, d in zip(modes, data, strict=True) if d]
            if keep:
                box = ax.boxplot([d for _, d in keep], patch_artist=True)
                ax.set_xticks(range(1, len(keep) + 1), [m for m, _ in keep], fontsize=8)
                for patch, (m, _) in zip(box["boxes"], keep, strict=True):
                    patch.set_facecolor(COLORS.get(m, "#999999"))
                    patch.set_alpha(0.5)
            token_scale(ax.yaxis, [v for d in data for v in d])
            ax.set_ylabel("distinct tokens per question")
            ax.set_title(f"{run}" + (" (reached questions)" if run == "oracle" else "")
                         + f" · {title}", fontsize=9)
            ax.grid(alpha=0.3, axis="y")
        save(fig, "tokens.png")

        # failure split (agent) / where the oracle stopped
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.2),
                                 squeeze=False)
        for ax, run in zip(axes[0], panels, strict=True):
            modes = ordered_modes(runs[run])
            if run == "agent":
                cats = list(metrics.FAILURES)
                correct = s["agent"]["correct"]
                counts = {m: Counter(metrics.failure(correct_of(r, correct),
                                                     r.get("gold_searched", 0),
                                                     r.get("gold_read", 0))
                                     for r in runs[run] if r["mode"] == m) for m in modes}
            else:
                cats = ["reached", "missed hop 1", "missed a later hop", "no gold"]
                counts = {m: Counter(_oracle_outcome(r) for r in runs[run] if r["mode"] == m)
                          for m in modes}
            palette = ["#1b7837", "#d6604d", "#f4a582", "#92c5de"]
            bottoms = [0.0] * len(modes)
            for cat, color in zip(cats, palette, strict=True):
                vals = [counts[m].get(cat, 0) / max(1, sum(counts[m].values())) for m in modes]
                ax.bar(modes, vals, bottom=bottoms, color=color, label=cat)
                bottoms = [b + v for b, v in zip(bottoms, vals, strict=True)]
            ax.set_ylim(0, 1)
            ax.set_ylabel("share of questions")
            ax.set_title(("failure split" if run == "agent" else "oracle outcome")
                         + f" · {title}", fontsize=9)
            ax.tick_params(axis="x", labelsize=8)
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2,
                      frameon=False)
        save(fig, "failures.png")

    if "oneshot" in runs and not panels:
        o = s["oneshot"]["all"]
        fig, ax = plt.subplots(figsize=(4.6, 3.6))
        ks = (1, 2, 5, 10)
        ax.plot(ks, [o[f"recall@{k}"] or 0 for k in ks], marker="o", color=COLORS["oneshot"])
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_ylim(0, 1)
        ax.set_xlabel("k")
        ax.set_ylabel("gold recall@k")
        ax.set_title(f"one-shot retrieval · {title}", fontsize=9)
        ax.grid(alpha=0.3)
        save(fig, "recall.png")
    return written


def _oracle_outcome(r: dict[str, Any]) -> str:
    if r.get("skipped"):
        return "no gold"
    if r.get("reached"):
        return "reached"
    hops = r.get("hops") or []
    return "missed hop 1" if not hops or hops[0].get("rank") is None else "missed a later hop"
