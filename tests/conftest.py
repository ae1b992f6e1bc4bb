"""Shared fixtures (names are stable: other test modules use them).

* ``data_dir``: ``tests/data``, the small fixtures every test reads (see its README: what each
  file is, where it was cut from, its licence). Tests never read anything outside the
  repository.
* ``examples_db``: a lexical collection (no embeddings) of ``bql-examples/corpus.jsonl``,
  built once per test session; a ``Path`` to the ``.db`` file. Open it read-only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DATA_DIR = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA_DIR


@pytest.fixture(scope="session")
def examples_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    out = tmp_path_factory.mktemp("examples") / "examples.db"
    build_collection(iter_documents([DATA_DIR / "bql-examples" / "corpus.jsonl"], "jsonl"),
                     out, embed=False, strict=True, quiet=True,
                     source_label="jsonl: bql-examples/corpus.jsonl")
    return out
