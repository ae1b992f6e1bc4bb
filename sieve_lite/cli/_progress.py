"""Download progress on stderr, for ``get`` and ``model get``: bytes, bytes per second and the
time left.

On a terminal it is rich's bar (cleared when the download ends). Elsewhere (a log, a CI job:
a model download takes minutes) ``lines=True`` prints one line every ``LINE_SECONDS`` and a
last one at the end; without it nothing is printed.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

import click

LINE_SECONDS = 5.0

Callback = Callable[[int, "int | None"], None]


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _eta(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class _Lines:
    """Plain progress lines: done, total, rate, time left."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.t0 = time.monotonic()
        self.last = self.t0
        self.first: int | None = None   # bytes at the first call (a resumed part)
        self.done = 0
        self.total: int | None = None

    def __call__(self, done: int, total: int | None) -> None:
        if self.first is None:
            self.first = max(0, done - 1)
        self.done, self.total = done, total
        now = time.monotonic()
        if now - self.last >= LINE_SECONDS:
            self.last = now
            click.echo(self.line(now), err=True)

    def line(self, now: float) -> str:
        elapsed = max(now - self.t0, 1e-6)
        rate = (self.done - (self.first or 0)) / elapsed
        text = f"{self.label}: {human_bytes(self.done)}"
        if self.total:
            text += f" of {human_bytes(self.total)} ({100 * self.done / self.total:.0f}%)"
        text += f", {human_bytes(rate)}/s"
        if self.total and rate > 0 and self.done < self.total:
            text += f", ETA {_eta((self.total - self.done) / rate)}"
        return text

    def end(self) -> None:
        if self.first is not None:
            click.echo(self.line(time.monotonic()), err=True)


@contextlib.contextmanager
def download_progress(label: str, quiet: bool = False,
                      lines: bool = False) -> Iterator[Callback]:
    """A progress callback ``(bytes so far, total or None)`` for a download."""
    if quiet:
        yield lambda done, total: None
        return
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        bar = Progress(BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                       TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        task = bar.add_task(label, total=None)
        bar.start()
        try:
            yield lambda done, total: bar.update(task, completed=done, total=total)
        finally:
            bar.stop()
        return
    if not lines:
        yield lambda done, total: None
        return
    out = _Lines(label)
    ok = False
    try:
        yield out
        ok = True
    finally:
        if ok:
            out.end()
