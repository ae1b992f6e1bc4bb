"""Evaluation metrics and question files: hand-computed cases, a known McNemar table, the
generic and shared QA forms (in-repo fixtures), and bad input refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sieve_lite.errors import QuestionError
from sieve_lite.eval import metrics
from sieve_lite.eval.metrics import (
    contains,
    exact_match,
    f1,
    failure,
    gold_recall,
    mcnemar,
    mcnemar_exact,
    normalize_answer,
    paired_t,
    recall_at,
)
from sieve_lite.eval.questions import detect_format, load_questions, read_questions, sample

DATA = Path(__file__).parent / "data" / "eval"
# load_questions reads <base>/data/qa/<dataset>; samples of the shared sets are in tests/data/qa.
TESTS = Path(__file__).resolve().parent


# The samples keep the first questions of each set (tests/data/README.md); for HotpotQA the
# count is the questions whose gold passages are in the collection.
@pytest.mark.parametrize("dataset,count", [("2wiki", 30), ("hotpotqa", 199), ("musique", 12)])
def test_load_questions_counts_and_gold(dataset: str, count: int) -> None:
    qs = load_questions(dataset, TESTS)
    assert len(qs) == count
    assert all(q.gold_titles and q.answers and q.text for q in qs)


# -- answer metrics ------------------------------------------------------------------------
def test_normalisation_is_squad_style() -> None:
    assert normalize_answer("The  Fort, Santiago!") == "fort santiago"
    assert normalize_answer("An apple a day") == "apple day"
    assert normalize_answer("  A.B.C. ") == "abc"
    assert normalize_answer("theatre") == "theatre"  # an article only as a whole word


def test_exact_match_uses_aliases() -> None:
    assert exact_match("the fort santiago", ["Fort Santiago"]) == 1.0
    assert exact_match("Manila", ["Fort Santiago"]) == 0.0
    assert exact_match("Smith", ["Eric V. Smith", "Smith"]) == 1.0
    assert exact_match("", ["x"]) == 0.0


def test_f1_hand_computed() -> None:
    # 'fort' vs 'fort santiago': precision 1, recall 1/2 -> 2/3
    assert f1("fort", ["Fort Santiago"]) == pytest.approx(2 / 3)
    # 'old fort santiago manila' vs 'fort santiago': p 2/4, r 2/2 -> 2/3
    assert f1("old fort santiago manila", ["Fort Santiago"]) == pytest.approx(2 / 3)
    # best over aliases: 'santiago' vs ['Fort Santiago', 'Santiago'] -> 1
    assert f1("santiago", ["Fort Santiago", "Santiago"]) == 1.0
    # repeated tokens count by multiplicity: 'a b b' vs 'b b c' -> common 2, p 2/3, r 2/3
    assert f1("x y y", ["y y z"]) == pytest.approx(2 / 3)
    assert f1("", ["x"]) == 0.0
    assert f1("nothing shared", ["x"]) == 0.0


def test_containment_is_whole_words() -> None:
    assert contains("It was built in 1590 by engineers.", ["1590"]) == 1.0
    assert contains("The answer is Fort Santiago, in Manila", ["fort santiago"]) == 1.0
    assert contains("15900", ["1590"]) == 0.0
    assert contains("anything", ["the"]) == 0.0  # an answer that normalises to nothing


def test_recall() -> None:
    assert recall_at(["a", "b", "c"], ["a", "c"], 2) == 0.5
    assert recall_at(["a", "b", "c"], ["a", "c"], 5) == 1.0
    assert recall_at(["a"], [], 5) == 0.0
    assert gold_recall(["c", "x"], ["a", "c"]) == 0.5


def test_failure_split() -> None:
    assert failure(True, 0.0, 0.0) == "correct"
    assert failure(False, 0.0, 0.0) == "never-retrieved"
    assert failure(False, 0.5, 0.0) == "not-read"
    assert failure(False, 1.0, 0.5) == "read-wrong"


# -- statistics ----------------------------------------------------------------------------
def test_mcnemar_exact_against_a_known_table() -> None:
    # Discordant pairs 10 vs 2: two-sided exact p = 2 * P(X <= 2 | n=12, 1/2)
    # = 2 * (1 + 12 + 66) / 4096 = 158 / 4096.
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    # 5 vs 5: p = 1; no discordant pair: p = 1
    assert mcnemar_exact(5, 5) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0
    # 6 vs 0: 2 / 64
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)


def test_mcnemar_pairs_by_question() -> None:
    a = {"q1": True, "q2": True, "q3": False, "q4": False, "q5": True}
    b = {"q1": True, "q2": False, "q3": True, "q4": False, "q9": True}
    t = mcnemar("sieve", "search-visit", a, b)
    assert (t.n, t.both, t.only_a, t.only_b, t.neither) == (4, 1, 1, 1, 1)
    assert t.p_value == pytest.approx(1.0)


def test_paired_t() -> None:
    from scipy.stats import ttest_rel

    xs, ys = [10, 20, 30, 45], [12, 25, 33, 50]
    assert paired_t(xs, ys) == pytest.approx(ttest_rel(xs, ys).pvalue)
    assert paired_t([1], [2]) is None
    assert paired_t([1, 2], [2, 3]) is None  # constant differences: no test


def test_failures_are_listed_once() -> None:
    assert metrics.FAILURES == ("correct", "never-retrieved", "not-read", "read-wrong")


# -- question files ------------------------------------------------------------------------
def test_generic_questions() -> None:
    qs = read_questions(DATA / "toy-questions.jsonl")
    assert qs.format == "generic" and qs.skipped == 0
    q1, q2, q3 = qs.questions
    assert q1.answers == ("1590",) and [g.name for g in q1.gold] == ["fort"]
    assert q1.gold_sections == (("fort", "History"),)
    assert q2.answers == ("Valencia", "Valencia, Spain") and q2.hops == 2
    assert [g.name for g in q2.gold] == ["bridge", "ortiz"]
    assert q3.gold_sections == () and q3.kind == "section"


def test_shared_formats_read_as_they_are() -> None:
    w = read_questions(DATA / "2wiki-mini.json")
    assert w.format == "2wiki"
    assert [g.name for g in w.questions[1].gold] == ["Beta Bridge", "Carla Ortiz"]
    assert w.questions[0].kind == "comparison"
    h = read_questions(DATA / "hotpot-mini.jsonl")
    assert h.format == "hotpotqa" and len(h.questions) == 2 and h.skipped == 1
    assert h.questions[1].id == "hotpotqa-2"  # the line's index, as the old loader did
    m = read_questions(DATA / "musique-mini.json")
    assert m.format == "musique"
    q = m.questions[0]
    # hop order from the decomposition: Harbour (#2 paragraph) before Carla Ortiz
    assert [g.name for g in q.gold] == ["Harbour", "Carla Ortiz"]
    assert q.gold[0].text == "Delta Harbour was designed by Carla Ortiz."
    assert q.kind == "2hop" and q.answers == ("Valencia", "Valencia, Spain")


def test_musique_gold_resolves_repeated_titles(tmp_path: Path) -> None:
    import sieve_lite
    from sieve_lite.build import build_collection
    from sieve_lite.eval.questions import resolve_gold
    from sieve_lite.sources import iter_documents
    from sieve_lite.sources.qa import passage_id

    db = tmp_path / "m.db"
    build_collection(iter_documents([DATA / "musique-corpus.json"], "musique"), db,
                     embed=False, strict=True, quiet=True)
    q = read_questions(DATA / "musique-mini.json").questions[0]
    with sieve_lite.open(db) as coll:
        found, missing = resolve_gold(coll, q)
    assert found == [passage_id("Harbour", "Delta Harbour was designed by Carla Ortiz.", True),
                     "Carla Ortiz"]
    assert missing == []


def test_detect_format() -> None:
    assert detect_format({"id": "x", "question": "q", "answer": "a"}) == "generic"
    assert detect_format({"_id": "x", "supporting_facts": []}) == "2wiki"
    assert detect_format({"supporting_facts": []}) == "hotpotqa"
    assert detect_format({"paragraphs": [], "question_decomposition": []}) == "musique"


@pytest.mark.parametrize("line,message", [
    ('{"id": "a", "question": "q?"}', "'answer' must be a non-empty string"),
    ('{"question": "q?", "answer": "x"}', "'id' must be a non-empty string"),
    ('{"id": "a", "question": "q?", "answer": "x", "gold_docs": 3}', "'gold_docs' must be"),
    ('{"id": "a", "question": "q?", "answer": "x", "gold_sections": [["d"]]}',
     "'gold_sections' must be a list of [doc, section] pairs"),
    ('{"id": "a", "question": "q?", "answer": "x", "hops": 0}', "'hops' must be"),
    ('{"id": "a", "question": "q?", "answer": "x"', "not valid JSON"),
    ('[1, 2]', "a question must be a JSON object"),
])
def test_bad_questions_are_refused_in_one_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "ok", "question": "fine?", "answer": "yes"}\n' + line + "\n")
    with pytest.raises(QuestionError) as err:
        read_questions(path)
    text = str(err.value)
    assert message in text and "\n" not in text
    assert f"{path}:2" in text or line.startswith("[")


def test_repeated_ids_and_empty_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    row = {"id": "same", "question": "q?", "answer": "a"}
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(QuestionError, match="repeats line 1"):
        read_questions(path)
    path.write_text("\n\n")
    with pytest.raises(QuestionError, match="no questions"):
        read_questions(path)
    with pytest.raises(QuestionError, match="not found"):
        read_questions(tmp_path / "missing.jsonl")


def test_sample_is_seeded_and_keeps_file_order() -> None:
    qs = read_questions(DATA / "toy-questions.jsonl").questions
    a = sample(qs, 2, 7)
    assert a == sample(qs, 2, 7) and len(a) == 2
    assert [q.line for q in a] == sorted(q.line for q in a)
    assert sample(qs, None, 1) == qs and sample(qs, 10, 1) == qs
