"""``ShardedCollection``: a folder of shard files behind ``Collection``'s interface.

``sieve_lite.open(DIR)`` returns one when DIR holds a shard manifest. It answers ``search``,
``fetch``, ``info``, ``document``, ``fields``, ``meta`` ... exactly as the one-file build of the
same documents does: the same ids, order, totals, scores, cards and fallbacks, for every ranker.

How (the coordinator, ``search`` below; each shard is a ``worker.ShardWorker``):

1. The query is parsed and compiled once, against the whole collection's fields.
2. Statistics no table holds (a prefix's df, ``bm25-doc``'s document df) are gathered from the
   shards and summed (``stats.py``); the rest came from the manifest. Every shard scores with
   them, so each document's score is its one-file score, bit for bit.
3. Each shard selects and ranks its own documents and returns its top ``k`` (ties by id) and,
   when fewer than ``k`` score, the first ``k`` unscored by id. Merged by (score, id), the
   first ``k`` are the one-file top ``k``. The totals add up; when they add up to 0 the
   per-clause counts are summed and (unless strict) every shard ranks its whole file.
4. ``hybrid``: each shard returns the top ``2k + 60`` of its bm25 run and of its dense run;
   merged, these are each run's global top ``2k + 60``, whose union holds the fused top ``k``
   (``rank.hybrid``'s proof). A candidate outside one run's global window gets its exact rank
   in that run in a second round: its owner reports its score, every shard counts the
   documents above it. Then RRF, as ``rank.fuse`` does.
5. The owners build the hits' cards (global statistics choose the same best passage).

``Coordinator`` is the part that does not care where the shards run: in this process (here),
or in Ray actors across machines (``shards.ray``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..bql.ast import ALL_FIELDS_ORDER, positive_atoms, positive_words
from ..errors import DamagedCollection, EnvironmentProblem, SectionError
from .manifest import Manifest, is_sharded, load, sha256_file, shard_of

__all__ = ["Coordinator", "ShardedCollection", "is_sharded"]


def union_fields(metas: Sequence[Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(fields, text_fields) of the whole collection: a field any shard holds."""
    has = {f: any(getattr(m, f"has_{f}") for m in metas)
           for f in ("section", "infobox", "author", "date")}
    fields = tuple(f for f in ALL_FIELDS_ORDER
                   if f in ("title", "body", "tiab", "all") or has.get(f))
    return fields, tuple(f for f in fields if f not in ("date", "tiab", "all"))


