"""The manifest of a sharded collection: ``DIR/manifest.json``.

A sharded collection is a folder of ordinary collection files (``shard-000.db`` ...) plus this
manifest, written last by ``sharded_build`` and read first by ``ShardedCollection``. It holds:

* ``rule``: how a document id picks its shard, ``sha256-mod``: the first 8 bytes of the id's
  SHA-256 (UTF-8), big-endian, modulo the shard count. A fetch by id goes straight to one shard
  and ``verify`` checks that every document lies where the rule puts it (the check that stands
  in for a stored id -> shard map of 100M entries).
* per shard: its file name, SHA-256, size, document count and content hash;
* what every shard must share: schema version, tokenizer, embedding model and dimension;
* ``stats``: the global statistics every scorer needs, summed over the shards once at build
  time: documents and their total words (``bm25-doc``'s N and avgdl), passages and their total
  length (``bm25``'s N and avgdl), and ``df``: passages holding each word, per word.

The manifest is the root of trust, like ``collections/index.json``: each shard file must match
its checksum, and every shard's own metadata must agree with it (``check_shard``), or the open is
refused with one line (``DamagedCollection``, exit 3).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CollectionError, DamagedCollection

MANIFEST = "manifest.json"
FORMAT = "sieve-lite-shards/1"
RULE = "sha256-mod"
MAX_SHARDS = 4096


def shard_of(doc_id: str, shards: int) -> int:
    """The shard a document id belongs to (``RULE``): deterministic on every machine."""
    h = hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(h[:8], "big") % shards


def shard_name(i: int) -> str:
    return f"shard-{i:03d}.db"


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """The file's SHA-256, hex (hashlib releases the GIL: shards hash in parallel threads)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def is_sharded(path: str | Path) -> bool:
    """Whether ``path`` is a sharded collection: a folder holding a manifest."""
    p = Path(path)
    return p.is_dir() and (p / MANIFEST).is_file()


@dataclass
class ShardEntry:
    file: str
    sha256: str
    bytes: int
    documents: int
    content_hash: str


@dataclass
class GlobalTotals:
    """The collection-wide counts behind every BM25 statistic."""

    documents: int
    words: float  # total document words (bm25-doc's avgdl = words / documents)
    passages: int
    passage_words: float  # total passage length (bm25's avgdl = passage_words / passages)

    @property
    def avg_words(self) -> float:
        # exactly what a one-file build stores (repr of the same division, read back)
        return float(repr(self.words / self.documents if self.documents else 0.0))

    @property
    def avgdl(self) -> float:
        # exactly what PassageIndex computes over one file's passages
        return self.passage_words / self.passages if self.passages else 1.0


@dataclass
class Manifest:
    shards: list[ShardEntry]
    schema_version: int
    tokenizer: str
    embed_model: str
    embed_dim: int
    totals: GlobalTotals
    df: dict[str, int] = field(default_factory=dict)
    fields: tuple[str, ...] = ()  # the whole collection's (a field any shard holds)
    text_fields: tuple[str, ...] = ()
    rule: str = RULE
    name: str = ""
    source: str = ""
    build_time: str = ""

    def content_hash(self) -> str:
        """The collection's content hash: SHA-256 over the shards' own, in shard order (it
        names the documents and their split; a one-file build of them has another)."""
        return hashlib.sha256("\n".join(s.content_hash for s in self.shards).encode()
                              ).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "rule": self.rule, "name": self.name, "source": self.source,
                "build_time": self.build_time, "schema_version": self.schema_version,
                "tokenizer": self.tokenizer, "embed_model": self.embed_model,
                "embed_dim": self.embed_dim, "fields": list(self.fields),
                "text_fields": list(self.text_fields),
                "shards": [vars(s) for s in self.shards],
                "stats": {**vars(self.totals), "df": self.df}}

    def write(self, folder: Path) -> None:
        # sorted keys and one line per nothing: a compact, deterministic file
        (folder / MANIFEST).write_text(json.dumps(self.to_json(), sort_keys=True,
                                                  separators=(",", ":")), encoding="utf-8")


def _bad(path: Path, why: str) -> DamagedCollection:
    return DamagedCollection(f"{path / MANIFEST} is not a valid shard manifest: {why}; "
                             "rebuild the sharded collection")


