"""Ask runs: a question answered by the shipped model, step by step, at its own URL.

``POST /ask`` (a form: ``question``, ``collection``) creates a run and answers 303 to
``/runs/ID``, its permalink. The run executes in a thread of the server process (one model
per process, one run at a time: a second waits its turn, marked queued). Its events (the
agent loop's ``start``, ``step``, ``final-request``, ``end``, plus our ``stopped`` and
``failed``) are appended, one JSON line each, to ``RUNS_DIR/ID.jsonl`` as they happen; that
file *is* the run. So:

* ``GET /runs/ID`` renders every step recorded so far (a reload mid-run shows them, with or
  without JavaScript), and its JSON twin is the run object;
* ``GET /runs/ID/events`` streams the steps as Server-Sent Events (sse-starlette), each with
  its line number as event id: a reconnect sends ``Last-Event-ID`` (or ``?after=N``) and
  gets only what it missed;
* ``POST /runs/ID/stop`` sets the run's stop flag (also a ``ID.stop`` file, so a run is
  stoppable from any worker process): the model's generation checks it on every token
  (``LlamaBackbone.should_stop``, llama-cpp's stopping criteria) and the event sink between
  steps, so the run ends within a token, not a step;
* ``GET /ask`` lists past runs, searchable by their question and answer (``?q=``);
  ``/runs/ID.md`` and ``/runs/ID.json`` export one.

Runs live in the user's data folder (``ServeConfig.runs_dir``), never in a collection.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import re
import secrets
import threading
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import SieveError
from ..output import versioned
from ..terminal import WordMatch, one_line, query_words
from .views import PAGE_K, card_view, coll_path, error_page, link, render, templates

RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$")
MAX_QUESTION = 1000   # characters
POLL_SECONDS = 0.15   # how often the event stream looks for new lines
LIST_RUNS = 200       # the most past runs /ask lists


class RunStopped(Exception):
    """Raised inside the agent (from the event sink) when the run's stop flag is set."""


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(4)


