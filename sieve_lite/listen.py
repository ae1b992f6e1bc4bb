"""The listening socket of the HTTP servers (``sieve-lite serve`` and ``sieve-lite mcp --http``),
bound by us rather than by uvicorn: a taken port is then one clear line, not uvicorn's log line
and exit, and port 0 tells the port it got."""

from __future__ import annotations

import socket

from .errors import EnvironmentProblem


def bind(host: str, port: int) -> socket.socket:
    """The listening socket. TCP_NODELAY is set on it, so every accepted connection has it
    (Linux copies it): without it, an answer written in two parts (headers, then body) waits
    for the client's delayed ACK, about 40 ms on every call. asyncio sets it itself only on a
    socket made with ``proto=IPPROTO_TCP``, and a socket made by hand has proto 0."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError as e:
        sock.close()
        raise EnvironmentProblem(f"cannot serve on {host}:{port}: {e.strerror or e}") from None
    return sock


__all__ = ["bind"]
