"""The guard around the whole app: checks that run before routing, headers on every answer.

A page served on localhost renders text from collections strangers built, and any web page
the user visits can send requests to localhost. So, before any route runs:

* **Host allowlist.** A DNS-rebinding page reaches us under its own host name; a request
  whose ``Host`` (port stripped) is not loopback or ``--allow-host`` gets 421.
* **Token.** With ``--token`` every request must carry it: ``Authorization: Bearer T``, the
  ``sieve_token`` cookie, or ``?token=T`` once (which sets the cookie, HttpOnly, SameSite
  Strict). Compared in constant time. Without it: 401.
* **No cross-site state change.** A POST (any method but GET/HEAD/OPTIONS) whose
  ``Sec-Fetch-Site`` is ``cross-site`` or ``same-site``, or, without that header, whose
  ``Origin`` is not this server's, gets 403. Programs (curl, agents) send neither and pass.
* **Bounded bodies.** A body over ``max_body_bytes`` gets 413, whether announced by
  ``Content-Length`` or streamed (a streamed body is read here, up to the bound, before any
  route runs).
* **Headers.** A strict Content-Security-Policy (no inline script, nothing from elsewhere),
  ``nosniff``, ``no-referrer``, no framing.

Error bodies are fixed text: they never echo the request.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .config import ServeConfig

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOKEN_COOKIE = "sieve_token"


def host_of(value: str) -> str:
    """A Host header's name without its port, lower case (``[::1]:8377`` -> ``[::1]``)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end > 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """ASGI middleware applying the rules of the module docstring to ``app``."""

    def __init__(self, app: ASGIApp, config: ServeConfig) -> None:
        self.app = app
        self.config = config
        self.hosts = config.allowed_hosts()
        self.token = (config.token or "").encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", ())}
        if host_of(headers.get("host", "")) not in self.hosts:
            await _plain(send, 421, "this server answers only to its own host names "
                                    "(see --allow-host)")
            return
        set_cookie = False
        if self.token:
            given = _token_given(scope, headers)
            if not given or not hmac.compare_digest(given.encode(), self.token):
                await _plain(send, 401, "this server needs its token (--token): send "
                                        "'Authorization: Bearer TOKEN' or open ?token=TOKEN")
                return
            set_cookie = TOKEN_COOKIE not in _cookies(headers)
        method = scope.get("method", "GET")
        if method not in SAFE_METHODS and _cross_site(headers):
            await _plain(send, 403, "cross-site requests cannot change anything here")
            return
        length = headers.get("content-length", "")
        limit = self.config.max_body_bytes
        if length and (not length.isdigit() or int(length) > limit):
            await _plain(send, 413, f"the request body is over {limit} bytes")
            return
        if not length and "transfer-encoding" in headers:
            # A streamed body: read it here, up to the bound, so that one too long gets 413
            # whichever route it was for (an exception raised inside a route would be a 500).
            body = await _read_upto(receive, limit)
            if body is None:
                await _plain(send, 413, f"the request body is over {limit} bytes")
                return
            receive = _replay(body, receive)
        await self.app(scope, _bounded(receive, limit),
                       _with_headers(send, set_cookie and self.token, time.perf_counter()))


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    out = {}
    for part in headers.get("cookie", "").split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _token_given(scope: Scope, headers: dict[str, str]) -> str:
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    cookie = _cookies(headers).get(TOKEN_COOKIE)
    if cookie:
        return cookie
    qs = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return (qs.get("token") or [""])[0]


def _cross_site(headers: dict[str, str]) -> bool:
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return False  # not a browser's cross-origin request (browsers send Origin on POST)
    if origin == "null":
        return True
    return urlsplit(origin).netloc.lower() != headers.get("host", "").lower()


def _bounded(receive: Receive, limit: int) -> Receive:
    """A ``receive`` that refuses a streamed body longer than ``limit``."""
    seen = 0

    async def inner() -> Message:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return inner


async def _read_upto(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None once it is over ``limit`` bytes."""
    parts: list[bytes] = []
    seen = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break  # the client went away: the app sees an empty body
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` first, then whatever the connection says next."""
    given = False

    async def inner() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return inner


class BodyTooLarge(Exception):
    """A streamed body went over the limit (the app answers 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over {limit} bytes")
        self.limit = limit


def _with_headers(send: Send, token: bytes | bool, t0: float) -> Send:
    """Adds the security headers, and ``Server-Timing: app;dur=MS``: the time from the
    request reaching the guard to its response starting (what bench/serve_page.py reads)."""

    async def inner(message: Message) -> None:
        if message["type"] == "http.response.start":
            dur = (time.perf_counter() - t0) * 1000
            headers = [(k, v) for k, v in message.get("headers", ())
                       if k.lower() not in dict(SECURITY_HEADERS)]
            headers.extend(SECURITY_HEADERS)
            headers.append((b"server-timing", f"app;dur={dur:.3f}".encode()))
            if token:
                headers.append((b"set-cookie", TOKEN_COOKIE.encode() + b"=" + bytes(token) +
                                b"; Path=/; HttpOnly; SameSite=Strict"))
            message = {**message, "headers": headers}
        await send(message)

    return inner


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["CSP", "SECURITY_HEADERS", "BodyTooLarge", "Guard", "host_of"]
