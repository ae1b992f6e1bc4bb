"""Passages and their BM25 postings (schema m002): writing at build time, reading at query time.

Everything that knows how passages are cut, numbered and packed lives here, so the build, an
in-place add or remove, and the ranker agree by construction.

Cutting (``passage_words``): a document's passages are its sections (title + heading + text
words), then its infobox (title + every key and value), then its author list (title + every
name); with none of these, its title alone. Words are BQL words: the normalised strings the
FTS tables index (``words.index_text``), split on spaces.

Packing (``encode``/``decode``): a term's postings are its passage numbers, ascending, and its
term frequency in each. Numbers are stored as gaps (the first as is) in the narrowest unsigned
type that holds the largest gap, tfs likewise; one header byte names the two types. Lists of
512 bytes or more are zstd-compressed (level 3) when that saves 10%: the narrow types leave
runs of zero bytes and tfs are mostly 1, so long lists shrink by about half, and zstd
decompresses at GB/s. Decoding is then two ``np.frombuffer`` and a ``cumsum``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

import apsw
import numpy as np

from ..errors import DamagedCollection

_TYPES = (np.dtype("<u1"), np.dtype("<u2"), np.dtype("<u4"), np.dtype("<u8"))
_ZSTD = 0x80  # header bit: the body is one zstd frame
ZSTD_AFTER = 512  # bytes: shorter postings are stored plain (a frame costs more than it saves)
ZSTD_LEVEL = 3
# One zstd context per thread: a ZstdCompressor/ZstdDecompressor must not be used by two
# threads at once (the MCP server searches from worker threads).
_z = threading.local()


def _narrowest(top: int) -> int:
    for i, t in enumerate(_TYPES):
        if top <= np.iinfo(t).max:
            return i
    raise ValueError("value too large for postings")  # pragma: no cover - > 2**64


def _compress(body: bytes) -> bytes | None:
    zc = getattr(_z, "c", None)
    if zc is None:
        import zstandard

        zc = _z.c = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    z = zc.compress(body)
    return z if len(z) < 0.9 * len(body) else None


def _pack(gi: int, ti: int, gaps: bytes, tfs: bytes) -> bytes:
    body = gaps + tfs
    if len(body) >= ZSTD_AFTER:
        z = _compress(body)
        if z is not None:
            return bytes([_ZSTD | gi << 4 | ti]) + z
    return bytes([gi << 4 | ti]) + body


def encode(ids: np.ndarray, tfs: np.ndarray) -> bytes:
    """Pack ascending passage numbers and their term frequencies (equal lengths, >= 1)."""
    ids = np.asarray(ids, dtype=np.int64)
    gaps = np.diff(ids, prepend=0)
    gi = _narrowest(int(gaps.max()) if len(gaps) else 0)
    ti = _narrowest(int(tfs.max()) if len(tfs) else 0)
    return _pack(gi, ti, gaps.astype(_TYPES[gi]).tobytes(),
                 np.asarray(tfs).astype(_TYPES[ti]).tobytes())


def decode(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(passage numbers int64, tfs) of a packed postings blob; the tfs keep their stored
    unsigned type (read-only; arithmetic with floats promotes them exactly)."""
    head = data[0]
    gt, tt = _TYPES[head >> 4 & 7], _TYPES[head & 15]
    body: bytes | memoryview = memoryview(data)[1:]
    if head & _ZSTD:
        zd = getattr(_z, "d", None)
        if zd is None:
            import zstandard

            zd = _z.d = zstandard.ZstdDecompressor()
        # a frame written by _pack records its size; cap it all the same (a damaged file)
        body = zd.decompress(body, max_output_size=MAX_POSTINGS_BYTES)
    n = len(body) // (gt.itemsize + tt.itemsize)
    gaps = np.frombuffer(body, dtype=gt, count=n)
    tfs = np.frombuffer(body, dtype=tt, count=n, offset=n * gt.itemsize)
    return np.cumsum(gaps, dtype=np.int64), tfs


MAX_POSTINGS_BYTES = 1 << 31

# ---------------------------------------------------------------------------------- storage
# A packed list is stored as rows (term, part) of at most PART_BYTES each, joined in part order
# when read (schema v5). One WITHOUT ROWID row keeps about 2 KB in its 8 KiB b-tree page and
# puts the rest in an overflow chain whose last page is mostly empty: as one row per word,
# 15 of the table's 76 MB were such empty space (100k documents); in parts, none is.
PART_BYTES = 1900

