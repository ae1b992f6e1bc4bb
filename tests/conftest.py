"""Shared fixtures (names are stable: other test modules use them).

* ``shared_dir``: the read-only shared folder (``/work/shared``: DOCUMENTS.md, BQL.md, data/,
  bql-examples/), found next to the repository.
* ``examples_db``: a lexical collection (no embeddings) of ``bql-examples/corpus.jsonl``,
  built once per test session; a ``Path`` to the ``.db`` file. Open it read-only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DIR = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.skip(f"shared data folder {SHARED_DIR} is not present")
    return SHARED_DIR


@pytest.fixture(scope="session")
def examples_db(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    out = tmp_path_factory.mktemp("examples") / "examples.db"
    build_collection(iter_documents([shared_dir / "bql-examples" / "corpus.jsonl"], "jsonl"),
                     out, embed=False, strict=True, quiet=True,
                     source_label="jsonl: bql-examples/corpus.jsonl")
    return out
