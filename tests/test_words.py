"""The word rule of BQL.md section 2 (sieve_lite.words)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sieve_lite.words import (
    index_text,
    span_words,
    word_spans,
    word_spans_general,
    words,
    words_span,
)


def test_rule_examples() -> None:
    assert words("Zürich") == ["zurich"]
    assert words("É") == ["e"]
    assert words("ﬁne") == ["fine"]
    assert words("Straße") == ["strasse"]
    assert words("ø æ ł") == ["ø", "æ", "ł"]
    assert words("O'Brien e-mail 3.14 C++ COVID-19") == ["o", "brien", "e", "mail", "3", "14",
                                                        "c", "covid", "19"]
    assert words("under_score") == ["under", "score"]
    assert words("+++") == []


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.text())
def test_index_text_is_the_words_joined(text: str) -> None:
    # index_text has an ASCII fast path; it must agree with the rule everywhere.
    assert index_text(text) == " ".join(words(text))


def test_word_spans_point_into_the_original() -> None:
    text = "Zürich, São Paulo!"
    spans = word_spans(text)
    assert [w for _, _, w in spans] == ["zurich", "sao", "paulo"]
    assert [text[a:b] for a, b, _ in spans] == ["Zürich", "São", "Paulo"]


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_word_spans_ascii_fast_path_is_the_rule(text: str) -> None:
    assert word_spans(text) == word_spans_general(text)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.one_of(st.text(), st.text(alphabet=st.characters(max_codepoint=127))),
       st.integers(0, 50), st.integers(0, 50))
def test_span_words_and_words_span_are_word_spans(text: str, a: int, b: int) -> None:
    """Snippets read the words without spans and ask for one window's span: both must be
    exactly what word_spans gives, ASCII fast path or not."""
    spans = word_spans(text)
    assert span_words(text) == [w for _, _, w in spans]
    if spans:
        first, last = sorted((a % len(spans), b % len(spans)))
        assert words_span(text, first, last) == (spans[first][0], spans[last][1])
