"""Commands beyond build/info, registered on ``sieve_lite.cli.cli``.

Each command: parse options, call one library function, render. Kept apart from cli.py so the
search, fetch and ask commands can grow without touching the error handling in one place.
"""

from __future__ import annotations

from .cli import cli  # noqa: F401
