"""QA passage collections (2WikiMultihopQA, HotpotQA, MuSiQue) -> one document per passage.

Every passage ``{"title", "text"}`` becomes a document whose title is the passage title and
whose text is the single section ``(intro)``. The three shared data sets have the same
passage shape: 2Wiki and MuSiQue ship a JSON array (``corpus.json``), HotpotQA JSON Lines
(``corpus.jsonl``).

Ids (``passage_id``): **the title itself** when the title is unique in the corpus, and
``"<title> #<first 8 hex of sha1(text)>"`` when several passages share a title (MuSiQue has 85
such titles; 2Wiki and HotpotQA have none). The suffix depends only on the passage's own
text, so the id of a gold passage can be computed from the questions file alone:

* 2Wiki ``supporting_facts`` / HotpotQA ``supporting_facts`` give gold *titles* = ids;
* MuSiQue ``paragraphs[i]`` with ``is_supporting`` give ``title`` + ``paragraph_text``:
  ``passage_id(title, paragraph_text, repeated=...)``.

When the corpus is not at hand, an evaluator can try ``collection.document(title)`` first: a
repeated title is never an id by itself, so a miss means "repeated", and
``passage_id(title, text, repeated=True)`` is then the id. ``gold_ids`` does this mapping for
one question of any of the three sets. Titles are used exactly as given (case and spacing
kept: 2Wiki has both ``Queen of Spades`` and ``Queen of spades``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..documents import INTRO, Document
from ..errors import DocumentError
from ._common import make_document, read_text
from .jsonl import iter_json_array, jsonl_records

QA_FORMATS = ("2wiki", "hotpotqa", "musique")
SUFFIX_HEX = 8


def passage_id(title: str, text: str, repeated: bool = False) -> str:
    """The document id of a passage: its title, or title + a hash of its text when repeated."""
    if not repeated:
        return title
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:SUFFIX_HEX]
    return f"{title} #{digest}"


def repeated_titles(titles: Iterable[str]) -> set[str]:
    """The titles that occur more than once (these get a text-hash suffix)."""
    return {t for t, n in Counter(titles).items() if n > 1}


def passage_ids(passages: Iterable[tuple[str, str]]) -> list[str]:
    """Ids of a whole corpus of (title, text) passages, in order."""
    items = list(passages)
    rep = repeated_titles(t for t, _ in items)
    return [passage_id(t, x, t in rep) for t, x in items]


def gold_ids(question: dict[str, Any], repeated: set[str] | frozenset[str] = frozenset()
             ) -> list[str]:
    """Ids of the gold passages of one question (2Wiki, HotpotQA or MuSiQue format), in order.

    ``repeated`` is ``repeated_titles`` of the corpus; it matters for MuSiQue only.
    HotpotQA questions whose ``gold_in_context`` is false have gold titles that are not in the
    shared collection.
    """
    out: list[str] = []
    if "paragraphs" in question:  # MuSiQue
        for p in question["paragraphs"]:
            if p.get("is_supporting"):
                out.append(passage_id(p["title"], p["paragraph_text"], p["title"] in repeated))
    else:  # 2Wiki, HotpotQA: [[title, sentence index], ...]
        for title, *_ in question.get("supporting_facts", []):
            out.append(title)
    return list(dict.fromkeys(out))


def _records(path: Path, meter: Any = None) -> Iterator[tuple[int, Any]] | DocumentError:
    """(line, parsed object or DocumentError) for a JSON array or a JSON Lines file."""
    with open(path, "rb") as f:
        head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"["):
        return jsonl_records(path, meter)  # line by line: a bad line costs only that line
    text = read_text(path)
    if isinstance(text, DocumentError):
        return text
    if meter is not None:
        meter.done += path.stat().st_size
    return iter_json_array(text, str(path))


def read_passages(path: Path, source: str = "", meter: Any = None
                  ) -> Iterator[Document | DocumentError]:
    """Every passage of ``path`` as a document (``source`` only labels error messages)."""
    try:
        records = _records(path, meter)
    except OSError as e:
        yield DocumentError(f"cannot read: {e.strerror or e}", str(path))
        return
    if isinstance(records, DocumentError):
        yield records
        return
    good: list[tuple[int, str, str]] = []
    for line, rec in records:
        where = f"{path}:{line}"
        if isinstance(rec, DocumentError):
            yield rec
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("title"), str) \
                or not isinstance(rec.get("text", ""), str):
            what = f"a {source} passage" if source else "a passage"
            yield DocumentError(f"{what} must be an object with string 'title' and 'text'", where)
            continue
        good.append((line, rec["title"], rec.get("text", "")))
    rep = repeated_titles(t for _, t, _ in good)
    for line, title, text in good:
        yield make_document({"id": passage_id(title, text, title in rep), "title": title,
                             "sections": [{"heading": INTRO, "text": text}]}, f"{path}:{line}")


def corpus_file(folder: Path) -> Path | None:
    """The passage file of a shared QA folder (``corpus.json`` or ``corpus.jsonl``)."""
    for name in ("corpus.jsonl", "corpus.json"):
        if (folder / name).is_file():
            return folder / name
    return None
