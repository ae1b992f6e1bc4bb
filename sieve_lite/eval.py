"""Evaluation helpers: the shared QA questions, answer normalisation, EM/F1, gold recall.

Gold passages are identified by title (every QA builder keeps the passage title as the
document title), so these metrics do not depend on the id scheme of a collection.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answers: tuple[str, ...]
    gold_titles: tuple[str, ...]
    dataset: str


def load_questions(dataset: str, shared: Path, gold_only: bool = True) -> list[Question]:
    """Questions of ``2wiki``, ``hotpotqa`` or ``musique`` from ``shared/data/qa``.

    For HotpotQA, ``gold_only`` keeps the 342 questions whose gold paragraphs are in the
    collection (``gold_in_context``).
    """
    base = shared / "data" / "qa" / dataset
    out: list[Question] = []
    if dataset == "2wiki":
        for q in json.loads((base / "questions.json").read_text(encoding="utf-8")):
            gold = tuple(dict.fromkeys(t for t, _ in q["supporting_facts"]))
            out.append(Question(q["_id"], q["question"], (q["answer"],), gold, dataset))
    elif dataset == "hotpotqa":
        with open(base / "questions.jsonl", encoding="utf-8") as f:
            for i, line in enumerate(f):
                q = json.loads(line)
                if gold_only and not q.get("gold_in_context"):
                    continue
                gold = tuple(dict.fromkeys(t for t, _ in q["supporting_facts"]))
                out.append(Question(q.get("id") or f"hotpotqa-{i}", q["question"],
                                    (q["answer"],), gold, dataset))
    elif dataset == "musique":
        for q in json.loads((base / "questions.json").read_text(encoding="utf-8")):
            gold = tuple(p["title"] for p in q["paragraphs"] if p.get("is_supporting"))
            answers = (q["answer"], *q.get("answer_aliases", []))
            out.append(Question(q["id"], q["question"], tuple(answers), gold, dataset))
    else:
        raise ValueError(f"unknown dataset {dataset!r}; use 2wiki, hotpotqa or musique")
    return out


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lowercase, drop punctuation and articles, squeeze spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(a) for a in answers))


def f1(prediction: str, answers: Iterable[str]) -> float:
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


def recall_at(ranked_titles: list[str], gold: Iterable[str], k: int) -> float:
    """Share of gold titles among the first k ranked titles."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set & set(ranked_titles[:k])) / len(gold_set)
