"""Checks of a collection file's contents against what a build writes.

``check_ranges`` runs on every open and costs a few index lookups: every rowid lies in the
range the document count allows, so no later join or lookup meets a document that is not
there. (``sieve-lite verify`` runs the slower, whole-file checks.)
"""

from __future__ import annotations

from collections.abc import Iterator

import apsw

from ..errors import DamagedCollection
from .layout import DOC_TABLES, POS_MASK, VALUE_TABLES, value_rowid
from .meta import Meta


def _ends(conn: apsw.Connection, table: str) -> tuple[int | None, int | None]:
    # ORDER BY rowid ... LIMIT 1 is an index lookup for plain and FTS5 tables alike (min/max
    # over an FTS5 table would scan it). Table names come from the layout module's lists.
    lo = conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid LIMIT 1").fetchone()
    hi = conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
    return (lo[0] if lo else None), (hi[0] if hi else None)


def check_ranges(conn: apsw.Connection, meta: Meta, vec_dim: int, path: str) -> None:
    """Refuse a file whose rowids or vector table disagree with its document count."""
    def damaged(what: str) -> DamagedCollection:
        return DamagedCollection(f"{path} is damaged: {what}; rebuild it or get a fresh copy")

    n = meta.documents
    if vec_dim != meta.embed_dim:
        raise damaged(f"its vector table has dimension {vec_dim} but its metadata says "
                      f"{meta.embed_dim}")
    count = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    if count != n:
        raise damaged(f"it has {count} document rows but its metadata says {n}")
    for table in DOC_TABLES:
        lo, hi = _ends(conn, table)
        if lo is not None and (lo < 1 or hi > n):
            raise damaged(f"{table} has rowids {lo}..{hi}, outside 1..{n}")
    first, last = value_rowid(1, 0), value_rowid(n, POS_MASK)
    for table in VALUE_TABLES:
        lo, hi = _ends(conn, table)
        if lo is not None and (lo < first or hi > last):
            raise damaged(f"{table} has rowids {lo}..{hi}, outside the {n} documents' "
                          f"{first}..{last}")
    # Passages (m002): one row per document, as many lengths as its shape has passages, and
    # numbers that stay near the live count (the ranker sizes arrays by the largest number;
    # in-place updates renumber long before this bound).
    count, bad, low, top, live = conn.execute(
        "SELECT count(*), total(length(lens) % 4 != 0 OR sections < 0 OR infobox NOT IN (0, 1) "
        "OR author NOT IN (0, 1) OR length(lens) / 4 != max(1, sections + infobox + author)), "
        "min(first), max(first + length(lens) / 4), total(length(lens) / 4) FROM passages"
    ).fetchone()
    if count != n or bad:
        raise damaged(f"its passages table has {count} rows for {n} documents"
                      + (f", {int(bad)} of them malformed" if bad else ""))
    if low is not None and (low < 0 or top > 2 * live + (1 << 16)):
        raise damaged(f"its passage numbers run {low}..{top} for {int(live)} passages")
    if vec_dim:
        # vec0 keeps its rowids in a plain shadow table; one vector per document.
        lo, hi, count = conn.execute(
            "SELECT min(rowid), max(rowid), count(*) FROM doc_vectors_rowids").fetchone()
        if (lo, hi, count) != (1, n, n):
            raise damaged(f"it has {count} vectors with rowids {lo}..{hi} for {n} documents")
        # Each chunk of vectors is one blob of size x dim float32s: a dimension edited in the
        # schema and the metadata alike still disagrees with the stored vectors.
        (bad,) = conn.execute(
            "SELECT count(*) FROM doc_vectors_chunks c LEFT JOIN doc_vectors_vector_chunks00 v "
            "ON v.rowid = c.chunk_id WHERE v.vectors IS NULL OR typeof(v.vectors) != 'blob' "
            "OR length(v.vectors) != c.size * ? * 4", (vec_dim,)).fetchone()
        if bad:
            raise damaged(f"{bad} chunk(s) of its vectors do not hold vectors of dimension "
                          f"{vec_dim}")


def check_collection(conn: apsw.Connection, path: str) -> tuple[Meta, int]:
    """Every open-time check of a collection file, in order: version, exact schema, typed
    metadata, ranges. Returns (its metadata, its vector dimension or 0)."""
    from .meta import read_meta
    from .schema import SCHEMA_VERSION, check_schema, check_version

    check_version(conn, path)
    dim = check_schema(conn, path)
    meta = read_meta(conn, path, SCHEMA_VERSION)
    check_ranges(conn, meta, dim, path)
    return meta, dim


def sqlite_integrity(conn: apsw.Connection, limit: int = 20) -> list[str]:
    """SQLite's ``PRAGMA integrity_check`` (b-trees, indexes, FTS5 indexes): ``["ok"]`` or at
    most ``limit`` problems."""
    return [str(r) for (r,) in conn.execute(f"PRAGMA integrity_check({int(limit)})")]


def vector_blobs(conn: apsw.Connection) -> Iterator[bytes]:
    """Every stored embedding, as its float32 bytes."""
    for (blob,) in conn.execute("SELECT embedding FROM doc_vectors"):
        yield blob