class Coordinator:
    """The sharded search and fetch over shards reached through ``call`` (every shard, same
    arguments), ``call_each`` (every shard, its own arguments) and ``call_one``."""

    path: Path
    manifest: Manifest
    fields: tuple[str, ...]
    text_fields: tuple[str, ...]
    generation = 0
    _session: Any = None

    # -- to be provided: how to reach the shards ------------------------------------------
    def call(self, method: str, *args: Any) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def call_each(self, method: str, args: Sequence[tuple]) -> list[Any]:  # pragma: no cover
        raise NotImplementedError

    def call_one(self, shard: int, method: str, *args: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _setup(self, metas: Sequence[Any]) -> None:
        """The whole collection's fields and metadata, from every shard's ``store.Meta``."""
        self.fields, self.text_fields = union_fields(metas)
        if (self.fields, self.text_fields) != (self.manifest.fields, self.manifest.text_fields):
            raise DamagedCollection(f"{self.path}: the shards' fields are not the manifest's "
                                    "(a shard of another collection); rebuild")
        t = self.manifest.totals
        self.meta = replace(metas[0], documents=t.documents,
                            sections=sum(m.sections for m in metas), avg_words=t.avg_words,
                            content_hash=self.manifest.content_hash(),
                            max_section_bytes=max(m.max_section_bytes
                                                                   for m in metas),
                            **{f"has_{f}": any(getattr(m, f"has_{f}") for m in metas)
                               for f in ("section", "infobox", "author", "date")})

    # -- what a Collection exposes ---------------------------------------------------------
    @property
    def shards(self) -> int:
        return len(self.manifest.shards)

    @property
    def documents(self) -> int:
        return self.manifest.totals.documents

    @property
    def avg_words(self) -> float:
        return self.manifest.totals.avg_words

    @property
    def embed_model(self) -> str:
        return self.manifest.embed_model

    @property
    def embed_dim(self) -> int:
        return self.manifest.embed_dim

    @property
    def has_vectors(self) -> bool:
        return self.embed_dim > 0

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        # each shard call runs on one read transaction of its file (the files are read-only)
        yield

    def __enter__(self) -> Coordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        pass

    def shard_for(self, doc_id: str) -> int:
        return shard_of(doc_id, self.shards)

    def doc_rowid(self, doc_id: str) -> int | None:
        """Not a rowid (a sharded collection has none): 0 when the document exists, else
        None; callers only test it against None."""
        return 0 if self.call_one(self.shard_for(doc_id), "has", doc_id) else None

    def document(self, doc_id: str) -> dict[str, Any] | None:
        return self.call_one(self.shard_for(doc_id), "document", doc_id)

    def info(self) -> dict[str, Any]:
        per = self.call("info")
        m = self.manifest
        first = per[0]
        return {**first, "path": str(self.path), "documents": self.documents,
                "sections": sum(p["sections"] for p in per), "fields": list(self.fields),
                "avg_words": round(self.avg_words, 1), "name": m.name or first.get("name"),
                "build_time": m.build_time or first["build_time"],
                "content_hash": self.meta.content_hash,
                "size_bytes": sum(p["size_bytes"] for p in per),
                "shards": self.shards,
                # one line each: every renderer (rich, compact, tsv, json) shows them as is
                "shard_files": [f"{e.file}: {e.documents} documents, sha256 {e.sha256}"
                                for e in m.shards]}

    @property
    def conn(self) -> Any:
        """Shard 0's read-only connection: a sample of the collection (the hash rule spreads
        documents evenly) for what reads SQL directly rather than through this interface,
        the agent's manual (example queries it then checks with ``search``) and its word
        rarity. Search, fetch and scoring never use it."""
        return self._sample().conn

    def _sample(self) -> Any:  # pragma: no cover - provided by the subclasses
        raise NotImplementedError

    def passage_scores_of(self, terms: Sequence[Any], doc_id: str) -> list[Any]:
        """``rank.passage_scores`` of one document, on its shard, with global statistics."""
        dfs = self._gather_dfs([], terms)
        return self.call_one(self.shard_for(doc_id), "passage_scores", list(terms), doc_id,
                             dfs)

    # -- fetch ----------------------------------------------------------------------------
    def fetch(self, doc: str | int, section: str | None = None) -> Any:
        """``sieve_lite.fetch.fetch`` over the shards: the id picks the shard; a rank reads
        the last search listing; errors name the same things as a one-file fetch."""
        from ..fetch import id_at_rank, listed_ids

        if isinstance(doc, bool) or not isinstance(doc, (int, str)):
            raise SectionError(f"a document is named by its id or its rank, not {doc!r}")
        doc_id = id_at_rank(self, doc) if isinstance(doc, int) else doc
        owner = self.shard_for(doc_id)
        if not self.call_one(owner, "has", doc_id):
            if isinstance(doc, str) and doc.strip().isdigit():
                if listed_ids(self):
                    return self.fetch(int(doc.strip()), section)
                raise SectionError(f"no document has the id {doc!r}, and there is no search "
                                   "listing to read it as a rank in; give the document id "
                                   "from a card")
            near = sorted({i for got in self.call("ids_ignoring_case", doc_id) for i in got})[:5]
            hint = f"; did you mean {', '.join(repr(i) for i in near)}?" if near else \
                "; take the id from a search result card"
            raise SectionError(f"no document has the id {doc_id!r} in this collection{hint}")
        return self.call_one(owner, "fetch", doc_id, section)

    # -- search ---------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, ranker: str = "hybrid", strict: bool = False,
               embed: Any = None):
        """Run a BQL query over every shard; returns a ``sieve_lite.search.SearchResult``
        equal to the one-file build's (see the module docstring). ``embed`` (text -> vector)
        replaces the query embedder, as in ``Collection.search`` (servers batch it)."""
        from .. import rank as rk
        from ..cards import body_words
        from ..search import Hit, SearchResult, check_options, parse, zero_hits

        check_options(ranker, k)
        node = parse(self, query)
        words = positive_words(node)
        res = SearchResult(query=query, ranker=ranker, total=0, requested_ranker=ranker,
                           k=k, strict=strict)
        # What would rank (rank_set's decisions, made once here: notes in its words).
        rank_notes: list[str] = []
        eff, qvec = ranker, None
        if not words:
            rank_notes.append("the query has no positive words to rank by: documents are "
                              "listed by id")
            eff = "id"
        elif ranker in ("dense", "hybrid") and not self.has_vectors:
            rank_notes.append(f"{ranker} ranking needs embeddings and this collection has none "
                              "(built with --no-embed): ranked with bm25")
            eff = "bm25"
        elif ranker in ("dense", "hybrid"):
            try:
                text = rk.query_text(words)
                qvec = embed(text) if embed is not None else rk.embed_query(self, text)
            except EnvironmentProblem as e:
                rank_notes.append(f"{ranker} ranking is unavailable ({e}): ranked with bm25")
                eff = "bm25"
        terms = rk.scoring_terms(words)
        card_terms = rk.scoring_terms(body_words(positive_atoms(node), self.text_fields)
                                      or words)
        dfs = self._gather_dfs(terms if eff == "bm25-doc" else [],
                               [*terms, *card_terms] if words else [])
        key = (query, eff, k)
        parts = self.call("run", node, eff, k, qvec, dfs, False, key)
        res.total = res.ranked = sum(p["total"] for p in parts)
        fallback = False
        if res.total == 0:
            counts = self.call("clause_counts", node)
            res.clause_counts = [(c, sum(got[i][1] for got in counts))
                                 for i, (c, _) in enumerate(counts[0])]
            fallback = zero_hits(res, strict, bool(words), self.documents)
            if fallback:
                parts = self.call("run", node, eff, k, qvec, dfs, True, key)
        hits: list[tuple[float, str, int]] = []
        if res.total or fallback:
            res.ranker = eff
            res.notes += rank_notes
            if eff == "hybrid":
                hits = self._fuse(parts, node, qvec, dfs, fallback, key, k)
            else:
                hits = sorted(((s, i, n) for n, p in enumerate(parts)
                               for s, i in p.get("ranked", ())),
                              key=lambda e: (-e[0], e[1]))[:k]
            if len(hits) < k:
                fill = sorted((i, n) for n, p in enumerate(parts) for i in p.get("fill", ()))
                hits += [(0.0, i, n) for i, n in fill[:k - len(hits)]]
        res.results = [Hit(c.rank, c.id, c.title, c.score, c)
                       for c in self._cards(node, hits, bool(res.total), dfs)]
        self._session = res
        return res

    def _gather_dfs(self, doc_terms: Sequence[Any], passage_terms: Sequence[Any]
                    ) -> dict[tuple[str, str, bool], int]:
        """The global dfs the manifest cannot hold (``stats.py``), summed over the shards."""
        keys = list(dict.fromkeys(
            [("document", t.word, t.prefix) for t in doc_terms]
            + [("passage", t.word, True) for t in passage_terms if t.prefix]))
        if not keys:
            return {}
        per = self.call("local_dfs", keys)
        return {key: sum(p[j] for p in per) for j, key in enumerate(keys)}

    def _fuse(self, parts: list[dict], node: Any, qvec: Any, dfs: dict, fallback: bool,
              key: Any, k: int) -> list[tuple[float, str, int]]:
        """RRF of the two global runs (``rank.hybrid``), from each shard's two windows."""
        from ..rank import RRF_K

        depth = 2 * k + RRF_K
        owner: dict[str, int] = {}
        ranks: list[dict[str, int]] = []
        scores: list[dict[str, float]] = []
        for run in ("bm25", "dense"):
            merged = sorted(((s, i, n) for n, p in enumerate(parts) for s, i in p.get(run, ())),
                            key=lambda e: (-e[0], e[1]))[:depth]
            ranks.append({i: r + 1 for r, (_, i, _) in enumerate(merged)})
            scores.append({i: s for s, i, _ in merged})
            owner.update((i, n) for _, i, n in merged)
        cand = sorted(owner)
        # A candidate outside one run's window: its score there (from its owner) ...
        missing = [c for c in cand if c not in ranks[0] or c not in ranks[1]]
        by_shard: dict[int, list[str]] = {}
        for c in missing:
            by_shard.setdefault(owner[c], []).append(c)
        for n, ids in by_shard.items():
            got = self.call_one(n, "hybrid_scores", node, qvec, dfs, fallback, key, ids)
            for c, pair in zip(ids, got, strict=True):
                for run in (0, 1):
                    if c not in ranks[run] and pair[run] is not None:
                        scores[run][c] = pair[run]
        # ... then its rank in that run: the documents above it, counted on every shard.
        want = [[(scores[run][c], c) for c in missing
                 if c not in ranks[run] and c in scores[run]] for run in (0, 1)]
        if want[0] or want[1]:
            counts = self.call("hybrid_counts", node, qvec, dfs, fallback, key, tuple(want))
            for run in (0, 1):
                for j, (_, c) in enumerate(want[run]):
                    ranks[run][c] = 1 + sum(got[run][j] for got in counts)
        fused = []
        for c in cand:
            score = 0.0
            for run in (0, 1):
                r = ranks[run].get(c, 0)
                score += 1.0 / (RRF_K + max(r, 1)) if r > 0 else 0.0
            if score > 0:
                fused.append((score, c, owner[c]))
        fused.sort(key=lambda e: (-e[0], e[1]))
        return fused[:k]

    def _cards(self, node: Any, hits: list[tuple[float, str, int]], admitted: bool,
               dfs: dict) -> list[Any]:
        """The hits' cards, built by their shards, in rank order."""
        if not hits:
            return []
        mine: dict[int, list[tuple[int, float, str]]] = {}
        for rank, (s, i, n) in enumerate(hits, 1):
            mine.setdefault(n, []).append((rank, s, i))
        shards = sorted(mine)
        got = self.call_subset(shards, "cards", [
            (node, [(s, i) for _, s, i in mine[n]], admitted, 1, dfs) for n in shards])
        cards: dict[int, Any] = {}
        for n, cs in zip(shards, got, strict=True):
            for (rank, _, _), c in zip(mine[n], cs, strict=True):
                cards[rank] = replace(c, rank=rank)
        return [cards[r] for r in sorted(cards)]

    def call_subset(self, shards: Sequence[int], method: str,
                    args: Sequence[tuple]) -> list[Any]:
        return [self.call_one(n, method, *a) for n, a in zip(shards, args, strict=True)]


