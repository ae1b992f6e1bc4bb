"""Shared by the ``sieve-lite serve`` tests: a hostile collection, a real server process, and
a real browser (Playwright for Python driving Debian's ``chromium``; never a downloaded one).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEPS = ROOT / "collections" / "peps.db"
CHROMIUM = Path("/usr/bin/chromium")

# Every way a collection built by a stranger could try to run script on the page: markup and
# event handlers in titles, headings, text, infobox and authors; javascript: and data: URLs;
# bidi overrides that make a line read in another order.
EVIL = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
HOSTILE_DOCS = [
    {"id": "evil-1", "title": f"Walrus {EVIL} \u202etxt.exe\u202c title",
     "url": "javascript:window.__pwned=3",
     "author": [f"Mallory {EVIL}"],
     "infobox": [["Key <b>bold</b>", f"value {EVIL}"]],
     "date": "2020-01-01",
     "sections": [{"heading": "(intro)", "text": f"The walrus intro {EVIL} and more text."},
                  {"heading": f"Heading {EVIL} \u202eright-to-left\u202c",
                   "text": "walrus <a href=\"javascript:window.__pwned=4\">click</a> "
                           "<iframe src=\"javascript:window.__pwned=5\"></iframe> "
                           "\u202eevil override\u202c [link](javascript:window.__pwned=6)"}]},
    {"id": "evil-2\u202e", "title": "Data URL walrus <svg onload=window.__pwned=7>",
     "url": "data:text/html,<script>window.__pwned=8</script>",
     "sections": [{"heading": "Body", "text": "walrus walrus {{ 7*7 }} {% raw %} &lt;"}]},
    {"id": "evil-3", "title": "Quote walrus \"><script>window.__pwned=9</script>",
     "url": "https://example.org/\"><script>window.__pwned=10</script>",
     "sections": [{"heading": "Body", "text": "a plain walrus section"}]},
]


def build_hostile(folder: Path) -> Path:
    from sieve_lite.build import build_collection
    from sieve_lite.sources import iter_documents

    src = folder / "hostile.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in HOSTILE_DOCS), encoding="utf-8")
    out = folder / "hostile.db"
    build_collection(iter_documents([src], "jsonl"), out, embed=False, strict=True, quiet=True,
                     source_label="jsonl: hostile")
    return out


class Server:
    """``sieve-lite serve`` in a subprocess on a free port (it prints its URL on stderr)."""

    def __init__(self, *dbs: Path, data_dir: Path, extra: tuple[str, ...] = ()) -> None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
               "SIEVE_LITE_CONFIG": os.devnull}
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "cli.py"), "serve", *map(str, dbs), "--port", "0",
             "--data-dir", str(data_dir), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.url = ""
        deadline = time.monotonic() + 60
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"at (http://\S+/) ", line)
            if m:
                self.url = m.group(1)
                break
        if not self.url:
            self.proc.kill()
            raise RuntimeError(f"the server did not start: {self.proc.stderr.read()}")
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def have_browser() -> str:
    """Why the browser tests cannot run here, or '' when they can."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'sieve-lite[dev]')"
    if not CHROMIUM.exists():
        return "Debian's chromium is not installed (apt-get install chromium; make test does)"
    return ""


# Recorded in every page before its own scripts: CSP violations, and a trap for script
# that a hostile collection might smuggle in.
INIT_SCRIPT = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__csp.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


@contextmanager
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                               args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class Watched:
    """A page whose console errors, CSP violations and dialogs are recorded."""

    def __init__(self, context: object) -> None:
        self.console: list[str] = []
        self.dialogs: list[str] = []
        self.page = context.new_page()  # type: ignore[attr-defined]
        self.page.add_init_script(INIT_SCRIPT)
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def _dialog(self, d: object) -> None:
        self.dialogs.append(d.message)  # type: ignore[attr-defined]
        d.dismiss()  # type: ignore[attr-defined]

    def csp(self) -> list[str]:
        found = [m for m in self.console if "Content Security Policy" in m]
        try:
            found += self.page.evaluate("window.__csp || []")
        except Exception:  # the page is navigating: the console record still stands
            pass
        return found
