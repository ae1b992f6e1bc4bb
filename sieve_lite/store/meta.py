"""The ``meta`` table of a collection, parsed once into a typed, range-checked object.

A build writes ``meta``; every reader gets it back through ``read_meta``, which
refuses a value that no build writes (a document count that is not a positive integer, an
average that is NaN, a dimension that is not a number, ...) with ``DamagedCollection``, so no
later step has to wonder what a string from the file holds. Keys this version does not know
are kept, as text, in ``Meta.extra``.

Manifest keys (``name``, ``description``, ``version``, ``license``, ``source``) describe a
collection to people; ``sieve-lite info`` shows them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import apsw

from ..errors import DamagedCollection
from .content import STATE_HEX, hash_of_state
from .layout import SHIFT
from .packing import MAX_SECTION_BYTES

MAX_DOCUMENTS = (1 << (63 - SHIFT)) - 1   # a document rowid shifted by the layout fits 63 bits
MAX_EMBED_DIM = 8192                     # sqlite-vec's own ceiling for a float vector
MAX_TEXT = 64 << 10                      # characters in any one text value of meta
_HASH = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_STATE = re.compile(f"[0-9a-f]{{{STATE_HEX}}}")
MANIFEST_KEYS = ("name", "description", "version", "license", "source")


@dataclass(frozen=True)
class Meta:
    """What ``meta`` says about a collection, typed. Built by ``read_meta`` or by a build."""

    schema_version: int
    tokenizer: str
    embed_model: str  # "" without embeddings
    embed_dim: int    # 0 without embeddings
    documents: int
    sections: int
    avg_words: float
    build_time: str
    content_hash: str
    has_section: bool
    has_infobox: bool
    has_author: bool
    has_date: bool
    # The size in bytes of the longest section text (UTF-8); unpacking never inflates more.
    # Files built before the key existed get the global ceiling.
    max_section_bytes: int = MAX_SECTION_BYTES
    # The content hash's running state (store/content.py), which in-place updates need;
    # files built before it existed can be searched but not updated.
    content_state: str = ""
    update_time: str = ""  # the last in-place update (sieve-lite add/remove), if any
    sieve_lite_version: str = ""
    name: str = ""
    description: str = ""
    version: str = ""
    license: str = ""
    source: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        """A value by its meta key, typed when this version knows the key (mapping-style
        reads, e.g. ``coll.meta.get("source", "")``)."""
        if key in _FIELDS:
            return getattr(self, key)
        return self.extra.get(key, default)

    def manifest(self) -> dict[str, Any]:
        """The human description: name, description, version, license, source."""
        return {k: getattr(self, k) or None for k in MANIFEST_KEYS}


_FIELDS = frozenset(f.name for f in fields(Meta)) - {"extra"}


def _int(key: str, text: str, lo: int, hi: int) -> int:
    if not re.fullmatch(r"[0-9]{1,19}", text):
        raise ValueError(f"{key} is {text[:40]!r}, not a whole number")
    n = int(text)
    if not lo <= n <= hi:
        raise ValueError(f"{key} is {n}, outside {lo}..{hi}")
    return n


def _float(key: str, text: str, lo: float, hi: float) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{key} is {text[:40]!r}, not a number") from None
    if not math.isfinite(x) or not lo <= x <= hi:
        raise ValueError(f"{key} is {text[:40]!r}, outside {lo:g}..{hi:g}")
    return x


def _flag(key: str, text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(f"{key} is {text[:40]!r}, not 0 or 1")
    return text == "1"


def parse_meta(pairs: Iterable[tuple[Any, Any]], schema_version: int) -> Meta:
    """Typed ``Meta`` from ``(key, value)`` rows; ``ValueError`` names the first bad value."""
    raw: dict[str, str] = {}
    for key, value in pairs:
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f"meta row {str(key)[:40]!r} is not text")
        if len(value) > MAX_TEXT:
            raise ValueError(f"meta value {key[:40]!r} is over {MAX_TEXT:,} characters")
        raw[key] = value
    required = ("schema_version", "tokenizer", "embed_model", "embed_dim", "documents",
                "sections", "avg_words", "build_time", "content_hash", "has_section",
                "has_infobox", "has_author", "has_date")
    missing = [k for k in required if k not in raw]
    if missing:
        raise ValueError(f"meta lacks {', '.join(missing)}")
    documents = _int("documents", raw["documents"], 1, MAX_DOCUMENTS)
    version = _int("schema_version", raw["schema_version"], 1, 1 << 31)
    if version != schema_version:
        raise ValueError(f"schema_version is {version} but the file says {schema_version}")
    embed_dim = _int("embed_dim", raw["embed_dim"], 0, MAX_EMBED_DIM)
    if bool(embed_dim) != bool(raw["embed_model"]):
        raise ValueError("embed_model and embed_dim disagree about embeddings")
    if not _HASH.fullmatch(raw["content_hash"]):
        raise ValueError("content_hash is not 64 hex digits")
    if not _TIME.fullmatch(raw["build_time"]):
        raise ValueError("build_time is not YYYY-MM-DDTHH:MM:SSZ")
    if raw.get("update_time") and not _TIME.fullmatch(raw["update_time"]):
        raise ValueError("update_time is not YYYY-MM-DDTHH:MM:SSZ")
    state = raw.get("content_state", "")
    if state:
        if not _STATE.fullmatch(state):
            raise ValueError(f"content_state is not {STATE_HEX} hex digits")
        if hash_of_state(state) != raw["content_hash"]:
            raise ValueError("content_hash does not match content_state")
    return Meta(
        schema_version=version,
        tokenizer=raw["tokenizer"],
        embed_model=raw["embed_model"],
        embed_dim=embed_dim,
        documents=documents,
        sections=_int("sections", raw["sections"], 0, documents << SHIFT),
        avg_words=_float("avg_words", raw["avg_words"], 0.0, 1e12),
        build_time=raw["build_time"],
        content_hash=raw["content_hash"],
        has_section=_flag("has_section", raw["has_section"]),
        has_infobox=_flag("has_infobox", raw["has_infobox"]),
        has_author=_flag("has_author", raw["has_author"]),
        has_date=_flag("has_date", raw["has_date"]),
        max_section_bytes=_int("max_section_bytes",
                               raw.get("max_section_bytes", str(MAX_SECTION_BYTES)), 0,
                               MAX_SECTION_BYTES),
        content_state=state,
        update_time=raw.get("update_time", ""),
        sieve_lite_version=raw.get("sieve_lite_version", ""),
        name=raw.get("name", ""),
        description=raw.get("description", ""),
        version=raw.get("version", ""),
        license=raw.get("license", ""),
        source=raw.get("source", ""),
        extra={k: v for k, v in raw.items() if k not in _FIELDS},
    )


def read_meta(conn: apsw.Connection, path: str, schema_version: int) -> Meta:
    """The file's ``meta`` as ``Meta``; ``DamagedCollection`` for any value out of range.
    (Call it after the schema check: only then is ``meta`` known to be the plain table.)"""
    try:
        return parse_meta(conn.execute("SELECT key, value FROM meta"), schema_version)
    except ValueError as e:
        raise DamagedCollection(f"{path} is damaged: {e}; rebuild it or get a fresh "
                                "copy") from None