class RunStore:
    """The runs folder: one ``ID.jsonl`` per run (its events), ``ID.stop`` to stop one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, run_id: str) -> Path:
        if not RUN_ID.match(run_id):
            raise SieveError("no such run")
        return self.folder / f"{run_id}.jsonl"

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """Every whole line written so far (a line being written is left for later)."""
        path = self.path(run_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise SieveError("no such run") from None
        out = []
        for line in raw.split(b"\n")[:-1] if not raw.endswith(b"\n") else raw.split(b"\n"):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    break
        return out

    def append(self, run_id: str, event: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        line = json.dumps(event, ensure_ascii=False, default=_jsonable) + "\n"
        with open(self.path(run_id), "a", encoding="utf-8") as fh:
            fh.write(line)

    def stop(self, run_id: str) -> None:
        self.path(run_id)  # checks the id
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{run_id}.stop").touch()

    def stopped(self, run_id: str) -> bool:
        return (self.folder / f"{run_id}.stop").exists()

    def list(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        ids = [p.stem for p in self.folder.glob("*.jsonl") if RUN_ID.match(p.stem)]
        return sorted(ids, reverse=True)[:LIST_RUNS]


def _jsonable(obj: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return str(obj)


def summarize(run_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """A run as data: its question, collection, status, steps, answer and citations."""
    head = events[0] if events else {}
    end = next((e for e in reversed(events) if e.get("event") in ("end", "stopped", "failed")),
               None)
    steps = [e for e in events if e.get("event") == "step"]
    status = "running" if any(e.get("event") == "start" for e in events) else "queued"
    if end is not None:
        status = {"end": "done", "stopped": "stopped", "failed": "failed"}[end["event"]]
    out = {"id": run_id, "question": head.get("question", ""),
           "collection": head.get("collection", ""), "created": head.get("created", ""),
           "status": status, "steps": steps, "answer": None, "answered": False,
           "citations": [], "accounting": None, "message": None}
    if end is not None and end["event"] == "end":
        out.update(answer=end.get("answer"), answered=bool(end.get("answered")),
                   citations=end.get("citations") or [], accounting=end.get("accounting"))
    elif end is not None:
        out["message"] = end.get("message")
    return out


def markdown(run: dict[str, Any]) -> str:
    """A run as Markdown: the question, each step, the answer and its citations."""
    lines = [f"# {one_line(run['question'])}", "",
             f"- collection: {run['collection']}", f"- run: {run['id']} ({run['created']})",
             f"- status: {run['status']}", "", "## Steps", ""]
    for s in run["steps"]:
        a = s.get("action") or {}
        kind = a.get("kind", "unreadable")
        what = {"search": a.get("query"), "fetch": f"{a.get('doc')} | {a.get('section')}",
                "answer": a.get("text")}.get(kind, one_line(s.get("reply", "")))
        info = s.get("info") or {}
        lines.append(f"{s.get('index')}. **{kind}** `{one_line(str(what))}`"
                     f" ({s.get('prompt_tokens', 0)} tokens in, "
                     f"{s.get('completion_tokens', 0)} out)")
        for h in info.get("hits", []) or []:
            lines.append(f"   - {h.get('id')}: {one_line(h.get('title', ''))}")
        if s.get("error"):
            lines.append(f"   - mistake: {one_line(s['error'])}")
    lines += ["", "## Answer", ""]
    if run["answer"] is not None:
        lines.append(one_line(run["answer"]))
        lines.append("")
        for c in run["citations"]:
            lines.append(f"- cites {c['doc']} | {c['section']}")
    else:
        lines.append(f"({run['status']})")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------- runner
class Runner:
    """Runs questions one at a time on this process's model (loaded on first use)."""

    def __init__(self, store: RunStore, pool: Any, ranker: str | None) -> None:
        self.store = store
        self.pool = pool
        self.ranker = ranker
        self._lock = threading.Lock()
        self._backbone: Any = None
        self.flags: dict[str, threading.Event] = {}

    def backbone(self) -> Any:
        """The model ``ask`` would use (``SIEVE_LITE_MODEL``/``_BACKBONE``, the config file,
        else the shipped SmolLM2), loaded once per process."""
        if self._backbone is None:
            from .. import config
            from ..agent.backbones import make_backbone

            self._backbone = make_backbone(config.default("model"), config.default("backbone"))
        return self._backbone

    def abandon(self) -> None:
        """At exit: a run still going is recorded as stopped, not left running forever."""
        for run_id in list(self.flags):
            self.flags[run_id].set()
            self.store.append(run_id, {"event": "stopped",
                                       "message": "the server stopped during the run"})

    def start(self, question: str, collection: str) -> str:
        entry = self.pool.entry(collection)
        run_id = new_run_id()
        self.flags[run_id] = threading.Event()
        self.store.append(run_id, {"event": "run", "question": question,
                                   "collection": entry.name, "created": _now()})
        threading.Thread(target=self._work, args=(run_id, question, entry),
                         name=f"ask-{run_id}", daemon=True).start()
        return run_id

    def stop(self, run_id: str) -> None:
        self.store.stop(run_id)
        flag = self.flags.get(run_id)
        if flag is not None:
            flag.set()

    def _work(self, run_id: str, question: str, entry: Any) -> None:
        flag = self.flags[run_id]

        def stopping() -> bool:
            return flag.is_set() or self.store.stopped(run_id)

        def sink(event: dict[str, Any]) -> None:
            if event.get("event") == "start":
                event = {k: v for k, v in event.items() if k != "system"}  # the manual
            self.store.append(run_id, event)
            if stopping():
                raise RunStopped

        try:
            with self._lock:
                if stopping():
                    raise RunStopped
                from ..agent.run import run_question

                bb = self.backbone()
                bb.should_stop = stopping
                try:
                    run_question(entry.path, question, backbone_obj=bb, mode="sieve",
                                 ranker=self.ranker, live=sink)
                finally:
                    bb.should_stop = None
        except RunStopped:
            self.store.append(run_id, {"event": "stopped", "message": "stopped by the user"})
        except SieveError as e:
            self.store.append(run_id, {"event": "failed", "message": str(e)})
        except Exception as e:  # a run must end with a line saying so, whatever happened
            self.store.append(run_id, {"event": "failed",
                                       "message": f"the run failed: {type(e).__name__}"})
        finally:
            self.flags.pop(run_id, None)


