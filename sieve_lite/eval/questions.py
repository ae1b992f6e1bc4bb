"""Evaluation questions: the generic JSON Lines form, and the shared 2Wiki, HotpotQA and
MuSiQue files read as they are.

The generic form, one object per line (a JSON array of the same objects works too)::

    {"id": "q1", "question": "...", "answer": "...", "answer_aliases": ["..."],
     "gold_docs": ["doc-a", "doc-b"], "gold_sections": [["doc-a", "Abstract"]],
     "kind": "two-hop", "hops": 2}

``id``, ``question`` and ``answer`` are required; ``gold_docs`` are document ids in hop order
(the oracle replay follows them), ``gold_sections`` name the section of a gold document that
holds the evidence (``infobox`` for the infobox); ``kind`` groups the metrics.

The shared sets are recognised by their own keys: 2Wiki (``_id``, ``supporting_facts``,
``evidences``), HotpotQA (``supporting_facts``; only the questions whose gold passages are in
the shared collection, ``gold_in_context``, are kept) and MuSiQue (``paragraphs`` with
``is_supporting``, hop order from ``question_decomposition``). Their gold passages are named
by title; ``resolve_gold`` turns titles into the ids of a collection (``sources/qa.py``: the
title itself, or title + a hash of the text when the title repeats).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import QuestionError

FORMATS = ("generic", "2wiki", "hotpotqa", "musique")


@dataclass(frozen=True)
class GoldRef:
    """A gold document as the questions file names it: an id (generic form), or a passage
    title with, for MuSiQue, its text (to tell apart passages that share a title)."""

    name: str
    text: str | None = None
    is_title: bool = False


@dataclass(frozen=True)
class EvalQuestion:
    """One question of an evaluation run."""

    id: str
    question: str
    answers: tuple[str, ...]                      # the answer first, then its aliases
    gold: tuple[GoldRef, ...] = ()                # in hop order
    gold_sections: tuple[tuple[str, str], ...] = ()
    kind: str = ""
    hops: int = 1
    dataset: str = "generic"
    line: int = 0                                 # where it was read (for messages)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def answer(self) -> str:
        return self.answers[0]


@dataclass
class QuestionSet:
    """The questions of one file, and what was left out (and why)."""

    path: Path
    format: str
    questions: list[EvalQuestion]
    skipped: int = 0
    skipped_reason: str = ""


# -- reading -------------------------------------------------------------------------------
def _records(path: Path) -> list[tuple[int, Any]]:
    """(line, object) of a JSON array or a JSON Lines file; a syntax error is one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise QuestionError(f"questions file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise QuestionError(f"{path}: not valid UTF-8 ({e.reason})") from None
    except OSError as e:
        raise QuestionError(f"cannot read {path}: {e.strerror}") from None
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise QuestionError(f"{path}:{e.lineno}: not valid JSON: {e.msg}") from None
        # Line numbers of array elements are not kept by json; number them instead.
        return [(i, obj) for i, obj in enumerate(data, start=1)]
    out = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise QuestionError(f"{path}:{n}: not valid JSON: {e.msg} at character "
                                f"{e.colno}") from None
    return out


def detect_format(obj: Any) -> str:
    """Which of ``FORMATS`` one record is written in."""
    if not isinstance(obj, dict):
        return "generic"
    if "paragraphs" in obj and "question_decomposition" in obj:
        return "musique"
    if "supporting_facts" in obj:
        return "2wiki" if "_id" in obj or "evidences" in obj else "hotpotqa"
    return "generic"


def _str_list(value: Any, what: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise QuestionError(f"{where}: '{what}' must be a list of strings")
    return value


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key != "question":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise QuestionError(f"{where}: '{key}' must be a non-empty string")
    return " ".join(value.split())


def _generic(obj: Any, where: str, line: int) -> EvalQuestion:
    if not isinstance(obj, dict):
        raise QuestionError(f"{where}: a question must be a JSON object")
    qid = obj.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        raise QuestionError(f"{where}: 'id' must be a non-empty string")
    answers = [_text(obj, "answer", where)]
    answers += [a for a in _str_list(obj.get("answer_aliases"), "answer_aliases", where)
                if a.strip()]
    gold = _str_list(obj.get("gold_docs"), "gold_docs", where)
    sections_raw = obj.get("gold_sections") or []
    if not isinstance(sections_raw, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in sections_raw):
        raise QuestionError(f"{where}: 'gold_sections' must be a list of [doc, section] pairs")
    sections = tuple((d, s) for d, s in sections_raw)
    # A gold section names its document: keep such documents gold even when gold_docs
    # leaves them out.
    for d, _ in sections:
        if d not in gold:
            gold.append(d)
    kind = obj.get("kind", "")
    hops = obj.get("hops", max(1, len(gold)))
    if not isinstance(kind, str):
        raise QuestionError(f"{where}: 'kind' must be a string")
    if not isinstance(hops, int) or isinstance(hops, bool) or hops < 1:
        raise QuestionError(f"{where}: 'hops' must be a positive integer")
    return EvalQuestion(id=qid.strip(), question=_text(obj, "question", where),
                        answers=tuple(dict.fromkeys(answers)),
                        gold=tuple(GoldRef(g) for g in dict.fromkeys(gold)),
                        gold_sections=sections, kind=kind, hops=hops, line=line)


def _check_keys(obj: Any, keys: tuple[str, ...], where: str, fmt: str) -> dict[str, Any]:
    if not isinstance(obj, dict) or any(k not in obj for k in keys):
        raise QuestionError(f"{where}: a {fmt} question needs {', '.join(keys)}")
    return obj


def _supporting_titles(obj: dict[str, Any], where: str) -> list[str]:
    facts = obj.get("supporting_facts")
    if not isinstance(facts, list) or not all(
            isinstance(f, list) and f and isinstance(f[0], str) for f in facts):
        raise QuestionError(f"{where}: 'supporting_facts' must be [[title, sentence], ...]")
    return list(dict.fromkeys(f[0] for f in facts))


def _twowiki(obj: Any, where: str, line: int) -> EvalQuestion:
    obj = _check_keys(obj, ("_id", "question", "answer", "supporting_facts"), where, "2Wiki")
    titles = _supporting_titles(obj, where)
    return EvalQuestion(id=str(obj["_id"]), question=_text(obj, "question", where),
                        answers=(_text(obj, "answer", where),),
                        gold=tuple(GoldRef(t, is_title=True) for t in titles),
                        kind=str(obj.get("type") or ""), hops=max(1, len(titles)),
                        dataset="2wiki", line=line)


def _hotpot(obj: Any, where: str, line: int, n: int) -> EvalQuestion:
    obj = _check_keys(obj, ("question", "answer", "supporting_facts"), where, "HotpotQA")
    titles = _supporting_titles(obj, where)
    qid = obj.get("id") or obj.get("_id") or f"hotpotqa-{n}"
    return EvalQuestion(id=str(qid), question=_text(obj, "question", where),
                        answers=(_text(obj, "answer", where),),
                        gold=tuple(GoldRef(t, is_title=True) for t in titles),
                        kind=str(obj.get("type") or ""), hops=max(1, len(titles)),
                        dataset="hotpotqa", line=line)


def _musique(obj: Any, where: str, line: int) -> EvalQuestion:
    obj = _check_keys(obj, ("id", "question", "answer", "paragraphs"), where, "MuSiQue")
    paras = obj["paragraphs"]
    if not isinstance(paras, list) or not all(
            isinstance(p, dict) and isinstance(p.get("title"), str)
            and isinstance(p.get("paragraph_text"), str) for p in paras):
        raise QuestionError(f"{where}: 'paragraphs' must be objects with title and "
                            "paragraph_text")
    # Hop order: the decomposition names the supporting paragraph of each hop.
    order: list[int] = []
    for step in obj.get("question_decomposition") or []:
        idx = step.get("paragraph_support_idx") if isinstance(step, dict) else None
        if isinstance(idx, int) and 0 <= idx < len(paras) and idx not in order:
            order.append(idx)
    order += [i for i, p in enumerate(paras) if p.get("is_supporting") and i not in order]
    gold = tuple(GoldRef(paras[i]["title"], paras[i]["paragraph_text"], is_title=True)
                 for i in order)
    answers = [_text(obj, "answer", where)]
    answers += [a for a in _str_list(obj.get("answer_aliases"), "answer_aliases", where)
                if a.strip()]
    qid = str(obj["id"])
    kind = qid.split("__", 1)[0] if "__" in qid else ""
    return EvalQuestion(id=qid, question=_text(obj, "question", where),
                        answers=tuple(dict.fromkeys(answers)), gold=gold, kind=kind,
                        hops=max(1, len(gold)), dataset="musique", line=line)


def read_questions(path: str | Path) -> QuestionSet:
    """Every question of ``path`` (any of ``FORMATS``, detected from the first record).

    A record that does not fit its format is refused with ``file:line: reason``: an
    evaluation that silently dropped questions would report the wrong figures. Repeated ids
    are refused for the same reason (results are keyed by id).
    """
    path = Path(path)
    records = _records(path)
    if not records:
        raise QuestionError(f"{path}: no questions")
    fmt = detect_format(records[0][1])
    out: list[EvalQuestion] = []
    skipped = 0
    for n, (line, obj) in enumerate(records):
        where = f"{path}:{line}"
        if fmt == "generic":
            q = _generic(obj, where, line)
        elif fmt == "2wiki":
            q = _twowiki(obj, where, line)
        elif fmt == "hotpotqa":
            if isinstance(obj, dict) and obj.get("gold_in_context") is False:
                skipped += 1
                continue
            q = _hotpot(obj, where, line, n)
        else:
            q = _musique(obj, where, line)
        out.append(q)
    seen: dict[str, int] = {}
    for q in out:
        if q.id in seen:
            raise QuestionError(f"{path}:{q.line}: the id {q.id!r} repeats line {seen[q.id]}")
        seen[q.id] = q.line
    reason = "their gold passages are not in the shared collection (gold_in_context false)" \
        if skipped else ""
    return QuestionSet(path, fmt, out, skipped, reason)


def sample(questions: list[EvalQuestion], limit: int | None, seed: int) -> list[EvalQuestion]:
    """``limit`` questions drawn with ``seed`` (a file sorted by kind would make the first N
    all of one kind), kept in file order; all of them when ``limit`` is None or larger."""
    if limit is None or limit >= len(questions):
        return list(questions)
    keep = set(random.Random(seed).sample(range(len(questions)), limit))
    return [q for i, q in enumerate(questions) if i in keep]


def resolve_gold(coll: Any, q: EvalQuestion) -> tuple[list[str], list[str]]:
    """(ids of the gold documents found in the collection, in hop order; names not found).

    A title is tried as an id first (the shared QA builders use the title as the id); a
    passage whose title repeats in the corpus has the id title + a hash of its text."""
    from ..sources.qa import passage_id

    found: list[str] = []
    missing: list[str] = []
    for ref in q.gold:
        candidates = [ref.name]
        if ref.text is not None:
            candidates.append(passage_id(ref.name, ref.text, repeated=True))
        doc = next((c for c in candidates if coll.doc_rowid(c) is not None), None)
        if doc is None:
            missing.append(ref.name)
        elif doc not in found:
            found.append(doc)
    return found, missing


# -- the old helper, kept for the benchmarks ----------------------------------------------
@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answers: tuple[str, ...]
    gold_titles: tuple[str, ...]
    dataset: str


def load_questions(dataset: str, shared: Path, gold_only: bool = True) -> list[Question]:
    """Questions of ``2wiki``, ``hotpotqa`` or ``musique`` from ``shared/data/qa`` (the
    benchmarks' shorthand over ``read_questions``)."""
    names = {"2wiki": "questions.json", "hotpotqa": "questions.jsonl",
             "musique": "questions.json"}
    if dataset not in names:
        raise ValueError(f"unknown dataset {dataset!r}; use 2wiki, hotpotqa or musique")
    qs = read_questions(shared / "data" / "qa" / dataset / names[dataset]).questions
    if not gold_only and dataset == "hotpotqa":
        raise ValueError("read the file with read_questions for all HotpotQA questions")
    return [Question(q.id, q.question, q.answers, tuple(g.name for g in q.gold), dataset)
            for q in qs]