_READ_ONE = "SELECT data FROM passage_postings WHERE term = ? ORDER BY part"
_INSERT = "INSERT INTO passage_postings(term, part, df, data) VALUES (?, ?, ?, ?)"


def _rows(term: str, df: int, blob: bytes) -> list[tuple[str, int, int, bytes]]:
    """The rows of one word's packed list."""
    return [(term, i, df, blob[at:at + PART_BYTES])
            for i, at in enumerate(range(0, len(blob), PART_BYTES))]


def read_postings(conn: apsw.Connection, term: str) -> bytes | None:
    """A word's packed list (``decode`` reads it), or None when no passage holds it."""
    parts = [d for (d,) in conn.execute(_READ_ONE, (term,))]
    return b"".join(parts) if parts else None


def write_postings(conn: apsw.Connection, term: str, df: int, blob: bytes | None) -> None:
    """Replace a word's packed list (None: remove the word)."""
    conn.execute("DELETE FROM passage_postings WHERE term = ?", (term,))
    if blob is not None:
        conn.executemany(_INSERT, _rows(term, df, blob))


def insert_postings(conn: apsw.Connection, lists: Iterable[tuple[str, int, bytes]]) -> None:
    """Insert (term, df, packed list) of words not stored yet, in term order."""
    conn.executemany(_INSERT, (r for t, df, b in lists for r in _rows(t, df, b)))


def postings_rows(conn: apsw.Connection, lo: str | None = None,
                  hi: str | None = None) -> Iterable[tuple[str, int, bytes]]:
    """(term, df, packed list) of every word in term order, or of those in [lo, hi)."""
    if lo is None:
        cur = conn.execute("SELECT term, df, data FROM passage_postings ORDER BY term, part")
    else:
        cur = conn.execute("SELECT term, df, data FROM passage_postings WHERE term >= ? AND "
                           "term < ? ORDER BY term, part", (lo, hi))
    for term, group in groupby(cur, key=itemgetter(0)):
        rows = list(group)
        yield term, rows[0][1], b"".join([r[2] for r in rows])


def encode_all(term_of: np.ndarray, q: np.ndarray, tf: np.ndarray,
               n_terms: int) -> list[bytes]:
    """``encode`` of every term at once: (term, passage, tf) triples sorted by term, then
    passage. Vectorised: one pass computes every gap and every term's widest types; each term
    is then a slice of one of at most 16 typed buffers."""
    bounds = np.searchsorted(term_of, np.arange(n_terms + 1))
    starts = bounds[:-1]
    present = starts < bounds[1:]
    gaps = np.diff(q, prepend=0)
    gaps[starts[present]] = q[starts[present]]  # each list starts from passage 0
    gmax = np.zeros(n_terms, dtype=np.int64)
    tmax = np.zeros(n_terms, dtype=np.int64)
    gmax[present] = np.maximum.reduceat(gaps, starts[present])
    tmax[present] = np.maximum.reduceat(tf, starts[present])
    gcode = np.searchsorted([0xFF, 0xFFFF, 0xFFFFFFFF], gmax)
    tcode = np.searchsorted([0xFF, 0xFFFF, 0xFFFFFFFF], tmax)
    g_bufs = [gaps.astype(t).tobytes() for t in _TYPES]
    t_bufs = [tf.astype(t).tobytes() for t in _TYPES]
    out = []
    for i in range(n_terms):
        lo, hi, gi, ti = int(bounds[i]), int(bounds[i + 1]), int(gcode[i]), int(tcode[i])
        gs, ts = _TYPES[gi].itemsize, _TYPES[ti].itemsize
        out.append(_pack(gi, ti, g_bufs[gi][lo * gs:hi * gs], t_bufs[ti][lo * ts:hi * ts]))
    return out


# ----------------------------------------------------------------------------------- cutting
@dataclass(frozen=True)
class Shape:
    """Which passages a document has: ``sections`` section passages, then optionally the
    infobox and the author list; ``title_only`` when it has none of these."""

    sections: int
    infobox: bool
    author: bool

    @property
    def count(self) -> int:
        return max(1, self.sections + self.infobox + self.author)

    def kind(self, j: int) -> tuple[str, int]:
        """What passage ``j`` is: ("section", pos), ("infobox", 0), ("author", 0) or
        ("title", 0)."""
        if j < self.sections:
            return "section", j
        j -= self.sections
        if self.infobox:
            if j == 0:
                return "infobox", 0
            j -= 1
        if self.author and j == 0:
            return "author", 0
        return "title", 0


