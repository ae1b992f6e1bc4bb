"""The content hash of a collection: a hash of the set of its documents.

Each document is framed as JSON (id, title, sections, infobox, authors, date, url, then its
meta as stored) and hashed with SHA-256 (``document_digest``). The collection's hash is
LtHash-16 over those digests: each digest is stretched with SHAKE-256 to 1024 16-bit lanes and
the lanes of all documents are added modulo 2**16; ``content_hash`` is the SHA-256 of that sum
(hex) and meta ``content_state`` keeps the sum itself (hex). Two properties follow, both needed:

* the hash depends on which documents the collection holds, not on their order or rowids, so a
  collection changed in place (``sieve-lite add``/``remove``) has exactly the hash of a fresh
  build of the same documents;
* adding or removing a document adds or subtracts its lanes: an update costs the documents it
  touches, not the whole collection.

(LtHash is the lattice-based homomorphic set hash of Bellare-Micciancio, as used by Meta's
"Securing update propagation with homomorphic hashing", 2019; with 1024 lanes of 16 bits it is
collision resistant at about 200 bits.) ``sieve-lite verify`` recomputes the sum from the rows
(``content_state``), so a file whose text was changed after the build no longer matches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:  # numpy is imported where lanes are made: opening a collection (meta.py
    # checks the state's hash) must not pay for it
    import numpy as np

from . import reads

LANES = 1024
STATE_HEX = LANES * 4  # hex digits of a state: 1024 lanes of 2 bytes


def document_digest(doc_id: str, title: str, sections: Sequence[tuple[str, str]],
                    infobox: Sequence[tuple[str, str]], authors: Sequence[str],
                    date: str | None, url: str | None, meta_json: str | None,
                    pages: Sequence[tuple[int, int, int]] = ()) -> bytes:
    """The SHA-256 of one document in the fixed framing (``meta_json`` as stored; the page
    ranges of its sections, (pos, first, last), framed only when it has some, so documents
    without pages hash as before)."""
    fields: list = [doc_id, title, sections, infobox, authors, date, url]
    if pages:
        fields.append([list(p) for p in pages])
    framed = json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(f"{framed}\n{meta_json or ''}".encode()).digest()


def lanes(digest: bytes) -> np.ndarray:
    """A document digest stretched to the 1024 uint16 lanes it adds to the state."""
    import numpy as np

    return np.frombuffer(hashlib.shake_256(digest).digest(2 * LANES), dtype="<u2")


class ContentHash:
    """The running state: ``add``/``remove`` a document digest; ``hexdigest`` is the content
    hash, ``state_hex`` what meta ``content_state`` stores."""

    def __init__(self, state_hex: str | None = None) -> None:
        import numpy as np

        self.state = np.zeros(LANES, dtype="<u2") if state_hex is None else \
            np.frombuffer(bytes.fromhex(state_hex), dtype="<u2").copy()

    def update(self, digest: bytes) -> None:  # the name hashlib's objects use
        self.add(digest)

    def add(self, digest: bytes) -> None:
        self.state += lanes(digest)  # uint16 arithmetic wraps: addition modulo 2**16

    def remove(self, digest: bytes) -> None:
        self.state -= lanes(digest)

    def state_hex(self) -> str:
        return self.state.astype("<u2").tobytes().hex()

    def hexdigest(self) -> str:
        return hashlib.sha256(self.state.astype("<u2").tobytes()).hexdigest()


def hash_of_state(state_hex: str) -> str:
    """The content hash a stored ``content_state`` stands for."""
    return hashlib.sha256(bytes.fromhex(state_hex)).hexdigest()


def stored_digest(conn: apsw.Connection, rowid: int, limit: int) -> bytes:
    """The digest of a stored document, from its rows."""
    return document_digest(*reads.stored_fields(conn, rowid, limit))


def content_hash(conn: apsw.Connection, limit: int) -> ContentHash:
    """The content hash recomputed from the rows of an open collection (``limit``: the
    collection's bound on a section's size)."""
    h = ContentHash()
    for (rowid,) in conn.execute("SELECT rowid FROM documents ORDER BY rowid").fetchall():
        h.add(stored_digest(conn, rowid, limit))
    return h
