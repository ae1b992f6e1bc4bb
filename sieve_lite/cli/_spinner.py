"""A spinner on stderr while a command loads or works, for a person at a terminal.

``with spinner("searching peps.db"):`` shows rich's status spinner on stderr once the block
has run for ``SPINNER_DELAY`` seconds (a fast command never flickers) and removes it when the
block ends, before anything is printed. Nothing is shown, and rich is not even imported, when
stderr is not a terminal: scripts and pipes see no change.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

SPINNER_DELAY = 0.25  # seconds before it appears ("a moment")
DELAY_ENV = "SIEVE_LITE_SPINNER_DELAY"  # overrides the delay (tests use 0)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get(DELAY_ENV, SPINNER_DELAY)))
    except ValueError:
        return SPINNER_DELAY


@contextlib.contextmanager
def spinner(message: str) -> Iterator[None]:
    """Show ``message`` with a spinner on stderr while the block runs longer than a moment."""
    if not _stderr_is_terminal():
        yield
        return
    from rich.console import Console
    from rich.markup import escape

    status: Any = Console(stderr=True).status(escape(message), spinner="dots")
    lock = threading.Lock()
    state = {"shown": False, "over": False}

    def show() -> None:
        with lock:  # never start after the block has ended
            if not state["over"]:
                status.start()
                state["shown"] = True

    timer = threading.Timer(_delay(), show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["over"] = True
            if state["shown"]:
                status.stop()
