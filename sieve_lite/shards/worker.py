"""One shard's side of a sharded search: a ``ShardWorker`` holds one shard file open and answers
the coordinator's requests (``coordinator.py``) with plain, picklable values, so the same
class runs in process (``ShardedCollection``) and inside a Ray actor (``shards.ray``).

Every method takes the parsed query (BQL's AST, what the coordinator compiled once) and the
global dfs the coordinator gathered for it, and runs on one read transaction of the file.
Documents are named by their string ids between processes; rowids stay inside the shard.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from .. import rank as rk
from ..bql.ast import Node, positive_atoms, positive_words, required_atoms
from ..cards import build_cards
from ..collection import Collection
from ..search import clause_counts, select
from ..store import ranking as sql
from ..store import reads
from .manifest import Manifest, check_shard, load, sha256_file
from .stats import GlobalStats

Entry = tuple[float, str]  # (score, document id)
_KEEP_RUNS = 8  # hybrid runs kept for the second round of the same query


class ShardWorker:
    """Shard ``index`` of the sharded collection at ``folder``, opened defensively and checked
    against the manifest (checksum, schema, tokenizer, model, counts). ``local_stats``: score
    with the shard's own statistics (the tests' negative control; never for real use)."""

    def __init__(self, folder: str | Path, index: int, manifest: Manifest | None = None,
                 checksum: str | None = None, local_stats: bool = False) -> None:
        self.folder = Path(folder)
        self.index = index
        if manifest is None:  # (a Ray actor reads it on its own node)
            manifest = load(self.folder)
        path = self.folder / manifest.shards[index].file
        if checksum is None:
            checksum = sha256_file(path)
        self.coll = Collection(path)
        try:
            check_shard(self.folder, manifest, index, self.coll.meta, checksum)
        except BaseException:
            self.coll.close()
            raise
        # The whole collection's fields: a query naming a field only other shards hold must
        # parse and compile here too (the tables exist in every shard, possibly empty), and
        # the cards attribute fields as the one-file build does.
        self.coll.fields, self.coll.text_fields = manifest.fields, manifest.text_fields
        if not local_stats:
            self.coll.global_stats = GlobalStats(manifest.totals, manifest.df)  # type: ignore
        self._runs: OrderedDict[Any, tuple] = OrderedDict()

    def meta(self) -> Any:
        return self.coll.meta

    def ray_node(self) -> str:
        """The Ray node this actor runs on (called only on Ray, so ray is importable)."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def ready(self) -> int:
        """The shard's document count (a Ray actor answers once it is open)."""
        return self.coll.documents

    def close(self) -> None:
        self.coll.close()

    # -------------------------------------------------------------------------- statistics
    def local_dfs(self, keys: list[tuple[str, str, bool]]) -> list[int]:
        """This shard's own df of each (level, word, prefix): passages (``passage``) or
        documents (``document``, bm25-doc's title + text) holding the word or the prefix."""
        out = []
        with self.coll.snapshot():
            for level, word, prefix in keys:
                if level == "passage":
                    out.append(len(rk.postings(self.coll, word, prefix)[0]))
                else:
                    packed = sql.document_tf(self.coll.conn,
                                             f'"{word}"' + ("*" if prefix else ""))
                    out.append(int(np.count_nonzero(np.bincount(
                        packed >> sql.TF_BITS, weights=packed & sql.TF_MASK)))
                               if len(packed) else 0)
        return out

    def _gathered(self, dfs: dict) -> None:
        gs = getattr(self.coll, "global_stats", None)
        if gs is not None and dfs:
            gs.add(dfs)

    # ------------------------------------------------------------------------------ ranking
    def _admitted(self, node: Node, fallback: bool) -> np.ndarray | None:
        return None if fallback else select(self.coll, node)

    def _ids(self, rows: np.ndarray, scores: np.ndarray) -> list[Entry]:
        ids = sql.ids_of(self.coll.conn, rows)
        return [(float(s), ids[int(r)]) for r, s in zip(rows, scores, strict=True)]

    def _fill(self, admitted: np.ndarray | None, exclude: list[np.ndarray],
              k: int) -> list[str]:
        """The first ``k`` admitted documents by id outside ``exclude`` (what ``fill_by_id``
        appends after the scored ones)."""
        stats = rk.doc_stats(self.coll)
        rest = rk.admitted_rows(stats, admitted)
        for ex in exclude:
            if len(ex) and len(rest):
                rest = rest[~np.isin(rest, ex)]
        rest = rest[np.argsort(stats.id_rank[rest], kind="stable")][:k]
        ids = sql.ids_of(self.coll.conn, rest)
        return [ids[int(r)] for r in rest]

    def run(self, node: Node, ranker: str, k: int, qvec: np.ndarray | None, dfs: dict,
            fallback: bool, key: Any) -> dict[str, Any]:
        """Select (unless ``fallback``: the whole shard) and rank by ``ranker`` (the effective
        one: id, bm25, bm25-doc, dense or hybrid). Returns ``total`` (admitted here) and,
        when something is ranked: ``ranked`` (the shard's top ``k`` scored), ``fill`` (the
        first ``k`` unscored by id); for hybrid ``bm25``/``dense`` (each run's top 2k + 60)
        and the runs' sizes."""
        self._gathered(dfs)
        with self.coll.snapshot():
            admitted = self._admitted(node, fallback)
            out: dict[str, Any] = {"total": 0 if admitted is None else len(admitted)}
            if admitted is not None and not len(admitted):
                return out
            words = positive_words(node)
            terms = rk.scoring_terms(words)
            if ranker == "id":
                out["ranked"], out["fill"] = [], self._fill(admitted, [], k)
            elif ranker in ("bm25", "bm25-doc"):
                pairs = rk.bm25_pairs if ranker == "bm25" else rk.bm25_doc_pairs
                rows, scores = pairs(self.coll, terms, admitted)
                rows, scores = rk.sort_scored(rk.doc_stats(self.coll), rows, scores, k)
                out["ranked"] = self._ids(rows, scores)
                out["fill"] = self._fill(admitted, [rows], k) if len(rows) < k else []
            elif ranker == "dense":
                rows, sims = rk.dense_order(self.coll, qvec, admitted, k)
                out["ranked"] = self._ids(rows, sims)
                out["fill"] = self._fill(admitted, [rows], k) if len(rows) < k else []
            else:
                b, d = self._hybrid_runs(node, terms, qvec, admitted, key)
                depth = 2 * k + rk.RRF_K
                stats = rk.doc_stats(self.coll)
                out["bm25"] = self._ids(*rk.sort_scored(stats, b[0], b[1], depth))
                out["dense"] = self._ids(*rk.sort_scored(stats, d[0], d[1], depth))
                # the fused list is short of k only when both runs are, everywhere
                out["fill"] = self._fill(admitted, [b[0], d[0]], k) \
                    if max(len(b[0]), len(d[0])) < k else []
            return out

    def _hybrid_runs(self, node: Node, terms: list, qvec: np.ndarray | None,
                     admitted: np.ndarray | None, key: Any) -> tuple:
        """Both full runs of a hybrid query: ((bm25 rows, scores), (dense rows, sims)), kept
        for the second round (``hybrid_scores``/``hybrid_counts``) under ``key``."""
        got = self._runs.get(key)
        if got is not None:
            self._runs.move_to_end(key)
            return got
        b = rk.bm25_pairs(self.coll, terms, admitted)
        if rk.use_matrix(self.coll):
            d = rk.dense_scores(self.coll, qvec, admitted)
        else:
            d = rk.dense_order_sqlite(self.coll.conn, qvec, admitted)
        got = self._runs[key] = (b, d)
        if len(self._runs) > _KEEP_RUNS:
            self._runs.popitem(last=False)
        return got

    def _again(self, node: Node, qvec: np.ndarray | None, dfs: dict, fallback: bool,
               key: Any) -> tuple:
        self._gathered(dfs)
        admitted = self._admitted(node, fallback)
        return self._hybrid_runs(node, rk.scoring_terms(positive_words(node)), qvec,
                                 admitted, key)

    def hybrid_scores(self, node: Node, qvec: np.ndarray | None, dfs: dict, fallback: bool,
                      key: Any, ids: list[str]) -> list[tuple[float | None, float | None]]:
        """Each of this shard's documents ``ids``: its (bm25, dense) score in the full runs,
        None where it is not in a run."""
        with self.coll.snapshot():
            runs = self._again(node, qvec, dfs, fallback, key)
            out = []
            for doc_id in ids:
                row = self.coll.doc_rowid(doc_id)
                pair = []
                for rows, scores in runs:
                    at = np.flatnonzero(rows == row) if row is not None else []
                    pair.append(float(scores[at[0]]) if len(at) else None)
                out.append((pair[0], pair[1]))
            return out

    def hybrid_counts(self, node: Node, qvec: np.ndarray | None, dfs: dict, fallback: bool,
                      key: Any, wanted: tuple[list[Entry], list[Entry]]) -> list[list[int]]:
        """For each (score, id) of each run: how many of this shard's documents rank above it
        in that run (a higher score, or the same score and a smaller id). Summed over the
        shards, plus one, that is its rank in the whole collection's run."""
        with self.coll.snapshot():
            runs = self._again(node, qvec, dfs, fallback, key)
            out = []
            for (rows, scores), want in zip(runs, wanted, strict=True):
                neg = np.sort(-np.asarray(scores, dtype=np.float64))
                counts = []
                for s, doc_id in want:
                    higher = int(np.searchsorted(neg, -s, side="left"))
                    tied = int(np.searchsorted(neg, -s, side="right")) - higher
                    if tied:
                        same = rows[np.asarray(scores, dtype=np.float64) == s]
                        ids = sql.ids_of(self.coll.conn, same)
                        higher += sum(1 for i in ids.values() if i < doc_id)
                    counts.append(higher)
                out.append(counts)
            return out

    # -------------------------------------------------------------------------- the rest
    def clause_counts(self, node: Node) -> list[tuple[str, int]]:
        with self.coll.snapshot():
            return clause_counts(self.coll, node)

    def cards(self, node: Node, hits: list[Entry], admitted: bool, first_rank: int,
              dfs: dict) -> list[Any]:
        """Cards of this shard's ``hits`` ((score, id), best first)."""
        self._gathered(dfs)
        with self.coll.snapshot():
            rows = [(self.coll.doc_rowid(i), s) for s, i in hits]
            return build_cards(self.coll, rows, positive_atoms(node), positive_words(node),
                               first_rank, required=required_atoms(node) if admitted else ())

    def passage_scores(self, terms: list[Any], doc_id: str, dfs: dict) -> list[Any]:
        self._gathered(dfs)
        with self.coll.snapshot():
            row = self.coll.doc_rowid(doc_id)
            return [] if row is None else rk.passage_scores(self.coll, terms, row)

    def has(self, doc_id: str) -> bool:
        with self.coll.snapshot():
            return self.coll.doc_rowid(doc_id) is not None

    def ids_ignoring_case(self, doc_id: str) -> list[str]:
        with self.coll.snapshot():
            return reads.ids_ignoring_case(self.coll.conn, doc_id)

    def document(self, doc_id: str) -> dict[str, Any] | None:
        return self.coll.document(doc_id)

    def fetch(self, doc_id: str, section: str | None) -> Any:
        return self.coll.fetch(doc_id, section)

    def info(self) -> dict[str, Any]:
        return self.coll.info()

    def title(self, doc_id: str) -> str | None:
        with self.coll.snapshot():
            row = reads.document_row(self.coll.conn, doc_id)
        return row[2] if row else None
