"""A synthetic Zipfian corpus for the search benchmark (``bench/search.py``).

Run from the repository root::

    python bench/corpus.py                       # build bench/out/zipf-100000-s1.db (cached)
    python bench/corpus.py --docs 5000 --jsonl out.jsonl   # write DOCUMENTS.md JSON Lines

How the documents are made (deterministic for a given ``--seed``):

* words: 40 English function words on the top ranks, then 80,000 pronounceable synthetic words;
  a word's probability follows Zipf-Mandelbrot, p(rank) ~ 1 / (rank + 2.7) ** 1.05, so there
  are broad words (in nearly every document) and selective ones (in a few dozen);
* sections: 1-60 per document, about 10.5 on average (>= 1,000,000 section rows for 100,000
  documents); 70% of documents open with an ``(intro)``; headings come from a vocabulary of
  about 200 real headings (also Zipfian) plus ``History of <word>``-style ones; section texts
  are sentences of 6-22 words, capitalised, with commas and full stops, about 35 words a section
  (log-normal);
* titles: 2-7 mid-frequency words, title-cased;
* infobox: 60% of documents, 2-8 entries from 30 keys (Status, Type, Country, ...);
* authors: 70% of documents, 1-3 names from 300 first x 600 last names;
* dates: 85% dated, years 1950-2025 skewed to recent ones; 55% ``YYYY-MM-DD``, 25% ``YYYY-MM``,
  20% ``YYYY``.

The collection is built lexical-only with ``sieve_lite.build.build_collection`` and cached under
``bench/out/`` (gitignored); the file name carries the size, the seed, ``GENERATOR_VERSION`` and
a hash of the schema migrations and the word rule (a change to either rebuilds it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
GENERATOR_VERSION = 1

FUNCTION_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there one all we their its had"
).split()
assert len(FUNCTION_WORDS) == 40, len(FUNCTION_WORDS)

HEADINGS = (
    "Introduction|History|Background|Overview|Design|Rationale|Specification|Motivation|"
    "References|See also|Notes|External links|Early life|Career|Personal life|Legacy|Geography|"
    "Climate|Economy|Demographics|Culture|Education|Transport|Politics|Government|Sports|"
    "Architecture|Description|Etymology|Taxonomy|Distribution|Habitat|Behaviour|Reproduction|"
    "Conservation|Plot|Cast|Production|Release|Reception|Awards|Discography|Filmography|"
    "Bibliography|Works|Selected works|Publications|Biography|Death|Family|Awards and honours|"
    "Implementation|Examples|Discussion|Open issues|Alternatives|Rejected ideas|"
    "Backwards compatibility|Security implications|How to teach this|Reference implementation|"
    "Acknowledgements|Copyright|Abstract|Terminology|Use cases|Performance|Limitations|"
    "Future work|Summary|Conclusion|Method|Methods|Results|Evaluation|Related work|Appendix|"
    "Installation|Usage|Configuration|Troubleshooting|FAQ|Changelog|Licence|Contributing|"
    "Origins|Formation|Members|Musical style|Touring|Track listing|Personnel|Charts|"
    "Critical reception|Commercial performance|Background and recording|Composition|Lyrics|"
    "Music video|Live performances|Cover versions|Legal issues|Controversy|Criticism|"
    "In popular culture|Media|Infrastructure|Health|Religion|Language|Cuisine|Festivals|"
    "Tourism|Notable people|Twin towns|Administration|Subdivisions|Population|Ethnic groups|"
    "Military|Foreign relations|Law|Human rights|Science and technology|Energy|Agriculture|"
    "Industry|Trade|Finance|Banking|Housing|Crime|Environment|Wildlife|Parks|Landmarks|"
    "Museums|Libraries|Universities|Schools|Hospitals|Airports|Railways|Roads|Ports|Bridges|"
    "Rivers|Lakes|Mountains|Islands|Forests|Deserts|Coasts|Geology|Hydrology|Soils|Minerals|"
    "Early history|Medieval period|Modern history|Contemporary history|Prehistory|Antiquity|"
    "Colonial period|Independence|World War I|World War II|Cold War|Recent events|"
    "Early years|Later years|Retirement|Honours|Style|Influence|Philosophy|Views|Writings|"
    "Teaching|Research|Inventions|Patents|Business|Investments|Philanthropy|Awards received|"
    "Statistics|Records|Season summary|Match summary|Squad|Transfers|Fixtures|Stadium|"
    "Supporters|Rivalries|Honours and achievements|Players|Coaching staff|Ownership"
).split("|")

INFOBOX_KEYS = (
    "Status|Type|Country|Founded|Population|Created|Language|Genre|Location|Area|Elevation|"
    "Website|Owner|Industry|Headquarters|Born|Died|Occupation|Nationality|Spouse|Children|"
    "Education|Known for|Awards|Label|Released|Recorded|Length|Producer|Python-Version"
).split("|")
STATUSES = ["Final", "Draft", "Active", "Withdrawn", "Rejected", "Superseded", "Accepted",
            "Deferred", "Provisional"]
TYPES = ["Standards Track", "Informational", "Process", "City", "Person", "Album", "Company",
         "River", "Film", "Species"]

_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
           "z", "br", "ch", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "kl", "pl", "pr", "sh",
           "sk", "sl", "sp", "st", "str", "th", "tr", "qu", ""]
_NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "ie", "oa", "oo", "ou", "y"]
_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "nt", "rk", "st", "ng", "x", "ck"]


def make_vocabulary(size: int, rng: random.Random) -> list[str]:
    """``size`` distinct lowercase words: the function words, then synthetic ones, shorter
    words on higher ranks (as in real text)."""
    words: list[str] = []
    seen = set(FUNCTION_WORDS) | {"date", "near"}
    while len(words) < size - len(FUNCTION_WORDS):
        n = rng.choice((1, 2, 2, 3, 3, 3, 4))
        w = "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS)
                    for _ in range(n))
        if 3 <= len(w) <= 16 and w not in seen:
            seen.add(w)
            words.append(w)
    words.sort(key=len)  # stable: random order within a length
    return list(FUNCTION_WORDS) + words


class Sampler:
    """Zipf-Mandelbrot sampling over ranks 0..n-1 (vectorised)."""

    def __init__(self, n: int, s: float = 1.05, q: float = 2.7) -> None:
        p = 1.0 / np.power(np.arange(1, n + 1) + q, s)
        self.cdf = np.cumsum(p / p.sum())

    def draw(self, rng: np.random.Generator, k: int) -> list[int]:
        idx = np.searchsorted(self.cdf, rng.random(k))
        return np.minimum(idx, len(self.cdf) - 1).tolist()


def _text(toks: list[str], r: random.Random) -> str:
    """Sentences of 6-22 words: capitalised, a comma now and then, a full stop."""
    out = []
    k = 0
    while k < len(toks):
        m = r.randint(6, 22)
        sent = toks[k:k + m]
        sent[0] = sent[0].capitalize()
        if len(sent) > 8 and r.random() < 0.4:
            c = r.randint(3, len(sent) - 3)
            sent[c] += ","
        out.append(" ".join(sent) + ".")
        k += m
    return " ".join(out)


def generate(n_docs: int = 100_000, seed: int = 1) -> Iterator[dict]:
    """The documents (DOCUMENTS.md dicts), in order, deterministic for ``seed``."""
    r = random.Random(seed)
    rng = np.random.default_rng(seed)
    vocab = make_vocabulary(80_040, r)
    words = Sampler(len(vocab))
    content = Sampler(20_000)  # titles, infobox values, topics: ranks 100..20,099
    heads = Sampler(len(HEADINGS), s=0.9, q=1.0)
    names = make_vocabulary(1000, random.Random(seed + 1))[len(FUNCTION_WORDS):]
    first, last = [w.title() for w in names[:300]], [w.title() for w in names[300:900]]
    for i in range(n_docs):
        n_sec = int(min(60, max(1, rng.negative_binomial(3, 3 / (3 + 9.5)) + 1)))
        lengths = np.maximum(1, rng.lognormal(math.log(28), 0.6, n_sec).astype(int)).tolist()
        ids = words.draw(rng, sum(lengths))
        head_ranks = heads.draw(rng, n_sec)
        topics = content.draw(rng, n_sec)
        intro = r.random() < 0.7
        sections = []
        pos = 0
        for j, n in enumerate(lengths):
            text = _text([vocab[t] for t in ids[pos:pos + n]], r)
            pos += n
            if j == 0 and intro:
                heading = "(intro)"
            elif r.random() < 0.08:
                heading = f"{HEADINGS[head_ranks[j]]} of {vocab[100 + topics[j]].title()}"
            else:
                heading = HEADINGS[head_ranks[j]]
            sections.append({"heading": heading, "text": text})
        title = " ".join(vocab[100 + t].title() for t in content.draw(rng, r.randint(2, 7)))
        doc: dict = {"id": f"z{i:06d}", "title": title, "sections": sections}
        if r.random() < 0.6:
            box = []
            for key in sorted(r.sample(INFOBOX_KEYS, r.randint(2, 8)), key=INFOBOX_KEYS.index):
                if key == "Status":
                    value = r.choice(STATUSES)
                elif key == "Type":
                    value = r.choice(TYPES)
                elif key in ("Population", "Area", "Elevation", "Length", "Founded"):
                    value = f"{r.randint(1, 10_000_000):,}"
                else:
                    value = " ".join(vocab[100 + t].title()
                                     for t in content.draw(rng, r.randint(1, 3)))
                box.append([key, value])
            doc["infobox"] = box
        if r.random() < 0.7:
            doc["author"] = [f"{r.choice(first)} {r.choice(last)}"
                             for _ in range(r.randint(1, 3))]
        if r.random() < 0.85:
            year = int(2025 - min(75.0, r.expovariate(1 / 18)))
            kind = r.random()
            month, day = r.randint(1, 12), r.randint(1, 28)
            doc["date"] = (f"{year}-{month:02d}-{day:02d}" if kind < 0.55 else
                           f"{year}-{month:02d}" if kind < 0.8 else f"{year}")
        yield doc


def schema_tag() -> str:
    """A short hash of what shapes the index (schema migrations and the word rule), so that a
    cached collection is rebuilt when they change."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "sieve_lite" / "store" / "migrations").glob("*.py")) + [
            ROOT / "sieve_lite" / "words.py"]:
        h.update(path.read_bytes())
    return h.hexdigest()[:8]


