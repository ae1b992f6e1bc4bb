"""Sharded collections: a folder of collection files split by document, one manifest with the
global statistics, and a coordinator whose results equal the one-file build's exactly.

* ``manifest.py``: the manifest (checksums, the id -> shard rule, global statistics);
* ``build.py``: ``sharded_build``, N shards built in parallel processes, atomically;
* ``stats.py``: the global statistics a shard's scorers read;
* ``worker.py``: one shard's side of a search (in process or in a Ray actor);
* ``collection.py``: ``ShardedCollection`` and the coordinator's merge;
* ``ray.py``: the same coordinator over Ray actors (``--ray``; the ``ray`` extra).

Nothing here imports ray unless ``--ray`` asks for it.
"""

from __future__ import annotations

from .manifest import MANIFEST, is_sharded, shard_of

__all__ = ["MANIFEST", "is_sharded", "shard_of"]
