"""The app: pages and the API side by side, the guard around them, one pool of collections."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette

from ..pool import CollectionPool
from . import api, pages
from .config import ServeConfig
from .security import Guard


@dataclass
class ServeState:
    """What every route shares: the config and the collections."""

    config: ServeConfig
    pool: CollectionPool
    _limiter: Any = None

    def limiter(self) -> Any:
        """The threads searches run on: as many as open connections per collection (more
        would only wait on the pool). Made on first use, inside the event loop."""
        if self._limiter is None:
            import anyio

            self._limiter = anyio.CapacityLimiter(self.config.connections)
        return self._limiter


def _mcp(pool: CollectionPool) -> tuple[list[Any], Any]:
    """The MCP server's streamable HTTP route at ``/mcp`` (stateless, JSON responses: any
    worker can answer any call, so it works behind a load balancer and with ``--workers``)
    and its session manager, whose ``run()`` the app's lifespan must hold open. ([], None)
    without the ``mcp`` package. The guard already checks Host and Origin for the whole app
    (with ``--allow-host``), so the SDK's own DNS-rebinding check is off here."""
    try:
        from mcp.server.transport_security import TransportSecuritySettings
    except ImportError:
        return [], None
    from ..mcp_server import build_server

    server = build_server(pool)
    sub = server.streamable_http_app(
        stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return list(sub.routes), server.session_manager


def open_pool(config: ServeConfig, connections: int | None = None) -> CollectionPool:
    """The collections of ``config``, opened now (a bad file is one line, before listening).
    With ``--ray`` each sharded collection is one coordinator over its Ray actors, lent to one
    call at a time (the actors do the searching)."""
    if config.ray:
        from ..shards.ray import open_ray

        address = config.ray
        return CollectionPool(list(config.paths), connections=1, default_ranker=config.ranker,
                              opener=lambda path: open_ray(path, address))
    return CollectionPool(list(config.paths), connections=connections or config.connections,
                          default_ranker=config.ranker, budget=config.query_seconds)


def create_app(config: ServeConfig, pool: CollectionPool | None = None) -> Any:
    """The ASGI app for ``config`` (checked). The pool opens every collection now, so a
    missing or damaged file stops the server before it listens, with one line."""
    config.check()
    pool = pool or open_pool(config)
    state = ServeState(config, pool)
    mcp_routes, sessions = _mcp(pool)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            if sessions is None:
                yield
            else:
                async with sessions.run():
                    yield
        finally:
            pool.close()

    routes = [*api.routes(state), *mcp_routes, *pages.routes(state)]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.serve = state
    return Guard(app, config)


def app_from_env() -> Any:
    """The factory each worker process calls (``uvicorn --factory``): the config comes from
    ``$SIEVE_LITE_SERVE_CONFIG``, set by ``sieve-lite serve``."""
    return create_app(ServeConfig.from_env())


__all__ = ["ServeState", "app_from_env", "create_app"]
