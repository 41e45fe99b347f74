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
from typing import Any, cast

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


AnyRedis = redis.Redis | redis.RedisCluster  # the game logs' client: one Redis, or a cluster

# What "the store is unavailable for a moment" looks like: a server down or slow, and a cluster failing
# over or resharding (its client's own retries, on MOVED, ASK, TRYAGAIN and CLUSTERDOWN, exhausted), or
# a write that reached a master just demoted. Not a programming error such as CROSSSLOT.
UNAVAILABLE: tuple[type[Exception], ...] = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis.exceptions.ClusterError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
    redis.exceptions.AskError,
    redis.exceptions.SlotNotCoveredError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.MasterDownError,
)
CLUSTER_SCHEME = "redis+cluster://"


def connect(url: str) -> redis.Redis:
    """A client for ``url`` (``redis://`` connections check quickly; other schemes as redis-py does)."""
    if url.startswith("redis://"):
        return redis.Redis.from_url(url, connection_class=QuickCheckConnection)
    return redis.Redis.from_url(url)


def connect_events(url: str) -> AnyRedis:
    """The game logs' client: ``redis+cluster://HOST:PORT`` is a Redis Cluster (any node: the client
    discovers the rest), anything else ``connect``."""
    if url.startswith(CLUSTER_SCHEME):
        return redis.RedisCluster.from_url("redis://" + url.removeprefix(CLUSTER_SCHEME))
    return connect(url)


def probe(client: AnyRedis, timeout_s: float = 1.0) -> str | None:
    """None when the server answers a PING within ``timeout_s``, else why not: a one-shot probe on a
    connection of its own, without the client's retries, so that a readiness check of a dead server
    answers at once. A cluster is probed node by node (every master), and must say it is ``ok``."""
    if isinstance(client, redis.RedisCluster):
        for node in cast(Any, client).get_primaries():  # (redis-py leaves it untyped)
            why = _ping(node.host, node.port, {}, timeout_s, cluster=True)
            if why is not None:
                return f"{node.host}:{node.port}: {why}"
        return None
    return _ping(None, None, client.connection_pool.connection_kwargs, timeout_s)


def _ping(
    host: str | None, port: int | None, kwargs: dict[str, Any], timeout_s: float, cluster: bool = False
) -> str | None:
    one = redis.Redis(
        host=host or kwargs.get("host", "127.0.0.1"),
        port=port or kwargs.get("port", 6379),
        db=kwargs.get("db", 0),
        password=kwargs.get("password"),
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        retry=None,  # type: ignore[arg-type]  # None: no retries (the stubs want a Retry)
    )
    try:
        one.ping()
        if cluster and b"cluster_state:ok" not in cast(Any, one).execute_command("CLUSTER", "INFO"):
            return "the cluster is not ok (CLUSTER INFO)"
    except redis.RedisError as exc:
        return str(exc)
    finally:
        one.close()
    return None
