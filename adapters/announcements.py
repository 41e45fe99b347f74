"""Hearing every process's appends: the append script announces each on a pub/sub channel
(``EventStore.appended_channel``: the game id, a space, the number of the first event appended, a
newline, the JSON array of the envelopes it appended). Only announcements that continue a table this
process holds are decoded (``wanted``): a process hears every game's appends, its own included.

An API process hands what it hears to its table cache (``TableLoader.follow``), so that when a seat
acts through it after the other seat acted through another process, its table is already current
and the action needs one round trip, not two. The announcement reaches this process when the other
process's answer leaves Redis, before that seat's client has even sent its request. The listener
applies what has arrived every ``DRAIN_EVERY_S`` (one read for many announcements, most of them of
games this process does not hold, or its own); a command that the rules refuse on a table that may be
behind calls ``drain`` first and is judged again on what it applied, so no greenlet scheduling decides
whether the shortcut works, and a command on a current table pays nothing for it.

Best effort by design: pub/sub keeps nothing, and Redis does not write PUBLISH to the AOF. An
announcement missed (Redis restarting, this process not listening yet, a slow consumer cut off) only
means a later command reads the game first; correctness never depends on one, since every command is
checked by the conditional append.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import orjson
import redis

from adapters.redis_store import EventStore

log = logging.getLogger(__name__)
DRAIN_EVERY_S = 0.02  # the listener applies what has arrived at most this often (a command drains at once)
OnAppended = Callable[[str, list[dict[str, Any]]], None]
Wanted = Callable[[str, int], bool]


class AppendFollower:
    """Listens to the store's announcements and hands each to ``on_appended(game_id, envelopes)``."""

    def __init__(self, store: EventStore, on_appended: OnAppended, wanted: Wanted = lambda _game, _first: True) -> None:
        self.store = store
        self.on_appended = on_appended
        self.wanted = wanted  # (game id, first event's number) -> whether to decode and hand it over
        self._pubsub: Any = None  # redis-py's PubSub while listening
        self._reading = threading.Lock()  # one reader of the subscription at a time

    def run(self, stop: threading.Event, ready: threading.Event | None = None, retry_s: float = 1.0) -> None:
        """Listen until ``stop`` is set (``ready`` is set once listening); ride out Redis restarts."""
        while not stop.is_set():
            pubsub = self.store.redis.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
            try:
                pubsub.subscribe(self.store.appended_channel)
                pubsub.get_message(timeout=1.0)  # the subscription's confirmation: listening from here on
                self._pubsub = pubsub
                if ready is not None:
                    ready.set()
                while not stop.is_set() and self._pubsub is pubsub:
                    if pubsub.connection is None:
                        break
                    if pubsub.connection.can_read(timeout=1.0):
                        self.drain()
                        stop.wait(DRAIN_EVERY_S)  # let announcements gather: one read for many
            except (redis.ConnectionError, redis.TimeoutError):
                stop.wait(retry_s)
            except Exception:  # e.g. the connection closed under it (redis-py then has no socket to poll)
                log.warning("following appends: listening again after an error", exc_info=True)
                stop.wait(retry_s)
            finally:
                self._pubsub = None
                with contextlib.suppress(redis.RedisError):
                    pubsub.close()

    def drain(self) -> int:
        """Apply every wanted announcement already received, without waiting for more; how many. (Another
        caller draining holds the subscription for as long as it takes to apply what had arrived.)"""
        pubsub = self._pubsub
        if pubsub is None:
            return 0
        applied = 0
        with self._reading:
            try:
                while (message := pubsub.get_message(timeout=0)) is not None:
                    head, _, envelopes = bytes(message["data"]).partition(b"\n")
                    game_id, _, first = head.decode().partition(" ")
                    if self.wanted(game_id, int(first)):
                        self._apply(game_id, envelopes)
                        applied += 1
            except Exception:  # the subscription broke (Redis restarting): never the caller's problem
                log.debug("following appends: the subscription broke", exc_info=True)
                if self._pubsub is pubsub:
                    self._pubsub = None  # ``run`` listens again; until then nothing is drained
        return applied

    def _apply(self, game_id: str, envelopes: bytes) -> None:
        try:
            self.on_appended(game_id, orjson.loads(envelopes))
        except Exception:  # a bad announcement must not stop the others
            log.exception("an announced append could not be applied")
