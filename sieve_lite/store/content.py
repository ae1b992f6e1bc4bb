"""The content hash of a collection: SHA-256 over its documents, in document order.

Each document is framed as JSON (id, title, sections, infobox, authors, date, url, then its
meta as stored) and hashed on its own; the collection's hash is the SHA-256 of those digests in
rowid order. A build computes it from the documents it writes (``document_digest``);
``sieve-lite verify`` computes it again from the rows (``content_hash``), so a file whose text
was changed after the build no longer matches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import apsw

from . import reads
from .packing import unpack


def document_digest(doc_id: str, title: str, sections: Sequence[tuple[str, str]],
                    infobox: Sequence[tuple[str, str]], authors: Sequence[str],
                    date: str | None, url: str | None, meta_json: str | None) -> bytes:
    """The SHA-256 of one document in the fixed framing (``meta_json`` as stored)."""
    framed = json.dumps([doc_id, title, sections, infobox, authors, date, url],
                        ensure_ascii=False)
    return hashlib.sha256(f"{framed}\n{meta_json or ''}".encode()).digest()


def content_hash(conn: apsw.Connection, limit: int) -> str:
    """The content hash recomputed from the rows of an open collection (``limit``: the
    collection's bound on a section's size)."""
    hasher = hashlib.sha256()
    docs = conn.execute("SELECT rowid FROM documents ORDER BY rowid").fetchall()
    for (rowid,) in docs:
        _rowid, doc_id, title = reads.document_row_by_rowid(conn, rowid)
        date, url, meta = reads.document_details(conn, rowid)
        sections = [(h, unpack(t, limit)) for h, t in reads.sections(conn, rowid)]
        hasher.update(document_digest(doc_id, title, sections, reads.infobox(conn, rowid),
                                      reads.authors(conn, rowid), date, url, meta))
    return hasher.hexdigest()
