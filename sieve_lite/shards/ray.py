"""The sharded coordinator over Ray: one actor per shard file, spread across the cluster's nodes.

``open_ray(DIR, address)`` returns a ``RayShardedCollection``: the same ``Coordinator`` as the
in-process ``ShardedCollection`` (so the same results, bit for bit), whose shards are Ray
actors, each a ``worker.ShardWorker`` holding its shard file open read-only:

* placed round-robin over the cluster's live nodes (shard i on node i mod nodes);
* restarted when their process dies (``max_restarts``), and a call in flight is retried on
  the new actor (``max_task_retries``): every call is a read, so a retry is safe. The
  placement is strict (a shard stays on its node): when a node is lost for good, its shards'
  calls fail with one line, and the collection is reopened (on the nodes left);
* each actor checks its own shard's SHA-256 and metadata against the manifest when it starts,
  on its own node, in parallel.

Every node must see DIR at the same path (a shared file system, or the same copy on each).
``address``: ``"local"`` starts a throwaway local cluster (stopped at ``close``); ``"auto"``
joins the cluster this machine belongs to (``ray start``, or ``RAY_ADDRESS``); anything else is
a cluster address (``ray://host:10001`` or ``host:6379``).

Ray is an optional extra (``pip install 'sieve-lite[ray]'``) and is imported here only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import EnvironmentProblem, SieveError
from .collection import Coordinator
from .manifest import load

MAX_RESTARTS = 4
MAX_TASK_RETRIES = 4


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise EnvironmentProblem("--ray needs Ray: pip install 'sieve-lite[ray]'") from None
    return ray


def connect(address: str | None) -> tuple[Any, bool]:
    """``ray.init`` for ``address`` (see the module docstring); (ray, whether we started
    the cluster and so must stop it)."""
    ray = _ray()
    if ray.is_initialized():
        return ray, False
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                          "configure_logging": False}
    local = address in (None, "", "local")
    try:
        ray.init(address="local" if local else address, **kw)
    except Exception as e:  # noqa: BLE001 - no cluster there, a bad address: one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise EnvironmentProblem(f"cannot {'start a local Ray cluster' if local else ''}"
                                 f"{'' if local else f'reach the Ray cluster at {address}'}: "
                                 f"{first}") from None
    return ray, local


def _actor_class() -> Any:
    from ..errors import SieveError
    from .worker import ShardWorker

    class RayShard(ShardWorker):
        """A ``ShardWorker`` whose refusal (a tampered or mixed shard) is kept and raised by
        its first call (``meta``): Ray does not hand a failed constructor's exception to the
        caller, and restarting a refused shard would only refuse it again."""

        def __init__(self, *args: Any) -> None:
            self.refused: SieveError | None = None
            try:
                super().__init__(*args)
            except SieveError as e:
                self.refused = e

        def meta(self) -> Any:
            if self.refused is not None:
                raise self.refused
            return super().meta()

    return RayShard


class RayShardedCollection(Coordinator):
    """A sharded collection served by Ray actors (see the module docstring)."""

    def __init__(self, path: str | Path, address: str | None = "local",
                 local_stats: bool = False) -> None:
        self.path = Path(path).resolve()
        self.manifest = m = load(self.path)
        self._ray, self._owns = connect(address)
        ray = self._ray
        try:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            # Round-robin over the live nodes, strictly: Ray's SPREAD, and a soft affinity on a
            # busy cluster, left the actors together on one node in the tests.
            nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
            remote = ray.remote(_actor_class())
            self.actors = [remote.options(
                max_restarts=MAX_RESTARTS, max_task_retries=MAX_TASK_RETRIES, num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(nodes[i % len(nodes)],
                                                                   soft=False)
            ).remote(str(self.path), i, None, None, local_stats) for i in range(len(m.shards))]
            metas = self._get([a.meta.remote() for a in self.actors])
            self._setup(metas)
        except BaseException:
            self.close()
            raise

    def _get(self, refs: Any) -> Any:
        """``ray.get``, with a shard's own refusal (a ``SieveError`` raised in the actor, e.g.
        a tampered shard) re-raised as itself: one line, its own exit code."""
        ray = self._ray
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as e:
            inner = getattr(e, "cause", None)
            if isinstance(inner, SieveError):
                raise inner from None
            raise EnvironmentProblem(f"a shard's Ray actor failed: "
                                     f"{str(e).strip().splitlines()[-1]}") from None
        except ray.exceptions.RayActorError as e:
            raise EnvironmentProblem(f"a shard's Ray actor died: {str(e).splitlines()[0]}") \
                from None

    def call(self, method: str, *args: Any) -> list[Any]:
        return self._get([getattr(a, method).remote(*args) for a in self.actors])

    def call_one(self, shard: int, method: str, *args: Any) -> Any:
        return self._get(getattr(self.actors[shard], method).remote(*args))

    def call_subset(self, shards: Sequence[int], method: str,
                    args: Sequence[tuple]) -> list[Any]:
        return self._get([getattr(self.actors[n], method).remote(*a)
                          for n, a in zip(shards, args, strict=True)])

    def _sample(self) -> Any:
        """Shard 0 opened here too (the driver reads DIR's manifest, so it sees DIR)."""
        if getattr(self, "_local", None) is None:
            from .worker import ShardWorker

            self._local = ShardWorker(self.path, 0, self.manifest)
        return self._local.coll

    def close(self) -> None:
        local = getattr(self, "_local", None)
        if local is not None:
            local.close()
            self._local = None
        ray = getattr(self, "_ray", None)
        if ray is None:
            return
        for a in getattr(self, "actors", []):
            try:
                ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors = []
        if self._owns and ray.is_initialized():
            ray.shutdown()
        self._ray = None


def open_ray(path: str | Path, address: str | None = "local") -> RayShardedCollection:
    """Open the sharded collection at ``path`` on Ray (``address``: see the module docstring).
    A one-file collection is refused: build it with ``--shards N``."""
    from .manifest import is_sharded

    if not is_sharded(path):
        from ..errors import CollectionError

        raise CollectionError(f"--ray serves a sharded collection (a folder built with "
                              f"--shards N); {path} is not one")
    return RayShardedCollection(path, address)
