"""``sieve-lite serve`` over HTTP, without a browser: the guard (headers, Host allowlist, token,
cross-site POST, body bound), the open-host refusal, the JSON twins, error pages that do not
echo their input, and a hostile collection's text never rendered as markup. The server is the
real one (``cli.py serve`` in a subprocess); a few checks use the app in process (ASGI)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")

from serve_helpers import PEPS, ROOT, Server, build_hostile  # noqa: E402


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hostile(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def server(hostile_db: Path, tmp_path_factory: pytest.TempPathFactory):
    srv = Server(PEPS, hostile_db, data_dir=tmp_path_factory.mktemp("runs"))
    yield srv
    assert srv.stop() in (0, -15)


def get(server: Server, path: str, **kw) -> httpx.Response:
    return httpx.get(server.url.rstrip("/") + path, timeout=30, **kw)


def test_security_headers_on_pages_static_and_errors(server: Server) -> None:
    for path in ("/", "/c/peps?q=walrus", "/static/app.js", "/c/nope", "/no/such/page"):
        r = get(server, path)
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp, path
        assert "frame-ancestors 'none'" in csp and "'unsafe-inline'" not in csp, path
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"


def test_host_allowlist_refuses_a_rebinding_host(server: Server) -> None:
    r = get(server, "/", headers={"Host": "evil.example"})
    assert r.status_code == 421
    assert "evil" not in r.text
    r = get(server, "/", headers={"Host": f"evil.example:{server.port}"})
    assert r.status_code == 421
    for host in ("localhost", "127.0.0.1", f"localhost:{server.port}", "[::1]"):
        assert get(server, "/", headers={"Host": host}).status_code == 200, host


def test_cross_site_post_is_refused(server: Server) -> None:
    url = server.url + "ask"
    data = {"question": "Which PEP introduced the walrus operator?"}
    r = httpx.post(url, data=data, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    r = httpx.post(url, data=data, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    r = httpx.post(url, data=data, headers={"Origin": "null"})
    assert r.status_code == 403
    r = httpx.post(server.url + "runs/20260101-000000-00000000/stop",
                   headers={"Sec-Fetch-Site": "same-site"})
    assert r.status_code == 403
    args = server.proc.args
    assert not list(Path(args[args.index("--data-dir") + 1]).glob("*.jsonl"))  # no run made


def test_open_host_without_token_exits_2_with_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SIEVE_LITE_TOKEN", None)
    p = subprocess.run([sys.executable, str(ROOT / "cli.py"), "serve", str(PEPS), "--host",
                        "0.0.0.0", "--port", "0"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "--token" in lines[0], p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_json_twins_carry_format_and_type(server: Server) -> None:
    home = get(server, "/?format=json").json()
    assert home["format"] == 1 and home["type"] == "collections"
    assert [c["name"] for c in home["collections"]] == ["peps", "hostile"]
    res = get(server, "/c/peps?q=walrus&k=5", headers={"Accept": "application/json"}).json()
    assert res["type"] == "search" and res["format"] == 1 and res["collection"] == "peps"
    assert len(res["results"]) == 5 and "pep-0572" in [c["id"] for c in res["results"]]
    doc = get(server, "/c/peps/doc?id=pep-0572&section=Abstract&format=json").json()
    assert doc["type"] == "fetch" and doc["section"] == "Abstract" and "walrus" in doc["text"]
    outline = get(server, "/c/peps/doc?id=pep-0572&format=json").json()
    assert outline["section"] is None and "Abstract" in [o["name"] for o in outline["outline"]]
    err = get(server, "/c/peps?q=walrus%5Bauther%5D&format=json")
    assert err.status_code == 400
    e = err.json()
    assert e["type"] == "error" and e["error"]["column"] == 8
    check = get(server, "/check?c=peps&q=walrus%5Bauther%5D").json()
    assert check["type"] == "check" and check["ok"] is False
    assert check["error"]["column"] == 8 and check["error"]["length"] == 6
    assert get(server, "/check?q=walrus").json()["ok"] is True
    every = get(server, "/search?q=walrus&format=json").json()
    assert [s["collection"] for s in every["searches"]] == ["peps", "hostile"]


def test_error_pages_do_not_echo_their_input(server: Server) -> None:
    probe = "zz<b>probe</b>zz"
    for path in (f"/c/{probe}", f"/c/peps/doc?id={probe}",
                 f"/c/peps/doc?id=pep-0572&section={probe}", f"/runs/{probe}",
                 f"/c/{probe}?format=json"):
        r = get(server, path)
        assert r.status_code == 404, path
        assert "probe" not in r.text, (path, r.text)


def test_zero_hits_show_each_clause_count_and_a_flagged_fallback(server: Server) -> None:
    r = get(server, "/c/peps?q=walrus%5Btitle%5D+AND+date%5B2018..%5D")
    assert r.status_code == 200
    assert "Fallback listing" in r.text
    assert "<code>walrus[title]</code> admits <strong>0</strong>" in r.text
    assert "<code>date[2018..]</code> admits <strong>283</strong>" in r.text
    assert 'href="/c/peps?q=date%5B2018..%5D' in r.text  # drop the first clause


def test_hostile_text_is_never_markup(server: Server) -> None:
    pages = [get(server, "/c/hostile?q=walrus").text,
             get(server, "/search?q=walrus").text,
             get(server, "/c/hostile/doc?id=evil-1").text,
             get(server, "/c/hostile/doc?id=evil-1&section=(intro)&q=walrus").text]
    outline = get(server, "/c/hostile/doc?id=evil-1&format=json").json()
    for o in outline["outline"]:
        pages.append(get(server, "/c/hostile/doc", params={"id": "evil-1",
                                                            "section": o["name"]}).text)
    for text in pages:
        tags = parsed(text)
        assert [t for t, _ in tags if t in ("script", "img", "svg", "iframe", "b")] == \
            ["script"]  # ours: /static/app.js
        assert dict(next(a for t, a in tags if t == "script"))["src"] == "/static/app.js"
        for tag, attrs in tags:
            for name, value in attrs:
                assert not name.startswith("on"), (tag, name)
                if name in ("href", "src", "action") and (tag, value) != ("link", "data:,"):
                    assert value.startswith(("/", "https://", "http://")), (tag, value)
        assert "\u202e" not in text  # bidi overrides are dropped
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in pages[0]
    # The one safe URL is linked (escaped), with rel=noopener noreferrer.
    found = get(server, "/c/hostile?q=quote").text
    assert 'href="https://example.org/&#34;&gt;&lt;script&gt;' in found
    assert 'rel="noopener noreferrer"' in found


def parsed(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every start tag of an HTML page with its attributes, as a browser's parser sees them."""
    from html.parser import HTMLParser

    tags: list[tuple[str, list[tuple[str, str]]]] = []

    class P(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list) -> None:
            tags.append((tag, [(k, v or "") for k, v in attrs]))

    P().feed(text)
    return tags


