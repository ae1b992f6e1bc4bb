"""Global statistics injected into one shard's scorers (``sieve_lite.rank`` reads them through
``coll.global_stats``).

A shard file is an ordinary collection; scored with its own N, df and avgdl its BM25 scores
(and so its rankings and the cards' best passages) differ from the one-file build's. With the
collection-wide values every per-document score is the one-file score bit for bit, which is
what lets the coordinator merge each shard's top k exactly (Elasticsearch's
``dfs_query_then_fetch``, Solr's ``ExactStatsCache``).

* passage level (``bm25``, the cards): N passages and avgdl from the manifest; df of a word
  from the manifest's table, computed once at build time;
* document level (``bm25-doc``): N documents and avg_words from the manifest;
* what no table can hold is gathered per query by the coordinator (``Coordinator.dfs``) and
  handed to every shard with the query (``add``): the df of a prefix unit (passages or
  documents holding *any* word starting with the stem: a union, not a sum of word dfs) and the
  document-level df of ``bm25-doc`` (documents whose title or text holds the word). Each is the
  sum of the shards' own counts, exact because the shards hold disjoint documents.
"""

from __future__ import annotations

from .manifest import GlobalTotals

_KEEP = 100_000  # gathered dfs kept per shard (a value never changes for a read-only build)


class MissingStatistic(RuntimeError):
    """A scorer needed a df the coordinator did not gather (our bug, never the user's)."""


class GlobalStats:
    def __init__(self, totals: GlobalTotals, df: dict[str, int]) -> None:
        self.documents = totals.documents
        self.avg_words = totals.avg_words
        self.passages = totals.passages
        self.avgdl = totals.avgdl
        self._df = df
        self._gathered: dict[tuple[str, str, bool], int] = {}

    def passage_df(self, word: str, prefix: bool) -> int:
        if not prefix:
            return self._df.get(word, 0)
        return self._get(("passage", word, True))

    def document_df(self, word: str, prefix: bool) -> int:
        return self._get(("document", word, prefix))

    def _get(self, key: tuple[str, str, bool]) -> int:
        try:
            return self._gathered[key]
        except KeyError:
            raise MissingStatistic(f"global df of {key} was not gathered") from None

    def has(self, key: tuple[str, str, bool]) -> bool:
        return key in self._gathered or (key[0] == "passage" and not key[2])

    def add(self, dfs: dict[tuple[str, str, bool], int]) -> None:
        if len(self._gathered) + len(dfs) > _KEEP:
            self._gathered.clear()
        self._gathered.update(dfs)
