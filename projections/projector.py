"""The projector: reads every partition's feed through a consumer group.

Each feed entry names a game and a range of its events. For each batch of
entries read at once, the projector updates the read models, records its
checkpoints and XACKs the entries in one MULTI transaction, so a crash between
them can neither skip nor double-apply an event; a summary also remembers the
last version it applied, so an entry delivered twice (after a crash, from the
pending list) is a no-op.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

import redis

from domain import engine
from domain.record import to_event
from projections import games_list, snapshots
from service.store import EventStore

GROUP = "projector"
CHECKPOINT_PREFIX = "kifu:projcp"


class Projector:
    """Applies feed entries to the games list and the snapshots."""

    def __init__(self, store: EventStore, consumer: str | None = None,
                 snapshot_every: int = snapshots.SNAPSHOT_EVERY) -> None:
        self.store = store
        self.snapshot_every = snapshot_every
        self.redis: redis.Redis = store.redis
        self.consumer = consumer or f"{socket.gethostname()}-projector"
        self._groups_ready = False

    def ensure_groups(self) -> None:
        """Create the consumer group on every partition's feed (idempotent)."""
        for p in range(self.store.partitions):
            try:
                self.redis.xgroup_create(self.store.feed_key(p), GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._groups_ready = True

    def run_once(self, block_ms: int | None = None, count: int = 200) -> int:
        """Apply what is waiting (own pending entries first); return how many entries."""
        if not self._groups_ready:
            self.ensure_groups()
        done = self._read_and_apply("0", None, count)
        return done + self._read_and_apply(">", block_ms, count)

    def run_until_idle(self) -> int:
        """Apply everything waiting now (used by tests and rebuilds)."""
        total = 0
        while (n := self.run_once()) > 0:
            total += n
        return total

    def _read_and_apply(self, start: str, block_ms: int | None, count: int) -> int:
        streams = {self.store.feed_key(p): start for p in range(self.store.partitions)}
        got = self.redis.xreadgroup(GROUP, self.consumer, streams, count=count, block=block_ms)
        batch = [(stream.decode(), entry_id.decode(), fields)
                 for stream, entries in got or [] for entry_id, fields in entries]
        if batch:
            self._apply(batch)
        return sum(1 for _s, _e, fields in batch if fields)

    def _apply(self, batch: list[tuple[str, str, Mapping[bytes, bytes]]]) -> None:
        """Apply a batch of feed entries in three round trips: summaries, events, one MULTI.

        The MULTI holds every read-model change, each stream's checkpoint and the
        XACK of every entry in the batch, so the batch is applied whole or not at all.
        """
        upto: dict[str, int] = {}
        for _stream, _entry, fields in batch:
            if fields:  # a deleted entry left in the pending list comes back empty
                game_id = fields[b"g"].decode()
                upto[game_id] = max(upto.get(game_id, 0), int(fields[b"to"]))
        summaries = self._summaries(list(upto))
        applied = {g: int(summaries[g].get("version", 0)) for g in upto}
        events = self.store.read_many({g: (applied[g], upto[g] - applied[g]) for g in upto if upto[g] > applied[g]})
        pipe = self.redis.pipeline(transaction=True)
        for game_id, envs in events.items():
            if envs:
                games_list.apply_events(pipe, summaries[game_id], game_id, envs)
                self._snapshot(pipe, game_id, envs)
        acked: dict[str, list[str]] = {}
        for stream, entry_id, _fields in batch:
            acked.setdefault(stream, []).append(entry_id)
        for stream, ids in acked.items():
            pipe.set(f"{CHECKPOINT_PREFIX}:{stream}", ids[-1])
            pipe.xack(stream, GROUP, *ids)
        pipe.execute()

    def _summaries(self, game_ids: list[str]) -> dict[str, dict[str, str]]:
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hgetall(games_list.summary_key(game_id))
        return {g: {k.decode(): v.decode() for k, v in raw.items()} for g, raw in zip(game_ids, pipe.execute())}

    def _snapshot(self, pipe: redis.client.Pipeline, game_id: str, envs: list[dict[str, Any]]) -> None:
        if envs[-1]["seq"] // self.snapshot_every == (envs[0]["seq"] - 1) // self.snapshot_every:
            return
        table = snapshots.load(self.store, game_id)
        if table is None or table.version >= envs[-1]["seq"]:
            table = None
        after = table.version if table is not None else 0
        tail = self.store.read(game_id, after, envs[-1]["seq"] - after)
        table = engine.replay([to_event(e) for e in tail], table)
        snapshots.save(pipe, self.store, table)


def rebuild(store: EventStore, snapshot_every: int = snapshots.SNAPSHOT_EVERY) -> int:
    """Drop every read model and snapshot, then replay all feeds from the start."""
    client = store.redis
    for pattern in (f"{games_list.PREFIX}:*", f"{CHECKPOINT_PREFIX}:*"):
        for key in client.scan_iter(match=pattern):
            client.delete(key)
    snapshots.delete_all(store)
    for p in range(store.partitions):
        try:
            client.xgroup_destroy(store.feed_key(p), GROUP)
        except redis.ResponseError:
            pass
    projector = Projector(store, consumer="rebuild", snapshot_every=snapshot_every)
    projector.ensure_groups()
    return projector.run_until_idle()
