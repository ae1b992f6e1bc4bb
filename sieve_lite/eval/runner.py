"""One evaluation run: questions x modes -> ``results.jsonl`` (one line per question and mode),
resumable, optionally in several processes; then the summary, the report and the plots.

Runs: ``oracle`` (the LLM-free replay, per mode), ``oneshot`` (one ranked search, no agent),
``agent`` (the research agent, per mode, through ``agent.run.run_question``: the same loop,
budgets and backbones as ``sieve-lite ask``).

The output folder holds ``run.json`` (the settings that decide a result: collection, questions
file, model, budgets, seed), ``results.jsonl``, ``transcripts/<mode>/<id>.jsonl``,
``summary.json``, ``report.md`` and ``plots/*.png``. Rows are appended (one write per line,
flushed) by the main process only, so an interrupted run loses at most the question in
flight; started again with the same settings, it skips what is done. A folder holding another
run's settings is refused rather than mixed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CollectionError, QuestionError
from ..options import MODES
from . import metrics
from .questions import EvalQuestion, QuestionSet, read_questions, resolve_gold, sample

RESULTS = "results.jsonl"
SETTINGS = "run.json"


ORACLE_K = 5  # the oracle's cut: a hop is reached when its gold is in the top 5


@dataclass
class EvalOptions:
    """What to run and with which budgets (the agent's are those of ``sieve-lite ask``)."""

    modes: tuple[str, ...] = MODES
    oracle: bool = False
    oneshot: bool = False
    model: str | None = None          # a GGUF path (or, with backbone, the model name)
    backbone: str | None = None       # an OpenAI-compatible URL
    max_steps: int | None = None  # None: what fits the model, as in ``ask``
    n_ctx: int = 8192
    ranker: str | None = None         # default: hybrid with embeddings, else bm25
    k: int | None = None  # None: the agent's default for the model; the oracle uses 5
    limit: int | None = None
    seed: int = 42
    jobs: int = 1
    correct: str = "em"               # what counts as right: em | contains

    def runs(self) -> list[str]:
        """oracle and/or oneshot when asked for; otherwise the agent."""
        out = [r for r, on in (("oracle", self.oracle), ("oneshot", self.oneshot)) if on]
        return out or ["agent"]


@dataclass
class Task:
    run: str
    mode: str
    question: EvalQuestion

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.run, self.mode, self.question.id)


@dataclass
class EvalRun:
    """What ``run_eval`` did: where, with what, and the summary."""

    out: Path
    questions: QuestionSet
    selected: list[EvalQuestion]
    tasks: int
    resumed: int
    summary: dict[str, Any] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


Progress = Callable[[int, int, dict[str, Any] | None], None]


# -- files ---------------------------------------------------------------------------------
def safe_name(qid: str) -> str:
    """A file name for a question id (ids may hold '/', spaces, anything)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", qid).strip("._") or "q"
    if name != qid:
        name = f"{name[:80]}-{hashlib.sha1(qid.encode('utf-8')).hexdigest()[:8]}"
    return name


def _file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def read_results(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Rows of a results file. A last line cut by an interruption is ignored, and with
    ``repair`` (before appending) dropped from the file, rewritten atomically; a bad line
    elsewhere means the file is not ours: refused."""
    if not path.exists():
        return []
    raw = path.read_text(encoding="utf-8")
    lines = raw.split("\n")
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or "run" not in row or "id" not in row:
                raise ValueError
            rows.append(row)
        except ValueError:
            last = all(not rest.strip() for rest in lines[n:])
            if not last:
                raise QuestionError(f"{path}:{n}: not a results line of sieve-lite eval; "
                                    "use another --out") from None
            if repair:
                keep = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_text(keep, encoding="utf-8")
                os.replace(tmp, path)
    return rows


def settings(db: Path, qpath: Path, opts: EvalOptions, coll: Any) -> dict[str, Any]:
    """The settings that decide a result row (modes, limit and jobs do not)."""
    info = coll.info()
    return {
        "collection": str(db), "collection_hash": info.get("content_hash") or _file_hash(db),
        "questions": str(qpath), "questions_hash": _file_hash(qpath),
        "model": model_setting(opts), "backbone": opts.backbone,
        "max_steps": opts.max_steps, "n_ctx": opts.n_ctx, "ranker": opts.ranker or "default",
        "k": opts.k, "seed": opts.seed,
    }


