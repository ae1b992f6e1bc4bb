"""Passage statistics (``store.passages``): packing round-trips, and adding or removing one
document in place leaves exactly the postings a fresh build of the same documents has."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sieve_lite import store
from sieve_lite.build import build_collection
from sieve_lite.documents import Document
from sieve_lite.errors import DamagedCollection
from sieve_lite.store import passages as ps
from sieve_lite.words import index_text

SAMPLE = Path(__file__).resolve().parent / "data" / "peps-sample.jsonl"


def _docs() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.open(encoding="utf-8")]


def _build(path: Path, docs: list[dict]) -> Path:
    build_collection((Document.from_dict(d) for d in docs), path, embed=False, quiet=True)
    return path


def _canonical(path: Path) -> dict[str, list[tuple[str, int, int]]]:
    """Every term's postings as (document id, passage index in it, tf): independent of how
    passages happen to be numbered."""
    conn = store.connect(path)
    try:
        ids = dict(conn.execute("SELECT rowid, id FROM documents"))
        owner: dict[int, tuple[str, int]] = {}
        for doc, first, lens in conn.execute("SELECT doc, first, lens FROM passages"):
            for j in range(len(lens) // 4):
                owner[first + j] = (ids.get(doc, f"removed:{doc}"), j)
        out = {}
        for term, df, data in ps.postings_rows(conn):
            q, tf = ps.decode(data)
            assert df == len(q) and (np.diff(q) > 0).all()
            out[term] = sorted((*owner[int(a)], int(b)) for a, b in zip(q, tf, strict=True))
        return out
    finally:
        conn.close()


@pytest.mark.parametrize("top", [0, 1, 255, 256, 65_535, 65_536, 2**32, 2**40])
def test_encode_decode_round_trip(top):
    rng = np.random.default_rng(top)
    ids = np.unique(rng.integers(0, top + 1, 50))
    tfs = rng.integers(1, 300, len(ids))
    got_ids, got_tfs = ps.decode(ps.encode(ids, tfs))
    assert got_ids.tolist() == ids.tolist() and got_tfs.tolist() == tfs.tolist()


def test_encode_all_equals_encode_and_compresses_long_lists():
    rng = np.random.default_rng(3)
    lists = [np.unique(rng.integers(0, top, n)) for top, n in
             ((10, 3), (300, 200), (70_000, 20_000), (2**33, 5), (1_000_000, 400_000))]
    term = np.concatenate([np.full(len(x), i) for i, x in enumerate(lists)])
    q = np.concatenate(lists)
    tf = rng.integers(1, 4, len(q))
    tf[-1] = 70_000  # one wide tf
    blobs = ps.encode_all(term, q, tf, len(lists))
    at = 0
    for i, ids in enumerate(lists):
        want_tf = tf[at:at + len(ids)]
        at += len(ids)
        assert blobs[i] == ps.encode(ids, want_tf)
        got_ids, got_tf = ps.decode(blobs[i])
        assert got_ids.tolist() == ids.tolist() and got_tf.tolist() == want_tf.tolist()
    assert blobs[-1][0] & 0x80 and len(blobs[-1]) < 0.6 * 400_000 * 3  # zstd took it


def test_decode_from_many_threads_at_once():
    """The MCP server searches from worker threads: zstd frames decoded concurrently must each
    come back whole (one shared decompression context failed with "destination buffer is too
    small")."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(5)
    blobs = []
    for n in (30_000, 60_000, 90_000, 120_000):
        ids = np.unique(rng.integers(0, 4 * n, n))
        blobs.append((ids, ps.encode(ids, rng.integers(1, 4, len(ids)))))
    assert all(b[0] & 0x80 for _, b in blobs)

    def decode_all(i: int) -> bool:
        ids, blob = blobs[i % len(blobs)]
        return all(np.array_equal(ps.decode(blob)[0], ids) for _ in range(40))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(decode_all, range(32)))


def _cut(d: Document) -> tuple[ps.Shape, list[list[str]]]:
    from sieve_lite.documents import INTRO

    return ps.passage_words(index_text(d.title),
                            [("" if s.heading == INTRO else index_text(s.heading),
                              index_text(s.text)) for s in d.sections],
                            [index_text(f"{k}: {v}") for k, v in d.infobox],
                            [index_text(a) for a in d.authors])


def test_add_in_place_equals_fresh_build(tmp_path):
    docs = _docs()
    full = _canonical(_build(tmp_path / "full.db", docs))
    part = _build(tmp_path / "part.db", docs[:20])
    conn = store.connect(part, readonly=False)
    with conn:
        for i, d in enumerate(docs[20:], start=21):
            doc = Document.from_dict(d)
            # the document row only so the canonical form can name it (add's job elsewhere)
            conn.execute("INSERT INTO documents(rowid, id, title, n_words) VALUES (?, ?, ?, 0)",
                         (i, doc.id, doc.title))
            ps.add_document(conn, i, *_cut(doc))
    conn.close()
    assert _canonical(part) == full