# ------------------------------------------------------------------------- the app in process
def test_token_is_required_and_set_as_a_cookie(tmp_path: Path) -> None:
    import asyncio

    async def run() -> None:
        from sieve_lite.serve import ServeConfig, create_app

        app = create_app(ServeConfig(paths=(str(PEPS),), data_dir=str(tmp_path),
                                     host="0.0.0.0", token="s3cret"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://127.0.0.1") as c:
            assert (await c.get("/")).status_code == 401
            assert (await c.get("/", headers={"Authorization": "Bearer nope"})).status_code \
                == 401
            r = await c.get("/?token=s3cret")
            assert r.status_code == 200 and "HttpOnly" in r.headers["set-cookie"]
            r = await c.get("/", headers={"Cookie": "sieve_token=s3cret"})
            assert r.status_code == 200

    asyncio.run(run())


def test_an_oversized_body_gets_413(tmp_path: Path) -> None:
    import asyncio

    async def run() -> None:
        from sieve_lite.serve import ServeConfig, create_app

        app = create_app(ServeConfig(paths=(str(PEPS),), data_dir=str(tmp_path),
                                     max_body_bytes=1000))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://127.0.0.1") as c:
            r = await c.post("/ask", content=b"question=" + b"x" * 2000,
                             headers={"content-type": "application/x-www-form-urlencoded"})
            assert r.status_code == 413
        assert not list(tmp_path.glob("*.jsonl"))

    asyncio.run(run())


def test_a_too_long_query_is_refused_without_running(tmp_path: Path) -> None:
    import asyncio

    async def run() -> None:
        from sieve_lite.serve import ServeConfig, create_app

        app = create_app(ServeConfig(paths=(str(PEPS),), data_dir=str(tmp_path)))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://127.0.0.1") as c:
            r = await c.get("/c/peps", params={"q": "walrus " * 400})
            assert r.status_code == 400 and "longer than" in r.text
            r = await c.get("/c/peps", params={"q": "walrus", "k": "100000"})
            assert r.status_code == 400

    asyncio.run(run())


def test_run_exports(tmp_path: Path) -> None:
    """A finished run's file renders as a page, its JSON twin and both exports."""
    import asyncio

    from sieve_lite.serve.runs import RunStore

    store = RunStore(tmp_path)
    rid = "20260101-000000-0123abcd"
    store.append(rid, {"event": "run", "question": "Which PEP <b>?", "collection": "peps",
                       "created": "2026-01-01T00:00:00Z"})
    store.append(rid, {"event": "start", "n_ctx": 8192})
    card = {"rank": 1, "id": "pep-0572", "title": "Assignment <i>Expressions</i>",
            "score": 0.03, "headings": ["infobox", "Abstract"], "matched_fields": ["body"],
            "snippet": "the walrus operator", "snippet_section": "Abstract"}
    store.append(rid, {"event": "step", "index": 0, "reply": "", "prompt_tokens": 0,
                       "completion_tokens": 0,
                       "action": {"kind": "search", "query": "walrus OR operator"},
                       "info": {"seed": True, "total": 736, "fallback": False,
                                "engine_query": "walrus OR operator",
                                "hits": [{"rank": 1, "id": "pep-0572", "title": "A",
                                          "card": "[1] pep-0572 | compact text",
                                          "data": card}]}})
    store.append(rid, {"event": "step", "index": 1, "reply": "", "prompt_tokens": 900,
                       "completion_tokens": 12,
                       "action": {"kind": "fetch", "doc": "pep-0572", "section": "Abstract"},
                       "info": {"doc": "pep-0572", "section": "Abstract", "title": "A",
                                "tokens": 40}})
    store.append(rid, {"event": "end", "answer": "PEP 572", "answered": True,
                       "citations": [{"doc": "pep-0572", "section": "Abstract", "pages": ""}],
                       "accounting": {"steps": 1, "searches": 0, "fetches": 1,
                                      "accumulated_prompt_tokens": 900, "wall_seconds": 1.0}})

    async def run() -> None:
        from sieve_lite.serve import ServeConfig, create_app

        app = create_app(ServeConfig(paths=(str(PEPS),), data_dir=str(tmp_path)))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://127.0.0.1") as c:
            page = (await c.get(f"/runs/{rid}")).text
            assert "Which PEP &lt;b&gt;?" in page and 'aria-label="Answer"' in page
            assert "900 tokens in, 12 out" in page and "context 11% filled" in page
            assert page.count("<article") == 1 and "<mark>walrus</mark>" in page
            assert "Assignment &lt;i&gt;Expressions&lt;/i&gt;" in page
            assert "section=Abstract" in page and "cite=PEP+572" in page
            md = (await c.get(f"/runs/{rid}.md")).text
            assert md.startswith("# Which PEP <b>?") and "- cites pep-0572 | Abstract" in md
            js = (await c.get(f"/runs/{rid}.json")).json()
            assert js["type"] == "run" and js["answer"] == "PEP 572" and js["status"] == "done"
            # The event stream replays what a reconnect missed (Last-Event-ID), then ends.
            every = (await c.get(f"/runs/{rid}/events")).text
            assert re.findall(r"^id: (\d+)", every, re.M) == ["1", "2", "3", "4", "5", "5"]
            missed = (await c.get(f"/runs/{rid}/events",
                                  headers={"Last-Event-ID": "3"})).text
            assert re.findall(r"^id: (\d+)", missed, re.M) == ["4", "5", "5"]
            assert "event: step" in missed and "event: done" in missed
            assert "data: done" in missed and "PEP 572" in missed
            listing = (await c.get("/ask?q=which")).text
            assert f"/runs/{rid}" in listing
            assert f"/runs/{rid}" not in (await c.get("/ask?q=nothing-like-it")).text

    asyncio.run(run())


def test_cited_span_is_marked_by_its_words() -> None:
    from sieve_lite.serve.html import marked_span, safe_url

    out = str(marked_span("PEP: 572\nTitle: Assignment <Expressions>", "PEP 572"))
    assert out.startswith('<mark class="cited" id="cited">PEP: 572</mark>')
    assert "&lt;Expressions&gt;" in out
    assert safe_url("javascript:alert(1)") is None and safe_url("JaVaScRiPt:x") is None
    assert safe_url("data:text/html,x") is None and safe_url("https://a.b/\u202ex") is None
    assert safe_url("https://peps.python.org/pep-0572/") == "https://peps.python.org/pep-0572/"


def test_runs_live_outside_the_collection(tmp_path: Path) -> None:
    from sieve_lite.serve import ServeConfig

    cfg = ServeConfig(paths=(str(PEPS),))
    assert PEPS.parent not in cfg.runs_dir().parents and cfg.runs_dir().name == "runs"
    assert json.loads(ServeConfig(paths=("x",), data_dir="/d").to_env())["data_dir"] == "/d"