def model_setting(opts: EvalOptions) -> str:
    """The model a run uses, as ``run.json`` records it: ``--model``, else (in process)
    ``$SIEVE_LITE_MODEL``, which the backbone and the tokenizer take too, else "default". A
    run resumed with another model is then refused, not mixed."""
    if opts.model:
        return str(opts.model)
    if not opts.backbone:
        from ..agent.backbones import MODEL_ENV

        env = os.environ.get(MODEL_ENV, "").strip()
        if env:
            return str(Path(env).expanduser())
    return "default"


def _check_settings(out: Path, want: dict[str, Any]) -> None:
    path = out / SETTINGS
    if not path.exists():
        return
    try:
        have = json.loads(path.read_text(encoding="utf-8")).get("settings", {})
    except (ValueError, AttributeError):
        raise QuestionError(f"{path} is not a sieve-lite eval settings file; use another "
                            "--out") from None
    skip = {"collection", "questions"}  # paths may move; their hashes decide
    diffs = [k for k in want if k not in skip and have.get(k) != want[k]]
    if diffs:
        raise QuestionError(f"{out} holds a run with other settings ({', '.join(diffs)}); "
                            "use another --out, or --fresh to discard it")


OUR_FILES = (RESULTS, SETTINGS, "summary.json", "report.md")


def clear(out: Path) -> None:
    """Remove a previous run's files (only ours) from ``out``."""
    for name in OUR_FILES:
        (out / name).unlink(missing_ok=True)
    for folder in ("transcripts", "plots"):
        shutil.rmtree(out / folder, ignore_errors=True)


# -- per-process context -------------------------------------------------------------------
BackboneFactory = Callable[[str], Any]


def default_backbone_factory(opts: EvalOptions) -> BackboneFactory:
    """The backbone ``sieve-lite ask`` would make, with the run's seed."""

    def make(mode: str) -> Any:
        from ..agent.backbones import make_backbone, threads_per_job

        bb = make_backbone(opts.model, opts.backbone, n_ctx=opts.n_ctx,
                           n_threads=threads_per_job(opts.jobs))
        if hasattr(bb, "seed"):
            bb.seed = opts.seed
        return bb

    return make