def collection_path(n_docs: int, seed: int) -> Path:
    return OUT / f"zipf-{n_docs}-s{seed}-v{GENERATOR_VERSION}-{schema_tag()}.db"


def ensure_collection(n_docs: int = 100_000, seed: int = 1, rebuild: bool = False,
                      quiet: bool = False) -> Path:
    """The cached lexical collection of ``generate(n_docs, seed)``; built when missing."""
    sys.path.insert(0, str(ROOT))
    from sieve_lite.build import build_collection
    from sieve_lite.documents import Document

    out = collection_path(n_docs, seed)
    if out.exists() and not rebuild:
        return out
    OUT.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def docs() -> Iterator[Document]:
        for i, d in enumerate(generate(n_docs, seed)):
            if not quiet and i and i % 10_000 == 0:
                print(f"  {i:,} documents ({time.perf_counter() - started:.0f} s)",
                      file=sys.stderr)
            yield Document.from_dict(d)

    report = build_collection(docs(), out, embed=False, quiet=True, force=True,
                              source_label=f"bench/corpus.py --docs {n_docs} --seed {seed}")
    for stale in OUT.glob(f"zipf-{n_docs}-s{seed}-v*"):  # older schema or generator versions
        if stale.name != out.name and not stale.name.startswith(f"{out.stem}."):
            stale.unlink()
    for stale in OUT.glob(f"queries-zipf-{n_docs}-s{seed}-v*"):
        if not stale.name.startswith(f"queries-{out.stem}-"):
            stale.unlink()
    if not quiet:
        print(f"built {out}: {report.documents:,} documents, {report.sections:,} sections, "
              f"{report.words:,} words, {report.seconds:.0f} s, "
              f"{out.stat().st_size / 1e6:.0f} MB", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jsonl", type=Path, help="write the documents as JSON Lines instead")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached collection")
    args = ap.parse_args()
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as f:
            for d in generate(args.docs, args.seed):
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        return
    print(ensure_collection(args.docs, args.seed, rebuild=args.rebuild))


if __name__ == "__main__":
    main()
