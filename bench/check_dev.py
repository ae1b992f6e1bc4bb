"""Check hand-written development questions against the collection the agent reads.

    python bench/check_dev.py                         # pep-natural.jsonl and rfc-natural.jsonl
    python bench/check_dev.py bench/data/pep-natural.jsonl --db collections/peps.db

Every line of a file must be a question the collection can answer as written:

* the fields are there with the right types (``id``, ``question``, ``answer``,
  ``answer_aliases``, ``gold_docs``, ``gold_sections``, ``kind``, ``hops``); ids are unique
  (over all the files checked); ``kind`` is ``header`` (gold section ``infobox``) or ``prose``
  (a named section); ``hops`` is the number of gold documents;
* each gold document exists, and each gold section is one of its sections (or its infobox),
  fetched through ``sieve_lite.open(db).fetch(doc, section)``, as the agent fetches it;
* the answer, or one of its aliases, occurs in the last gold section's text after SQuAD
  normalisation (``sieve_lite.eval.normalize_answer``: lowercase, no punctuation, no
  articles) as whole words; the answer itself must (an alias alone only counts with
  ``--alias-ok``);
* neither the answer nor an alias occurs in the question (normalised, whole words), and the
  answer is short: at most five words, not empty once normalised;
* no document is the gold of more than two questions.

The collection: ``--db``, else by the file's name: ``pep-*`` -> ``collections/peps.db``,
``rfc-*`` -> ``bench/out/rfcs.db`` (built once by ``bench/ask.py``'s ``rfc_collection`` when
missing). One line per failure (``file:line id: reason``; ``file: doc: reason`` for a document
used too often), a summary per file; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite.eval import normalize_answer  # noqa: E402

DATA = ROOT / "bench" / "data"
DEFAULT_FILES = (DATA / "pep-natural.jsonl", DATA / "rfc-natural.jsonl")
KINDS = ("header", "prose")
MAX_WORDS = 5
MAX_PER_DOC = 2


def collection_for(path: Path) -> Path:
    if path.name.startswith("rfc-"):
        db = ROOT / "bench" / "out" / "rfcs.db"
        if not db.exists():
            sys.path.insert(0, str(ROOT / "bench"))
            from ask import rfc_collection

            print(f"building {db.relative_to(ROOT)} (once) ...", flush=True)
            db = rfc_collection()
        return db
    return ROOT / "collections" / "peps.db"


def holds(text: str, answer: str) -> bool:
    """``answer`` occurs in ``text`` as whole words, both normalised."""
    a = normalize_answer(answer)
    return bool(a) and f" {a} " in f" {normalize_answer(text)} "


def shape(d: object) -> list[str]:
    """What is wrong with a record's fields (empty when nothing)."""
    if not isinstance(d, dict):
        return ["not a JSON object"]
    bad = []
    for key in ("id", "question", "answer"):
        if not isinstance(d.get(key), str) or not d[key].strip():
            bad.append(f"{key!r} must be a non-empty string")
    aliases = d.get("answer_aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip()
                                                for a in aliases):
        bad.append("'answer_aliases' must be a list of non-empty strings")
    docs = d.get("gold_docs")
    if not isinstance(docs, list) or not docs or not all(isinstance(x, str) for x in docs):
        bad.append("'gold_docs' must be a non-empty list of document ids")
    secs = d.get("gold_sections")
    if not isinstance(secs, list) or not secs or not all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x)
            for x in secs):
        bad.append("'gold_sections' must be a non-empty list of [doc, section] pairs")
    if d.get("kind") not in KINDS:
        bad.append(f"'kind' is {d.get('kind')!r}, not one of {', '.join(KINDS)}")
    if not isinstance(d.get("hops"), int) or isinstance(d.get("hops"), bool):
        bad.append("'hops' must be an integer")
    return bad