class Context:
    """What one process needs: the open collection, the tools per mode, the tokenizer, and
    one backbone per mode (each keeps its own manual's prefix in its KV cache; llama.cpp maps
    the weights once)."""

    def __init__(self, db: Path, out: Path, opts: EvalOptions,
                 backbone_factory: BackboneFactory | None = None, counter: Any = None) -> None:
        import sieve_lite

        self.db, self.out, self.opts = db, out, opts
        self.coll = sieve_lite.open(db)
        self._tools: dict[str, Any] = {}
        self._backbones: dict[str, Any] = {}
        self._factory = backbone_factory or default_backbone_factory(opts)
        self._counter = counter

    def close(self) -> None:
        self.coll.close()

    def tools(self, mode: str) -> Any:
        if mode not in self._tools:
            from ..agent.tools import CollectionTools

            self._tools[mode] = CollectionTools(self.coll, mode=mode, ranker=self.opts.ranker)
        return self._tools[mode]

    @property
    def counter(self) -> Any:
        if self._counter is None:
            from .tokens import GGUFTokenizer

            # the in-process model's own vocabulary (as chosen by the backbone: --model,
            # else $SIEVE_LITE_MODEL, else the default); with --backbone the default's
            if self.opts.backbone:
                self._counter = GGUFTokenizer(None)
            else:
                from ..agent.backbones import chosen_model_path

                self._counter = GGUFTokenizer(chosen_model_path(self.opts.model))
        return self._counter

    def backbone(self, mode: str) -> Any:
        if mode not in self._backbones:
            self._backbones[mode] = self._factory(mode)
        return self._backbones[mode]

    def read_cap(self) -> int:
        """The agent's read cap: 12,000 tokens and at most half the context window."""
        from ..agent.loop import Budgets

        b = Budgets()
        return max(64, min(b.read_tokens, int(b.read_share * self.opts.n_ctx)))

    # -- one task ---------------------------------------------------------------------------
    def run(self, task: Task) -> dict[str, Any]:
        q = task.question
        gold, missing = resolve_gold(self.coll, q)
        row: dict[str, Any] = {"run": task.run, "mode": task.mode, "id": q.id,
                               "kind": q.kind or "(none)", "hops": q.hops,
                               "question": q.question, "answers": list(q.answers),
                               "gold": gold, "gold_missing": missing}
        if task.run == "oracle":
            from .oracle import replay

            if not gold:
                row.update({"skipped": "no gold document in the collection"})
            else:
                row.update(replay(self.tools(task.mode), self.coll, q, gold, self.counter,
                                  self.opts.k or ORACLE_K, self.read_cap()))
                row["tokenizer"] = self.counter.name
        elif task.run == "oneshot":
            from .oracle import oneshot

            # Ranked words without selection: the search-fetch tools.
            row.update(oneshot(self.tools("search-fetch"), q, gold))
        else:
            row.update(self._agent(task.mode, q, gold))
        return row

    def _agent(self, mode: str, q: EvalQuestion, gold: list[str]) -> dict[str, Any]:
        from ..agent.run import run_question

        rel = Path("transcripts") / mode / f"{safe_name(q.id)}.jsonl"
        (self.out / rel).parent.mkdir(parents=True, exist_ok=True)
        ep = run_question(self.db, q.question, mode=mode, ranker=self.opts.ranker,
                          transcript=self.out / rel, backbone_obj=self.backbone(mode),
                          # the budgets ``ask`` gives this model, with the run's overrides
                          overrides={"k": self.opts.k, "max_steps": self.opts.max_steps})
        surfaced, read = episode_docs(ep)
        acc = ep.accounting.to_json()
        em = metrics.exact_match(ep.answer, q.answers)
        f1 = metrics.f1(ep.answer, q.answers)
        cont = metrics.contains(ep.answer, q.answers)
        g_s = metrics.gold_recall(surfaced, gold)
        g_r = metrics.gold_recall(read, gold)
        return {"answer": ep.answer,
                "citations": [f"{c.doc} | {c.section}" for c in ep.citations],
                "em": em, "f1": round(f1, 4), "contains": cont,
                "gold_searched": round(g_s, 4), "gold_read": round(g_r, 4),
                "failure_em": metrics.failure(em == 1.0, g_s, g_r),
                "failure_contains": metrics.failure(cont == 1.0, g_s, g_r),
                "backbone": getattr(self.backbone(mode), "name", "?"),
                "transcript": str(rel), **acc}


def episode_docs(ep: Any) -> tuple[list[str], list[str]]:
    """(ids of documents that appeared in a result, ids of documents read) in an episode.
    Reading a document's outline (its list of sections) does not count as reading it."""
    surfaced: list[str] = []
    read: list[str] = []
    for step in ep.steps:
        info = getattr(step, "info", None) or {}
        if getattr(step, "error", ""):
            continue
        for h in info.get("hits") or []:
            if h.get("id") not in surfaced:
                surfaced.append(h.get("id"))
        doc = info.get("doc")
        if doc and info.get("section") != "(sections)" and doc not in read:
            read.append(doc)
    return surfaced, read


# -- worker processes ----------------------------------------------------------------------
_CTX: Context | None = None


def _init_worker(db: str, out: str, opts: dict[str, Any]) -> None:
    global _CTX
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    o = EvalOptions(**{**opts, "modes": tuple(opts["modes"])})
    _CTX = Context(Path(db), Path(out), o)


def _run_in_worker(task: Task) -> dict[str, Any]:
    assert _CTX is not None
    return _CTX.run(task)


def _execute(tasks: list[Task], ctx_args: tuple[Path, Path, EvalOptions], jobs: int,
             backbone_factory: BackboneFactory | None, counter: Any
             ) -> Iterator[dict[str, Any]]:
    """Rows as tasks finish: in this process (jobs 1), or in ``jobs`` spawned processes."""
    db, out, opts = ctx_args
    if jobs <= 1 or len(tasks) <= 1:
        ctx = Context(db, out, opts, backbone_factory, counter)
        try:
            for task in tasks:
                yield ctx.run(task)
        finally:
            ctx.close()
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn, not fork: torch and llama.cpp threads do not survive a fork.
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker,
                               initargs=(str(db), str(out), asdict(opts)))
    try:
        futures = [pool.submit(_run_in_worker, t) for t in tasks]
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# -- the run -------------------------------------------------------------------------------
@contextlib.contextmanager
def _lock(out: Path, writing: bool) -> Iterator[None]:
    """One writer per output folder: a second run appending to the same results would
    repeat questions, and --fresh would pull them from under it. Reading (--report-only)
    needs no lock. The lock file stays: deleting it would let a second lock on a new file
    succeed while the first is held."""
    if not writing:
        yield
        return
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one run at a time is then the user's care
        yield
        return
    with open(out / ".lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise QuestionError(f"another sieve-lite eval is writing to {out}; wait for it, "
                                "or use --report-only to look at its results") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
