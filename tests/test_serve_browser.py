"""``sieve-lite serve`` in a real browser: Playwright for Python driving Debian's chromium
(``executable_path=/usr/bin/chromium``; never ``playwright install``), against the real server
serving the shipped PEP collection and a hostile one built here.

Controls are found as a person finds them: by their labels (Search, Question, Ask, the Steps
list, the Answer region), cards as ``<article>``, highlights as ``<mark>``. Every test ends
with no Content-Security-Policy violation and no script error in the console.
"""

from __future__ import annotations

import re

import pytest
from serve_helpers import PEPS, Server, Watched, browser, build_hostile, have_browser

pytest.importorskip("playwright.sync_api", reason=have_browser())
from playwright.sync_api import expect  # noqa: E402

pytestmark = pytest.mark.skipif(bool(have_browser()), reason=have_browser() or "ok")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    hostile = build_hostile(tmp_path_factory.mktemp("hostile"))
    srv = Server(PEPS, hostile, data_dir=tmp_path_factory.mktemp("runs"))
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
    yield w
    csp = w.csp()
    errors = [m for m in w.console if m.startswith(("error", "pageerror"))]
    context.close()
    assert not csp, csp
    assert not errors, errors
    assert not w.dialogs, w.dialogs


def test_search_shows_cards_with_marked_words(server: Server, watched: Watched) -> None:
    page = watched.page
    page.goto(server.url + "c/peps")
    box = page.get_by_label("Search", exact=True)
    box.fill("walrus")
    box.press("Enter")
    page.wait_for_url(re.compile(r"q=walrus"))
    cards = page.locator("article")
    assert cards.count() >= 5
    assert "pep-0572" in " ".join(cards.all_inner_texts())
    marks = page.locator("article mark")
    assert marks.count() > 0
    assert {m.lower() for m in marks.all_inner_texts()} == {"walrus"}


def test_the_error_column_shows_as_you_type(server: Server, watched: Watched) -> None:
    page = watched.page
    page.goto(server.url + "c/peps")
    box = page.get_by_label("Search", exact=True)
    box.press_sequentially("walrus[auther]", delay=10)
    error = page.locator("#q-error")
    error.get_by_text("column 8").wait_for(timeout=5000)
    caret = error.locator("pre.caret").inner_text()
    assert caret.splitlines() == ["walrus[auther]", "       ^^^^^^"]
    assert box.get_attribute("aria-invalid") == "true"
    box.fill("walrus[title]")
    box.press("Space")
    expect(error).to_have_text(re.compile(r"^\s*$"))


def test_zero_hits_show_clause_counts_and_links_that_drop_a_clause(
        server: Server, watched: Watched) -> None:
    page = watched.page
    page.goto(server.url + "c/peps")
    box = page.get_by_label("Search", exact=True)
    box.fill("walrus[title] AND date[2018..]")
    box.press("Enter")
    counts = page.get_by_label("Clause counts")
    counts.wait_for()
    text = counts.inner_text()
    assert "walrus[title] admits 0" in text and "date[2018..] admits 283" in text
    assert page.get_by_text("Fallback listing").is_visible()
    assert page.locator("article.fallback").count() == page.locator("article").count() > 0
    counts.get_by_role("link", name="drop this clause").first.click()
    page.wait_for_load_state()
    assert page.get_by_label("Search", exact=True).input_value() == "date[2018..]"
    assert "283" in page.locator(".summary").inner_text()


def test_card_to_section_with_the_query_words_marked(server: Server, watched: Watched) -> None:
    page = watched.page
    page.goto(server.url + "c/peps?q=walrus")
    card = page.locator("article", has_text="pep-0572")
    card.locator(".snippet a.where").click()
    page.wait_for_url(re.compile(r"/c/peps/doc\?id=pep-0572&section="))
    text = page.locator(".section .text")
    assert "walrus" in text.inner_text().lower()
    assert [m.lower() for m in text.locator("mark").all_inner_texts()][0] == "walrus"
    # The outline: every section its own URL.
    page.get_by_role("link", name="outline").click()
    assert page.locator(".outline li").count() >= 30
    page.locator(".outline a", has_text="Abstract").first.click()
    assert page.locator(".section h2").inner_text() == "Abstract"


def test_a_hostile_collection_runs_no_script(server: Server, watched: Watched) -> None:
    page = watched.page
    urls = [server.url, server.url + "c/hostile?q=walrus", server.url + "search?q=walrus",
            server.url + "c/hostile/doc?id=evil-1"]
    for url in urls:
        page.goto(url)
        assert page.evaluate("window.__pwned") is None, url
    page.goto(server.url + "c/hostile?q=walrus")
    titles = page.locator("article h3").all_inner_texts()
    assert any("<script>window.__pwned=1</script>" in t for t in titles)  # shown as text
    # Follow every section link of the first hostile document, and click its links.
    page.goto(server.url + "c/hostile/doc?id=evil-1")
    hrefs = page.locator(".outline a").evaluate_all("els => els.map(e => e.href)")
    for href in hrefs:
        page.goto(href)
        assert page.evaluate("window.__pwned") is None, href
        assert page.locator("iframe, img, svg, a[href^='javascript']").count() == 0
    for link in page.locator("a").evaluate_all("els => els.map(e => e.href)"):
        assert link.startswith(("http://127.0.0.1", "https://")), link
    assert page.evaluate("document.scripts.length") == 1


def test_keyboard(server: Server, watched: Watched) -> None:
    page = watched.page
    page.goto(server.url + "c/peps")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("walrus")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"q=walrus"))
    page.keyboard.press("j")
    page.keyboard.press("j")
    first_two = page.locator("article a.open").evaluate_all(
        "els => els.slice(0, 2).map(e => e.getAttribute('href'))")
    assert page.evaluate("document.activeElement.getAttribute('href')") == first_two[1]
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.getAttribute('href')") == first_two[0]
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/c/peps/doc\?id="))
    assert page.locator(".outline li").count() > 0


def test_works_without_javascript_and_at_360_px(server: Server, chromium) -> None:
    context = chromium.new_context(java_script_enabled=False, viewport={"width": 360,
                                                                         "height": 740})
    page = context.new_page()
    try:
        page.goto(server.url)
        page.get_by_role("link", name="peps", exact=True).click()
        box = page.get_by_label("Search", exact=True)
        box.fill("walrus[auther]")
        box.press("Enter")
        assert "column 8" in page.locator("#q-error").inner_text()  # rendered by the server
        box = page.get_by_label("Search", exact=True)
        box.fill("walrus")
        box.press("Enter")
        assert page.locator("article").count() >= 5
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, width
        # Search all collections: each card names its collection.
        page.goto(server.url + "search?q=walrus")
        colls = set(page.locator("article .coll").all_inner_texts())
        assert colls == {"peps", "hostile"}
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        context.close()


def test_dark_mode_follows_the_system(server: Server, chromium) -> None:
    context = chromium.new_context(color_scheme="dark")
    page = context.new_page()
    try:
        page.goto(server.url)
        bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg == "rgb(19, 19, 22)", bg
    finally:
        context.close()


def test_headers_seen_by_the_browser(server: Server, watched: Watched) -> None:
    resp = watched.page.goto(server.url)
    assert resp is not None
    headers = resp.all_headers()
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
