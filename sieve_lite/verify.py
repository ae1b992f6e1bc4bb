"""``verify``: check a collection against what a build writes, check by check.

A collection file gets the checks of ``verify_file`` (integrity, schema, metadata, content,
vectors); a folder of shards gets ``shards.verify``'s (the manifest, every shard file's own
checks, then what ties them together). The report types are in ``checks``.
"""

from __future__ import annotations

import os
from pathlib import Path

from .checks import Check, VerifyReport
from .shards.manifest import is_sharded
from .verify_file import model_dimension, verify_file


def verify(path: str | os.PathLike[str]) -> VerifyReport:
    """Run every check on the collection at ``path``: a file, or a folder of shards."""
    p = Path(path)
    if is_sharded(p):
        from .shards.verify import verify_sharded

        return verify_sharded(p)
    return verify_file(p)


__all__ = ["Check", "VerifyReport", "model_dimension", "verify", "verify_file"]