def plan(questions: list[EvalQuestion], opts: EvalOptions) -> list[Task]:
    """Question-major order, so that a run cut short covers every mode on the same
    questions (McNemar pairs them)."""
    tasks: list[Task] = []
    for q in questions:
        for run in opts.runs():
            for mode in (("oneshot",) if run == "oneshot" else opts.modes):
                tasks.append(Task(run, mode, q))
    return tasks


def run_eval(db: str | os.PathLike[str], questions: str | os.PathLike[str],
             out: str | os.PathLike[str], opts: EvalOptions | None = None, *,
             fresh: bool = False, progress: Progress | None = None,
             backbone_factory: BackboneFactory | None = None, counter: Any = None,
             stop_after: int | None = None, write_report: bool = True) -> EvalRun:
    """Run (or resume) an evaluation; write results, summary, report and plots into ``out``.

    ``backbone_factory(mode)`` replaces the default backbone (tests use the scripted one);
    ``counter`` the tokenizer of the oracle; ``stop_after`` ends after that many new rows
    (what an interruption does, for tests). ``progress(done, total, row)`` is called before
    the first task and after each one.
    """
    import sieve_lite

    opts = opts or EvalOptions()
    db, qpath, out = Path(db), Path(questions), Path(out)
    bad = [m for m in opts.modes if m not in MODES]
    if bad or not opts.modes:
        raise QuestionError(f"unknown mode {', '.join(bad) or '(none)'}; use "
                            f"{', '.join(MODES)}")
    if opts.correct not in ("em", "contains"):
        raise QuestionError("--correct takes em or contains")
    from ..shards.manifest import is_sharded

    if not (db.is_file() or is_sharded(db)):  # a file, or a folder of shards
        raise CollectionError(f"collection not found: {db}")
    qset = read_questions(qpath)
    selected = sample(qset.questions, opts.limit, opts.seed)
    with sieve_lite.open(db) as coll:
        want = settings(db, qpath, opts, coll)
    if out.exists() and not out.is_dir():
        raise QuestionError(f"{out} is a file; --out takes a folder")
    if not fresh:
        _check_settings(out, want)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / RESULTS
    tasks = plan(selected, opts)
    writing = stop_after != 0
    with _lock(out, writing or fresh):
        if fresh:
            clear(out)
        if writing or not (out / SETTINGS).exists():
            (out / SETTINGS).write_text(json.dumps(
                {"settings": want, "options": asdict(opts)}, indent=1, default=str) + "\n",
                encoding="utf-8")
        done = {(r["run"], r["mode"], r["id"])
                for r in read_results(results_path, repair=writing)}
        todo = [t for t in tasks if t.key not in done]
        resumed = len(tasks) - len(todo)
        if stop_after is not None:
            todo = todo[:stop_after]
        n_done = resumed
        if progress:
            progress(n_done, len(tasks), None)
        if todo:
            with open(results_path, "a", encoding="utf-8") as fh:
                for row in _execute(todo, (db, out, opts), opts.jobs, backbone_factory,
                                    counter):
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    fh.flush()
                    n_done += 1
                    if progress:
                        progress(n_done, len(tasks), row)
    run = EvalRun(out, qset, selected, len(tasks), resumed)
    if write_report:
        from .report import write_outputs

        rows = read_results(results_path)
        keys = {t.key for t in tasks}
        rows = [r for r in rows if (r["run"], r["mode"], r["id"]) in keys]
        meta = {"collection": str(db), "questions": str(qpath), "format": qset.format,
                "questions_in_file": len(qset.questions) + qset.skipped,
                "questions_skipped": qset.skipped, "skipped_reason": qset.skipped_reason,
                "questions_selected": len(selected), "tasks": len(tasks),
                "tasks_done": len(rows), "settings": want, "options": asdict(opts),
                "load_average": round(os.getloadavg()[0], 2), "written": time.strftime(
                    "%Y-%m-%d %H:%M:%S")}
        run.summary, run.files = write_outputs(out, rows, meta)
    return run
