"""Section texts are stored compressed when that pays (long texts), plain otherwise.

Schema v4: a build trains one zstd dictionary on a sample of its section texts (the first
``SAMPLE_BYTES`` of them) and keeps it in the ``packing`` table; every long text is then one
zstd frame made with it (section texts of one collection share most of their phrasing, so a
dictionary saves about a quarter of the bytes of per-text zlib). A collection too small to
train on keeps per-text zlib. Frames name their dictionary (its id); ``use_dictionary``
registers a collection's dictionary in this process when the collection is opened.

Why: a collection must stay within 1.6x of its raw text without vectors, and the FTS5 index
with positions alone is about half the text; storing the text plainly would not fit. The column
holds TEXT (plain) or BLOB (a zstd frame or a zlib stream, told apart by their first bytes);
``unpack`` reads both, and every connection has it as the SQL
function ``unpack(x)``, so SQL can still read section texts.

Unpacking is capped: a build stores the size of its longest section text (meta
``max_section_bytes``) and a reader never inflates more than that, so a crafted blob (a zlib
bomb: a few hundred KB that inflate to many GB) is refused instead of exhausting memory. No
collection may hold a section over ``MAX_SECTION_BYTES``, whatever its meta says.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable

import apsw

from ..errors import DamagedCollection

MIN_PACK = 160  # bytes; shorter texts gain nothing from compression
MAX_SECTION_BYTES = 64 << 20  # the ceiling of any section's UTF-8 text, build and read alike
SAMPLE_BYTES = 8 << 20  # section text a build trains its dictionary on (at most)
DICT_BYTES = 256 << 10  # the dictionary's size (at most 1/16 of the sample)
MIN_SAMPLE = 1 << 20    # less sample text than this: no dictionary (per-text zlib)
ZSTD_LEVEL = 3  # the level of the texts past the first SMALL_BYTES of a build
SMALL_LEVEL = 6  # ... and of those: 6% smaller than level 3 on the PEPs, at 4x its CPU
SMALL_BYTES = 64 << 20
_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame; a zlib stream starts with 0x78

# dictionary id -> its bytes; one compressor/decompressor per thread and id (zstandard's
# objects must not be shared by threads)
_DICTS: dict[int, bytes] = {}
_local = threading.local()


def train_dictionary(samples: Iterable[bytes]) -> bytes | None:
    """A zstd dictionary trained on section texts (UTF-8), or None when they are too few."""
    import zstandard

    data = [s for s in samples if len(s) >= MIN_PACK]
    total = sum(len(s) for s in data)
    if total < MIN_SAMPLE or len(data) < 64:
        return None
    try:
        # k and d fixed (no parameter search): 0.5 s on 8 MB, against 19 s searching, same ratio
        d = zstandard.train_dictionary(min(DICT_BYTES, total // 16), data, level=ZSTD_LEVEL,
                                       k=200, d=8)
    except zstandard.ZstdError:
        return None
    return d.as_bytes()


def use_dictionary(data: bytes) -> int:
    """Register a dictionary in this process (for ``pack`` and ``unpack``); returns its id."""
    import zstandard

    dict_id = zstandard.ZstdCompressionDict(data).dict_id()
    if not dict_id:
        raise DamagedCollection("the section text dictionary is not a zstd dictionary")
    _DICTS[dict_id] = data
    return dict_id


def _codec(dict_id: int, kind: str, level: int = ZSTD_LEVEL):
    cache = getattr(_local, kind, None)
    if cache is None:
        cache = {}
        setattr(_local, kind, cache)
    c = cache.get((dict_id, level))
    if c is None:
        import zstandard

        data = _DICTS.get(dict_id)
        if data is None:
            raise DamagedCollection(f"a section text was packed with dictionary {dict_id}, "
                                    "which this collection does not have")
        zd = zstandard.ZstdCompressionDict(data)
        c = cache[dict_id, level] = (zstandard.ZstdCompressor(level=level, dict_data=zd)
                              if kind == "c" else zstandard.ZstdDecompressor(dict_data=zd))
    return c


def load_dictionary(conn: apsw.Connection) -> int:
    """Register the collection's dictionary (table ``packing``); its id, or 0 for none."""
    row = conn.execute("SELECT dict FROM packing WHERE id = 1").fetchone()
    if row is None:
        return 0
    if not isinstance(row[0], bytes):
        raise DamagedCollection("the section text dictionary is not a blob")
    return use_dictionary(row[0])


def store_dictionary(conn: apsw.Connection, data: bytes) -> None:
    conn.execute("INSERT INTO packing(id, dict) VALUES (1, ?)", (data,))


def pack(text: str, dict_id: int = 0, level: int = ZSTD_LEVEL) -> str | bytes:
    """A section text as stored: plain when short, else compressed (a zstd frame with the
    registered dictionary ``dict_id`` at ``level``, or zlib without one) when that is
    smaller."""
    raw = text.encode("utf-8")
    if len(raw) < MIN_PACK:
        return text
    z = _codec(dict_id, "c", level).compress(raw) if dict_id else zlib.compress(raw, 6)
    return z if len(z) < len(raw) else text


def unpack(value: str | bytes | None, limit: int = MAX_SECTION_BYTES) -> str:
    """The text of a stored section; ``DamagedCollection`` when it holds more than ``limit``
    bytes of UTF-8, is not a complete zlib stream, or is not UTF-8."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, bytes):
        raise DamagedCollection(f"a section text is stored as {type(value).__name__}, "
                                "not text or a zlib blob")
    if value[:4] == _MAGIC:
        return _unzstd(value, limit)
    d = zlib.decompressobj()
    try:
        raw = d.decompress(value, limit + 1)
    except zlib.error as e:
        raise DamagedCollection(f"a section text does not unpack ({e})") from None
    if len(raw) > limit or d.unconsumed_tail:
        raise DamagedCollection(f"a section text unpacks to over {limit:,} bytes, more than "
                                "the longest section the collection was built with")
    if not d.eof:
        raise DamagedCollection("a section text is a truncated zlib stream")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedCollection("a section text unpacks to bytes that are not UTF-8") from None


def _unzstd(value: bytes, limit: int) -> str:
    import zstandard

    try:
        params = zstandard.get_frame_parameters(value)
    except zstandard.ZstdError as e:
        raise DamagedCollection(f"a section text does not unpack ({e})") from None
    size = params.content_size
    # Frames are written with their size: a missing or oversized one is never inflated.
    if size == zstandard.CONTENTSIZE_UNKNOWN or size == zstandard.CONTENTSIZE_ERROR \
            or size > limit:
        raise DamagedCollection(f"a section text unpacks to over {limit:,} bytes, more than "
                                "the longest section the collection was built with")
    try:
        raw = _codec(params.dict_id, "d").decompress(value, max_output_size=size)
    except zstandard.ZstdError as e:
        raise DamagedCollection(f"a section text does not unpack ({e})") from None
    if len(raw) != size:
        raise DamagedCollection("a section text is a truncated zstd frame")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedCollection("a section text unpacks to bytes that are not UTF-8") from None
