"""The JSON API for agents: ``POST /retrieve`` (Search-R1's batch contract), ``POST /search``
and ``POST /fetch`` (the CLI's JSON shapes). See issue 23."""

from __future__ import annotations

from typing import Any


def routes(state: Any) -> list[Any]:
    """The API's routes (none yet: the batch API lands with issue 23)."""
    return []


__all__ = ["routes"]
