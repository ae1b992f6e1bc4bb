"""Names and bounds of the search options, importable without numpy or any model code.

The rankers and ``search`` use them, and so do the command line and other front ends, which
declare their options when they are imported: keeping these here lets ``sieve-lite fetch`` and
``info`` start without importing the ranking stack (numpy, sqlglot, the embedder).
"""

from __future__ import annotations

RANKERS = ("bm25", "bm25-doc", "dense", "hybrid")  # what ``search(ranker=...)`` accepts
MAX_K = 1000  # the most results one search returns
MODES = ("sieve", "search-fetch", "search-visit")  # the agent's access modes; eval compares them