def passage_words(title: str, sections: Sequence[tuple[str, str]], infobox: Sequence[str],
                  authors: Sequence[str]) -> tuple[Shape, list[list[str]]]:
    """A document's passages as word lists. Arguments are *indexed* text (``index_text``):
    the title, (heading, text) per section ('' for the unindexed ``(intro)`` label), each
    infobox entry as ``key: value``, each author."""
    t = title.split()
    out = [t + h.split() + b.split() for h, b in sections]
    ib = [w for e in infobox for w in e.split()]
    au = [w for a in authors for w in a.split()]
    if infobox:
        out.append(t + ib)
    if authors:
        out.append(t + au)
    if not out:
        out.append(list(t))
    return Shape(len(sections), bool(infobox), bool(authors)), out


@dataclass
class BatchPostings:
    """One batch of documents' postings with batch-local numbers (cheap to pickle from a
    worker): ``terms[tid[i]]`` occurs ``tf[i]`` times in the batch's passage ``lp[i]``."""

    terms: list[str]
    tid: np.ndarray
    lp: np.ndarray
    tf: np.ndarray
    passages: int


def batch_postings(docs: Iterable[list[list[str]]]) -> BatchPostings:
    """Count every word of every passage of a batch of documents (passage word lists)."""
    local: dict[str, int] = {}
    ids: list[int] = []
    owner: list[int] = []
    p = 0
    for passages in docs:
        for ws in passages:
            ids.extend([local.setdefault(w, len(local)) for w in ws])
            owner.extend([p] * len(ws))
            p += 1
    if not ids:
        empty = np.zeros(0, dtype=np.int64)
        return BatchPostings([], empty, empty, empty, p)
    v = len(local)
    key = np.asarray(owner, dtype=np.int64) * v + np.asarray(ids, dtype=np.int64)
    uniq, counts = np.unique(key, return_counts=True)  # sorted: passage, then term
    return BatchPostings(list(local), (uniq % v).astype(np.int32), (uniq // v).astype(np.int32),
                         counts.astype(np.int32), p)


RUN_PAIRS = 4 << 20  # (term, passage) pairs a writer holds before it spills a sorted run
MERGE_PAIRS = 1 << 20  # pairs merged and written at a time (a list is never split)


class PostingsWriter:
    """Collects batches in passage order and writes ``passage_postings`` at the end of a build,
    in bounded memory: pairs are held until ``run_pairs`` of them, then sorted by (word,
    passage) and spilled as one *run* to an anonymous temporary file (unlinked at once, so a
    killed build leaves nothing). ``write`` merges the runs one range of words at a time.
    Batches arrive in passage order, so every passage of run i comes before run i + 1's: a
    word's list is its slices of the runs concatenated in run order (no heap, no re-sort).

    Memory: the vocabulary (word -> number: linear in the distinct words, not in the
    documents), ~16 bytes per pair of the run being filled, and one merge range (under
    ``MERGE_PAIRS`` pairs, or one word's list alone: the longest grows with the collection,
    about 40 bytes a pair while it is packed).
    """

    def __init__(self, spill_dir: str | None = None, run_pairs: int = RUN_PAIRS) -> None:
        self.vocab: dict[str, int] = {}
        self.terms: list[str] = []
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pending = 0
        self.next_passage = 0
        self.run_pairs = run_pairs
        self.spill_dir = spill_dir
        self._file: Any = None
        self._end = 0
        # per run: (its word numbers in word order, pairs per word, offsets of q and tf)
        self.runs: list[tuple[np.ndarray, np.ndarray, int, int]] = []

    def add(self, batch: BatchPostings) -> int:
        """Add a batch; returns the global number of its first passage."""
        first = self.next_passage
        if len(batch.tid):
            vocab, terms = self.vocab, self.terms
            gid = np.empty(len(batch.terms), dtype=np.int32)
            for i, t in enumerate(batch.terms):
                g = vocab.get(t)
                if g is None:
                    g = vocab[t] = len(terms)
                    terms.append(t)
                gid[i] = g
            self.parts.append((gid[batch.tid], batch.lp.astype(np.int64) + first,
                               batch.tf.astype(np.int32)))
            self.pending += len(batch.tid)
            if self.pending >= self.run_pairs:
                self._spill()
        self.next_passage += batch.passages
        return first

    def _spill(self) -> None:
        """Sort the pairs held by (word, passage) and append them to the run file."""
        if not self.parts:
            return
        import tempfile

        gid = np.concatenate([p[0] for p in self.parts])
        q = np.concatenate([p[1] for p in self.parts])
        tf = np.concatenate([p[2] for p in self.parts])
        self.parts, self.pending = [], 0
        per_gid = np.bincount(gid, minlength=len(self.terms))
        present = np.flatnonzero(per_gid)
        words = [self.terms[g] for g in present.tolist()]
        ug = present[sorted(range(len(words)), key=words.__getitem__)].astype(np.int32)
        del words
        rank = np.zeros(len(self.terms), dtype=np.int32)
        rank[ug] = np.arange(len(ug), dtype=np.int32)
        order = np.argsort(rank[gid], kind="stable")  # passage order kept within a word
        del gid, rank
        q, tf = q[order], tf[order]
        del order
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix=".sieve-postings-", dir=self.spill_dir)
        f = self._file
        f.seek(self._end)
        f.write(q.data)
        f.write(tf.data)
        self.runs.append((ug, per_gid[ug], self._end, self._end + q.nbytes))
        self._end += q.nbytes + tf.nbytes

    def _read(self, at: int, dtype: type, lo: int, hi: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize
        self._file.seek(at + lo * size)
        return np.fromfile(self._file, dtype=dtype, count=hi - lo)

    def write(self, conn: apsw.Connection, chunk: int = MERGE_PAIRS) -> None:
        """Merge the runs and insert every word's postings, in word order (append-only
        b-tree pages)."""
        self._spill()
        try:
            if not self.runs:
                return
            n = len(self.terms)
            by_word = sorted(range(n), key=self.terms.__getitem__)
            words = [self.terms[g] for g in by_word]
            self.vocab, self.terms = {}, []
            rank = np.empty(n, dtype=np.int64)
            rank[np.asarray(by_word, dtype=np.int64)] = np.arange(n)
            del by_word
            # per run: global rank of each of its words (ascending) and where its pairs start
            runs = [(rank[ug], np.concatenate(([0], np.cumsum(cnt))), q_at, tf_at)
                    for ug, cnt, q_at, tf_at in self.runs]
            del rank
            # Word ranges of under ``chunk`` pairs each (a word's list is never split), and
            # the word a cut falls in alone: a common word's list may be many chunks long.
            pairs = np.zeros(n, dtype=np.int64)
            for (ranks, _, _, _), (_, cnt, _, _) in zip(runs, self.runs, strict=True):
                pairs[ranks] += cnt
            cuts = np.searchsorted(np.cumsum(pairs), np.arange(chunk, int(pairs.sum()), chunk),
                                   side="right").tolist()
            bounds = sorted({0, n, *cuts, *(c + 1 for c in cuts if c + 1 < n)})
            del pairs, cuts
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                keys, qs, tfs = [], [], []
                for ranks, cum, q_at, tf_at in runs:
                    lo, hi = np.searchsorted(ranks, [a, b])
                    if lo == hi:
                        continue
                    e0, e1 = int(cum[lo]), int(cum[hi])
                    if b - a > 1:
                        keys.append(np.repeat(ranks[lo:hi] - a, np.diff(cum[lo:hi + 1])))
                    qs.append(self._read(q_at, np.int64, e0, e1))
                    tfs.append(self._read(tf_at, np.int32, e0, e1))
                if b - a == 1:
                    # One word alone: a common word's list grows with the collection (6.4 M
                    # pairs at 1 M documents), and its runs are already in passage order, so
                    # it is packed as it is (the same bytes, without a key, a sort and copies).
                    q = np.concatenate(qs)
                    del qs
                    tf = np.concatenate(tfs)
                    del tfs
                    insert_postings(conn, [(words[a], len(q), encode(q, tf))])
                    continue
                key = np.concatenate(keys)
                order = np.argsort(key, kind="stable")  # runs in passage order: kept
                key, q = key[order], np.concatenate(qs)[order]
                tf = np.concatenate(tfs)[order].astype(np.int64)
                blobs = encode_all(key, q, tf, b - a)
                dfs = np.diff(np.searchsorted(key, np.arange(b - a + 1))).tolist()
                insert_postings(conn, zip(words[a:b], dfs, blobs, strict=True))
        finally:
            self.close()

    def close(self) -> None:
        """Drop the runs (and their file)."""
        self.runs, self.parts = [], []
        if self._file is not None:
            self._file.close()
            self._file = None


def write_passages(conn: apsw.Connection,
                   rows: Iterable[tuple[int, int, Shape, Sequence[int]]]) -> None:
    """Write ``passages`` rows: (doc rowid, first passage number, shape, passage lengths)."""
    conn.executemany(
        "INSERT INTO passages(doc, first, sections, infobox, author, lens) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        ((d, f, s.sections, int(s.infobox), int(s.author),
          np.asarray(lens, dtype="<u4").tobytes()) for d, f, s, lens in rows))


