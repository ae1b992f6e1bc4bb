"""Ray parity (issue 23): a sharded collection served by Ray actors (one per shard, spread over
two nodes of a local test cluster) answers exactly as the one-file build; a killed actor is
restarted and answers again; a tampered shard is refused; ``search --ray local`` agrees with
the in-process search. Needs the ``ray`` extra (installed for CI); slow: a cluster starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sieve_lite
from sieve_lite.build import build_collection
from sieve_lite.errors import DamagedCollection
from sieve_lite.shards.build import sharded_build
from sieve_lite.sources import iter_documents

ray = pytest.importorskip("ray")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = HERE / "data" / "bql-examples" / "corpus.jsonl"

sys.path.insert(0, str(HERE))
from test_shards import EDGE, _example_queries, assert_same  # noqa: E402

sys.path.remove(str(HERE))

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shray")
    one, folder = tmp / "one.db", tmp / "sharded"
    build_collection(iter_documents([SRC], "jsonl"), one, embed=False, quiet=True)
    sharded_build(iter_documents([SRC], "jsonl"), folder, 3, embed=False)
    return one, folder


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of two nodes (two raylets on this machine)."""
    import time

    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    deadline = time.monotonic() + 120  # both raylets registered with their resources
    while ray.cluster_resources().get("CPU", 0) < 2 or \
            sum(1 for n in ray.nodes() if n.get("Alive")) < 2:
        assert time.monotonic() < deadline, "the second node never joined"
        time.sleep(0.2)
    yield c
    if ray.is_initialized():
        ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def on_ray(built, cluster):
    from sieve_lite.shards.ray import RayShardedCollection

    one, folder = built
    rc = RayShardedCollection(folder, address=cluster.address)
    with sieve_lite.open(one) as coll:
        yield coll, rc, folder
    rc.close()


def test_actors_spread_over_both_nodes(on_ray) -> None:
    _, rc, _ = on_ray
    nodes = rc.call("ray_node")
    assert len(nodes) == 3 and len(set(nodes)) == 2


@pytest.mark.parametrize("ranker", ["bm25", "bm25-doc", "hybrid"])
def test_ray_parity(on_ray, ranker: str) -> None:
    one, rc, _ = on_ray
    for q in _example_queries() + EDGE:
        for k in (1, 10):
            assert_same(one, rc, q, k=k, ranker=ranker)


def test_ray_fetch(on_ray) -> None:
    one, rc, _ = on_ray
    for h in one.search("python OR pep*", k=10, ranker="bm25").results:
        assert rc.fetch(h.id).to_dict() == one.fetch(h.id).to_dict()
        assert rc.document(h.id) == one.document(h.id)


def test_killed_actor_restarts(on_ray) -> None:
    one, rc, _ = on_ray
    want = one.search("python OR pep*", k=10, ranker="bm25").to_dict()
    ray.kill(rc.actors[1], no_restart=False)  # as a crashed process: Ray restarts it
    assert rc.search("python OR pep*", k=10, ranker="bm25").to_dict() == want


def test_tampered_shard_refused_on_ray(on_ray, tmp_path) -> None:
    from sieve_lite.shards.ray import RayShardedCollection

    _, _, folder = on_ray
    bad = tmp_path / "bad"
    shutil.copytree(folder, bad)
    f = bad / "shard-002.db"
    data = bytearray(f.read_bytes())
    data[-50] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(DamagedCollection, match="checksum"):
        RayShardedCollection(bad, address="auto")


def test_cli_search_ray_local(built) -> None:
    """``search --ray local`` starts its own throwaway cluster and prints what the in-process
    search prints."""
    _, folder = built
    if ray.is_initialized():
        ray.shutdown()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, str(ROOT / "cli.py"), "search", str(folder), "python OR pep*",
            "--json", "-k", "7"]
    a = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    b = subprocess.run([*args, "--ray", "local"], capture_output=True, text=True, env=env,
                       timeout=600)
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert json.loads(a.stdout) == json.loads(b.stdout)
