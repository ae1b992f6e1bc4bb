"""The console transcripts of README.md and docs/*.md, produced by running them.

    python tools/transcripts.py                 # check: exit 1, with a diff, when one is stale
    python tools/transcripts.py --write         # run every transcript, rewrite the stale ones
    python tools/transcripts.py --write README.md --only ask   # one file, blocks matching "ask"
    python tools/transcripts.py --write --force --only ask      # rewrite even if only times moved

``make transcripts`` is ``--write`` (it also rewrites ``docs/cli.md``, generated from the
commands' help by ``sieve_lite.cli.reference``). ``tests/test_transcripts.py`` runs the check,
block by block, in the normal test suite.

Every ```console block is a transcript: ``$ COMMAND`` lines, each followed by what it prints.
Each block runs in a fresh temporary folder holding a copy of ``collections/``, a link to
``tests/`` and ``.venv/bin/{sieve-lite,python}`` (this checkout's library, run by this
interpreter; ``sieve-lite`` is also on PATH), so what works there works in a fresh clone
after ``make install``, and nothing in the checkout is written. Commands run one after
another through bash, as a person types them:

* at a terminal of 80 columns (a pseudo-terminal, stdout and stderr on it), with what a
  terminal would finally show kept (colours dropped, progress bars and spinners gone as they
  erase themselves); ``<!-- transcript: pipe -->`` above a block runs its commands with stdout
  to a pipe and shows only that (the machine formats);
* ``COMMAND &`` starts in the background; what it prints until it has printed a line is
  shown, and it is stopped (Ctrl-C) when the block ends;
* ``make TARGET`` runs the target's recipe from the Makefile (without its prerequisites: no
  install step), echoing it as make does;
* an output whose last line is ``...`` is cut: as many lines as the document shows before it
  are kept, then ``...``.

Block options, in a comment on the line above the block (``<!-- transcript: OPTIONS -->``):
``pipe`` (above); ``slow`` (runs a language model: the test is marked slow); ``port=N`` (the
commands' ``N`` becomes a free port, and back in what they print, so a server on the machine
cannot collide); ``python`` (the block is what the ```python block above it prints: it runs
as a file in the block's folder).

Checking compares ``normalise``d text, which forgives what changes from run to run: times
(``26ms``, ``3.9s``), scores and other numbers of 4 decimals or more, an episode's count of
distinct tokens (it holds the model's replies, whose length varies with the CPU), the length of box
rules (a wider score moves a card's border), the folder's path, trailing spaces and how
lines are wrapped. Writing replaces only the outputs that differ after normalising, so a
rerun does not churn the documents.
"""

from __future__ import annotations

import argparse
import difflib
import fcntl
import os
import pty
import re
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = 80
TIMEOUT = 900.0        # seconds one command may run (a model run on a slow machine)
READY_TIMEOUT = 120.0  # seconds a background command has to print its first line
HINT = "regenerate with: make transcripts (python tools/transcripts.py --write)"


