"""Ask in the browser with the shipped model (SmolLM2-135M through llama-cpp-python): the run
streams its steps before its answer, the answer cites a section and the citation opens it with
the span marked; Stop ends the run (and the model's generation within a token); a reload
mid-run loses nothing; without JavaScript the run page still shows its steps."""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from serve_helpers import PEPS, Server, Watched, browser, have_browser

QUESTION = "Which PEP introduced the walrus operator?"


def _model() -> str:
    try:
        import llama_cpp  # noqa: F401

        from sieve_lite.agent.backbones import default_model_path

        default_model_path()
    except Exception as e:  # ImportError, EnvironmentProblem
        return f"the shipped model is not installed here ({type(e).__name__})"
    return ""


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(have_browser() or _model()),
                                 reason=have_browser() or _model() or "ok")]

# Records, in order, when steps and the answer appear (set before the page's own script).
ORDER_SCRIPT = """
window.__order = [];
document.addEventListener('DOMContentLoaded', function () {
  var steps = document.getElementById('steps'), answer = document.getElementById('answer');
  if (!steps || !answer) return;
  for (var i = 0; i < steps.children.length; i++) window.__order.push('step');
  if (answer.querySelector('.answer-text')) window.__order.push('answer');
  new MutationObserver(function (ms) {
    ms.forEach(function (m) { m.addedNodes.forEach(function (n) {
      if (n.nodeType === 1) window.__order.push('step'); }); });
  }).observe(steps, {childList: true});
  new MutationObserver(function () {
    if (answer.querySelector('.answer-text')) window.__order.push('answer');
  }).observe(answer, {childList: true, subtree: true});
});
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(PEPS, data_dir=tmp_path_factory.mktemp("runs"))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def chromium():
    with browser() as b:
        yield b


@pytest.fixture
def watched(chromium):
    context = chromium.new_context()
    w = Watched(context)
    w.page.add_init_script(ORDER_SCRIPT)
    yield w
    csp = w.csp()
    errors = [m for m in w.console if m.startswith(("error", "pageerror"))]
    context.close()
    assert not csp, csp
    assert not errors, errors


def ask(page, server: Server, question: str = QUESTION) -> str:
    page.goto(server.url + "ask")
    page.get_by_label("Question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_url(re.compile(r"/runs/[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$"))
    return page.url.rsplit("/", 1)[1]


def run_json(server: Server, run_id: str) -> dict:
    with urllib.request.urlopen(f"{server.url}runs/{run_id}.json", timeout=30) as r:
        return json.load(r)


def test_a_run_streams_its_steps_then_a_cited_answer(server: Server, watched: Watched) -> None:
    page = watched.page
    run_id = ask(page, server)
    steps = page.get_by_label("Steps")
    answer = page.get_by_role("region", name="Answer")
    answer.locator(".answer-text").wait_for(timeout=900_000)
    order = page.evaluate("window.__order")
    assert order and order[0] == "step" and "answer" in order, order
    assert steps.locator("> li").count() >= 2  # the engine's step 0, then the model's
    assert "tokens in" in steps.inner_text() and "context" in steps.inner_text()
    assert "572" in answer.locator(".answer-text").inner_text()
    data = run_json(server, run_id)
    assert data["type"] == "run" and data["status"] == "done" and data["answered"]
    assert steps.locator("> li").count() == len(data["steps"])  # no step twice
    assert [c["doc"] for c in data["citations"]] == ["pep-0572"]
    cite = answer.get_by_role("link").first
    assert cite.inner_text().startswith("pep-0572 | ")
    cite.click()
    page.wait_for_url(re.compile(r"/c/peps/doc\?id=pep-0572&section="))
    marked = page.locator("mark.cited")
    assert "572" in marked.inner_text()
    # The run is listed, found by a word of its question, and exported.
    page.goto(server.url + "ask?q=walrus")
    assert page.get_by_role("link", name=QUESTION).count() >= 1
    with urllib.request.urlopen(f"{server.url}runs/{run_id}.md", timeout=30) as r:
        md = r.read().decode()
    assert md.startswith(f"# {QUESTION}") and "cites pep-0572" in md


def test_stop_ends_the_run(server: Server, watched: Watched) -> None:
    page = watched.page
    run_id = ask(page, server, "What does PEP 8 say about the maximum line length?")
    page.get_by_label("Steps").locator("> li").first.wait_for(timeout=600_000)
    page.keyboard.press("Escape")  # Esc presses Stop
    page.locator("#status", has_text="stopped").wait_for(timeout=300_000)
    data = run_json(server, run_id)
    assert data["status"] == "stopped" and data["answer"] is None
    assert "Stopped before an answer" in page.get_by_role("region", name="Answer").inner_text()
    assert page.locator("#stop").count() == 0


def test_a_reload_mid_run_keeps_the_steps(server: Server, watched: Watched) -> None:
    page = watched.page
    run_id = ask(page, server)
    steps = page.get_by_label("Steps")
    steps.locator("> li").first.wait_for(timeout=600_000)
    page.reload()
    assert steps.locator("> li").count() >= 1  # rendered by the server
    page.get_by_role("region", name="Answer").locator(".answer-text").wait_for(timeout=900_000)
    data = run_json(server, run_id)
    assert steps.locator("> li").count() == len(data["steps"])


def test_without_javascript_the_run_page_shows_its_steps(server: Server, chromium) -> None:
    context = chromium.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        run_id = ask(page, server)
        deadline = time.monotonic() + 900
        while run_json(server, run_id)["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.5)
        page.reload()
        assert page.get_by_label("Steps").locator("> li").count() >= 2
        assert "572" in page.get_by_role("region", name="Answer").inner_text()
    finally:
        context.close()


def test_should_stop_ends_generation_within_a_token() -> None:
    from sieve_lite.agent.backbones import LlamaBackbone

    bb = LlamaBackbone(n_ctx=2048)
    msgs = [{"role": "user", "content": "Write a long story about a walrus."}]
    full = bb.complete(msgs, max_tokens=48)
    calls = []
    bb.should_stop = lambda: calls.append(1) or len(calls) >= 3  # true from its third call
    cut = bb.complete(msgs, max_tokens=48)
    assert full.completion_tokens > 10
    # llama-cpp asks once per sampled token (and once more as it finishes): it stops there.
    assert cut.completion_tokens <= 3 and len(calls) <= 4