def check_record(d: dict, coll, alias_ok: bool) -> list[str]:
    """The failures of one well-formed record against the collection."""
    bad = []
    docs, secs = d["gold_docs"], d["gold_sections"]
    if d["hops"] != len(docs):
        bad.append(f"hops is {d['hops']} but there are {len(docs)} gold documents")
    for doc in docs:
        if coll.doc_rowid(doc) is None:
            bad.append(f"gold document {doc!r} is not in the collection")
    if bad:
        return bad
    for doc, _ in secs:
        if doc not in docs:
            bad.append(f"gold section of {doc!r}, which is not a gold document")
    last_doc, last_sec = secs[-1]
    if d["kind"] == "header" and last_sec != "infobox":
        bad.append(f"a header question's gold section is {last_sec!r}, not 'infobox'")
    if d["kind"] == "prose" and last_sec == "infobox":
        bad.append("a prose question's gold section is the infobox")
    texts = {}
    for doc, sec in secs:
        names = coll.fetch(doc).sections
        if sec != "infobox" and sec not in names:
            bad.append(f"{doc!r} has no section {sec!r}")
            continue
        try:
            texts[doc, sec] = coll.fetch(doc, sec).text
        except sieve_lite.SieveError as e:
            bad.append(f"fetch {doc!r} {sec!r}: {e}")
            continue
        if names.count(sec) > 1:
            bad.append(f"{doc!r} has {names.count(sec)} sections named {sec!r} "
                       "(fetch gives the first)")
    answers = [d["answer"], *d.get("answer_aliases", [])]
    for a in answers:
        if not normalize_answer(a):
            bad.append(f"the answer or alias {a!r} is empty once normalised")
    words = len(normalize_answer(d["answer"]).split())
    if words > MAX_WORDS:
        bad.append(f"the answer has {words} words (at most {MAX_WORDS})")
    text = texts.get((last_doc, last_sec))
    if text is not None:
        if not holds(text, d["answer"]):
            if alias_ok and any(holds(text, a) for a in answers[1:]):
                pass
            elif any(holds(text, a) for a in answers[1:]):
                bad.append(f"the answer {d['answer']!r} is not in {last_doc} | {last_sec} "
                           "(only an alias is)")
            else:
                bad.append(f"neither the answer {d['answer']!r} nor an alias is in "
                           f"{last_doc} | {last_sec}")
    for a in answers:
        if holds(d["question"], a):
            bad.append(f"the question gives the answer away ({a!r})")
    return bad


def check_file(path: Path, db: Path | None, seen: dict[str, str], alias_ok: bool
               ) -> tuple[int, Counter, int]:
    """(questions, count per kind, failures) of one file; failures printed as found."""
    failures = 0
    kinds: Counter = Counter()
    per_doc: Counter = Counter()
    n = 0

    def fail(line: int, qid: str, reason: str) -> None:
        nonlocal failures
        failures += 1
        print(f"{path.name}:{line} {qid}: {reason}" if line else f"{path.name}: {qid}: {reason}")

    db = db or collection_for(path)
    coll = sieve_lite.open(str(db))
    try:
        for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not raw.strip():
                continue
            n += 1
            try:
                d = json.loads(raw)
            except json.JSONDecodeError as e:
                fail(line, "?", f"not JSON: {e}")
                continue
            qid = d.get("id", "?") if isinstance(d, dict) else "?"
            problems = shape(d)
            if problems:
                for p in problems:
                    fail(line, qid, p)
                continue
            where = f"{path.name}:{line}"
            if qid in seen:
                fail(line, qid, f"the id repeats {seen[qid]}")
            seen.setdefault(qid, where)
            kinds[d["kind"]] += 1
            per_doc.update(set(d["gold_docs"]))
            for p in check_record(d, coll, alias_ok):
                fail(line, qid, p)
    finally:
        coll.close()
    for doc, count in sorted(per_doc.items()):
        if count > MAX_PER_DOC:
            fail(0, doc, f"gold document of {count} questions (at most {MAX_PER_DOC})")
    kinds_s = ", ".join(f"{kinds[k]} {k}" for k in KINDS)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {n} questions "
          f"({kinds_s}) over {len(per_doc)} documents of {db.name}; "
          f"{failures or 'no'} failure{'s' * (failures != 1)}")
    return n, kinds, failures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=list(DEFAULT_FILES))
    ap.add_argument("--db", type=Path, default=None,
                    help="the collection (default: by the file's name)")
    ap.add_argument("--alias-ok", action="store_true",
                    help="accept a question whose gold section holds only an alias")
    args = ap.parse_args()
    seen: dict[str, str] = {}
    total = 0
    for path in args.files:
        total += check_file(path.resolve(), args.db, seen, args.alias_ok)[2]
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
