"""Section texts are stored zlib-compressed when that pays (long texts), plain otherwise.

Why: a collection must stay within 1.6x of its raw text without vectors, and the FTS5 index
with positions alone is about half the text; storing the text plainly would not fit. The column
holds TEXT (plain) or BLOB (zlib); ``unpack`` reads both, and every connection has it as the SQL
function ``unpack(x)``, so SQL can still read section texts.

Unpacking is capped: a build stores the size of its longest section text (meta
``max_section_bytes``) and a reader never inflates more than that, so a crafted blob (a zlib
bomb: a few hundred KB that inflate to many GB) is refused instead of exhausting memory. No
collection may hold a section over ``MAX_SECTION_BYTES``, whatever its meta says.
"""

from __future__ import annotations

import zlib

from ..errors import DamagedCollection

MIN_PACK = 160  # bytes; shorter texts gain nothing from compression
MAX_SECTION_BYTES = 64 << 20  # the ceiling of any section's UTF-8 text, build and read alike


def pack(text: str) -> str | bytes:
    raw = text.encode("utf-8")
    if len(raw) < MIN_PACK:
        return text
    z = zlib.compress(raw, 6)
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
