"""sieve-lite: offline Search, Inspect, Fetch over one-file SQLite collections."""

from __future__ import annotations

from .errors import (
    BuildError,
    CollectionError,
    DocumentError,
    QueryError,
    SectionError,
    SieveError,
)
from .version import __version__


def open(path):  # noqa: A001 - the public API is sieve_lite.open(path), like sqlite3.connect
    """Open a collection file read-only; returns a ``sieve_lite.collection.Collection``, or a
    ``sieve_lite.shards.ShardedCollection`` (same interface) for a folder of shards."""
    from .shards.manifest import is_sharded

    if is_sharded(path):
        from .shards.collection import ShardedCollection

        return ShardedCollection(path)
    from .collection import Collection

    return Collection(path)


__all__ = ["BuildError", "CollectionError", "DocumentError", "QueryError", "SectionError",
           "SieveError", "__version__", "open"]