def documents() -> list[Path]:
    """The files whose transcripts are kept: README.md and docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# ----------------------------------------------------------------------------- parsing
@dataclass
class Step:
    command: str            # as shown after "$ " ("" for the output of a python block)
    shown: list[str]        # the lines shown under it


@dataclass
class Block:
    path: Path
    line: int               # 1-based line of the opening fence
    options: dict[str, str]
    steps: list[Step]
    body: tuple[int, int]   # (start, end) character offsets of the block's content
    python: str | None = None  # the code a `python` block shows the output of
    name: str = ""

    @property
    def slow(self) -> bool:
        return "slow" in self.options

    @property
    def pipe(self) -> bool:
        return "pipe" in self.options

    def tools(self) -> list[str]:
        """Programs besides sieve-lite the commands need (``curl``, ``jq``, ``make``)."""
        words = {w for s in self.steps for w in re.findall(r"[\w.-]+", s.command)}
        return [t for t in ("curl", "jq") if t in words]


_FENCE = re.compile(r"^```console[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_OPTIONS = re.compile(r"<!--\s*transcript:?(.*?)-->\s*\Z", re.S)
_PYTHON = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def parse(path: Path, text: str | None = None) -> list[Block]:
    """The console blocks of ``path`` (or of ``text`` as its content)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()]
        last = before.rstrip("\n").rsplit("\n", 1)[-1]
        opt = _OPTIONS.search(last)
        options: dict[str, str] = {}
        if opt:
            for word in opt.group(1).split():
                key, _, value = word.partition("=")
                options[key] = value
        lines = m.group(1).split("\n")[:-1]
        steps: list[Step] = []
        python = None
        if "python" in options:
            code = list(_PYTHON.finditer(before))
            if not code:
                raise ValueError(f"{path.name}: a `python` transcript with no python block "
                                 "above it")
            python = code[-1].group(1)
            steps.append(Step("", lines))
        else:
            for line in lines:
                if line.startswith("$ "):
                    steps.append(Step(line[2:], []))
                elif steps:
                    steps[-1].shown.append(line)
                else:
                    raise ValueError(f"{path.name}:{before.count(chr(10)) + 1}: a console "
                                     "block must begin with a `$ ` command line")
        n = before.count("\n") + 1
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        first = steps[0].command if steps and steps[0].command else "python"
        out.append(Block(path, n, options, steps, m.span(1), python,
                         f"{rel}:{n} {first[:60]}"))
    return out


def all_blocks() -> list[Block]:
    return [b for p in documents() for b in parse(p)]


# --------------------------------------------------------------------------- normalising
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_TIME = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s)\b")
_SCORE = re.compile(r"(score\"?:?\s*)-?\d+(?:\.\d+)?(?:e-?\d+)?")
_LONG_NUMBER = re.compile(r"-?\d+\.\d{4,}(?:e-?\d+)?")
_RULE = re.compile(r"─{2,}")
# The tokens an episode counts include the model's own replies, whose length moves with the
# CPU's floating point (llama.cpp's SIMD paths) even when the answer does not
_DISTINCT = re.compile(r"[\d,]+(?= distinct\b)|(?<=\"distinct_tokens\": )\d+")


def normalise(text: str, folder: str | None = None) -> str:
    """``text`` with what differs between runs of the same command made equal (see the module
    docstring), and all whitespace, line breaks included, as single spaces."""
    text = _ANSI.sub("", text)
    if folder:
        text = text.replace(folder, ".")
    text = text.replace(str(ROOT), ".")
    text = _TIME.sub("<time>", text)
    text = _SCORE.sub(r"\1<score>", text)
    text = _LONG_NUMBER.sub("<number>", text)
    text = _DISTINCT.sub("<tokens>", text)
    text = _RULE.sub("─", text)
    return " ".join(text.split())


# ------------------------------------------------------------------------------ terminal
_TOKEN = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]"
                    r"|[\r\n\b]|[^\x1b\r\n\b]+")


