"""``adapters.redis_client``: the quick pool check answers as redis-py's own check does, against a
real Redis, in every state a pooled connection can be in."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from adapters.embedded_redis import EmbeddedRedis
from adapters.redis_client import QuickCheckConnection, connect

CLASSES = [redis.Connection, QuickCheckConnection]


@pytest.fixture(params=CLASSES, ids=lambda cls: cls.__name__)
def connection(request: pytest.FixtureRequest, redis_server: EmbeddedRedis) -> Iterator[redis.Connection]:
    conn: redis.Connection = request.param(port=redis_server.port)
    conn.connect()
    yield conn
    conn.disconnect()


def test_a_clean_connection_has_nothing_to_read(connection: redis.Connection) -> None:
    connection.send_command("PING")
    assert connection.read_response() == b"PONG"
    assert connection.can_read() is False


def test_a_reply_waiting_on_the_socket_is_seen(connection: redis.Connection) -> None:
    connection.send_command("PING")
    assert connection.can_read(timeout=5)  # waits until the reply has arrived (redis-py's own check)
    assert connection.can_read() is True  # the quick check sees it waiting
    assert connection.read_response() == b"PONG"
    assert connection.can_read() is False


def test_bytes_buffered_by_the_parser_are_seen(connection: redis.Connection) -> None:
    connection._parser._reader.feed(b"+PONG\r\n")  # type: ignore[attr-defined]  # read off the socket, not parsed
    assert connection.can_read() is True
    assert connection.read_response() == b"PONG"
    assert connection.can_read() is False


def test_a_connection_the_server_closed_is_not_clean(connection: redis.Connection, redis_client: redis.Redis) -> None:
    connection.send_command("CLIENT", "ID")
    assert redis_client.client_kill_filter(_id=connection.read_response()) == 1
    assert select.select([connection._sock], [], [], 5)[0]  # type: ignore[attr-defined]  # the close has arrived
    with pytest.raises(redis.ConnectionError):  # closed, told apart from data as redis-py tells it
        connection.can_read()


def test_a_pool_of_quick_connections_replaces_a_closed_one(redis_server: EmbeddedRedis) -> None:
    client = connect(redis_server.url)
    assert client.connection_pool.connection_class is QuickCheckConnection
    client.set("k", "v")
    # killed from another connection: Redis closes a client killed by another at once, before it answers
    # the kill (a client that kills itself is closed after its answer, so its close could lag the next check)
    killer = redis.Redis(port=redis_server.port)
    assert killer.client_kill_filter(_type="normal", skipme=True) >= 1  # the pooled connection
    assert client.get("k") == b"v"  # the pool checked the connection it handed out and reconnected
    client.close()
    killer.close()


def test_other_schemes_keep_redis_pys_connections(redis_server: EmbeddedRedis) -> None:
    client = connect(f"unix:///nonexistent-{redis_server.port}.sock")
    assert client.connection_pool.connection_class is redis.UnixDomainSocketConnection


def test_under_gevent_the_quick_check_never_enters_the_event_loop(redis_server: EmbeddedRedis) -> None:
    """Run in a child (monkey-patching is for the whole process): a clean pooled connection's check
    does not switch to gevent's hub; redis-py's own check does."""
    program = f"""
from gevent import monkey; monkey.patch_all()
import gevent, greenlet, redis
from adapters.redis_client import QuickCheckConnection
hub = gevent.get_hub()
for cls in (redis.Connection, QuickCheckConnection):
    conn = cls(port={redis_server.port}); conn.connect()
    switches = []
    greenlet.settrace(lambda event, args: switches.append(args[1]) if args[1] is hub else None)
    conn.can_read()
    greenlet.settrace(None)
    print(cls.__name__, len(switches) > 0)
    conn.disconnect()
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["Connection", "True", "QuickCheckConnection", "False"]
