"""``sharded_build``: one source -> a folder of N shard files and their manifest.

The main process reads the source once and sends each document to the shard its id picks
(``manifest.shard_of``); N worker processes (spawned: torch and fork do not mix) each run the
ordinary build (``build.build_collection``) over what they receive, so every shard is a normal
collection file, checked and refused like any other. When all succeed the global statistics
are summed from the shard files (``store`` reads, no re-tokenising), the manifest is written,
and the temporary folder is renamed into place. Anything else (a bad document under
``--strict``, a worker that dies, Ctrl-C, SIGTERM) stops every worker and removes the folder:
a failed build leaves nothing behind, and an existing collection at the output stays intact.
A build killed with SIGKILL leaves its temporary folder, which the next build of the same
output removes (as one-file builds do).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import shutil
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BuildError, DocumentError, OutputError, SieveError
from .manifest import (
    MANIFEST,
    MAX_SHARDS,
    GlobalTotals,
    Manifest,
    ShardEntry,
    is_sharded,
    sha256_file,
    shard_name,
    shard_of,
)

CHUNK = 64  # documents per message to a worker
QUEUE_CHUNKS = 16  # chunks in flight per worker (bounded memory)


@dataclass
class ShardedBuildReport:
    path: str
    shards: int
    documents: int = 0
    sections: int = 0
    skipped: list[str] = field(default_factory=list)
    skipped_count: int = 0
    seconds: float = 0.0
    embedded: bool = False
    per_shard: list[int] = field(default_factory=list)


class _Precomputed:
    """A shard's embedder: the vectors its main process made, in the order the shard's build
    asks for them (the documents it admits, in the order they arrive)."""

    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id, self.dim = model_id, dim
        self.queue: deque[tuple[str, Any]] = deque()

    def encode(self, texts: list[str], batch_size: int = 32) -> Any:
        import numpy as np

        out = []
        for t in texts:
            want, vec = self.queue.popleft()
            if want != t:  # the shard admitted other documents than the main process did
                raise BuildError("a shard's vectors are out of step with its documents")
            out.append(vec)
        return np.stack(out) if out else np.zeros((0, self.dim), dtype=np.float32)


def _worker(i: int, path: str, inbox: Any, outbox: Any, opts: dict[str, Any]) -> None:
    """One shard's build, in its own process: documents arrive in chunks, None ends them."""
    parent = os.getppid()

    def watch() -> None:  # the main process was killed: stop too (its folder is stale)
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides

    vectors = opts.pop("vectors", None)
    ready = _Precomputed(*vectors) if vectors else None

    def docs() -> Iterable[Any]:
        while True:
            chunk = inbox.get()
            if chunk is None:
                return
            for doc, text, vec in chunk:
                if ready is not None and vec is not None:
                    ready.queue.append((text, vec))
                yield doc

    try:
        from ..build import build_collection

        rep = build_collection(docs(), path, workers=0, quiet=True, embedder=ready, **opts)
        outbox.put(("ok", i, rep.documents, rep.sections, rep.skipped, rep.skipped_count,
                    rep.embedded))
    except SieveError as e:
        outbox.put(("error", i, str(e)))
    except BaseException as e:  # noqa: BLE001 - reported as one line by the main process
        outbox.put(("error", i, f"shard {i}: {type(e).__name__}: {e}"))


def _check_output(out: Path, force: bool, inputs: Iterable[Path]) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"output {out} is a file; a sharded build writes a folder")
    if not out.parent.exists():
        raise OutputError(f"output folder {out.parent} does not exist")
    for src in inputs:
        if Path(src).exists() and out.resolve() in (Path(src).resolve(),
                                                    *Path(src).resolve().parents):
            raise OutputError(f"output {out} holds an input; write the collection elsewhere")
    if out.exists():
        if not is_sharded(out) and any(out.iterdir()):
            raise OutputError(f"{out} exists and is not a sharded sieve-lite collection; "
                              "choose another output name (nothing was written)")
        if is_sharded(out) and not force:
            raise OutputError(f"{out} is already a sharded collection; pass --force to "
                              "replace it")