def screen(raw: str) -> list[str]:
    """What a terminal shows after ``raw`` (a pseudo-terminal's output) is written to it, as
    lines: carriage returns, erased lines and cursor moves applied (how rich's progress bars
    and spinners draw and then remove themselves), colours and links dropped. Long lines are
    kept whole (a terminal would wrap them on screen)."""
    lines: list[str] = [""]
    row = col = 0
    for m in _TOKEN.finditer(raw):
        tok = m.group(0)
        if m.group(2):
            args = [int(a) if a.isdigit() else 0 for a in m.group(1).split(";")]
            n = args[0] if args and args[0] else 1
            final = m.group(2)
            if final == "A":
                row = max(0, row - n)
            elif final == "B":
                row += n
            elif final == "C":
                col += n
            elif final == "D":
                col = max(0, col - n)
            elif final == "G":
                col = max(0, n - 1)
            elif final == "K":
                while len(lines) <= row:
                    lines.append("")
                how = args[0] if args else 0
                if how == 0:
                    lines[row] = lines[row][:col]
                elif how == 1:
                    lines[row] = " " * col + lines[row][col:]
                else:
                    lines[row] = ""
            elif final == "J" and (args[0] if args else 0) in (2, 3):
                lines, row, col = [""], 0, 0
            continue
        if tok.startswith("\x1b"):
            continue  # colours, links, modes
        if tok == "\r":
            col = 0
        elif tok == "\n":
            row += 1
        elif tok == "\b":
            col = max(0, col - 1)
        else:
            while len(lines) <= row:
                lines.append("")
            line = lines[row].ljust(col)
            lines[row] = line[:col] + tok + line[col + len(tok):]
            col += len(tok)
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def _terminal(command: str, cwd: Path, env: dict[str, str]
              ) -> tuple[subprocess.Popen[bytes], int]:
    """``command`` started by bash on a new pseudo-terminal of ``COLUMNS`` columns (stdin,
    stdout and stderr), in a session of its own; (the process, the terminal's master side)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, COLUMNS, 0, 0))
    proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, stdin=slave,
                            stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    return proc, master


def _read(master: int, proc: subprocess.Popen[bytes], deadline: float,
          until_line: bool = False) -> bytes:
    """What ``proc`` writes to the pseudo-terminal ``master`` until it ends (or, with
    ``until_line``, until a whole line has come)."""
    out = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # the other side is closed: everything is read
                break
            if not data:
                break
            out += data
            if until_line and b"\n" in out:
                break
        elif proc.poll() is not None and not ready:
            # drain what is left, then stop
            try:
                while select.select([master], [], [], 0.05)[0]:
                    data = os.read(master, 1 << 16)
                    if not data:
                        break
                    out += data
            except OSError:
                pass
            break
    else:
        raise TimeoutError
    return out


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to the process group, then a kill if it does not end."""
    for sig, wait in ((signal.SIGINT, 15), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue


# ------------------------------------------------------------------------------- running
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_recipe(target: str, makefile: Path = ROOT / "Makefile") -> list[str]:
    """The recipe lines of ``target`` in ``makefile``, with its variables expanded (``?=``,
    ``:=`` and ``=`` definitions; command-line overrides are not read)."""
    text = makefile.read_text(encoding="utf-8")
    values = {m.group(1): m.group(2).strip()
              for m in re.finditer(r"^([A-Z_]+)\s*[?:]?=[ \t]*(.*)$", text, re.M)}

    def expand(s: str) -> str:
        for _ in range(10):
            s = re.sub(r"\$\(([A-Z_]+)\)", lambda m: values.get(m.group(1), ""), s)
        return s

    m = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n?)+)", text, re.M)
    if m is None:
        raise ValueError(f"the Makefile has no target {target!r} with a recipe")
    return [expand(line[1:]) for line in m.group(1).splitlines()]


def _wrapper(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


@contextmanager
def sandbox() -> Iterator[Path]:
    """A temporary folder as a fresh clone's root looks after ``make install``."""
    with tempfile.TemporaryDirectory(prefix="sieve-transcript-") as tmp:
        folder = Path(tmp).resolve()
        shutil.copytree(ROOT / "collections", folder / "collections")
        (folder / "tests").symlink_to(ROOT / "tests")
        (folder / "Makefile").symlink_to(ROOT / "Makefile")
        bin_dir = folder / ".venv" / "bin"
        bin_dir.mkdir(parents=True)
        # This checkout's library, whatever the interpreter has installed; set here, not only
        # in the environment, because an MCP client starts its server with a bare one.
        path = shlex.quote(str(ROOT)) + "${PYTHONPATH:+:$PYTHONPATH}"
        python = shlex.quote(sys.executable)
        _wrapper(bin_dir / "python", f'PYTHONPATH={path} HF_HUB_OFFLINE=1 exec {python} "$@"\n')
        _wrapper(bin_dir / "sieve-lite", f"PYTHONPATH={path} HF_HUB_OFFLINE=1 exec {python} "
                 f'-c "from sieve_lite.cli import main; main()" "$@"\n')
        yield folder


def environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SIEVE_LITE_") and k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    env.update(SIEVE_LITE_CONFIG=os.devnull, HF_HUB_OFFLINE="1", COLUMNS=str(COLUMNS),
               LINES="40", NO_COLOR="1", TERM="xterm-256color", PYTHONIOENCODING="utf-8",
               PYTHONUTF8="1", PATH=f"{folder / '.venv' / 'bin'}{os.pathsep}{env['PATH']}")
    return env


