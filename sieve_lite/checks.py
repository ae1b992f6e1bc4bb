"""What ``verify`` reports: named checks, each passed, failed or skipped (``ok`` None), for
one collection file (``verify_file``) or a sharded folder (``shards.verify``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Check:
    name: str
    ok: bool | None  # None: skipped, because a check it needs failed
    detail: str


@dataclass
class VerifyReport:
    path: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok,
                "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail}
                           for c in self.checks]}


__all__ = ["Check", "VerifyReport"]
