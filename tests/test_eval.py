from pathlib import Path

import pytest

from sieve_lite.eval import exact_match, f1, load_questions, normalize_answer, recall_at

# load_questions reads <base>/data/qa/<dataset>; the fixtures are tests/data/qa/<dataset>.
TESTS = Path(__file__).resolve().parent


# The fixtures keep the first questions of each set (tests/data/README.md); for HotpotQA the
# count is the questions whose gold passages are in the collection.
@pytest.mark.parametrize("dataset,count", [("2wiki", 30), ("hotpotqa", 199), ("musique", 12)])
def test_load_questions_counts_and_gold(dataset: str, count: int) -> None:
    qs = load_questions(dataset, TESTS)
    assert len(qs) == count
    assert all(q.gold_titles and q.answers and q.text for q in qs)


def test_answer_metrics() -> None:
    assert normalize_answer("The  Fort, Santiago!") == "fort santiago"
    assert exact_match("the fort santiago", ["Fort Santiago"]) == 1.0
    assert exact_match("Manila", ["Fort Santiago"]) == 0.0
    assert f1("fort", ["Fort Santiago"]) == pytest.approx(2 / 3)
    assert f1("", ["x"]) == 0.0


def test_recall_at() -> None:
    assert recall_at(["a", "b", "c"], ["a", "c"], 2) == 0.5
    assert recall_at(["a", "b", "c"], ["a", "c"], 5) == 1.0
