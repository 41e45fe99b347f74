"""Kifu's Redis client: redis-py, with a cheaper check of the connections its pool hands out.

redis-py's pool asks every connection it hands out ``can_read()`` (a byte waiting on an idle
connection means it is dirty or closed, so it is replaced). The check is a zero-timeout
``select.poll``. Under gevent (the API's gunicorn workers) ``select.poll`` is gevent's, and gevent
answers even a zero timeout by a trip through its event loop, a large share of a Redis call's CPU
(figures: docs/performance.md, section "The Redis pool's connection check"). ``QuickCheckConnection``
answers the common case, nothing waiting, with the operating system's own ``poll`` (a zero timeout
never blocks, so it is safe in a greenlet) and leaves every other case to redis-py: a byte waiting,
bytes already read and buffered by the parser, a parser other than hiredis's, or a timeout.
"""

from __future__ import annotations

import select
from collections.abc import Callable
from typing import Any

import redis

try:  # the poll that gevent's monkey-patching replaces, when it did
    from gevent import monkey as _monkey  # type: ignore[import-untyped]

    _os_poll: Callable[[], Any] = _monkey.get_original("select", "poll")
except ImportError:  # pragma: no cover - gevent is a dependency of the API server
    _os_poll = select.poll


class QuickCheckConnection(redis.Connection):
    """A TCP connection whose zero-timeout ``can_read`` asks the OS directly when it can."""

    def can_read(self, timeout: float = 0) -> bool:
        sock: Any = self._sock
        reader = getattr(self._parser, "_reader", None)  # hiredis's reader: bytes read, not yet parsed
        if timeout == 0 and sock is not None and reader is not None and not reader.has_data():
            poller = _os_poll()
            poller.register(sock.fileno(), select.POLLIN)
            if not poller.poll(0):
                return False  # nothing buffered, nothing waiting: clean
        return bool(super().can_read(timeout))


def connect(url: str) -> redis.Redis:
    """A client for ``url`` (``redis://`` connections check quickly; other schemes as redis-py does)."""
    if url.startswith("redis://"):
        return redis.Redis.from_url(url, connection_class=QuickCheckConnection)
    return redis.Redis.from_url(url)
