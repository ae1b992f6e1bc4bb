"""JSON over HTTP for the model servers, with the standard library's urllib: every failure is
one ``ModelError`` line (the URL and what went wrong), never a traceback."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..errors import ModelError


class HttpStatusError(ModelError):
    """The server answered with an error status (``status`` holds it)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Transport:
    """One server: ``base`` is its OpenAI-compatible root (``http://host:port/v1``), ``root``
    the server itself (where its own endpoints live: ``/props``, ``/api/version``, ...)."""

    def __init__(self, base_url: str, timeout: float = 300.0, api_key: str | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ModelError(f"backbone URL must start with http:// or https://: {base_url}")
        base = base_url.rstrip("/")
        path = urllib.parse.urlsplit(base).path
        if path in ("", "/"):
            base += "/v1"  # 'http://127.0.0.1:8080' means its OpenAI-compatible API
        self.base = base
        self.root = base[:-3] if base.endswith("/v1") else base
        self.timeout = timeout
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")

    def _call(self, url: str, body: dict[str, Any] | None, timeout: float | None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
        req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        wait = timeout or self.timeout
        try:
            with urllib.request.urlopen(req, timeout=wait) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:200]
            raise HttpStatusError(f"{url}: HTTP {e.code}: {' '.join(detail.split())}",
                                  e.code) from None
        except urllib.error.URLError as e:
            raise ModelError(f"{url}: cannot connect: {e.reason}") from None
        except TimeoutError:
            raise ModelError(f"{url}: no reply within {wait:.0f}s") from None
        except (ValueError, OSError) as e:
            raise ModelError(f"{url}: bad reply: {e}") from None

    def url(self, path: str, at_root: bool = False) -> str:
        """``path`` under the OpenAI-compatible base, or under the server's root."""
        return (self.root if at_root else self.base) + path

    def post(self, path: str, body: dict[str, Any], *, at_root: bool = False,
             timeout: float | None = None) -> Any:
        return self._call(self.url(path, at_root), body, timeout)

    def get(self, path: str, *, at_root: bool = False, timeout: float | None = None) -> Any:
        return self._call(self.url(path, at_root), None, timeout)

    def ask(self, path: str, body: dict[str, Any] | None = None, *, at_root: bool = True,
            timeout: float = 10.0) -> Any:
        """A question about the server itself: its reply, or None when it has no such
        endpoint or does not answer in JSON (how server kinds are told apart)."""
        try:
            return self._call(self.url(path, at_root), body, min(timeout, self.timeout))
        except ModelError:
            return None


__all__ = ["HttpStatusError", "Transport"]