# ------------------------------------------------------------------------------ rendering
def step_view(step: dict[str, Any], collection: str, n_ctx: int) -> dict[str, Any]:
    """What the step template needs; text from the model or a collection is escaped there."""
    from .html import marked

    a = step.get("action") or {}
    kind = a.get("kind") or "unreadable"
    info = step.get("info") or {}
    view: dict[str, Any] = {
        "index": step.get("index"), "kind": kind, "seed": bool(info.get("seed")),
        "final": bool(info.get("final")) or bool(step.get("prefill")),
        "thought": one_line(a.get("thought")), "error": one_line(step.get("error")),
        "tokens_in": step.get("prompt_tokens", 0), "tokens_out": step.get("completion_tokens", 0),
        "context": (f"{100 * step.get('prompt_tokens', 0) / n_ctx:.0f}%" if n_ctx else ""),
        "model_seconds": f"{step.get('model_seconds', 0):.1f}",
        "engine_ms": f"{1000 * step.get('engine_seconds', 0):.0f}",
        "reply": one_line(step.get("reply")) if kind == "unreadable" else "",
        "query": "", "cards": [], "total": info.get("total"), "fallback": info.get("fallback"),
        "read": None, "answer": "",
    }
    if kind == "search":
        from ..terminal import card_from_dict

        query = info.get("engine_query") or a.get("query", "")
        view["query"] = one_line(a.get("query"))
        view["ran"] = one_line(query) if query != a.get("query") else ""
        match = WordMatch(query_words(query))
        for h in info.get("hits") or []:
            data = h.get("data") if isinstance(h, dict) else None  # the card as a dict
            if not isinstance(data, dict):
                continue
            try:
                card = card_from_dict(data)
            except (ValueError, TypeError):
                continue
            view["cards"].append(card_view(card, collection, query, match,
                                           bool(info.get("fallback"))))
    elif kind in ("fetch", "visit") and info.get("doc"):
        base = coll_path(collection) + "/doc"
        view["read"] = {"doc": one_line(str(info.get("doc"))),
                        "section": one_line(str(info.get("section"))),
                        "title": marked(str(info.get("title", "")), line=True),
                        "tokens": info.get("tokens", 0), "cut": bool(info.get("cut")),
                        "href": link(base, id=info.get("doc"), section=info.get("section"))}
    elif kind == "answer":
        view["answer"] = one_line(a.get("text"))
    return view


def answer_view(run: dict[str, Any], last_query: str) -> dict[str, Any] | None:
    if run["answer"] is None:
        return None
    base = coll_path(run["collection"]) + "/doc"
    cites = [{"label": f"{one_line(c['doc'])} | {one_line(c['section'])}",
              "href": link(base, id=c["doc"], section=c["section"], q=last_query,
                           cite=run["answer"]) + "#cited"}
             for c in run["citations"]]
    return {"text": one_line(run["answer"]), "answered": run["answered"], "cites": cites,
            "accounting": run["accounting"] or {}}


