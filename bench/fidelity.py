"""Text fidelity of a converted document against the text that went into it.

* **word recall**: the share of source words recovered *in order*: the length of the longest
  common subsequence of the two word sequences over the number of source words;
* **word precision**: the same length over the number of extracted words (1 - precision is
  the share of extra words: running headers, page numbers, text counted twice);
* **section recall**: the share of source headings found among the extracted section
  headings (compared as word sequences, so ``2.1  Results`` equals ``2.1 Results``).

Words are BQL words (``sieve_lite.words``), what the index sees. The subsequence is computed
by rapidfuzz (``LCSseq`` over hashed words, bit-parallel), exact, not an approximation.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz.distance import LCSseq

from sieve_lite.words import words


def flat_text(doc: dict[str, Any]) -> str:
    """A DOCUMENTS.md object read as one text: title, then each heading and section text."""
    parts = [doc.get("title", "")]
    for s in doc.get("sections", []):
        if s["heading"] != "(intro)" and not s["heading"].startswith(("Page ", "Pages ")):
            parts.append(s["heading"])
        parts.append(s["text"])
    return "\n".join(parts)


def word_fidelity(source: str, extracted: str) -> tuple[float, float]:
    """(recall, precision) of the words of ``extracted`` in order against ``source``."""
    a, b = words(source), words(extracted)
    if not a or not b:
        return (0.0 if a else 1.0), (0.0 if b else 1.0)
    common = LCSseq.similarity(a, b)
    return common / len(a), common / len(b)


def section_recall(source_headings: list[str], extracted: list[str]) -> float:
    if not source_headings:
        return 1.0
    got = {tuple(words(h)) for h in extracted}
    return sum(1 for h in source_headings if tuple(words(h)) in got) / len(source_headings)
