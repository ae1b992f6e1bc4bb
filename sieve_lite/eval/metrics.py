"""Answer and retrieval metrics, and the paired tests between modes.

* EM and F1 with SQuAD's normalisation (lowercase, no punctuation, no articles, squeezed
  spaces), best over the answer and its aliases; containment (a normalised answer occurs in
  the normalised prediction as whole words), which small models need (they rarely stop at
  the span).
* Gold-document recall: the share of a question's gold documents in a list of ids.
* McNemar's exact test on paired right/wrong outcomes (scipy's binomial test on the
  discordant pairs), and a paired t-test on costs (scipy), as the paper reports them.

Gold documents are compared by id; the shared QA collections use the passage title as the
id, so these functions work with titles there too.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lowercase, drop punctuation and articles, squeeze spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(a) for a in answers))


def f1(prediction: str, answers: Iterable[str]) -> float:
    """Token F1 (SQuAD), best over the answers."""
    best = 0.0
    p_tokens = normalize_answer(prediction).split()
    for a in answers:
        a_tokens = normalize_answer(a).split()
        common = Counter(p_tokens) & Counter(a_tokens)
        same = sum(common.values())
        if same == 0:
            continue
        precision, recall = same / len(p_tokens), same / len(a_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains(prediction: str, answers: Iterable[str]) -> float:
    """1.0 when a normalised answer occurs in the normalised prediction as whole words."""
    p = f" {normalize_answer(prediction)} "
    for a in answers:
        na = normalize_answer(a)
        if na and f" {na} " in p:
            return 1.0
    return 0.0


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold ids among the first k ranked ids (0 when there is no gold)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set & set(ranked[:k])) / len(gold_set)


def gold_recall(seen: Iterable[str], gold: Iterable[str]) -> float:
    """Share of the gold ids among ``seen`` (any order)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set & set(seen)) / len(gold_set)


def failure(correct: bool, surfaced: float, read: float) -> str:
    """The paper's failure split of one answer: ``correct``, ``never-retrieved`` (no gold
    document ever in a result), ``not-read`` (surfaced, never opened) or ``read-wrong``
    (a gold document was read and the answer is still wrong)."""
    if correct:
        return "correct"
    if read > 0:
        return "read-wrong"
    if surfaced > 0:
        return "not-read"
    return "never-retrieved"


FAILURES = ("correct", "never-retrieved", "not-read", "read-wrong")


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test of two modes on the same questions."""

    a: str
    b: str
    n: int            # questions both modes answered
    both: int         # right in both
    only_a: int       # right in a only
    only_b: int       # right in b only
    neither: int
    p_value: float    # two-sided exact (binomial on the discordant pairs); 1.0 if none

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "n": self.n, "both": self.both,
                "only_a": self.only_a, "only_b": self.only_b, "neither": self.neither,
                "p_value": round(self.p_value, 6)}


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided p-value of McNemar's exact test from the discordant counts."""
    from scipy.stats import binomtest

    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(binomtest(only_a, n, 0.5, alternative="two-sided").pvalue)


def mcnemar(a: str, b: str, outcomes_a: dict[str, bool], outcomes_b: dict[str, bool]
            ) -> McNemar:
    """Pair two modes' right/wrong outcomes by question id and test them."""
    ids = sorted(set(outcomes_a) & set(outcomes_b))
    both = sum(outcomes_a[i] and outcomes_b[i] for i in ids)
    only_a = sum(outcomes_a[i] and not outcomes_b[i] for i in ids)
    only_b = sum(outcomes_b[i] and not outcomes_a[i] for i in ids)
    neither = len(ids) - both - only_a - only_b
    return McNemar(a, b, len(ids), both, only_a, only_b, neither,
                   mcnemar_exact(only_a, only_b))


def paired_t(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Two-sided p-value of a paired t-test (None with fewer than two pairs or no
    variation in the differences, where the test says nothing)."""
    from scipy.stats import ttest_rel

    if len(xs) < 2 or len(xs) != len(ys):
        return None
    diffs = [x - y for x, y in zip(xs, ys, strict=True)]
    if all(d == diffs[0] for d in diffs):
        return None
    p = float(ttest_rel(xs, ys).pvalue)
    return None if math.isnan(p) else p