def run_context(run: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    start = next((e for e in events if e.get("event") == "start"), {})
    n_ctx = int(start.get("n_ctx") or 0)
    steps = [step_view(s, run["collection"], n_ctx) for s in run["steps"]]
    last_query = next((s["ran"] or s["query"] for s in reversed(steps) if s["query"]), "")
    return {"run": run, "steps": steps, "answer": answer_view(run, last_query),
            "last_event": len(events), "n_ctx": n_ctx,
            "model": one_line(start.get("backbone", ""))}


# --------------------------------------------------------------------------------- routes
def routes(state: Any) -> list[Any]:
    from .negotiate import json_response, wants_json

    store = RunStore(state.config.runs_dir())
    runner = Runner(store, state.pool, state.config.ranker)
    state.runner = runner
    atexit.register(runner.abandon)

    def load(run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        events = store.events(run_id)
        return summarize(run_id, events), events

    def ask_page(request: Request) -> Response:
        q = request.query_params.get("q", "")[:200]
        runs = []
        for run_id in store.list():
            try:
                run, _ = load(run_id)
            except SieveError:
                continue
            text = f"{run['question']} {run['answer'] or ''}".casefold()
            if q and not all(w in text for w in q.casefold().split()):
                continue
            runs.append(run)
        if wants_json(request):
            return json_response(versioned("runs", {"runs": [
                {k: v for k, v in r.items() if k != "steps"} for r in runs]}))
        return render("ask.html", nav="ask", query="", k=PAGE_K, ranker="", runs=runs,
                      runs_query=q, collections=list(state.pool.entries),
                      error=None, question="")

    async def ask_post(request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-type", "").startswith("application/json"):
            try:
                data = json.loads(body or b"{}")
                question, coll = str(data.get("question", "")), data.get("collection")
            except (ValueError, AttributeError):
                return error_page(SieveError("the body is not a JSON object"), True, 400)
        else:
            form = parse_qs(body.decode("utf-8", "replace"))
            question = (form.get("question") or [""])[0]
            coll = (form.get("collection") or [None])[0]
        question = " ".join(question.split())
        as_json = wants_json(request)
        if not question or len(question) > MAX_QUESTION:
            return error_page(SieveError(f"give a question of 1 to {MAX_QUESTION} characters"),
                          as_json, 400)
        try:
            run_id = runner.start(question, coll or state.pool.default)
        except SieveError:
            return error_page(SieveError("no such collection"), as_json, 404)
        if as_json:
            return json_response(versioned("run", {"id": run_id, "url": f"/runs/{run_id}"}),
                                 status=201)
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    def run_page(request: Request) -> Response:
        run_id = request.path_params["run"]
        fmt = None
        for ext in (".json", ".md"):
            if run_id.endswith(ext):
                run_id, fmt = run_id[: -len(ext)], ext[1:]
        try:
            run, events = load(run_id)
        except SieveError:
            return error_page(SieveError("no such run"), wants_json(request) or fmt == "json", 404)
        if fmt == "md":
            return PlainTextResponse(markdown(run), media_type="text/markdown; charset=utf-8",
                                     headers={"content-disposition":
                                              f'attachment; filename="{run_id}.md"'})
        if fmt == "json" or wants_json(request):
            resp = json_response(versioned("run", run))
            if fmt:
                resp.headers["content-disposition"] = f'attachment; filename="{run_id}.json"'
            return resp
        return render("run.html", nav="ask", query="", k=PAGE_K, ranker="",
                      **run_context(run, events))

    def stop(request: Request) -> Response:
        run_id = request.path_params["run"]
        try:
            runner.stop(run_id)
        except SieveError:
            return error_page(SieveError("no such run"), wants_json(request), 404)
        if wants_json(request) or request.headers.get("x-requested-with") == "fetch":
            return json_response(versioned("run", {"id": run_id, "stopping": True}))
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    async def events(request: Request) -> Response:
        from sse_starlette.sse import EventSourceResponse

        run_id = request.path_params["run"]
        try:
            store.path(run_id)
        except SieveError:
            return error_page(SieveError("no such run"), True, 404)
        after = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        sent = int(after) if after.isdigit() else 0
        step_t = templates().get_template("step.html")
        answer_t = templates().get_template("answer.html")

        async def stream() -> AsyncIterator[dict[str, Any]]:
            nonlocal sent
            n_ctx = 0
            while True:
                try:
                    evs = await asyncio.to_thread(store.events, run_id)
                except SieveError:
                    return
                for e in evs:
                    if e.get("event") == "start":
                        n_ctx = int(e.get("n_ctx") or 0)
                run = summarize(run_id, evs)
                for i in range(sent, len(evs)):
                    e = evs[i]
                    kind = e.get("event")
                    if kind == "step":
                        html = step_t.render(s=step_view(e, run["collection"], n_ctx))
                        yield {"id": str(i + 1), "event": "step", "data": html}
                    elif kind in ("end", "stopped", "failed"):
                        ctx = run_context(run, evs)
                        yield {"id": str(i + 1), "event": "answer",
                               "data": answer_t.render(**ctx)}
                        yield {"id": str(i + 1), "event": "done", "data": run["status"]}
                        return
                    else:
                        yield {"id": str(i + 1), "event": "status", "data": kind or ""}
                sent = len(evs)
                if await request.is_disconnected():
                    return
                await asyncio.sleep(POLL_SECONDS)

        return EventSourceResponse(stream(), ping=15, headers={"cache-control": "no-store"})

    return [Route("/ask", ask_page, methods=["GET"]), Route("/ask", ask_post, methods=["POST"]),
            Route("/runs/{run}", run_page), Route("/runs/{run}/events", events),
            Route("/runs/{run}/stop", stop, methods=["POST"])]


__all__ = ["RunStore", "Runner", "markdown", "routes", "summarize"]
