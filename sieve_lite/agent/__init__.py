"""The offline research agent: a ReAct loop over search, fetch and answer (``sieve-lite ask``).

Modules: ``backbones`` (models), ``syntax`` (the action syntax, its parser and grammar),
``tools`` (the engine as the loop sees it, three access modes), ``manual`` (the system prompt,
generated from the collection), ``loop`` (budgets, trimming, accounting), ``transcript``
(JSON Lines transcripts and the live view), ``run`` (one question end to end; the ``ask``
command in ``sieve_lite.cli.ask`` calls it).
"""

from __future__ import annotations