@dataclass
class Run:
    """What each step of a block printed (lines, as a terminal or a pipe shows them)."""
    outputs: list[list[str]] = field(default_factory=list)
    folder: str = ""


def run_block(block: Block) -> Run:
    """Run every step of ``block`` in a sandbox; what each printed."""
    run = Run()
    background: list[subprocess.Popen[bytes]] = []
    masters: list[int] = []
    port = block.options.get("port")
    real_port = str(free_port()) if port else ""
    with sandbox() as folder:
        run.folder = str(folder)
        env = environment(folder)
        try:
            for step in block.steps:
                if block.python is not None:
                    out = _run_python(block.python, folder, env)
                else:
                    command = step.command
                    if port:
                        command = re.sub(rf"\b{port}\b", real_port, command)
                    out = _run_command(command, folder, env, block.pipe, background, masters)
                    if port:
                        out = [re.sub(rf"\b{real_port}\b", port, line) for line in out]
                run.outputs.append(out)
        finally:
            for proc in background:
                _stop(proc)
            for fd in masters:
                os.close(fd)
    return run


def _run_python(code: str, folder: Path, env: dict[str, str]) -> list[str]:
    script = folder / "transcript.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run([str(folder / ".venv" / "bin" / "python"), script.name], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"the python block failed (exit {proc.returncode}):\n{proc.stderr}")
    return proc.stdout.rstrip("\n").split("\n") if proc.stdout.strip() else []


def _run_command(command: str, folder: Path, env: dict[str, str], pipe: bool,
                 background: list[subprocess.Popen[bytes]], masters: list[int]) -> list[str]:
    echo: list[str] = []
    shell = command.strip()
    m = re.fullmatch(r"make\s+([\w-]+)\s*(?:#.*)?", shell)
    if m:
        recipe = make_recipe(m.group(1))
        echo = [line.lstrip("@-") for line in recipe if not line.startswith("@")]
        shell = " && ".join(line.lstrip("@-") for line in recipe)
    if shell.endswith("&"):
        proc, master = _terminal(shell[:-1].strip(), folder, env)
        background.append(proc)
        masters.append(master)
        try:
            raw = _read(master, proc, time.monotonic() + READY_TIMEOUT, until_line=True)
        except TimeoutError:
            raise RuntimeError(f"{command}: printed no line in {READY_TIMEOUT:g} s") from None
        return screen(raw.decode("utf-8", "replace"))
    if pipe:
        proc = subprocess.run(["bash", "-c", shell], cwd=folder, env=env, capture_output=True,
                              timeout=TIMEOUT)
        text = proc.stdout.decode("utf-8", "replace")
        _check_ended(command, proc.returncode, text + proc.stderr.decode("utf-8", "replace"))
        return echo + (text.rstrip("\n").split("\n") if text.strip() else [])
    proc, master = _terminal(shell, folder, env)
    try:
        raw = _read(master, proc, time.monotonic() + TIMEOUT)
    except TimeoutError:
        _stop(proc)
        raise RuntimeError(f"{command}: still running after {TIMEOUT:g} s") from None
    finally:
        os.close(master)
    proc.wait()
    text = raw.decode("utf-8", "replace")
    _check_ended(command, proc.returncode, text)
    return echo + screen(text)


def _check_ended(command: str, code: int, text: str) -> None:
    """A command may fail as documented (exit 1, 2: that is what it shows); a crash or a
    traceback is not a transcript."""
    if code < 0 or code >= 128 or "Traceback (most recent call last)" in text:
        raise RuntimeError(f"{command}: ended with {code}:\n{text[-3000:]}")


