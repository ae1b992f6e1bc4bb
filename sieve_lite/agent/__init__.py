"""The offline research agent: a ReAct loop over search, fetch and answer (``sieve-lite ask``).

Modules: ``question`` (one reading of the question), ``plan`` (its BQL), ``queries`` (the
searches offered), ``read`` and ``choice`` (prose narrowed to candidates, the model's choice),
``compare`` and ``bridge`` (the engine's routes), ``hops`` (links a read names), ``spans`` and
``answers`` (grounded, typed answers), ``backbones``, ``servers``, ``schema`` and ``probe``
(models in process and behind servers), ``syntax`` (the action syntax, its parser and
``Menu``), ``tools`` (the engine as the loop sees it, three access modes), ``manual`` (the
system prompt), ``context`` and ``state`` (the conversation, what was seen and read),
``loop`` (the ReAct loop), ``transcript`` (JSON Lines transcripts and the live view), ``run``
(one question end to end; the ``ask`` command in ``sieve_lite.cli.ask`` calls it).
"""

from __future__ import annotations
