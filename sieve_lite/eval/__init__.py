"""``sieve-lite eval``: the paper's study on your own collection and questions.

* ``questions``: the generic JSON Lines form and the shared 2Wiki/HotpotQA/MuSiQue files;
* ``metrics``: EM, F1, containment, gold recall, the failure split, McNemar, paired t;
* ``oracle``: the LLM-free oracle replay and one-shot retrieval;
* ``runner``: a resumable run over questions x modes (``run_eval``);
* ``summary`` and ``report``: summary.json, report.md and the plots.
"""

from __future__ import annotations

from ..options import MODES
from .metrics import contains, exact_match, f1, gold_recall, mcnemar, normalize_answer, recall_at
from .questions import EvalQuestion, Question, load_questions, read_questions
from .runner import EvalOptions, EvalRun, run_eval

__all__ = ["MODES", "EvalOptions", "EvalQuestion", "EvalRun", "Question", "contains",
           "exact_match", "f1", "gold_recall", "load_questions", "mcnemar", "normalize_answer",
           "read_questions", "recall_at", "run_eval"]
