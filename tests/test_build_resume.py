"""An embedded build that is interrupted resumes: the vectors it made are kept beside the output
(``store/resume.py``) and the next build embeds only the rest (issue 21)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import sieve_lite
from sieve_lite import embed
from sieve_lite.build import build_collection
from sieve_lite.documents import Document
from sieve_lite.store.resume import cache_path

N = 150


def docs(stop_at: int | None = None) -> Iterator[Document]:
    for i in range(N):
        if stop_at is not None and i == stop_at:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the build
        yield Document.from_dict({"id": f"d{i}", "title": f"Document {i}",
                                  "text": f"The {i}th text is about topic {i % 7} and more."})


def vectors(db: Path) -> np.ndarray:
    with sieve_lite.open(db) as coll:
        rows = coll.conn.execute("SELECT rowid, embedding FROM doc_vectors ORDER BY rowid")
        return np.stack([np.frombuffer(v, dtype=np.float32) for _, v in rows])


def test_an_interrupted_embedded_build_resumes(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.db"
    with pytest.raises(KeyboardInterrupt):
        build_collection(docs(stop_at=140), out)
    assert not out.exists()
    cache = cache_path(out)
    assert cache.exists()  # the vectors of the first 128 documents (flushed by 64)
    assert not [p for p in tmp_path.iterdir() if ".building-" in p.name]

    encoded: list[int] = []
    real = embed.get_embedder

    def counting(name=None):
        e = real(name)
        encode = e.encode

        def wrapped(texts, *a, **kw):
            encoded.append(len(texts))
            return encode(texts, *a, **kw)

        monkeypatch.setattr(e, "encode", wrapped)
        return e

    monkeypatch.setattr(embed, "get_embedder", counting)
    report = build_collection(docs(), out)
    assert report.resumed_vectors == 128 and report.reused_vectors == 128
    assert sum(encoded) == N - 128  # only the rest was embedded
    assert not cache.exists()  # a build that succeeded leaves nothing
    monkeypatch.setattr(embed, "get_embedder", real)
    fresh = tmp_path / "fresh.db"
    build_collection(docs(), fresh)
    assert np.allclose(vectors(out), vectors(fresh), atol=1e-5)