class ShardedCollection(Coordinator):
    """A sharded collection opened in this process: one ``ShardWorker`` (one read-only
    connection) per shard file. Thread-unsafe, like ``Collection``: open one per thread.

    Opening checks the manifest, every shard's SHA-256 (in parallel threads) and every
    shard's own metadata against it; a mixed or tampered shard is refused with one line
    (``DamagedCollection``, exit code 3). ``local_stats`` scores each shard with its own
    statistics: wrong on purpose, the tests' negative control."""

    def __init__(self, path: str | Path, local_stats: bool = False) -> None:
        from .worker import ShardWorker

        self.path = Path(path)
        self.manifest = m = load(self.path)
        files = [self.path / e.file for e in m.shards]
        for f in files:
            if not f.is_file():
                raise DamagedCollection(f"{f} is missing: a sharded collection needs every "
                                        "shard the manifest lists")
        with ThreadPoolExecutor(max_workers=min(8, len(files))) as pool:
            sums = list(pool.map(sha256_file, files))
        self.workers: list[Any] = []
        try:
            for i in range(len(files)):
                self.workers.append(ShardWorker(self.path, i, m, checksum=sums[i],
                                                local_stats=local_stats))
            self._setup([w.coll.meta for w in self.workers])
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for w in self.workers:
            w.close()
        self.workers = []

    def _sample(self) -> Any:
        return self.workers[0].coll

    def call(self, method: str, *args: Any) -> list[Any]:
        return [getattr(w, method)(*args) for w in self.workers]

    def call_one(self, shard: int, method: str, *args: Any) -> Any:
        return getattr(self.workers[shard], method)(*args)
