"""``sieve-lite serve``: one Starlette app for people and for agents.

Pages (``pages.py``: server-rendered HTML that works without JavaScript) and the JSON API
(``api.py``: ``/retrieve``, ``/search``, ``/fetch``) sit side by side in one app and speak one
JSON shape everywhere: the objects of ``sieve_lite.output`` (``docs/output.md``), each with its
``format`` and ``type`` keys. Every page has a JSON twin (``?format=json`` or
``Accept: application/json``; ``negotiate.py``).

``security.Guard`` wraps the whole app, so it runs before routing: the Host allowlist (DNS
rebinding), the token, cross-site POSTs refused, request size bounded, and the security headers
on every response. Collections are lent one per call by ``sieve_lite.pool.CollectionPool``
(read-only, one connection per thread).

``create_app(ServeConfig(...))`` builds the app; ``app_from_env`` is the factory each worker
process calls (``--workers N``), reading the same config from the environment.
"""

from .app import app_from_env, create_app
from .config import ServeConfig

__all__ = ["ServeConfig", "app_from_env", "create_app"]
