"""Section texts are stored zlib-compressed when that pays (long texts), plain otherwise.

Why: a collection must stay within 1.6x of its raw text without vectors, and the FTS5 index
with positions alone is about half the text; storing the text plainly would not fit. The column
holds TEXT (plain) or BLOB (zlib); ``unpack`` reads both, and every connection has it as the SQL
function ``unpack(x)``, so SQL can still read section texts.
"""

from __future__ import annotations

import zlib

MIN_PACK = 160  # bytes; shorter texts gain nothing from compression


def pack(text: str) -> str | bytes:
    raw = text.encode("utf-8")
    if len(raw) < MIN_PACK:
        return text
    z = zlib.compress(raw, 6)
    return z if len(z) < len(raw) else text


def unpack(value: str | bytes | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return zlib.decompress(value).decode("utf-8")
    return value
