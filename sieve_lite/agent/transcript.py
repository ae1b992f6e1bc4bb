"""Episode transcripts (JSON Lines, one event per line) and the live/replay view.

The loop emits events (``start``, ``step``, ``trim``, ``final-request``, ``end``); the same
events feed the terminal view as they happen, are written to the transcript file as they
happen (so a crash still leaves what happened before it), and can be replayed from the file
through the same view: ``sieve-lite ask --replay FILE``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from ..errors import SieveError


class TranscriptWriter:
    """An event sink that appends each event as one JSON line, flushed at once."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self._fh: IO[str] = self.path.open("w", encoding="utf-8")
        except OSError as e:
            raise SieveError(f"cannot write transcript {self.path}: {e.strerror}") from None

    def __call__(self, event: dict[str, Any]) -> None:
        self._fh.write(json.dumps(event, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def read_transcript(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every event of a transcript file, in order."""
    events = []
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if line.strip():
                    try:
                        events.append(json.loads(line))
                    except ValueError:
                        raise SieveError(f"{path}:{n}: not a JSON line") from None
    except OSError as e:
        raise SieveError(f"cannot read transcript {path}: {e.strerror}") from None
    if not events or events[0].get("event") != "start":
        raise SieveError(f"{path} is not a sieve-lite ask transcript (no start event)")
    return events


def replay(path: str | os.PathLike[str], console: Any = None,
           verbose: bool = False) -> dict[str, Any] | None:
    """Print a transcript with the live view; returns its ``end`` event (None if cut short)."""
    view = LiveView(console, verbose=verbose)
    end = None
    for event in read_transcript(path):
        view(event)
        if event.get("event") == "end":
            end = event
    return end


class LiveView:
    """Renders events on a rich console: each step's action, its cards or the section read and
    its size, mistakes in red, then the answer with its citations.

    Cards and reads are the people's rendering of ``sieve_lite.terminal``: the first three
    cards of a search in full and the rest one line each, the first lines of a section read
    with the last search's words highlighted; ``verbose`` shows every card and whole reads."""

    def __init__(self, console: Any = None, show_cards: bool = True,
                 verbose: bool = False, markup: str | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True, highlight=False)
        self.show_cards = show_cards
        self.verbose = verbose
        self.markup = markup  # the collection's (``markup.markup_of_source``); None: guess
        self.words: list[tuple[str, bool]] = []  # the last search's words, to highlight

    def __call__(self, event: dict[str, Any]) -> None:
        handler = getattr(self, "_on_" + str(event.get("event", "")).replace("-", "_"), None)
        if handler is not None:
            handler(event)

    def _on_start(self, e: dict[str, Any]) -> None:
        from ..display import for_rich as escape  # control characters dropped, markup escaped

        c = self.console
        c.rule(f"[bold]{escape(e['question'])}[/bold]")
        grammar = "grammar-constrained" if e.get("grammar") else "tolerant parsing"
        c.print(f"[dim]{escape(str(e.get('backbone')))} · context {e.get('n_ctx')} tokens · "
                f"mode {e.get('mode')} · {grammar} · at most "
                f"{e.get('budgets', {}).get('max_steps')} steps[/dim]")

    def _on_step(self, e: dict[str, Any]) -> None:
        from rich.text import Text

        from ..display import for_rich as escape  # control characters dropped, markup escaped

        c = self.console
        action = e.get("action") or {}
        kind = action.get("kind", "")
        timing = f"model {e.get('model_seconds', 0):.1f}s"
        if e.get("engine_seconds"):
            timing += f", engine {e['engine_seconds'] * 1000:.0f}ms"
        label = "final" if e.get("info", {}).get("final") else f"step {e.get('index')}"
        if e.get("prefill"):
            label = "forced"
        if e.get("info", {}).get("seed"):
            why = e["info"].get("plan_why") or "the question's words"
            label = f"step 0 (engine: {escape(why)})"
            timing = f"engine {e.get('engine_seconds', 0) * 1000:.0f}ms"
        elif e.get("info", {}).get("engine"):
            # a read the engine made itself (a route's, or a small model's first)
            lead = e["info"].get("lead")  # why it read that document (a hop, a later card)
            label = f"step {e.get('index')} (engine{': ' + escape(lead) if lead else ''})"
            timing = f"engine {e.get('engine_seconds', 0) * 1000:.0f}ms"
        if action.get("thought"):
            c.print(f"[dim italic]  thought: {escape(action['thought'])}[/dim italic]")
        info = e.get("info") or {}
        repair = f" [dim](repaired: {info['repair']})[/dim]" if info.get("repair") else ""
        if kind == "search":
            c.print(f"[bold cyan]{label}[/bold cyan] [bold]search[/bold] "
                    f"{escape(action['query'])}{repair} [dim]({timing})[/dim]")
            if not e.get("error"):
                ran = info.get("engine_query")
                if ran and ran != action["query"]:
                    c.print(f"  [dim]ran: {escape(ran)}[/dim]")
                if info.get("fallback"):
                    c.print("  [yellow]0 admitted: fallback ranking by the query's words[/yellow]")
                else:
                    c.print(f"  [green]{info.get('total', 0)} admitted[/green]")
                from ..terminal import live_hits, query_words

                self.words = query_words(ran or action["query"])
                if self.show_cards:
                    for line in live_hits(info.get("hits", []), self.words, c.width - 2,
                                          verbose=self.verbose, boxed=c.is_terminal):
                        c.print(Text("  ") + line, crop=False)
        elif kind in ("fetch", "visit"):
            target = action.get("doc", "")
            if kind == "fetch":
                target += f" | {action.get('section') or '(sections)'}"
            c.print(f"[bold cyan]{label}[/bold cyan] [bold]{kind}[/bold] {escape(target)}"
                    f"{repair} [dim]({timing})[/dim]")
            if not e.get("error"):
                cut = " [yellow](cut)[/yellow]" if info.get("cut") else ""
                c.print(f"  read [bold]{escape(str(info.get('doc')))} | "
                        f"{escape(str(info.get('section')))}[/bold] "
                        f"({escape(str(info.get('title', '')))}): {info.get('tokens', 0)} "
                        f"tokens{cut}")
                text = str(e.get("observation") or "").partition("\n")[2]  # under its head
                if self.show_cards and text.strip():
                    from rich.padding import Padding

                    from ..terminal import live_read

                    c.print(Padding(live_read(text, self.words, markup=self.markup,
                                              verbose=self.verbose), (0, 0, 0, 4)))
        elif kind == "answer":
            c.print(f"[bold cyan]{label}[/bold cyan] [bold]answer[/bold] "
                    f"{escape(action.get('text', ''))}{repair} [dim]({timing})[/dim]")
        else:
            c.print(f"[bold cyan]{label}[/bold cyan] [red]unreadable reply[/red] "
                    f"{escape(_clip(e.get('reply', '')))} [dim]({timing})[/dim]")
        if e.get("error"):
            c.print(f"  [red]✗ {escape(e['error'])}[/red]")

    def _on_trim(self, e: dict[str, Any]) -> None:
        self.console.print(f"[dim]  context: shortened the observations of steps "
                           f"{', '.join(map(str, e['steps']))} -> {e['prompt_tokens']} prompt "
                           f"tokens[/dim]")

    def _on_final_request(self, e: dict[str, Any]) -> None:
        why = "step limit" if e.get("reason") == "step-cap" else "90% of the context window"
        self.console.print(f"[yellow]{why} reached: asking for the final answer[/yellow]")

    def _on_end(self, e: dict[str, Any]) -> None:
        from rich.panel import Panel

        from ..display import for_rich as escape  # control characters dropped, markup escaped

        acc = e.get("accounting", {})
        cites = e.get("citations") or []
        if e.get("answered", True):
            body = f"[bold]{escape(e.get('answer', ''))}[/bold]"
            if cites:
                body += "\n" + "\n".join(
                    f"  [dim]cites[/dim] {escape(c['doc'])} | {escape(c['section'])}"
                    + (f" ({escape(c['pages'])})" if c.get("pages") else "") for c in cites)
            else:
                body += "\n  [dim](no citation)[/dim]"
            forced = " (forced)" if acc.get("forced") else ""
            self.console.print(Panel(body, title=f"answer{forced}", title_align="left"))
        else:
            body = f"[yellow]no answer found[/yellow] ({escape(acc.get('no_answer', ''))})"
            for ev in e.get("evidence") or []:
                body += (f"\n  [dim]read[/dim] {escape(ev['doc'])} | {escape(ev['section'])}: "
                         f"{escape(_clip(ev['text'], 160))}")
            self.console.print(Panel(body, title="no answer", title_align="left"))
        self.console.print(
            f"[dim]{acc.get('steps', 0)} steps, {acc.get('llm_calls', 0)} model calls, "
            f"{acc.get('searches', 0)} searches ({acc.get('fallbacks', 0)} fallback), "
            f"{acc.get('fetches', 0)} reads, {acc.get('errors', 0)} mistakes, "
            f"{acc.get('repeats', 0)} repeats · "
            f"{acc.get('distinct_tokens', 0):,} distinct / "
            f"{acc.get('accumulated_prompt_tokens', 0):,} accumulated prompt tokens · "
            f"{acc.get('wall_seconds', 0):.1f}s (model {acc.get('model_seconds', 0):.1f}s, "
            f"engine {acc.get('engine_seconds', 0):.2f}s) · stop: "
            f"{acc.get('stop_reason', '?')}[/dim]")


def _clip(s: str, n: int = 80) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"
