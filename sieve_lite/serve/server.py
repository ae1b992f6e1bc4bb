"""Running the app: bind the socket ourselves (``listen.bind``: a taken port is one clear
line, port 0 tells the port it got), then uvicorn, in this process or in ``workers`` processes
sharing the socket. uvicorn stops cleanly on Ctrl-C and SIGTERM (in-flight requests finish
first)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator

from ..listen import bind
from .config import ENV_CONFIG, ServeConfig


def url_of(config: ServeConfig, sock: socket.socket) -> str:
    host = config.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{sock.getsockname()[1]}/"


def run(config: ServeConfig, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``config`` until interrupted. ``on_ready(url)`` is called once it listens."""
    import uvicorn

    from .app import create_app

    config.check()
    sock = bind(config.host, config.port)
    url = url_of(config, sock)
    try:
        if config.workers == 1:
            app = create_app(config)  # opens every collection: bad files fail before listening
            server = _Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                            lifespan="on", timeout_graceful_shutdown=5))
            _announce_when_started(server, url, on_ready)
            server.run(sockets=[sock])
            return
        from uvicorn.supervisors import Multiprocess

        from .app import open_pool

        # Open every collection once here, so a bad one is one line before any worker starts.
        open_pool(config, connections=1).close()
        os.environ[ENV_CONFIG] = config.to_env()
        ucfg = uvicorn.Config("sieve_lite.serve:app_from_env", factory=True,
                              workers=config.workers, log_level="warning", access_log=False,
                              lifespan="on", timeout_graceful_shutdown=5)
        if on_ready is not None:
            on_ready(url)
        # The supervisor stops its workers on SIGINT/SIGTERM (each finishes what is in
        # flight) and returns; it restarts a worker that dies.
        import inspect

        if "target" in inspect.signature(Multiprocess).parameters:  # older uvicorn
            Multiprocess(ucfg, target=uvicorn.Server(ucfg).run, sockets=[sock]).run()
        else:
            Multiprocess(ucfg, sockets=[sock]).run()
    finally:
        sock.close()


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, except that a SIGTERM or Ctrl-C that stopped it gracefully is
        not raised again afterwards: stopping is how a server is meant to end (exit 0)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit)
                      for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server


def _Server(config: object) -> object:  # noqa: N802 - a class made on first use
    return _server_class()(config)


def _announce_when_started(server: object, url: str,
                           on_ready: Callable[[str], None] | None) -> None:
    if on_ready is None:
        return
    original = server.startup  # type: ignore[attr-defined]

    async def startup(sockets: object = None) -> None:
        await original(sockets=sockets)
        if server.started:  # type: ignore[attr-defined]
            on_ready(url)

    server.startup = startup  # type: ignore[attr-defined]


__all__ = ["run", "url_of"]
