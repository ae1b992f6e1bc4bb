"""What a server is told on its command line, checked once, and carried to worker processes."""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import SieveError

DEFAULT_PORT = 8377
ENV_CONFIG = "SIEVE_LITE_SERVE_CONFIG"  # the config, as JSON, for worker processes
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")


class ServeError(SieveError):
    """A server that must not start as asked (an open host without a token, a bad option)."""


def is_loopback(host: str) -> bool:
    """``localhost`` or an address in 127.0.0.0/8 or ::1."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServeConfig:
    """A server's settings. ``paths`` are collection files (or shard folders)."""

    paths: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    allow_hosts: tuple[str, ...] = ()
    workers: int = 1
    connections: int = 4           # open connections per collection and worker process
    ranker: str | None = None      # the default ranker (else hybrid when vectors, bm25 when not)
    max_body_bytes: int = 8 << 20  # a request body larger than this gets 413
    query_seconds: float = 10.0    # the time budget of one query's statements
    max_batch: int = 4096          # queries in one /retrieve call; more gets 413
    data_dir: str | None = None    # where ask runs are kept (default: the user's data folder)
    ray: str | None = None         # serve sharded collections from Ray actors (ADDRESS|local)
    extra: dict[str, str] = field(default_factory=dict)

    def check(self) -> ServeConfig:
        """Refuse what must not run: any host other than loopback without a token."""
        if not self.paths:
            raise ServeError("give at least one collection to serve")
        if not is_loopback(self.host) and not self.token:
            raise ServeError(f"--host {self.host} serves beyond this machine: give --token "
                             "(or SIEVE_LITE_TOKEN) too, or serve on 127.0.0.1")
        if self.workers < 1:
            raise ServeError("--workers must be 1 or more")
        if self.ray == "local" and self.workers > 1:
            raise ServeError("--ray local starts a cluster of its own in each process: with "
                             "--workers, start one cluster (ray start --head) and give its "
                             "address")
        return self

    def allowed_hosts(self) -> frozenset[str]:
        """Host header values (without the port) that may reach the app."""
        hosts = {h.lower() for h in (*LOOPBACK_NAMES, *self.allow_hosts)}
        if not is_loopback(self.host) and self.host not in ("0.0.0.0", "::"):
            hosts.add(self.host.lower())
        return frozenset(hosts)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeConfig:
        raw = os.environ.get(ENV_CONFIG)
        if not raw:
            raise ServeError(f"{ENV_CONFIG} is not set: start the server with sieve-lite serve")
        data = json.loads(raw)
        for key in ("paths", "allow_hosts"):
            data[key] = tuple(data[key])
        return cls(**data)

    def runs_dir(self) -> Path:
        """The folder of past ask runs: never inside a collection."""
        if self.data_dir:
            return Path(self.data_dir)
        import platformdirs

        return Path(platformdirs.user_data_dir("sieve-lite")) / "runs"


__all__ = ["DEFAULT_PORT", "ENV_CONFIG", "ServeConfig", "ServeError", "is_loopback"]