# --------------------------------------------------------------------------- comparing
def _cut(shown: list[str], got: list[str]) -> tuple[list[str], list[str]]:
    """(what is compared of ``shown``, of ``got``): an output shown cut (its last line is
    ``...``) is compared on the lines it shows."""
    if shown and shown[-1] == "...":
        n = len(shown) - 1
        return shown[:n], got[:n]
    return shown, got


def rendered(shown: list[str], got: list[str]) -> list[str]:
    """The lines to write under a command: ``got``, cut as ``shown`` is."""
    if shown and shown[-1] == "..." and len(got) > len(shown) - 1:
        return got[: len(shown) - 1] + ["..."]
    return got


@dataclass
class Stale:
    block: Block
    step: Step
    got: list[str]

    def diff(self) -> str:
        return "\n".join(difflib.unified_diff(
            self.step.shown, rendered(self.step.shown, self.got),
            f"{self.block.name} (shown)", "(printed now)", lineterm="", n=1))


def check(block: Block, run: Run | None = None, force: bool = False) -> list[Stale]:
    """The steps of ``block`` whose shown output is not what they print now (with ``force``,
    every step whose text differs at all)."""
    run = run_block(block) if run is None else run
    stale = []
    for step, got in zip(block.steps, run.outputs, strict=True):
        shown, now = _cut(step.shown, got)
        if force and shown != now:
            stale.append(Stale(block, step, got))
        elif normalise("\n".join(shown), run.folder) != normalise("\n".join(now), run.folder):
            stale.append(Stale(block, step, got))
    return stale


def rewrite(path: Path, only: str | None = None, force: bool = False
            ) -> tuple[bool, list[str]]:
    """Run the transcripts of ``path`` (those whose name holds ``only``) and rewrite the stale
    ones in place (with ``force``, every one: fresh times and scores too): (whether anything
    changed, the blocks that could not run and why). A block that cannot run is left as it
    is."""
    text = path.read_text(encoding="utf-8")
    pieces, at = [], 0
    changed = False
    failed = []
    for block in parse(path, text):
        if only and only not in block.name:
            continue
        print(f"running {block.name}", file=sys.stderr)
        try:
            stale = {id(s.step): s for s in check(block, force=force)}
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            failed.append(f"{block.name}: {e}")
            continue
        lines = []
        for step in block.steps:
            if step.command:
                lines.append(f"$ {step.command}")
            s = stale.get(id(step))
            lines += rendered(step.shown, s.got) if s else step.shown
        changed = changed or bool(stale)
        start, end = block.body
        pieces += [text[at:start], "\n".join(lines) + "\n"]
        at = end
    pieces.append(text[at:])
    if changed:
        path.write_text("".join(pieces), encoding="utf-8")
    return changed, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="only these documents")
    ap.add_argument("--write", action="store_true", help="rewrite the stale transcripts")
    ap.add_argument("--only", default=None, help="only blocks whose name holds this text")
    ap.add_argument("--force", action="store_true",
                    help="with --write: rewrite every output that differs at all (times too)")
    args = ap.parse_args(argv)
    paths = [p.resolve() for p in args.files] or documents()
    if args.write:
        if not args.files and not args.only:
            sys.path.insert(0, str(ROOT))
            from sieve_lite.cli import reference

            cli_md = ROOT / "docs" / "cli.md"
            fresh = reference.render_cli_md()
            if cli_md.read_text(encoding="utf-8") != fresh:
                cli_md.write_text(fresh, encoding="utf-8")
                print("rewrote docs/cli.md", file=sys.stderr)
        failed = []
        for p in paths:
            changed, errors = rewrite(p, args.only, args.force)
            failed += errors
            if changed:
                print(f"rewrote {p.relative_to(ROOT)}", file=sys.stderr)
        for e in failed:
            print(f"NOT RUN: {e}", file=sys.stderr)
        return 1 if failed else 0
    failed = 0
    for p in paths:
        for block in parse(p):
            if args.only and args.only not in block.name:
                continue
            for s in check(block):
                failed += 1
                print(s.diff(), end="\n\n")
    if failed:
        print(f"{failed} transcript outputs are stale; {HINT}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