def _int(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def load(folder: str | Path) -> Manifest:
    """Read and check ``folder/manifest.json`` (types and ranges; not the shards yet)."""
    path = Path(folder)
    try:
        raw = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CollectionError(f"{path} has no {MANIFEST}: not a sharded collection") from None
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise _bad(path, f"unreadable ({type(e).__name__})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise _bad(path, f"format is not {FORMAT}")
    if raw.get("rule") != RULE:
        raise _bad(path, f"unknown shard rule {raw.get('rule')!r}")
    shards = raw.get("shards")
    if not isinstance(shards, list) or not 1 <= len(shards) <= MAX_SHARDS:
        raise _bad(path, "no shard list")
    entries = []
    for i, s in enumerate(shards):
        if not isinstance(s, dict) or s.get("file") != shard_name(i) or \
                not isinstance(s.get("sha256"), str) or len(s["sha256"]) != 64 or \
                not _int(s.get("bytes"), 0, 1 << 50) or \
                not _int(s.get("documents"), 0, 1 << 40) or \
                not isinstance(s.get("content_hash"), str):
            raise _bad(path, f"shard entry {i} is malformed")
        entries.append(ShardEntry(s["file"], s["sha256"], s["bytes"], s["documents"],
                                  s["content_hash"]))
    st = raw.get("stats")
    if not isinstance(st, dict) or not isinstance(st.get("df"), dict):
        raise _bad(path, "no statistics")
    words, pwords = st.get("words"), st.get("passage_words")
    if not _int(st.get("documents"), 1, 1 << 40) or not _int(st.get("passages"), 1, 1 << 44) \
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                       and math.isfinite(x) and x >= 0 for x in (words, pwords)):
        raise _bad(path, "statistics out of range")
    if st["documents"] != sum(e.documents for e in entries):
        raise _bad(path, "the document total is not the shards' sum")
    df = st["df"]
    if not all(isinstance(k, str) and _int(v, 1, st["passages"]) for k, v in df.items()):
        raise _bad(path, "a document frequency is out of range")
    if not _int(raw.get("schema_version"), 1, 1000) or not _int(raw.get("embed_dim"), 0, 65536) \
            or not isinstance(raw.get("tokenizer"), str) \
            or not isinstance(raw.get("embed_model"), str):
        raise _bad(path, "schema, tokenizer or model is malformed")
    from ..bql.ast import ALL_FIELDS_ORDER

    fields, text_fields = raw.get("fields"), raw.get("text_fields")
    if not isinstance(fields, list) or not isinstance(text_fields, list) or \
            not set(text_fields) <= set(fields) <= set(ALL_FIELDS_ORDER):
        raise _bad(path, "the field list is malformed")
    return Manifest(entries, raw["schema_version"], raw["tokenizer"], raw["embed_model"],
                    raw["embed_dim"],
                    GlobalTotals(st["documents"], float(words), st["passages"], float(pwords)),
                    df, tuple(fields), tuple(text_fields), RULE, str(raw.get("name") or ""),
                    str(raw.get("source") or ""), str(raw.get("build_time") or ""))


def check_shard(folder: Path, man: Manifest, i: int, meta: Any, checksum: str | None) -> None:
    """Refuse shard ``i`` (its ``store.Meta`` read by a defensive open, and its SHA-256 when
    computed) when it is not the file the manifest names: tampered, or from another build."""
    e = man.shards[i]
    where = folder / e.file
    if checksum is not None and checksum != e.sha256:
        raise DamagedCollection(f"{where} does not match its checksum in the manifest "
                                "(tampered, or a shard of another build); rebuild or re-copy it")
    for what, have, want in (("schema version", meta.schema_version, man.schema_version),
                             ("tokenizer", meta.tokenizer, man.tokenizer),
                             ("embedding model", meta.embed_model, man.embed_model),
                             ("embedding dimension", meta.embed_dim, man.embed_dim),
                             ("document count", meta.documents, e.documents),
                             ("content hash", meta.content_hash, e.content_hash)):
        if have != want:
            raise DamagedCollection(f"{where} is a shard of another collection: its {what} "
                                    f"({have!r}) is not the manifest's ({want!r})")
