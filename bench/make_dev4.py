"""Write ``bench/data/pep-dev4.jsonl``: PEP questions of the four kinds of issue 20, checked.

Kinds (``--per-kind`` each, 12 by default):

* ``infobox``: one header fact of a PEP named by number or by its title's subject
  (status, type, created, Python version, author);
* ``prose``: a word of a sentence in one section of a PEP named by number (the sentence is
  quoted with the word blanked out; the answer is a capitalised word or a code name);
* ``date``: "In <month> <year>, <author> created a PEP whose title mentions <word>; what is
  its title?" (exactly one PEP fits the author, the month and the word);
* ``two-hop``: a PEP named by number links to a second one through its ``Superseded-By``,
  ``Replaces`` or ``Requires`` header (a single PEP); the question asks a header fact of the
  second.

Read from ``../shared/data/corpora/peps`` (bench/ may read ../shared). Every question is
checked twice: against the RST headers parsed here, and against the shipped collection through
the library (``collections/peps.db``: the gold document exists, the gold section's fetched
text holds the answer). A question that fails a check is dropped (and counted). The choice is
seeded, so the file is the same on every run::

    python bench/make_dev4.py            # writes bench/data/pep-dev4.jsonl
    SIEVE_SHARED=/work/shared python bench/make_dev4.py   # from a worktree
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SIEVE_SHARED", ROOT.parent / "shared"))
PEPS = SHARED / "data" / "corpora" / "peps"
OUT = ROOT / "bench" / "data" / "pep-dev4.jsonl"
sys.path.insert(0, str(ROOT))

MONTHS = ("January February March April May June July August September October November "
          "December").split()
ABBR = {m[:3]: m for m in MONTHS}
STOP = set("""a an the of for and or to in on with by from as at is are be python pep peps
new using use support adding add into its it via about version""".split())
LINKS = ("Superseded-By", "Replaces", "Requires")


def headers(path: Path) -> dict[str, str]:
    """The RFC 822 header of one PEP (continuation lines joined)."""
    out: dict[str, str] = {}
    key = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            break
        if line[:1].isspace() and key:
            out[key] += " " + line.strip()
            continue
        m = re.match(r"([A-Za-z-]+):\s*(.*)", line)
        if not m:
            break
        key = m.group(1)
        out[key] = m.group(2).strip()
    return out


def authors(value: str) -> list[str]:
    value = re.sub(r"<[^>]*>", "", value)
    return [a.strip() for a in value.split(",") if a.strip()]


def load() -> dict[int, dict[str, str]]:
    peps = {}
    for p in sorted(PEPS.glob("pep-*.rst")):
        h = headers(p)
        if h.get("PEP", "").isdigit() and h.get("Title"):
            peps[int(h["PEP"])] = h
    return peps


def doc_id(n: int) -> str:
    return f"pep-{n:04d}"


def title_words(title: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z][A-Za-z]+", title)
            if w.lower() not in STOP and len(w) > 3]


def infobox_questions(peps: dict, rng: random.Random, n: int) -> list[dict]:
    asks = [
        ("Status", "What is the status of {ref}?"),
        ("Type", "What type of PEP is {ref}?"),
        ("Created", "When was {ref} created?"),
        ("Python-Version", "Which Python version does {ref} target?"),
        ("Author", "Who wrote {ref}?"),
    ]
    out = []
    nums = list(peps)
    rng.shuffle(nums)
    for i, num in enumerate(nums):
        if len(out) >= n:
            break
        h = peps[num]
        key, text = asks[len(out) % len(asks)]
        if key not in h or "," in h.get("Python-Version", "") and key == "Python-Version":
            continue
        by_number = i % 2 == 0
        ref = (f"PEP {num}" if by_number else
               f"the PEP titled \"{h['Title']}\"")
        answer = authors(h[key])[0] if key == "Author" else h[key]
        if key == "Author" and len(authors(h[key])) > 1:
            continue
        out.append({"question": text.format(ref=ref), "answer": answer,
                    "gold_docs": [doc_id(num)], "gold_sections": [[doc_id(num), "infobox"]],
                    "kind": "infobox", "hops": 1, "asks": key})
    return out


def date_questions(peps: dict, rng: random.Random, n: int) -> list[dict]:
    out = []
    nums = list(peps)
    rng.shuffle(nums)
    for num in nums:
        if len(out) >= n:
            break
        h = peps[num]
        m = re.fullmatch(r"(\d\d)-([A-Z][a-z]{2})-(\d{4})", h.get("Created", ""))
        if not m or m.group(2) not in ABBR:
            continue
        auth = authors(h.get("Author", ""))
        if not auth:
            continue
        who, month, year = auth[0], ABBR[m.group(2)], m.group(3)
        words = title_words(h["Title"])
        if not words:
            continue
        word = rng.choice(words)
        fits = [k for k, g in peps.items()
                if who in authors(g.get("Author", ""))
                and f"-{m.group(2)}-{year}" in g.get("Created", "")
                and word.lower() in g["Title"].lower()]
        if fits != [num]:
            continue
        out.append({"question": f"In {month} {year}, {who} created a PEP whose title mentions "
                                f"'{word.lower()}'; what is its title?",
                    "answer": h["Title"], "gold_docs": [doc_id(num)],
                    "gold_sections": [[doc_id(num), "infobox"]], "kind": "date", "hops": 1,
                    "asks": "Title"})
    return out


def two_hop_questions(peps: dict, rng: random.Random, n: int) -> list[dict]:
    phr = {"Superseded-By": "PEP {a} was superseded by another PEP.",
           "Replaces": "PEP {a} replaced an earlier PEP.",
           "Requires": "PEP {a} requires another PEP."}
    asks = [("Status", "What is the status of that PEP?"),
            ("Created", "When was that PEP created?"),
            ("Author", "Who wrote that PEP?"),
            ("Type", "What type of PEP is it?")]
    out = []
    nums = list(peps)
    rng.shuffle(nums)
    for num in nums:
        if len(out) >= n:
            break
        h = peps[num]
        for link in LINKS:
            target = h.get(link, "")
            if not target.strip().isdigit() or int(target) not in peps:
                continue
            t = peps[int(target)]
            key, text = asks[len(out) % len(asks)]
            if key not in t or (key == "Author" and len(authors(t[key])) != 1):
                continue
            answer = authors(t[key])[0] if key == "Author" else t[key]
            if key != "Author" and h.get(key) == answer:
                continue  # the first PEP's own value would be right too: not a real hop
            out.append({"question": phr[link].format(a=num) + " " + text, "answer": answer,
                        "gold_docs": [doc_id(num), doc_id(int(target))],
                        "gold_sections": [[doc_id(num), "infobox"],
                                          [doc_id(int(target)), "infobox"]],
                        "kind": "two-hop", "hops": 2, "asks": key, "link": link})
            break
    return out


def prose_questions(coll: object, peps: dict, rng: random.Random, n: int) -> list[dict]:
    """A sentence of a section with one distinctive word blanked out."""
    out = []
    nums = list(peps)
    rng.shuffle(nums)
    for num in nums:
        if len(out) >= n:
            break
        doc = coll.document(doc_id(num))  # type: ignore[attr-defined]
        if doc is None:
            continue
        secs = [s for s in doc["sections"] if s["heading"] not in ("(intro)", "Copyright")
                and len(s["text"]) > 200]
        if not secs:
            continue
        sec = rng.choice(secs)
        sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(sec["text"].split()))
                 if 60 < len(s) < 220 and not set(s) & set("`[:|*+=<>{}")]
        rng.shuffle(sents)
        for s in sents[:3]:
            cands = [w for w in re.findall(r"\b[A-Z][A-Za-z]{3,}\b", s)
                     if not s.startswith(w) and w.lower() not in STOP]
            if not cands:
                continue
            word = cands[0]
            blank = s.replace(word, "___", 1)
            out.append({"question": f"In PEP {num}'s section \"{sec['heading']}\", which word "
                                    f"fills the blank: \"{blank}\"",
                        "answer": word, "gold_docs": [doc_id(num)],
                        "gold_sections": [[doc_id(num), sec["heading"]]], "kind": "prose",
                        "hops": 1, "asks": "word"})
            break
    return out


def check(coll: object, q: dict) -> str:
    """'' when the question holds; else why not (through the library only)."""
    norm = " ".join(q["answer"].split()).casefold()
    for doc, _sec in q["gold_sections"]:
        if coll.document(doc) is None:  # type: ignore[attr-defined]
            return f"no document {doc}"
    doc, sec = q["gold_sections"][-1]
    try:
        text = coll.fetch(doc, sec).text  # type: ignore[attr-defined]
    except Exception as e:  # noqa: BLE001 - any failure drops the question
        return f"cannot fetch {doc} | {sec}: {e}"
    if norm not in " ".join(text.split()).casefold():
        return f"answer not in {doc} | {sec}"
    if q["kind"] == "two-hop":
        first = coll.fetch(*q["gold_sections"][0]).text  # type: ignore[attr-defined]
        num = str(int(doc.split("-")[1]))
        if num not in first:
            return "the first document does not name the second"
    return ""


def main() -> None:
    import sieve_lite

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-kind", type=int, default=12)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    peps = load()
    rows: list[dict] = []
    dropped = 0
    with sieve_lite.open(ROOT / "collections" / "peps.db") as coll:
        over = args.per_kind * 2
        for make in (lambda: infobox_questions(peps, rng, over),
                     lambda: prose_questions(coll, peps, rng, over),
                     lambda: date_questions(peps, rng, over),
                     lambda: two_hop_questions(peps, rng, over)):
            kept = []
            for q in make():
                why = check(coll, q)
                if why:
                    dropped += 1
                    print(f"dropped: {q['question'][:70]!r}: {why}", file=sys.stderr)
                    continue
                kept.append(q)
            rows += kept[: args.per_kind]
    for i, q in enumerate(rows, start=1):
        q["id"] = f"pep-dev4-{i:03d}"
    with args.out.open("w", encoding="utf-8") as f:
        for q in rows:
            f.write(json.dumps({"id": q.pop("id"), **q}, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for q in rows:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    print(f"{len(rows)} questions {kinds}, {dropped} dropped by the checks -> {args.out}")


if __name__ == "__main__":
    main()