# ----------------------------------------------------------------------------------- reading
class PassageIndex:
    """A collection's passages as arrays, read once per open collection (~0.1 s per 100k
    documents): ``doc[q]`` and ``length[q]`` per passage number ``q`` (0 for numbers of removed
    documents), ``first[d]``/``count[d]`` per document rowid, N and avgdl."""

    def __init__(self, conn: apsw.Connection) -> None:
        rows = conn.execute("SELECT doc, first, sections, infobox, author, lens FROM passages "
                            "ORDER BY doc").fetchall()
        top = rows[-1][0] if rows else 0
        docs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        firsts = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        lens = np.frombuffer(b"".join(r[5] for r in rows), dtype="<u4").astype(np.float64)
        counts = np.fromiter((len(r[5]) // 4 for r in rows), dtype=np.int64, count=len(rows))
        size = int((firsts + counts).max()) if rows else 0
        # passage number of every stored length: first of its document + its index there
        starts = np.repeat(firsts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        q = starts + np.arange(len(lens))
        self.doc = np.zeros(size, dtype=np.int64)
        self.doc[q] = np.repeat(docs, counts)
        self.length = np.zeros(size, dtype=np.float64)
        self.length[q] = lens
        self.first = np.zeros(top + 1, dtype=np.int64)
        self.first[docs] = firsts
        self.count = np.zeros(top + 1, dtype=np.int64)
        self.count[docs] = counts
        self._shape = np.zeros((top + 1, 3), dtype=np.int64)  # sections, infobox, author
        self._shape[docs] = [(r[2], r[3], r[4]) for r in rows]
        self.n = len(lens)
        self.avgdl = float(lens.sum()) / self.n if self.n else 1.0
        self.norm: np.ndarray | None = None  # BM25 length norm per passage (set by the ranker)

    def shape(self, doc: int) -> Shape:
        """Which passages document ``doc`` has."""
        if not 0 <= doc < len(self._shape):
            return Shape(0, False, False)
        n, ib, au = self._shape[doc].tolist()  # Python ints at once (cards ask per hit)
        return Shape(n, bool(ib), bool(au))


def decode_within(data: bytes, size: int, word: str) -> tuple[np.ndarray, np.ndarray]:
    """``decode(data)`` when every passage number it holds is below ``size`` (the arrays the
    caller indexes with them); a damaged or crafted list is ``DamagedCollection``."""
    ids, tfs = decode(data)
    if len(ids) and (int(ids[0]) < 0 or int(ids[-1]) >= size):
        bad = int(ids[0]) if int(ids[0]) < 0 else int(ids[-1])
        raise DamagedCollection(f"the postings of {word!r} name passage {bad}, past the "
                                f"collection's {size}; rebuild it or get a fresh copy")
    return ids, tfs


def term_postings(conn: apsw.Connection, word: str,
                  prefix: bool, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(passage numbers, tfs) of a word, or of a prefix as one unit: tf = the passage's words
    starting with the stem (summed over every expansion), numbers = passages holding any.
    ``size`` is the number of passage numbers (for the dense merge of many expansions)."""
    if not prefix:
        data = read_postings(conn, word)
        if data is None:
            return np.zeros(0, np.int64), np.zeros(0)
        return decode_within(data, size, word)
    # Every word starting with the stem sorts in [stem, stem with its last character + 1).
    hi = word[:-1] + chr(ord(word[-1]) + 1)
    parts = [decode_within(d, size, t) for t, _df, d in postings_rows(conn, word, hi)]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0)
    if len(parts) == 1:
        return parts[0]
    acc = np.zeros(size, dtype=np.float64)
    for ids, tfs in parts:
        acc[ids] += tfs  # numbers are unique within one term
    ids = np.flatnonzero(acc)
    return ids, acc[ids]


# ------------------------------------------------------------------------- add and remove
def add_document(conn: apsw.Connection, doc: int, shape: Shape,
                 passages: Sequence[Sequence[str]]) -> None:
    """Add one document's passages (``passage_words``) to a built collection, inside the
    caller's transaction: its passages take the next free numbers, so every postings list
    stays ascending; df and the derived N and avgdl stay exact. ``doc`` must be a new rowid."""
    first = conn.execute("SELECT coalesce(max(first + length(lens) / 4), 0) FROM passages"
                         ).fetchone()[0]
    write_passages(conn, [(doc, first, shape, [len(p) for p in passages])])
    counts: dict[str, list[tuple[int, int]]] = {}
    for j, ws in enumerate(passages):
        for w, n in Counter(ws).items():
            counts.setdefault(w, []).append((first + j, n))
    for term, pairs in counts.items():
        new_ids = np.array([q for q, _ in pairs], dtype=np.int64)
        new_tfs = np.array([n for _, n in pairs], dtype=np.int64)
        data = read_postings(conn, term)
        if data is not None:
            ids, tfs = decode(data)
            new_ids = np.concatenate((ids, new_ids))
            new_tfs = np.concatenate((tfs.astype(np.int64), new_tfs))
        write_postings(conn, term, len(new_ids), encode(new_ids, new_tfs))


def remove_document(conn: apsw.Connection, doc: int,
                    passages: Sequence[Sequence[str]]) -> None:
    """Remove one document's passages (the same ``passage_words`` it was added with, e.g.
    re-cut from its stored rows) inside the caller's transaction. Its passage numbers are
    not reused."""
    row = conn.execute("SELECT first, lens FROM passages WHERE doc = ?", (doc,)).fetchone()
    if row is None:
        return
    lo, hi = row[0], row[0] + len(row[1]) // 4
    for term in sorted({w for ws in passages for w in ws}):
        got = read_postings(conn, term)
        if got is None:
            continue
        ids, tfs = decode(got)
        keep = (ids < lo) | (ids >= hi)
        if keep.all():
            continue
        if not keep.any():
            write_postings(conn, term, 0, None)
        else:
            write_postings(conn, term, int(keep.sum()),
                           encode(ids[keep], tfs[keep].astype(np.int64)))
    conn.execute("DELETE FROM passages WHERE doc = ?", (doc,))


def stored_passage_words(conn: apsw.Connection, doc: int) -> tuple[Shape, list[list[str]]]:
    """A stored document's passages re-cut from its rows (what ``remove_document`` needs)."""
    from ..documents import INTRO
    from ..words import index_text
    from .layout import doc_span
    from .packing import unpack

    span = doc_span(doc)
    title = conn.execute("SELECT title FROM documents WHERE rowid = ?", (doc,)).fetchone()
    secs = [("" if h == INTRO else index_text(h), index_text(unpack(t))) for h, t in
            conn.execute("SELECT heading, text FROM sections WHERE rowid BETWEEN ? AND ? "
                         "ORDER BY rowid", span)]
    ib = [index_text(f"{k}: {v}") for k, v in conn.execute(
        "SELECT key, value FROM infobox WHERE rowid BETWEEN ? AND ? ORDER BY rowid", span)]
    au = [index_text(a) for (a,) in conn.execute(
        "SELECT name FROM authors WHERE rowid BETWEEN ? AND ? ORDER BY rowid", span)]
    return passage_words(index_text(title[0]) if title else "", secs, ib, au)


def term_dfs(conn: apsw.Connection) -> Iterable[tuple[str, int]]:
    """(term, df) of every word in ``passage_postings``: a sharded build sums them into the
    manifest's global df table."""
    return conn.execute("SELECT term, df FROM passage_postings WHERE part = 0")