def _remove_stale(out: Path) -> None:
    prefix = f".{out.name}.building-"
    for name in os.listdir(out.parent):
        pid = name[len(prefix):]
        if not name.startswith(prefix) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(out.parent / name, ignore_errors=True)
        except OSError:
            pass


def global_totals(paths: list[Path]) -> tuple[GlobalTotals, dict[str, int]]:
    """The statistics every scorer needs, summed over the shard files: documents and their
    words, passages and their length, and each word's passage df."""
    from ..collection import Collection
    from ..store.passages import PassageIndex, term_dfs
    from ..store.writes import document_totals

    docs, words, passages, pwords = 0, 0.0, 0, 0.0
    df: dict[str, int] = {}
    for p in paths:
        with Collection(p) as c:
            n, _sections, w, _top = document_totals(c.conn)
            docs += n
            words += w
            px = PassageIndex(c.conn)
            passages += px.n
            pwords += float(px.length.sum())
            for term, d in term_dfs(c.conn):
                df[term] = df.get(term, 0) + d
    return GlobalTotals(docs, words, passages, pwords), dict(sorted(df.items()))


def sharded_build(
    documents: Iterable[Any],
    out: str | os.PathLike[str],
    shards: int,
    *,
    embed: bool = True,
    embed_model: str | None = None,
    strict: bool = False,
    on_skip: Callable[[DocumentError], None] | None = None,
    source_label: str = "",
    force: bool = False,
    inputs: Iterable[str | os.PathLike[str]] = (),
    manifest: Mapping[str, str] | None = None,
) -> ShardedBuildReport:
    """Build ``documents`` into the folder ``out`` as ``shards`` shard files built in parallel
    processes, split by document id, plus ``manifest.json`` (see the module docstring)."""
    from ..build import EARLY_STOP, EMBED_BATCH, admit, raw_tuple, record_skip
    from ..embed import document_text

    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        raise BuildError(f"--shards must be a whole number from 1 to {MAX_SHARDS}")
    out_path = Path(out)
    _check_output(out_path, force, [Path(i) for i in inputs])
    _remove_stale(out_path)
    tmp = out_path.with_name(f".{out_path.name}.building-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    started = time.perf_counter()
    report = ShardedBuildReport(str(out_path), shards)
    ctx = multiprocessing.get_context("spawn")
    outbox = ctx.Queue()
    inboxes = [ctx.Queue(maxsize=QUEUE_CHUNKS) for _ in range(shards)]
    name = (manifest or {}).get("name") or out_path.name
    embedder = None
    if embed:
        # The vectors are made here, in the batches a one-file build of the same source makes
        # (the 64 documents it admits at a time): a document's vector depends on the batch it
        # is padded with, in its last bits, and the shards must hold the one-file vectors.
        from ..embed import get_embedder

        embedder = get_embedder(embed_model)
    opts = {"embed": False, "strict": strict, "source_label": source_label,
            "manifest": {**(manifest or {}), "name": name},
            "vectors": (embedder.model_id, embedder.dim) if embedder else None}
    procs = [ctx.Process(target=_worker, args=(i, str(tmp / shard_name(i)), inboxes[i], outbox,
                                               opts), daemon=True) for i in range(shards)]
    old_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    results: dict[int, tuple] = {}

    def check_failures(block: float = 0.0) -> None:
        try:
            while True:
                msg = outbox.get(timeout=block) if block else outbox.get_nowait()
                results[msg[1]] = msg
                if msg[0] == "error":
                    raise BuildError(f"{msg[2]} (sharded build stopped; nothing was written)")
                block = 0.0
        except queue.Empty:
            pass
        for i, p in enumerate(procs):
            if i not in results and p.exitcode not in (None, 0):
                raise BuildError(f"shard {i}'s build process died (exit {p.exitcode}); "
                                 "nothing was written")

    def send(i: int, item: Any) -> None:
        while True:
            try:
                inboxes[i].put(item, timeout=0.5)
                return
            except queue.Full:
                check_failures()

    try:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_term)
        for p in procs:
            p.start()
        pending: list[list[Any]] = [[] for _ in range(shards)]
        good = 0
        sent = [0] * shards
        held: list[tuple[int, Any, str | None]] = []  # waiting for their batch's vectors
        admitted = 0
        seen: dict[str, str] = {}
        biggest = 0

        def flush() -> None:
            nonlocal admitted
            texts = [t for _, _, t in held if t is not None]
            vecs = iter(embedder.encode(texts) if texts else [])
            for i, doc, text in held:
                pending[i].append((doc, text, next(vecs) if text is not None else None))
                if len(pending[i]) >= CHUNK:
                    send(i, pending[i])
                    pending[i] = []
            held.clear()
            admitted = 0
        for doc in documents:
            if isinstance(doc, DocumentError):
                if strict:
                    raise BuildError(f"{doc} (stopped: --strict; nothing was written)")
                record_skip(report, doc)
                if good == 0 and report.skipped_count >= EARLY_STOP:
                    raise BuildError(f"the first {EARLY_STOP} records all failed, so the build "
                                     f"stopped and wrote nothing (the first: "
                                     f"{report.skipped[0]}); are the sources in the format "
                                     "they are read as (--format)?")
                if on_skip:
                    on_skip(doc)
                continue
            good += 1
            i = shard_of(doc.id, shards)
            sent[i] += 1
            if embedder is None:
                pending[i].append((doc, None, None))
                if len(pending[i]) >= CHUNK:
                    send(i, pending[i])
                    pending[i] = []
                continue
            # what the one-file build admits and embeds (its rules, in its order)
            bad, size = admit(doc, seen, biggest)
            text = None
            if bad is None:
                biggest = max(biggest, size)
                text = document_text(doc.title, [t for _, t in raw_tuple(0, doc)[3]])
                admitted += 1
            held.append((i, doc, text))
            if admitted >= EMBED_BATCH:
                flush()
        if held:
            flush()
        empty = [i for i in range(shards) if not sent[i]]
        if empty and good:
            raise BuildError(f"{len(empty)} of {shards} shards would get no document "
                             f"({good:,} documents in all); use fewer shards")
        for i in range(shards):
            if pending[i]:
                send(i, pending[i])
            send(i, None)
        while len(results) < shards:
            check_failures(block=0.5)
        for p in procs:
            p.join()
        for i in range(shards):
            _, _, n, secs, skipped, skipped_count, embedded = results[i]
            report.per_shard.append(n)
            report.documents += n
            report.sections += secs
            report.skipped_count += skipped_count
            report.skipped += skipped[: max(0, 5 - len(report.skipped))]
            report.embedded = embedded
        files = [tmp / shard_name(i) for i in range(shards)]
        totals, df = global_totals(files)
        from ..collection import Collection
        from .collection import union_fields

        entries, metas = [], []
        for f in files:
            with Collection(f) as c:
                m = c.meta
            metas.append(m)
            entries.append(ShardEntry(f.name, sha256_file(f), f.stat().st_size, m.documents,
                                      m.content_hash))
        fields, text_fields = union_fields(metas)
        man = Manifest(entries, m.schema_version, m.tokenizer, m.embed_model, m.embed_dim,
                       totals, df, fields, text_fields, name=name, source=source_label,
                       build_time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        man.write(tmp)
        if out_path.exists():  # --force: the old folder goes only once the new one is whole
            old = out_path.with_name(f".{out_path.name}.replaced-{os.getpid()}")
            os.replace(out_path, old)
            os.replace(tmp, out_path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_path)
    except BaseException:
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            if p.pid is not None:
                p.join(timeout=5)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, old_term)
        for q in (*inboxes, outbox):
            q.cancel_join_thread()
            q.close()

    report.seconds = time.perf_counter() - started
    assert (out_path / MANIFEST).is_file()
    return report
