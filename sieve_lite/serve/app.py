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


def create_app(config: ServeConfig, pool: CollectionPool | None = None) -> Any:
    """The ASGI app for ``config`` (checked). The pool opens every collection now, so a
    missing or damaged file stops the server before it listens, with one line."""
    config.check()
    pool = pool or CollectionPool(list(config.paths), connections=config.connections,
                                  default_ranker=config.ranker)
    state = ServeState(config, pool)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            pool.close()

    routes = [*api.routes(state), *pages.routes(state)]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.serve = state
    return Guard(app, config)


def app_from_env() -> Any:
    """The factory each worker process calls (``uvicorn --factory``): the config comes from
    ``$SIEVE_LITE_SERVE_CONFIG``, set by ``sieve-lite serve``."""
    return create_app(ServeConfig.from_env())


__all__ = ["ServeState", "app_from_env", "create_app"]
