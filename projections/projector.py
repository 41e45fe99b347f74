"""The projector: reads every partition's feed through a consumer group.

Each feed entry names a game (or a tournament: ids ``t...``) and a range of its
events; games feed the games list and the snapshots, tournaments their standings and
the tournaments list. For each batch of entries read at once, the projector updates
the read models and records its checkpoints in one MULTI transaction on the app's
Redis, then XACKs the entries where the feeds are (the same Redis, or the game logs'
Redis Cluster: ``KIFU_EVENTS_URL``). A crash between the two leaves the entries
pending, to be delivered again: a summary remembers the last version it applied (so
do the standings), so an entry delivered twice is a no-op; none is ever skipped.

On one Redis the projector reads every partition's feed in one XREADGROUP; on a
cluster a command's keys must share a slot, so it reads each partition's feed in one
pipeline (each node's in one round trip) and, when none had anything, looks again
after ``CLUSTER_POLL_S``.

The projector also logs each game it sees sealed in the transparency log, where the command that
sealed it did not (``_notarise``): no sealed game is left out of the log.

``rebuild`` drops every read model and replays the feeds from the start. It is
safe while projectors run: it asks them to pause (a key they check before each
batch), waits until every live projector (each keeps a heartbeat key) has
finished its batch and said so, rebuilds, then lets them go on. A projector
that finds its consumer group gone (``NOGROUP``) creates it again.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

import redis

from adapters.redis_client import UNAVAILABLE
from adapters.redis_store import EventStore, text
from domain import engine
from domain.record import to_event
from projections import games_list, standings, tournaments_list
from projections.snapshots import SNAPSHOT_EVERY, Snapshots
from service.ports import Notary
from service.reader import log_missing
from service.tournaments import TOURNAMENT_ID_PREFIX

GROUP = "projector"
CHECKPOINT_PREFIX = "kifu:projcp"
CONTROL_PREFIX = "kifu:projector"
PAUSE_KEY = f"{CONTROL_PREFIX}:pause"
HEARTBEAT_S = 5
# After a small batch the projector waits this long before reading again, so that under load a batch
# holds tens of entries rather than one (each batch costs six round trips and a MULTI written to the
# AOF); the read models lag the log by at most this much more.
GATHER_S = 0.02
CLUSTER_POLL_S = 0.05  # on a cluster, how long the projector waits before looking at idle feeds again
GATHER_BELOW = 100
PAUSE_WAIT_S = 10.0
log = logging.getLogger(__name__)
FeedReply = list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | None


class RebuildRefused(Exception):
    """A running projector did not pause in time; nothing was changed."""


class Projector:
    """Applies feed entries to the games list and the snapshots."""

    def __init__(
        self,
        store: EventStore,
        client: redis.Redis,
        consumer: str | None = None,
        snapshot_every: int = SNAPSHOT_EVERY,
        notary: Notary | None = None,
    ) -> None:
        self.store = store
        self.notary = notary
        self.client = client
        self.snapshots = Snapshots(client, store)
        self.snapshot_every = snapshot_every
        self.consumer = consumer or f"{socket.gethostname()}-{secrets.token_hex(3)}"
        self._groups_ready = False

    def ensure_groups(self) -> None:
        """Create the consumer group on every partition's feed (idempotent)."""
        for p in range(self.store.partitions):
            try:
                self.store.redis.xgroup_create(self.store.feed_key(p), GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._groups_ready = True

    def run(self, stop: threading.Event, block_ms: int = 1000) -> None:
        """The projector process: apply entries until ``stop`` is set.

        Each turn beats a heartbeat and honours a rebuild's pause; a Redis that
        does not answer (restarting, stalled) is retried every second.
        """
        try:
            while not stop.is_set():
                try:
                    if self._paused():
                        stop.wait(block_ms / 1000)
                    elif 0 < self.run_once(block_ms=block_ms) < GATHER_BELOW:
                        stop.wait(GATHER_S)  # let entries gather: one batch's six round trips for many
                except UNAVAILABLE as exc:  # a Redis that does not answer, a cluster failing over
                    log.warning("projector: Redis did not answer (%s: %s); retrying in 1 s", type(exc).__name__, exc)
                    stop.wait(1.0)
        finally:
            self._forget_heartbeat()

    def run_once(self, block_ms: int | None = None, count: int = 200) -> int:
        """Apply what is waiting (own pending entries first); return how many entries."""
        if not self._groups_ready:
            self.ensure_groups()
        try:
            done = self._read_and_apply("0", None, count)
            return done + self._read_and_apply(">", block_ms, count)
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._groups_ready = False  # the groups were dropped (a rebuild, by hand): make them again
            return 0

    def run_until_idle(self) -> int:
        """Apply everything waiting now (used by tests and rebuilds)."""
        total = 0
        while (n := self.run_once()) > 0:
            total += n
        return total

    def _forget_heartbeat(self) -> None:
        with contextlib.suppress(redis.RedisError):  # else it expires by itself
            self.client.delete(f"{CONTROL_PREFIX}:alive:{self.consumer}")

    def _paused(self) -> bool:
        """Beat the heartbeat; acknowledge a pause request if there is one."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(f"{CONTROL_PREFIX}:alive:{self.consumer}", "1", ex=HEARTBEAT_S)
        pipe.get(PAUSE_KEY)
        _alive, token = pipe.execute()
        if token is None:
            return False
        self.client.set(f"{CONTROL_PREFIX}:paused:{self.consumer}", token, ex=HEARTBEAT_S)
        return True

    def _read_and_apply(self, start: str, block_ms: int | None, count: int) -> int:
        batch = [
            (text(stream), text(entry_id), fields)
            for stream, entries in self._read_feeds(start, block_ms, count)
            for entry_id, fields in entries
        ]
        if batch:
            self._apply(batch)
        return sum(1 for _s, _e, fields in batch if fields)

    def _read_feeds(self, start: str, block_ms: int | None, count: int) -> list[tuple[bytes, list[Any]]]:
        """What the partition feeds hold for this consumer from ``start`` (``>``: new entries, waiting up
        to ``block_ms``; ``0``: its own pending ones)."""
        feeds = [self.store.feed_key(p) for p in range(self.store.partitions)]
        events = self.store.redis
        if not self.store.cluster:
            streams: dict[Any, Any] = dict.fromkeys(feeds, start)
            return cast(FeedReply, events.xreadgroup(GROUP, self.consumer, streams, count=count, block=block_ms)) or []
        deadline = time.monotonic() + (block_ms or 0) / 1000
        while True:
            pipe = events.pipeline(transaction=False)
            for feed in feeds:
                pipe.xreadgroup(GROUP, self.consumer, {feed: start}, count=count)
            got = [reply for replies in pipe.execute() for reply in replies or []]
            left = deadline - time.monotonic()
            if got or block_ms is None or left <= 0:
                return got
            time.sleep(min(CLUSTER_POLL_S, left))

    def _apply(self, batch: Sequence[tuple[str, str, Mapping[bytes, bytes]]]) -> None:
        """Apply a batch of feed entries: summaries, events, one MULTI, then the XACKs.

        The MULTI holds every read-model change and each stream's checkpoint, so the
        batch is applied whole or not at all; the XACKs follow (where the feeds are),
        and entries left pending by a crash in between are no-ops when delivered again.
        """
        upto: dict[str, int] = {}
        for _stream, _entry, fields in batch:
            if fields:  # a deleted entry left in the pending list comes back empty
                game_id = fields[b"g"].decode()
                upto[game_id] = max(upto.get(game_id, 0), int(fields[b"to"]))
        games = [g for g in upto if not g.startswith(TOURNAMENT_ID_PREFIX)]
        tournaments = [t for t in upto if t.startswith(TOURNAMENT_ID_PREFIX)]
        summaries = self._summaries(games)
        applied = {g: int(summaries[g].get("version", 0)) for g in games}
        applied |= standings.applied_versions(self.client, tournaments)
        moved = [g for g in upto if upto[g] > applied[g]]
        events = self.store.read_many(
            {g: (applied[g], upto[g] - applied[g]) if g in summaries else (0, upto[g]) for g in moved}
        )
        pipe = self.client.pipeline(transaction=True)
        for stream_id, envs in events.items():
            if envs and stream_id in summaries:
                games_list.apply_events(pipe, summaries[stream_id], stream_id, envs)
                self._snapshot(pipe, stream_id, envs)
            elif envs:  # a tournament: its whole log, folded again
                tournament = standings.apply(pipe, stream_id, envs)
                tournaments_list.apply(pipe, tournament, envs[0]["at"])
        acked: dict[str, list[str]] = {}
        for stream, entry_id, _fields in batch:
            acked.setdefault(stream, []).append(entry_id)
        for stream, ids in acked.items():
            pipe.set(f"{CHECKPOINT_PREFIX}:{stream}", ids[-1])
        pipe.execute()
        self._notarise([g for g, envs in events.items() if envs and envs[-1]["type"] == engine.GAME_SEALED])
        acks = self.store.redis.pipeline(transaction=False)
        for stream, ids in acked.items():
            acks.xack(stream, GROUP, *ids)
        acks.execute()

    def _notarise(self, sealed: Sequence[str]) -> None:
        """Log each game sealed in this batch in the transparency log, if the command that sealed it did
        not (it was stopped between its append and the log's): one round trip asks which the tree does not
        hold yet, and only those are read and added. Should it fail, the batch is not acknowledged and
        comes back."""
        if self.notary is not None:
            log_missing(self.notary, self.store, sealed)

    def _summaries(self, game_ids: list[str]) -> dict[str, dict[str, str]]:
        pipe = self.client.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hgetall(games_list.summary_key(game_id))
        return {g: {k.decode(): v.decode() for k, v in raw.items()} for g, raw in zip(game_ids, pipe.execute())}

    def _snapshot(self, pipe: redis.client.Pipeline, game_id: str, envs: list[dict[str, Any]]) -> None:
        if envs[-1]["seq"] // self.snapshot_every == (envs[0]["seq"] - 1) // self.snapshot_every:
            return
        table = self.snapshots.load(game_id)
        if table is None or table.version >= envs[-1]["seq"]:
            table = None
        after = table.version if table is not None else 0
        tail = self.store.read(game_id, after, envs[-1]["seq"] - after)
        table = engine.replay([to_event(e) for e in tail], table)
        self.snapshots.save(pipe, table)


def rebuild(
    store: EventStore, client: redis.Redis, snapshot_every: int = SNAPSHOT_EVERY, pause_wait_s: float = PAUSE_WAIT_S
) -> int:
    """Drop every read model and snapshot, then replay all feeds from the start (safe online)."""
    token = secrets.token_hex(8)
    client.set(PAUSE_KEY, token, ex=600)
    try:
        _wait_until_paused(client, token, pause_wait_s)
        for pattern in (f"{games_list.PREFIX}:*", f"{CHECKPOINT_PREFIX}:*"):
            for key in client.scan_iter(match=pattern):
                client.delete(key)
        Snapshots(client, store).delete_all()
        for p in range(store.partitions):
            with contextlib.suppress(redis.ResponseError):
                store.redis.xgroup_destroy(store.feed_key(p), GROUP)
        # no notary: a rebuild never touches the transparency log (every game in it was logged before)
        projector = Projector(store, client, consumer="rebuild", snapshot_every=snapshot_every)
        projector.ensure_groups()
        return projector.run_until_idle()
    finally:
        client.delete(PAUSE_KEY)


def _wait_until_paused(client: redis.Redis, token: str, wait_s: float) -> None:
    """Until every projector with a live heartbeat has acknowledged ``token``, or ``RebuildRefused``."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = [text(k).rsplit(":", 1)[1] for k in client.scan_iter(match=f"{CONTROL_PREFIX}:alive:*")]
        acks = [client.get(f"{CONTROL_PREFIX}:paused:{c}") for c in alive]
        waiting = [c for c, ack in zip(alive, acks) if ack is None or text(ack) != token]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise RebuildRefused(
                f"projector(s) {', '.join(waiting)} did not pause within {wait_s:g} s; nothing was changed"
            )
        time.sleep(0.05)
