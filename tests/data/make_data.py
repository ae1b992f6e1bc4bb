"""Regenerate the test fixtures in ``tests/data/`` from a full copy of the source data.

    python tests/data/make_data.py SOURCE_DIR

``SOURCE_DIR`` is the project's shared data folder (it holds ``bql-examples/`` and ``data/``).
The tests never run this script and never read that folder: it only documents, and repeats,
how the small copies here were cut. Every choice is deterministic (first N in file order, plus
the passages the kept questions need), so running it again gives the same files.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# PEPs: the two whose fields the tests check by name, the smallest ten of the 64 in
# bql-examples (the converter must reproduce the reference conversion of those exactly), and
# the ones whose Author header once came out wrong (`<name at host>`, ', Jr.', trailing comma).
PEPS = ["pep-0238", "pep-0354", "pep-0466",
        "pep-0254", "pep-0220", "pep-0217", "pep-0251", "pep-0299", "pep-0666", "pep-0274",
        "pep-0229", "pep-0286", "pep-0226",
        "pep-0160", "pep-0205", "pep-0282", "pep-0680", "pep-0729", "pep-0394", "pep-0546"]
# Rust RFCs named by the Markdown tests (metadata blocks, loose dates, fences, anchors).
RFCS = ["0001-private-fields", "0385-module-system-cleanup", "3327-lang-team-advisors",
        "0235-collections-conventions", "0550-macro-future-proofing",
        "1644-default-and-expanded-rustc-errors", "1653-assert_ne", "2930-read-buf",
        "0179-and-mut-patterns", "0534-deriving2derive", "2071-impl-trait-existential-types",
        "1525-cargo-workspace"]
WIKIPEDIA = ["2020_United_States_presidential_election",
             "1988_United_States_presidential_election"]
TWOWIKI_QUESTIONS, TWOWIKI_PASSAGES = 30, 300
HOTPOT_QUESTIONS, HOTPOT_PASSAGES = 200, 700
MUSIQUE_QUESTIONS = 12


def _dump_array(rows: list, path: Path, indent: int | None) -> None:
    """A pretty-printed JSON array, indented like the original file."""
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=indent) + "\n",
                    encoding="utf-8")


def _jsonl(rows: list, path: Path) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")


def main(src: Path) -> None:
    data = src / "data"
    out = HERE
    # bql-examples: whole (the 44 queries name their exact answers over all 67 documents).
    (out / "bql-examples").mkdir(exist_ok=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        shutil.copyfile(src / "bql-examples" / name, out / "bql-examples" / name)

    for folder, names, ext in (("corpora/peps", PEPS, ".rst"),
                               ("corpora/rust-rfcs", RFCS, ".md"),
                               ("structured/wikipedia", WIKIPEDIA, ".json")):
        dst = out / folder
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        for name in names:
            shutil.copyfile(data / folder / f"{name}{ext}", dst / f"{name}{ext}")

    # 2Wiki: the first questions, the first passages plus every gold passage of those questions.
    q2 = json.loads((data / "qa/2wiki/questions.json").read_text(encoding="utf-8"))
    q2 = q2[:TWOWIKI_QUESTIONS]
    gold = {t for q in q2 for t, _ in q["supporting_facts"]}
    c2 = json.loads((data / "qa/2wiki/corpus.json").read_text(encoding="utf-8"))
    c2 = [p for i, p in enumerate(c2) if i < TWOWIKI_PASSAGES or p["title"] in gold]
    (out / "qa/2wiki").mkdir(parents=True, exist_ok=True)
    _dump_array(q2, out / "qa/2wiki/questions.json", None)
    _dump_array(c2, out / "qa/2wiki/corpus.json", 4)

    # HotpotQA: same rule (gold passages only exist for gold_in_context questions).
    qh = [json.loads(x) for x in
          (data / "qa/hotpotqa/questions.jsonl").read_text(encoding="utf-8").splitlines()]
    qh = qh[:HOTPOT_QUESTIONS]
    gold = {t for q in qh if q["gold_in_context"] for t, _ in q["supporting_facts"]}
    ch = [json.loads(x) for x in
          (data / "qa/hotpotqa/corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    ch = [p for i, p in enumerate(ch) if i < HOTPOT_PASSAGES or p["title"] in gold]
    (out / "qa/hotpotqa").mkdir(parents=True, exist_ok=True)
    _jsonl(qh, out / "qa/hotpotqa/questions.jsonl")
    _jsonl(ch, out / "qa/hotpotqa/corpus.jsonl")

    # MuSiQue: the first questions and every corpus passage their paragraphs hold (so repeated
    # titles, which get a text-hash id, stay in).
    qm = json.loads((data / "qa/musique/questions.json").read_text(encoding="utf-8"))
    qm = qm[:MUSIQUE_QUESTIONS]
    keep = {(p["title"], p["paragraph_text"]) for q in qm for p in q["paragraphs"]}
    cm = json.loads((data / "qa/musique/corpus.json").read_text(encoding="utf-8"))
    cm = [p for p in cm if (p["title"], p["text"]) in keep]
    (out / "qa/musique").mkdir(parents=True, exist_ok=True)
    _dump_array(qm, out / "qa/musique/questions.json", 2)
    _dump_array(cm, out / "qa/musique/corpus.json", 2)

    print(f"2wiki {len(q2)} questions, {len(c2)} passages; hotpotqa {len(qh)} questions "
          f"({sum(q['gold_in_context'] for q in qh)} gold in context), {len(ch)} passages; "
          f"musique {len(qm)} questions, {len(cm)} passages")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
