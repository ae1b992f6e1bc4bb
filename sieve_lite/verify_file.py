"""Check one collection file against what a build writes, check by check (``verify_file``;
``verify.verify`` also takes a folder of shards).

The checks, each reported with what it found:

* ``integrity``: SQLite's own ``PRAGMA integrity_check`` (b-trees, indexes, FTS5 indexes);
* ``schema``: the application id, the schema version, and every ``sqlite_schema`` row equal to
  what a build of this version makes (``store.check_schema``);
* ``metadata``: ``meta`` typed and in range, rowids within the document count, one vector per
  document of the stated dimension (``store.read_meta``, ``store.check_ranges``);
* ``content``: the content hash recomputed over every document (titles, sections, infobox,
  authors, dates, urls, metadata) equal to the one written at build time, and the section
  count equal to the stored one;
* ``vectors``: the embedding model is installed and makes vectors of the collection's
  dimension, and every stored vector is finite and non-zero (a lexical collection passes).

A check that depends on one that failed is reported as skipped. The library never raises for a
damaged file here (that is what it reports); it raises ``CollectionError`` only for a file that
is not there or not SQLite at all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import apsw
import numpy as np

from . import store
from .checks import Check, VerifyReport
from .errors import CollectionError, DamagedCollection, EnvironmentProblem, SieveError

BUDGET = 3600.0  # seconds a verify statement may run (integrity_check reads the whole file)
_VECTOR_BATCH = 4096


def _message(e: BaseException, path: Path) -> str:
    text = str(e)
    # The report names the file once; the checks need not repeat it.
    return text.replace(f"{path} ", "", 1) if text.startswith(f"{path} ") else text


def _integrity(conn: apsw.Connection) -> Check:
    try:
        rows = store.integrity.sqlite_integrity(conn)
    except (apsw.Error, SieveError) as e:
        return Check("integrity", False, f"the integrity check could not run: {e}")
    if rows == ["ok"]:
        return Check("integrity", True, "ok")
    return Check("integrity", False, "; ".join(rows[:5]))


def _content(conn: apsw.Connection, meta: store.Meta, p: Path) -> Check:
    try:
        sections = store.reads.section_count(conn)
        store.set_unpack_limit(conn, meta.max_section_bytes)  # and the text dictionary
        if sections != meta.sections:
            return Check("content", False, f"{sections} sections, but the metadata says "
                         f"{meta.sections}")
        digest = store.content.content_hash(conn, meta.max_section_bytes).hexdigest()
    except (DamagedCollection, apsw.Error) as e:
        return Check("content", False, _message(e, p))
    if digest != meta.content_hash:
        return Check("content", False, f"the documents hash to {digest[:16]}..., not the "
                     f"{meta.content_hash[:16]}... written at build time: the text was changed "
                     "after the build")
    return Check("content", True, f"content hash {digest[:16]}... matches")


def verify_file(path: str | os.PathLike[str]) -> VerifyReport:
    """Run every check on the collection file at ``path`` (see the module docstring)."""
    p = Path(path)
    report = VerifyReport(str(p))
    add = report.checks.append
    try:
        conn = store.connect(p, readonly=True, budget=BUDGET)
    except DamagedCollection as e:
        add(Check("integrity", False, _message(e, p)))
        for name in ("schema", "metadata", "content", "vectors"):
            add(Check(name, None, "skipped: the file does not open"))
        return report
    try:
        add(_integrity(conn))
        try:
            store.check_version(conn, str(p))
            vec_dim = store.check_schema(conn, str(p))
            add(Check("schema", True, f"version {store.SCHEMA_VERSION}, every object as a "
                      "build makes it"))
        except CollectionError as e:
            add(Check("schema", False, _message(e, p)))
            for name in ("metadata", "content", "vectors"):
                add(Check(name, None, "skipped: the schema is not a collection's"))
            return report
        try:
            meta = store.read_meta(conn, str(p), store.SCHEMA_VERSION)
            store.check_ranges(conn, meta, vec_dim, str(p))
            add(Check("metadata", True, f"{meta.documents} documents, {meta.sections} "
                      "sections, rowids in range"))
        except (DamagedCollection, apsw.Error) as e:
            add(Check("metadata", False, _message(e, p)))
            for name in ("content", "vectors"):
                add(Check(name, None, "skipped: the metadata cannot be trusted"))
            return report
        add(_content(conn, meta, p))
        add(_vectors(conn, meta))
    finally:
        conn.close()
    return report


def model_dimension(folder: Path) -> int | None:
    """The dimension of the vectors a sentence-transformers model folder makes, read from its
    configuration files (no model is loaded): the last Dense layer's ``out_features``, else
    the Pooling layer's ``word_embedding_dimension``; None when the files do not say."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        dim = None
        for m in modules:
            kind = str(m.get("type", ""))
            config = folder / str(m.get("path", "")) / "config.json"
            if kind.endswith(".Pooling"):
                dim = int(json.loads(config.read_text(encoding="utf-8"))
                          ["word_embedding_dimension"])
            elif kind.endswith(".Dense"):
                dim = int(json.loads(config.read_text(encoding="utf-8"))["out_features"])
        return dim
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _vectors(conn: apsw.Connection, meta: store.Meta) -> Check:
    if not meta.embed_dim:
        return Check("vectors", True, "none (a lexical collection)")
    from .embed import resolve_model_path

    try:
        folder = resolve_model_path(meta.embed_model)
    except EnvironmentProblem as e:
        return Check("vectors", False, str(e))
    dim = model_dimension(folder)
    if dim != meta.embed_dim:
        return Check("vectors", False, f"the model {meta.embed_model!r} makes vectors of "
                     f"dimension {dim}, the collection has {meta.embed_dim}")
    bad = 0

    def count_bad(blobs: list[bytes]) -> int:
        vecs = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        if vecs.shape[1] != meta.embed_dim:
            raise ValueError(f"a vector has {vecs.shape[1]} numbers, not {meta.embed_dim}")
        finite = np.isfinite(vecs).all(axis=1)
        return int((~finite | ~(np.abs(vecs).sum(axis=1) > 0)).sum())

    try:
        blobs: list[bytes] = []
        for blob in store.integrity.vector_blobs(conn):
            blobs.append(blob)
            if len(blobs) == _VECTOR_BATCH:
                bad += count_bad(blobs)
                blobs = []
        if blobs:
            bad += count_bad(blobs)
    except (apsw.Error, ValueError) as e:
        return Check("vectors", False, f"the vectors cannot be read: {e}")
    if bad:
        return Check("vectors", False, f"{bad} vectors are zero or not finite")
    return Check("vectors", True, f"{meta.documents} vectors of dimension {meta.embed_dim} "
                 f"from {meta.embed_model}")
