"""What the people's rendering costs (``sieve_lite.terminal``), on the demo collection.

    python bench/render.py [--runs 5]

1. A card: ``card_lines`` at 80 columns for the top 5 of 20 queries (100 cards), median per
   card, framed and plain.
2. A section: ``section_renderable`` (reST through docutils, then rich's Markdown, with the
   word check) rendered at 80 columns, for 200 sections drawn at random (seed 7) and for the
   10 longest sections, medians; beside the plain text the agent reads.
3. The command line, wall time per run (median of ``--runs``), the new rendering beside the
   plain text: ``search -k 5 --ranker bm25`` framed (FORCE_COLOR=1) vs ``--compact``, and
   ``fetch`` of a section and of an outline framed vs piped.

Medians, because the machine is shared; the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sieve_lite  # noqa: E402
from sieve_lite import terminal as t  # noqa: E402
from sieve_lite.store.packing import unpack  # noqa: E402

DEMO = ROOT / "collections" / "peps.db"
QUERIES = [
    "walrus", '"assignment expression*"[title] OR walrus[body]', "generator",
    "Guido[author] AND generator", "async await", "Final[infobox] AND Guido[author]",
    '"type hints"', "typing AND date[2018..]", "decorator*", "unicode NOT python2",
    "NEAR(pattern matching)", "f-string*", "GIL OR \"global interpreter lock\"",
    "packaging[title]", "import system[section]", '"release schedule"[title]',
    "exception group*", "dataclass*", "lambda[body] -lambdas", "asyncio OR coroutine*",
]


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.2f} ms"


def cards(coll: sieve_lite.Collection) -> None:
    items = []
    for q in QUERIES:
        res = coll.search(q, k=5, ranker="bm25")
        items += [(h.card, t.query_words(q, coll.fields)) for h in res.results]
    for boxed in (True, False):
        times = []
        for card, words in items:
            t0 = time.perf_counter()
            t.card_lines(card, words, 80, boxed=boxed)
            times.append(time.perf_counter() - t0)
        print(f"card_lines, {'framed' if boxed else 'plain '}, 80 columns: {_ms(times)} "
              f"per card (median of {len(items)})")


def sections(coll: sieve_lite.Collection) -> None:
    rows = coll.conn.execute("SELECT heading, text FROM sections").fetchall()
    random.seed(7)
    sample = [unpack(x) for _, x in random.sample(rows, 200)]
    longest = sorted((unpack(x) for _, x in rows), key=len)[-10:]
    for name, texts in (("200 random sections", sample), ("10 longest sections", longest)):
        rendered, plain = [], []
        for text in texts:
            t0 = time.perf_counter()
            t.render_text(t.section_renderable(text, "rst", [("python", False)]), 80)
            rendered.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            t.render_text(t.Text(text), 80)
            plain.append(time.perf_counter() - t0)
        words = statistics.median(len(x.split()) for x in texts)
        ratio = statistics.median(rendered) / statistics.median(plain)
        print(f"{name} (median {words:.0f} words): rendered {_ms(rendered)}, plain text "
              f"{_ms(plain)}, ratio {ratio:.1f}x")


def cli(runs: int) -> None:
    base = [sys.executable, "-c", "from sieve_lite.cli import main; main()"]
    env = dict(os.environ, COLUMNS="80", HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    env.pop("FORCE_COLOR", None)
    cases = [
        ("search framed", ["search", str(DEMO), "walrus", "-k", "5", "--ranker", "bm25"],
         {"FORCE_COLOR": "1"}),
        ("search --compact", ["search", str(DEMO), "walrus", "-k", "5", "--ranker", "bm25",
                              "--compact"], {}),
        ("fetch section framed", ["fetch", str(DEMO), "pep-0572", "Syntax and semantics"],
         {"FORCE_COLOR": "1"}),
        ("fetch section piped", ["fetch", str(DEMO), "pep-0572", "Syntax and semantics"], {}),
        ("fetch outline framed", ["fetch", str(DEMO), "pep-0572"], {"FORCE_COLOR": "1"}),
        ("fetch outline piped", ["fetch", str(DEMO), "pep-0572"], {}),
    ]
    wall: dict[str, float] = {}
    for name, args, extra in cases:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([*base, *args], env={**env, **extra}, capture_output=True,
                           check=True)
            times.append(time.perf_counter() - t0)
        wall[name] = statistics.median(times)
        print(f"{name:22s} {wall[name] * 1000:7.0f} ms (median of {runs})")
    for a, b in (("search framed", "search --compact"),
                 ("fetch section framed", "fetch section piped"),
                 ("fetch outline framed", "fetch outline piped")):
        print(f"{a} / {b}: {wall[a] / wall[b]:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with sieve_lite.open(DEMO) as coll:
        cards(coll)
        sections(coll)
    cli(args.runs)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
