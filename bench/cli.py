"""Command-line start-up benchmark: wall time and peak RSS of one ``sieve-lite`` process.

Run from the repository root::

    python bench/cli.py                        # this checkout, 7 runs per command
    python bench/cli.py --before 359505d -n 9  # and the same commands on an older commit
    python bench/cli.py --torch                # and this checkout embedding with torch

What is measured: each command is a fresh ``python -c "from sieve_lite.cli import main;
main()" ...`` process (what the ``sieve-lite`` script runs), started with the checkout first on
``PYTHONPATH`` and as the working directory (``-c`` puts the working directory first on
``sys.path``), ``HF_HUB_OFFLINE=1``, stdout and stderr to /dev/null (so no spinner: stderr
is not a terminal). Wall time is from start to exit; CPU time (user + system) and peak RSS
are the process's own, from ``os.wait4``. On a busy machine wall time grows with the load and
CPU time hardly does: a single-threaded command's CPU time is about its wall time on an idle
machine. Runs are interleaved (every variant of every command once per round, the order
rotating) so that load that comes and goes hits all alike, and one warm-up round is discarded
(page cache). Medians are printed with the minimum, the ratio of each
variant to this checkout, and the load average before and after: on a shared machine, quote
medians and ratios, not single runs.

Variants: ``now`` (this checkout), ``before`` (``--before REF``: that commit's files, exported
with ``git archive`` into a temporary folder, run the same way), ``torch`` (this checkout with
``SIEVE_LITE_EMBEDDER=torch``: the query embedded by sentence-transformers, as before the
numpy embedder).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DB = ROOT / "collections" / "peps.db"

COMMANDS: dict[str, list[str]] = {
    "search (hybrid)": ["search", "{db}", "walrus operator assignment expression"],
    "search (bm25)": ["search", "{db}", "walrus operator assignment expression",
                      "--ranker", "bm25"],
    "fetch": ["fetch", "{db}", "pep-0572", "abstract"],
    "info": ["info", "{db}"],
}


def run_once(checkout: Path, args: list[str],
             extra_env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one CLI process."""
    env = {k: v for k, v in os.environ.items() if k != "SIEVE_LITE_EMBEDDER"}
    env.update(PYTHONPATH=str(checkout), HF_HUB_OFFLINE="1", **extra_env)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "from sieve_lite.cli import main; main()",
                             *args], env=env, cwd=checkout, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} in {checkout} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def export(ref: str, into: Path) -> Path:
    """The files of commit ``ref`` in a fresh folder (``git archive``), collections included."""
    tar = into / "tree.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(tar), ref],
                   check=True)
    out = into / "checkout"
    out.mkdir()
    with tarfile.open(tar) as t:
        t.extractall(out, filter="data")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--runs", type=int, default=7, help="measured runs per variant")
    ap.add_argument("--before", metavar="REF", help="also time this git commit")
    ap.add_argument("--torch", action="store_true", help="also time SIEVE_LITE_EMBEDDER=torch")
    ap.add_argument("--db", type=Path, default=DB)
    ap.add_argument("--only", choices=list(COMMANDS), action="append")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    opts = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        variants: dict[str, tuple[Path, dict[str, str]]] = {"now": (ROOT, {})}
        if opts.before:
            variants["before"] = (export(opts.before, Path(tmp)), {})
        if opts.torch:
            variants["torch"] = (ROOT, {"SIEVE_LITE_EMBEDDER": "torch"})
        commands = {k: v for k, v in COMMANDS.items() if not opts.only or k in opts.only}
        jobs = [(c, v) for c in commands for v in variants]
        times: dict[tuple[str, str], list[float]] = {j: [] for j in jobs}
        rss: dict[tuple[str, str], list[float]] = {j: [] for j in jobs}
        cpu: dict[tuple[str, str], list[float]] = {j: [] for j in jobs}
        load_before = os.getloadavg()
        t0 = time.time()
        for rnd in range(opts.runs + 1):
            shift = rnd % len(jobs)
            for cmd, var in jobs[shift:] + jobs[:shift]:
                checkout, env = variants[var]
                args = [a.format(db=opts.db) for a in commands[cmd]]
                wall, cpu_s, mb = run_once(checkout, args, env)
                if rnd:  # round 0 warms the page cache
                    times[(cmd, var)].append(wall)
                    cpu[(cmd, var)].append(cpu_s)
                    rss[(cmd, var)].append(mb)
        load_after = os.getloadavg()

    print(f"sieve-lite CLI on {opts.db.name}: {opts.runs} runs per row, interleaved, "
          f"{time.time() - t0:.0f} s in all")
    print("load average (1/5/15 min): before " + " ".join(f"{x:.2f}" for x in load_before)
          + ", after " + " ".join(f"{x:.2f}" for x in load_after))
    print(f"{'command':<17} {'variant':<8} {'median s':>9} {'min s':>7} {'CPU s':>6} "
          f"{'RSS MB':>7} {'x now':>6}")
    rows = []
    for cmd in commands:
        base = statistics.median(times[(cmd, "now")])
        for var in variants:
            med = statistics.median(times[(cmd, var)])
            row = {"command": cmd, "variant": var, "median_s": round(med, 3),
                   "min_s": round(min(times[(cmd, var)]), 3),
                   "cpu_s": round(statistics.median(cpu[(cmd, var)]), 3),
                   "rss_mb": round(statistics.median(rss[(cmd, var)]), 1),
                   "ratio_to_now": round(med / base, 2), "runs": times[(cmd, var)]}
            rows.append(row)
            print(f"{cmd:<17} {var:<8} {med:>9.3f} {row['min_s']:>7.3f} {row['cpu_s']:>6.2f} "
                  f"{row['rss_mb']:>7.0f} {row['ratio_to_now']:>6.2f}")
    if opts.json:
        opts.json.parent.mkdir(parents=True, exist_ok=True)
        opts.json.write_text(json.dumps({"load_before": load_before, "load_after": load_after,
                                         "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
