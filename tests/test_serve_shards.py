"""``sieve-lite serve`` on a sharded collection (issue 23): ``/retrieve`` and ``/fetch`` on a
folder of 3 shards answer as on the one-file build, in process and (slow) from Ray actors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the server needs starlette (sieve-lite[serve])")
pytest.importorskip("httpx2", reason="the test client needs httpx2 (a dependency of mcp)")
from starlette.testclient import TestClient  # noqa: E402

from sieve_lite.build import build_collection  # noqa: E402
from sieve_lite.serve import ServeConfig, create_app  # noqa: E402
from sieve_lite.serve.config import ServeError  # noqa: E402
from sieve_lite.shards.build import sharded_build  # noqa: E402
from sieve_lite.sources import iter_documents  # noqa: E402

SRC = Path(__file__).resolve().parent / "data" / "bql-examples" / "corpus.jsonl"
BASE = "http://127.0.0.1:8377"
QUERIES = ["fort", "castle OR fort", '"fort santiago"', "manila AND date[1500..1700]",
           "spanish[title]", "walrus[auther]", "zzzzqqq OR fort", "fort NOT castle"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: Any) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("serve-shards")
    one, folder = tmp / "one.db", tmp / "sharded"
    build_collection(iter_documents([SRC], "jsonl"), one, embed=False, quiet=True)
    sharded_build(iter_documents([SRC], "jsonl"), folder, 3, embed=False)
    return one, folder


def _retrieve(path: Path, **extra: Any) -> dict[str, Any]:
    app = create_app(ServeConfig(paths=(str(path),), connections=2, **extra))
    with TestClient(app, base_url=BASE) as c:
        r = c.post("/retrieve", json={"queries": QUERIES, "topk": 10, "return_scores": True,
                                      "ranker": "bm25"})
        assert r.status_code == 200
        data = r.json()
        doc = data["result"][0][0]["document"]["id"]
        f = c.post("/fetch", json={"doc": doc})
        assert f.status_code == 200
        data["fetched"] = f.json()
    return data


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["errors"] == b["errors"] and [e["index"] for e in a["errors"]] == [5]
    for qa, qb in zip(a["result"], b["result"], strict=True):
        assert [(h["document"], h["score"], h["total"]) for h in qa] == \
               [(h["document"], h["score"], h["total"]) for h in qb]
    assert sum(bool(r) for r in a["result"]) >= 6  # the queries admit something
    fa, fb = a["fetched"], b["fetched"]
    assert {k: v for k, v in fa.items() if k != "collection"} == \
           {k: v for k, v in fb.items() if k != "collection"}


def test_a_sharded_folder_serves_the_one_file_results(built: tuple[Path, Path]) -> None:
    one, folder = built
    _same(_retrieve(one), _retrieve(folder))


def test_ray_local_with_workers_is_refused() -> None:
    with pytest.raises(ServeError, match="--ray local"):
        ServeConfig(paths=("x",), ray="local", workers=2).check()


@pytest.mark.slow
def test_serve_on_ray_answers_as_the_one_file(built: tuple[Path, Path]) -> None:
    pytest.importorskip("ray")
    one, folder = built
    _same(_retrieve(one), _retrieve(folder, ray="local"))
