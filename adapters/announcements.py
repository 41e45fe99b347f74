"""Hearing every process's appends: the append script announces each on its partition's sharded
pub/sub channel (``EventStore.appended_channel``; SPUBLISH): the game id, a space, the number of the
first event appended, a space, the appending store's ``origin``, a newline, the JSON array of the
envelopes it appended, and, when the append named seats' token hashes (a creation, a join), a newline
and the JSON object of those meta fields (``{"tok:<sha256>": "0"}``).

An API process hands what it hears to its memory (``GameMemory.hear``): events that continue a table
it holds are applied to it, and the start of a game it does not hold is kept, undecoded, with the
token hashes of its seats. So when a seat acts through this process after the other seat acted through
another one, or for the first time in a game another process created, its table is already current
and it knows the token: the action needs one round trip. Redis sends the announcement when it answers
the appending process, so it reaches this process before that process has even answered its client,
let alone before the next seat's request arrives here: the listener waits on its socket and hands
over each announcement as it arrives (a read takes whatever has arrived, so a busy process takes many
at a time). A command never reads the subscription itself.

Best effort by design: pub/sub keeps nothing, and Redis does not write SPUBLISH to the AOF. An
announcement missed (Redis restarting, this process not listening yet, a slow consumer cut off) only
means a later command reads the game first; correctness never depends on one, since every command is
checked by the conditional append (its head hash, and the token's seat in the meta hash).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

import orjson
import redis

from adapters.redis_store import EventStore
from service.ports import Announcement

log = logging.getLogger(__name__)
LISTEN_S = 1.0  # a read waits at most this long for an announcement before looking at ``stop`` again


def _as_is(message: Any) -> Any:
    return message


def parse(data: bytes) -> Announcement:
    """Read one announcement (ValueError: not one)."""
    head, envelopes, *rest = data.split(b"\n")
    game_id, first, *origin = head.decode().split(" ")
    named = orjson.loads(rest[0]) if rest else {}
    seats = {field: int(seat) for field, seat in named.items() if str(seat).isdigit()}  # not "organiser"
    return Announcement(game_id, int(first), envelopes, seats, origin[0] if origin else "")


class AppendFollower:
    """Listens to the announcements of some partitions (all of them by default) and hands each to
    ``on_heard``.

    Announcements are sharded pub/sub messages (SPUBLISH, Redis 7): one channel per partition
    (``EventStore.appended_channel``), which on a cluster lives on the node that holds the partition's
    keys, so that an append's announcement travels only to that node's subscribers instead of over the
    whole cluster bus. On one Redis a follower subscribes to every partition on one connection; on a
    cluster, one follower per master node (``followers``), each asking the cluster where its partitions
    are every time it subscribes (after a failover they are on the promoted replica).

    It reads the subscription on a connection of its own with plain blocking reads (redis-py's
    ``PubSub`` checks the socket with a poll before every message, which under gevent costs more than
    applying the announcement).
    """

    def __init__(
        self, store: EventStore, on_heard: Callable[[Announcement], object], partitions: Sequence[int] = ()
    ) -> None:
        self.store = store
        self.on_heard = on_heard
        self.partitions = list(partitions) or list(range(store.partitions))
        self.connection: Any = None  # the subscribed connection while listening

    @classmethod
    def followers(cls, store: EventStore, on_heard: Callable[[Announcement], object]) -> list[AppendFollower]:
        """The followers that together hear every partition: one on one Redis, one per master on a cluster."""
        if not store.cluster:
            return [cls(store, on_heard)]
        by_node: dict[str, list[int]] = {}
        for p in range(store.partitions):
            by_node.setdefault(_node_of(store, p).name, []).append(p)
        return [cls(store, on_heard, partitions) for partitions in by_node.values()]

    def _pool(self) -> Any:
        """The connection pool of the server that holds this follower's partitions now."""
        if not self.store.cluster:
            return self.store.redis.connection_pool  # type: ignore[union-attr]
        return _node_of(self.store, self.partitions[0]).redis_connection.connection_pool

    def run(self, stop: threading.Event, ready: threading.Event | None = None, retry_s: float = 1.0) -> None:
        """Listen until ``stop`` is set; ride out Redis restarts, outages and failovers (``ready`` is set
        whenever listening: at first, and again after each new subscription)."""
        while not stop.is_set():
            try:
                pool = self._pool()
                connection: Any = pool.get_connection()  # connects (redis-py types its methods loosely)
            except (redis.RedisError, OSError):  # Redis is not back yet (or the cluster is failing over)
                self._refresh()
                stop.wait(retry_s)
                continue
            try:
                self._listen(connection, stop, ready)
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                self._refresh()
                stop.wait(retry_s)
            except Exception:
                log.warning("following appends: listening again after an error", exc_info=True)
                stop.wait(retry_s)
            finally:
                self.connection = None
                connection.disconnect()  # never hand a subscribed connection back as it is
                pool.release(connection)

    def _refresh(self) -> None:
        """On a cluster, have the client learn where the slots are now (a master may have failed over)."""
        if self.store.cluster:
            with contextlib.suppress(redis.RedisError, OSError):
                cast(Any, self.store.redis).nodes_manager.initialize()

    def _listen(self, connection: Any, stop: threading.Event, ready: threading.Event | None) -> None:
        """Subscribe on ``connection`` and hand over what is announced until ``stop`` is set."""
        quiet = getattr(connection._parser, "set_pubsub_push_handler", None)
        if quiet is not None:  # redis-py's default handler logs each message, built as a string first
            quiet(_as_is)
        channels = [self.store.appended_channel(p) for p in self.partitions]
        for channel in channels:  # one command a channel: on a cluster, each one slot
            connection.send_command("SSUBSCRIBE", channel)
        for _channel in channels:  # the confirmations: listening now
            connection.read_response(timeout=LISTEN_S, push_request=True)
        self.connection = connection
        if ready is not None:
            ready.set()
        while not stop.is_set():
            self._hear(connection)

    def _hear(self, connection: Any) -> None:
        """Wait for the next announcement (at most ``LISTEN_S``) and hand it over."""
        try:
            message = connection.read_response(timeout=LISTEN_S, disconnect_on_error=False, push_request=True)
        except redis.TimeoutError:  # nothing announced meanwhile (what had arrived of a message is kept)
            return
        if not isinstance(message, list) or len(message) != 3:
            return
        kind = message[0].decode() if isinstance(message[0], bytes) else str(message[0])
        if kind == "sunsubscribe":  # the server moved a slot away (resharding, failover): subscribe again
            raise redis.ConnectionError("a partition's channel moved to another node")
        if kind != "smessage":
            return
        data = message[2] if isinstance(message[2], bytes) else str(message[2]).encode()
        try:
            heard = parse(data)
            if heard.origin != self.store.origin:  # else this process's own append: it knows it already
                self.on_heard(heard)
        except Exception:  # a bad announcement must not stop the others
            log.exception("an announced append could not be taken")


def _node_of(store: EventStore, partition: int) -> Any:
    """The cluster node that holds a partition's keys (and its channel) now."""
    return cast(Any, store.redis).get_node_from_key(store.appended_channel(partition))
