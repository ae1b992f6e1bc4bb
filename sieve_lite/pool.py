"""Named read-only collections lent one per call, for servers (MCP, ``sieve-lite serve``).

An apsw connection must not be used by two threads at once, and a ``Collection`` keeps
per-connection state (its last listing, its ranker caches), so a server that answers on
several threads lends each call a ``Collection`` of its own: at most ``connections`` are
opened per file and reused. A listing never outlives its call (``fetch`` by rank is refused
across calls: servers take document ids). Query embedding (dense, hybrid) runs under one lock
(the embedder's tokenizer is not safe to call from two threads at once), and only the
embedding: the rest of a search runs on its own connection, in parallel with other calls.
``search_many`` answers a batch on one connection and embeds its queries in one pass.

Every collection is opened through ``sieve_lite.open`` (the defensive, read-only open); a file
that cannot be opened is refused when the pool is made, with one line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from .errors import CollectionError, QueryError, SieveError

DEFAULT_CONNECTIONS = 4


MANUAL_PREFACE = (
    "This is the manual sieve-lite's own research agent reads for this collection. Over MCP "
    "you call tools instead of writing its action lines: 'search: QUERY' is the search tool, "
    "'fetch: ID | SECTION' is the fetch tool. Ranks are not kept between calls: give fetch "
    "the document id from a card, never a rank.\n\n")


@dataclass
class _Entry:
    name: str
    path: Path
    info: dict[str, Any]
    fields: tuple[str, ...]
    has_vectors: bool
    slots: threading.BoundedSemaphore
    idle: list[Any] = field(default_factory=list)
    opened: list[Any] = field(default_factory=list)
    manual: str | None = None


class CollectionPool:
    """Named, read-only collections, lent one per call (see the module docstring)."""

    def __init__(self, paths: Sequence[str | Path], connections: int = DEFAULT_CONNECTIONS,
                 default_ranker: str | None = None, budget: float | None = None,
                 opener: Callable[[Path], Any] | None = None) -> None:
        """``budget``: the seconds any one statement may run (``store.connect``; default its
        own), so a server bounds the time of every query. ``opener``: how a collection is
        opened (default: the defensive read-only open; a sharded folder opens its shards)."""
        if not paths:
            raise CollectionError("give at least one collection to serve")
        self.default_ranker = default_ranker
        self.budget = budget
        self.opener = opener
        self._in_flight = 0  # calls started through ``run`` and not finished
        self._lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self.entries: dict[str, _Entry] = {}
        for p in paths:
            path = Path(p)
            coll = self._open(path)  # refuses a missing, foreign or damaged file
            name = self._unique_name(path)
            try:
                info = coll.info()
                entry = _Entry(name, path, info, tuple(coll.fields), coll.has_vectors,
                               threading.BoundedSemaphore(max(1, connections)))
            except BaseException:
                coll.close()
                raise
            entry.idle.append(coll)
            entry.opened.append(coll)
            self.entries[name] = entry

    def _open(self, path: Path) -> Any:
        import sieve_lite

        from .shards.manifest import is_sharded

        if self.opener is not None:
            return self.opener(path)
        if self.budget is None or is_sharded(path):
            return sieve_lite.open(path)
        from .collection import Collection

        return Collection(path, budget=self.budget)

    def _unique_name(self, path: Path) -> str:
        base = path.stem or "collection"
        name, n = base, 1
        while name in self.entries:
            n += 1
            name = f"{base}-{n}"
        return name

    @property
    def default(self) -> str:
        return next(iter(self.entries))

    def entry(self, name: str | None) -> _Entry:
        if name is None or name == "":
            return self.entries[self.default]
        if name in self.entries:
            return self.entries[name]
        raise CollectionError(f"no collection named {name!r} is served; the collections are: "
                              f"{', '.join(self.entries)}")

    @contextmanager
    def borrow(self, name: str | None) -> Iterator[tuple[_Entry, Any]]:
        """A collection for this call alone; it goes back to the pool afterwards."""
        entry = self.entry(name)
        with entry.slots:
            with self._lock:
                coll = entry.idle.pop() if entry.idle else None
            if coll is None:
                coll = self._open(entry.path)
                with self._lock:
                    entry.opened.append(coll)
            try:
                yield entry, coll
            finally:
                # The listing belongs to this call: the next borrower must not fetch by it.
                coll._session = None
                with self._lock:
                    entry.idle.append(coll)

    async def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` (one of this pool's calls) from async code: on the event
        loop itself when no other call is in flight in this process, else on a worker thread.

        Handing a call to a thread costs two thread wake-ups, ~0.1 ms on an idle machine but
        3-5 ms measured on a loaded 2-core one, against a 2-3 ms search: the largest part of an
        MCP call's overhead after the Nagle fix. An idle server has nobody to keep responsive
        meanwhile; calls that arrive during a threaded one go to threads too, and overlap where
        SQLite and numpy release the GIL. (Every statement stays under the time budget.)"""
        import anyio.to_thread

        inline = self._in_flight == 0
        self._in_flight += 1
        try:
            if inline:
                return fn(*args, **kwargs)
            return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))
        finally:
            self._in_flight -= 1

    def ranker_for(self, entry: _Entry, ranker: str | None) -> str:
        ranker = ranker or self.default_ranker
        if ranker:
            return ranker
        return "hybrid" if entry.has_vectors else "bm25"

    def _embed_one(self, coll: Any) -> Any:
        """``Collection.search``'s ``embed``: the collection's query embedder, under the lock."""
        from .rank import embed_query

        def embed(text: str) -> Any:
            with self._embed_lock:
                return embed_query(coll, text)

        return embed

    def search(self, query: str, k: int = 5, ranker: str | None = None,
               collection: str | None = None, strict: bool = False) -> tuple[str, Any]:
        """(collection name, ``SearchResult``)."""
        with self.borrow(collection) as (entry, coll):
            rk = self.ranker_for(entry, ranker)
            return entry.name, coll.search(query, k=k, ranker=rk, strict=strict,
                                           embed=self._embed_one(coll))

    def search_many(self, queries: Sequence[Any], k: int = 5, ranker: str | None = None,
                    collection: str | None = None, strict: bool = False,
                    vectors: dict[str, Any] | None = None) -> tuple[str, list[Any]]:
        """(collection name, one ``SearchResult`` or ``SieveError`` per query, in order): a
        batch on one borrowed connection. For dense and hybrid the queries are embedded in one
        pass first (``embed_batch``; or give its ``vectors`` when the batch was split). A query
        that cannot run gives its error; the others are answered. ``k`` and ``ranker`` are
        checked once, raising ``QueryError`` for the whole batch."""
        from .search import check_options

        with self.borrow(collection) as (entry, coll):
            rk = self.ranker_for(entry, ranker)
            check_options(rk, k)
            if vectors is None:
                vectors = self._embed_batch(entry, coll, rk, queries)
            fallback = self._embed_one(coll)

            def embed(text: str) -> Any:
                vec = vectors.get(text)
                return vec if vec is not None else fallback(text)

            out: list[Any] = []
            for q in queries:
                try:
                    if not isinstance(q, str):
                        raise QueryError(f"a query must be a string, not {type(q).__name__}")
                    out.append(coll.search(q, k=k, ranker=rk, strict=strict, embed=embed))
                except SieveError as e:
                    out.append(e)
            return entry.name, out

    def embed_batch(self, queries: Sequence[Any], ranker: str | None = None,
                    collection: str | None = None) -> dict[str, Any]:
        """{query text: vector} for the queries of a batch, embedded in one pass
        (``embed.encode_queries``: bit for bit the vectors single searches compute); {} when
        the ranker embeds nothing."""
        with self.borrow(collection) as (entry, coll):
            return self._embed_batch(entry, coll, self.ranker_for(entry, ranker), queries)

    def _embed_batch(self, entry: _Entry, coll: Any, ranker: str,
                     queries: Sequence[Any]) -> dict[str, Any]:
        from .embed import encode_queries, get_query_embedder
        from .search import embed_text

        if ranker not in ("dense", "hybrid") or not entry.has_vectors:
            return {}
        texts: dict[str, None] = {}
        for q in queries:
            try:
                text = embed_text(coll, q) if isinstance(q, str) else None
            except SieveError:
                continue  # the search itself reports it
            if text is not None:
                texts[text] = None
        if not texts:
            return {}
        try:
            with self._embed_lock:
                vecs = encode_queries(get_query_embedder(coll.embed_model), list(texts))
        except SieveError:
            return {}  # no embedder: each search says so in its notes, as alone
        return dict(zip(texts, vecs, strict=True))

    def fetch(self, doc: str, section: str | None = None,
              collection: str | None = None) -> tuple[str, Any]:
        with self.borrow(collection) as (entry, coll):
            return entry.name, coll.fetch(doc, section)

    def manual(self, collection: str | None = None) -> tuple[_Entry, str]:
        from .agent.manual import build_manual

        entry = self.entry(collection)
        if entry.manual is None:
            with self.borrow(entry.name) as (_, coll):
                text = MANUAL_PREFACE + build_manual(coll, mode="sieve")
            entry.manual = text  # deterministic for a collection: computing it twice is harmless
        return entry, entry.manual

    def describe(self) -> list[dict[str, Any]]:
        out = []
        for e in self.entries.values():
            out.append({"name": e.name, "default": e.name == self.default,
                        "path": str(e.path), "documents": e.info["documents"],
                        "sections": e.info["sections"], "fields": list(e.fields),
                        "embeddings": e.has_vectors,
                        "default_ranker": self.ranker_for(e, None)})
        return out

    def close(self) -> None:
        with self._lock:
            for e in self.entries.values():
                for coll in e.opened:
                    coll.close()
                e.opened.clear()
                e.idle.clear()

    def __enter__(self) -> CollectionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["DEFAULT_CONNECTIONS", "MANUAL_PREFACE", "CollectionPool"]