def test_remove_in_place_equals_fresh_build(tmp_path):
    docs = _docs()
    gone = docs[7]
    path = _build(tmp_path / "all.db", docs)
    conn = store.connect(path, readonly=False)
    with conn:
        rowid = conn.execute("SELECT rowid FROM documents WHERE id = ?", (gone["id"],)
                             ).fetchone()[0]
        shape, words = ps.stored_passage_words(conn, rowid)
        assert (shape, words) == _cut(Document.from_dict(gone))
        ps.remove_document(conn, rowid, words)
        conn.execute("DELETE FROM documents WHERE rowid = ?", (rowid,))
    conn.close()
    assert _canonical(path) == _canonical(_build(tmp_path / "rest.db",
                                                 [d for d in docs if d is not gone]))


@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_postings_are_the_same_whatever_the_merge_ranges(tmp_path, chunk):
    """``PostingsWriter.write`` merges its spilled runs a range of words at a time; a range of
    one word is packed without the sort the others need. Tiny ranges (every common word then
    stands alone) and tiny runs must give the very rows one range and one run give."""
    docs = [Document.from_dict(d) for d in _docs()]
    batches = [ps.batch_postings([_cut(d)[1] for d in docs[i:i + 5]])
               for i in range(0, len(docs), 5)]

    def rows(run_pairs: int, merge: int) -> list[tuple]:
        conn = store.connect(tmp_path / f"p{run_pairs}-{merge}.db", readonly=False,
                             create=True)
        store.create(conn, None)
        w = ps.PostingsWriter(str(tmp_path), run_pairs=run_pairs)
        for b in batches:
            w.add(b)
        with conn:
            w.write(conn, chunk=merge)
        got = list(ps.postings_rows(conn))
        conn.close()
        return got

    want = rows(1 << 30, 1 << 30)
    assert len(want) > 1000 and want == rows(500, chunk)
    common = max(want, key=lambda r: r[1])
    assert common[1] > 50 and ps.decode(common[2])[0].size == common[1]


def test_long_lists_are_stored_in_parts_and_read_back_whole(tmp_path):
    conn = store.connect(tmp_path / "parts.db", readonly=False, create=True)
    store.create(conn, None)
    rng = np.random.default_rng(3)
    lists = {}
    for term, n in (("alpha", 3), ("beta", 40_000), ("betamax", 900), ("gamma", 120_000)):
        ids = np.cumsum(rng.integers(1, 70_000, n))
        lists[term] = (ids, rng.integers(1, 300, n))
    with conn:
        ps.insert_postings(conn, ((t, len(i), ps.encode(i, f)) for t, (i, f) in lists.items()))
    rows = conn.execute("SELECT term, part, length(data) FROM passage_postings").fetchall()
    parts = {t: [p for tt, p, _ in rows if tt == t] for t in lists}
    assert all(size <= ps.PART_BYTES for _, _, size in rows)
    assert len(parts["gamma"]) > 3 and all(p == list(range(len(p))) for p in parts.values())

    def same(got, want):
        return np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])

    for term, want in lists.items():
        assert same(ps.decode(ps.read_postings(conn, term)), want)
        assert same(ps.term_postings(conn, term, False, int(want[0][-1]) + 1), want)
    assert [(t, df) for t, df, _ in ps.postings_rows(conn)] == [
        (t, len(lists[t][0])) for t in sorted(lists)]
    assert sorted(ps.term_dfs(conn)) == [(t, len(lists[t][0])) for t in sorted(lists)]
    # a prefix joins every part of each word it reaches ("beta", "betamax")
    ids, tfs = ps.term_postings(conn, "bet", True, int(max(lists["beta"][0].max(),
                                                           lists["betamax"][0].max())) + 1)
    assert set(ids.tolist()) == set(lists["beta"][0].tolist()) | set(lists["betamax"][0].tolist())
    # a list rewritten shorter keeps no stale part; a removed word keeps no row
    with conn:
        ps.write_postings(conn, "gamma", 2, ps.encode(np.array([5, 9]), np.array([1, 1])))
        ps.write_postings(conn, "alpha", 0, None)
    assert conn.execute("SELECT part FROM passage_postings WHERE term = 'gamma'").fetchall() \
        == [(0,)]
    assert ps.read_postings(conn, "alpha") is None
    assert same(ps.term_postings(conn, "alpha", False, 1), (np.zeros(0), np.zeros(0)))
    # a list naming a passage past the collection's is refused, not indexed with
    with pytest.raises(DamagedCollection, match="postings of 'gamma' name passage 9"):
        ps.term_postings(conn, "gamma", False, 9)
    with pytest.raises(DamagedCollection, match="postings of 'gamma'"):
        ps.term_postings(conn, "gam", True, 9)
    conn.close()


def test_renumbering_refuses_a_list_past_the_passages(tmp_path):
    """Compacting passage numbers indexes its renumbering table with every list's numbers:
    a damaged list is refused in the same words as at search time, and nothing is kept."""
    from sieve_lite.store import writes

    path = _build(tmp_path / "c.db", _docs()[:5])
    conn = store.connect(path, readonly=False)
    term = conn.execute("SELECT term FROM passage_postings LIMIT 1").fetchone()[0]
    with conn:
        ps.write_postings(conn, term, 2, ps.encode(np.array([1, 10**9]), np.array([1, 1])))
    before = list(ps.postings_rows(conn))
    with pytest.raises(DamagedCollection, match=f"postings of '{term}' name passage 1000000000"):
        with conn:
            writes.compact_passage_numbers(conn, slack=-10**9)
    assert list(ps.postings_rows(conn)) == before
    conn.close()
