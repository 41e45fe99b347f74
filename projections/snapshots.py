"""Per-game state snapshots, so loading a long game need not replay its whole log.

A snapshot is the table at some version written as JSON data
(``domain.snapshot``: no pickle, so nothing read from Redis can run code),
tagged with the engine and rules versions; a snapshot from other versions, or
one that does not decode, is ignored (the log is the truth, a snapshot only a
shortcut). Keys share the game's hash tag: ``kifu:{pN}:game:<id>:snap``.
"""

from __future__ import annotations

import logging

import orjson
import redis

from adapters.redis_store import EventStore
from domain import engine
from domain.engine import Table
from domain.snapshot import SnapshotError, table_from_data, table_to_data

SNAPSHOT_EVERY = 100
log = logging.getLogger(__name__)


def _tag(table: Table) -> bytes:
    return f"{engine.ENGINE_VERSION}/{table.kind}/{table.rules_version}".encode()


class Snapshots:
    """The snapshot of each game, next to its log."""

    def __init__(self, client: redis.Redis, store: EventStore) -> None:
        self.client = client
        self.store = store

    def key(self, game_id: str) -> str:
        return self.store.log_key(game_id).removesuffix(":log") + ":snap"

    def save(self, pipe: redis.client.Pipeline, table: Table) -> None:
        """Queue the snapshot of ``table`` on ``pipe``."""
        pipe.hset(
            self.key(table.game_id),
            mapping={"version": table.version, "tag": _tag(table), "table": orjson.dumps(table_to_data(table))},
        )

    def load(self, game_id: str) -> Table | None:
        """The game's snapshot, or None (missing, unreadable, or written by other rules)."""
        raw = self.client.hgetall(self.key(game_id))
        if not raw:
            return None
        try:
            table = table_from_data(orjson.loads(raw[b"table"]))
        except (KeyError, SnapshotError, orjson.JSONDecodeError) as exc:
            log.warning("ignoring the snapshot of %s: %s", game_id, exc)
            return None
        return table if raw.get(b"tag") == _tag(table) and table.game_id == game_id else None

    def delete_all(self) -> None:
        """Drop every snapshot."""
        for key in self.client.scan_iter(match=f"{self.store.prefix}:*:snap"):
            self.client.delete(key)
