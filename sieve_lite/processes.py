"""Worker processes, started by fork: whether that is safe here, and a pool of them.

The build prepares batches in them, builds each FTS5 table in one, and ``sources`` parses
PDF, DOCX and EPUB files in them; all follow the rule of ``can_fork``.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from typing import Any


def can_fork() -> bool:
    """Worker processes are started with fork only: milliseconds to start, and no re-import of
    the caller's ``__main__`` (spawn and forkserver would run an unguarded calling script
    again). Fork is safe on Linux unless torch is loaded (its thread pools do not survive a
    fork); elsewhere, and then, the work is done inline."""
    return sys.platform == "linux" and "torch" not in sys.modules \
        and "fork" in multiprocessing.get_all_start_methods()


def worker_init(parent: int) -> None:
    """Leave Ctrl-C to the parent process (it terminates its workers), and exit when that
    process dies (even by SIGKILL): a worker blocked on its task queue would wait forever."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def fork_pool(n: int) -> Any:
    """A ``multiprocessing`` pool of ``n`` forked workers (call only when ``can_fork()``)."""
    ctx = multiprocessing.get_context("fork")
    return ctx.Pool(n, initializer=worker_init, initargs=(os.getpid(),))
