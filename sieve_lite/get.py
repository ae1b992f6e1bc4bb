"""``get``: fetch a collection file from a URL or a path, check it, and only then keep it.

``get_collection(source, out, sha256=None, force=False, progress=None)``

1. The output is checked like a build's (``outfile.check_output``): an existing collection is
   replaced only with ``force``; any other existing file is refused.
2. The expected checksum is ``sha256``, else the one an ``index.json`` beside the source lists
   for that file name (``collections/index.json`` is such an index), else none.
3. The file is downloaded to ``.NAME.db.part`` beside the output. A cut-off download keeps the
   part, with a note of its URL and validators (``.part.json``), and the next ``get`` of the
   same URL resumes it with an HTTP range request; a server that ignores ranges sends the
   whole file again, and a server whose file changed (another ETag or Last-Modified) starts
   over. ``file://`` URLs and plain paths are copied the same way.
4. The part must match the checksum, and pass ``verify`` (integrity, exact schema, metadata,
   content hash, vectors). Only then is it renamed onto the output, atomically. A file that
   fails is deleted and refused with ``DamagedCollection`` (exit 3), so the next run fetches
   it afresh.

Steps 3 and 4 are ``fetch_file``, which ``sieve-lite model get`` uses too (with a GGUF check
instead of ``verify``): one download code for every file sieve-lite fetches. Downloads use
the standard library's ``urllib.request``: nothing new to install, proxies from the
environment honoured.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import DamagedCollection, DownloadError, OutputError
from .outfile import check_output
from .version import __version__

CHUNK = 1 << 16
TIMEOUT = 30.0  # seconds without a byte before a download counts as stalled
Progress = Callable[[int, "int | None"], None]  # (bytes so far, total bytes or None)


@dataclass
class GetReport:
    path: str
    source: str
    bytes: int
    sha256: str
    checksum: str  # where the expected checksum came from: "given", "index.json", "none"
    resumed_from: int  # bytes of an earlier part that were kept (0: a fresh download)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "source": self.source, "bytes": self.bytes,
                "sha256": self.sha256, "checksum": self.checksum,
                "resumed_from": self.resumed_from}


def _is_url(source: str) -> bool:
    return urllib.parse.urlsplit(source).scheme in ("http", "https", "file")


def _file_name(source: str) -> str:
    if _is_url(source):
        return Path(urllib.parse.unquote(urllib.parse.urlsplit(source).path)).name
    return Path(source).name


def _index_checksum(source: str) -> str | None:
    """The sha256 an ``index.json`` beside ``source`` lists for its file name, if any."""
    name = _file_name(source)
    try:
        if _is_url(source):
            url = urllib.parse.urljoin(source, "index.json")
            with urllib.request.urlopen(_request(url), timeout=TIMEOUT) as resp:
                data = json.loads(resp.read(1 << 20))
        else:
            index = Path(source).parent / "index.json"
            if not index.is_file():
                return None
            data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError, urllib.error.URLError, http.client.HTTPException):
        return None  # no usable index: the schema and content checks still run
    entries = data.get("collections", []) if isinstance(data, dict) else []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("file") == name \
                and isinstance(entry.get("sha256"), str):
            return entry["sha256"].lower()
    return None


def _request(url: str, headers: dict[str, str] | None = None) -> urllib.request.Request:
    return urllib.request.Request(url, headers={"User-Agent": f"sieve-lite/{__version__}",
                                                **(headers or {})})


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _copy(src: BinaryIO, dst: BinaryIO, done: int, total: int | None,
          progress: Progress | None) -> int:
    while chunk := src.read(CHUNK):
        dst.write(chunk)
        done += len(chunk)
        if progress:
            progress(done, total)
    return done


def _download(url: str, part: Path, note: Path, progress: Progress | None) -> int:
    """Fill ``part`` with the body of ``url``, resuming an earlier part of the same URL;
    returns the bytes kept from before."""
    have = part.stat().st_size if part.exists() else 0
    old = {}
    if have and note.exists():
        try:
            old = json.loads(note.read_text(encoding="utf-8"))
        except ValueError:
            old = {}
    if not have or old.get("url") != url:
        have = 0  # a part of some other download (or of unknown origin): start afresh
    headers = {}
    if have:
        headers["Range"] = f"bytes={have}-"
        validator = old.get("etag") or old.get("last_modified")
        if validator:
            headers["If-Range"] = validator  # changed on the server: the whole file, 200
    try:
        resp = urllib.request.urlopen(_request(url, headers), timeout=TIMEOUT)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # nothing after what we have: the part is complete
            return have
        raise DownloadError(f"{url} answered HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", e)
        raise DownloadError(f"cannot download {url}: {reason}") from None
    with resp:
        status = getattr(resp, "status", 200)
        length = resp.headers.get("Content-Length")
        size = int(length) if length and length.isdigit() else None
        if status == 206 and _range_start(resp) != have:
            raise DownloadError(f"{url} sent a range that does not follow the {have:,} bytes "
                                "already here; delete the .part file and try again")
        resumed = have if status == 206 else 0  # a 200 is the whole file, from the start
        total = resumed + size if size is not None else None
        note.write_text(json.dumps({"url": url, "etag": resp.headers.get("ETag"),
                                    "last_modified": resp.headers.get("Last-Modified"),
                                    "size": total}), encoding="utf-8")
        try:
            with open(part, "ab" if resumed else "wb") as f:
                done = _copy(resp, f, resumed, total, progress)
        except (OSError, http.client.HTTPException) as e:
            raise DownloadError(f"the download of {url} stopped ({e.__class__.__name__}) "
                                f"after {_size(part)}; run the same command again to "
                                "resume") from None
    if total is not None and done != total:
        raise DownloadError(f"the download of {url} was cut off at {done:,} of {total:,} "
                            "bytes; run the same command again to resume")
    return resumed


def _range_start(resp: Any) -> int | None:
    value = resp.headers.get("Content-Range", "")  # "bytes 100-199/200"
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _size(path: Path) -> str:
    return f"{path.stat().st_size:,} bytes" if path.exists() else "0 bytes"


def parse_sha256(value: str | None) -> str | None:
    """A ``--sha256`` value as 64 lowercase hex digits (None stays None)."""
    if value is None:
        return None
    value = value.strip().lower()
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise OutputError(f"--sha256 {value[:80]!r} is not 64 hex digits")
    return value


@dataclass
class Fetched:
    """A file ``fetch_file`` kept."""

    bytes: int
    sha256: str
    resumed_from: int


def fetch_file(source: str, out: Path, *, sha256: str | None, refuse: Callable[[str], Exception],
               check: Callable[[Path], str | None] | None = None,
               progress: Progress | None = None) -> Fetched:
    """Download (or copy) ``source`` to ``out``, checked before it is kept.

    The bytes go to ``.NAME.part`` beside ``out``; an http(s) download cut off keeps the part
    and a note of its URL and validators (``.NAME.part.json``), and the next call for the same
    URL resumes it with a ``Range`` request (a server that ignores ranges sends it all again;
    a file changed on the server starts over). The part must have the ``sha256`` given (when
    one is), and ``check(part)`` must return None (else it returns why the file is not what
    was asked for). A part that fails either is deleted, and ``refuse(why)`` is raised; one
    that passes is renamed onto ``out``, atomically. Used by ``get`` (collections) and
    ``sieve-lite model get`` (GGUF models)."""
    part = out.with_name(f".{out.name}.part")
    note = out.with_name(f".{out.name}.part.json")
    resumed = 0
    if urllib.parse.urlsplit(source).scheme in ("http", "https"):
        resumed = _download(source, part, note, progress)
    else:
        path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(source).path)) \
            if source.startswith("file:") else Path(source)
        if not path.is_file():
            raise DownloadError(f"{source} is not a file (give a path or an http(s) URL)")
        total = path.stat().st_size
        with open(path, "rb") as src, open(part, "wb") as dst:
            _copy(src, dst, 0, total, progress)

    def fail(why: str) -> Exception:
        part.unlink(missing_ok=True)
        note.unlink(missing_ok=True)
        return refuse(why)

    digest = file_sha256(part)
    if sha256 and digest != sha256:
        raise fail(f"has sha256 {digest}, not the expected {sha256}")
    if check is not None:
        why = check(part)
        if why:
            raise fail(why)
    size = part.stat().st_size
    os.replace(part, out)
    note.unlink(missing_ok=True)
    return Fetched(size, digest, resumed)


def get_collection(source: str, out: str | os.PathLike[str], *, sha256: str | None = None,
                   force: bool = False, progress: Progress | None = None) -> GetReport:
    """Download or copy the collection at ``source`` to ``out`` (see the module docstring)."""
    from .verify import verify

    out_path = Path(out)
    check_output(out_path, force=force)
    sha256 = parse_sha256(sha256)
    expected, origin = (sha256, "given") if sha256 else (_index_checksum(source), "index.json")
    if expected is None:
        origin = "none"

    def sound(part: Path) -> str | None:
        report = verify(part)
        if report.ok:
            return None
        failed = next(c for c in report.checks if c.ok is False)
        return f"is not a sound collection: {failed.name}: {failed.detail}"

    def refuse(why: str) -> DamagedCollection:
        if why.startswith("has sha256"):
            why += f" ({origin})"
        return DamagedCollection(f"{source} {why}; it was not saved")

    got = fetch_file(source, out_path, sha256=expected, refuse=refuse, check=sound,
                     progress=progress)
    return GetReport(str(out_path), source, got.bytes, got.sha256, origin, got.resumed_from)


def index_entry(path: Path) -> dict[str, Any]:
    """An ``index.json`` entry for a collection file: name, file, size, sha256 and the
    manifest and counts from its metadata."""
    import sieve_lite

    with sieve_lite.open(path) as coll:
        m = coll.meta
        entry = {"name": m.name or path.stem, "file": path.name,
                 "bytes": path.stat().st_size, "sha256": file_sha256(path),
                 "description": m.description, "version": m.version, "license": m.license,
                 "documents": m.documents, "sections": m.sections,
                 "schema_version": m.schema_version, "embed_model": m.embed_model or None,
                 "content_hash": m.content_hash}
    return entry


def write_index(folder: Path) -> Path:
    """Write ``folder/index.json`` listing every ``*.db`` collection in ``folder``."""
    entries = [index_entry(p) for p in sorted(folder.glob("*.db"))]
    out = folder / "index.json"
    tmp = out.with_name(".index.json.tmp")
    tmp.write_text(json.dumps({"format_version": 1, "collections": entries}, indent=2,
                              ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return out


if __name__ == "__main__":  # python -m sieve_lite.get FOLDER: (re)write FOLDER/index.json
    import sys

    print(write_index(Path(sys.argv[1] if len(sys.argv) > 1 else "collections")))


__all__ = ["Fetched", "GetReport", "fetch_file", "file_sha256", "get_collection", "index_entry",
           "parse_sha256", "write_index"]
