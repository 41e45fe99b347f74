"""Per-game state snapshots, so loading a long game need not replay its whole log.

A snapshot is the pickled ``Table`` at some version, tagged with the engine
and rules versions; a snapshot from other versions is ignored (the log is the
truth, a snapshot is only a shortcut). Pickle is safe here because only the
projector, a trusted process, writes these keys.
"""

from __future__ import annotations

import pickle

import redis

from domain import engine
from domain.engine import Table
from service.store import EventStore

SNAPSHOT_EVERY = 100


def snapshot_key(store: EventStore, game_id: str) -> str:
    return store.log_key(game_id).removesuffix(":log") + ":snap"


def _tag(table: Table) -> bytes:
    return f"{engine.ENGINE_VERSION}/{table.kind}/{table.rules_version}".encode()


def save(pipe: redis.client.Pipeline, store: EventStore, table: Table) -> None:
    """Queue the snapshot of ``table`` on ``pipe``."""
    pipe.hset(snapshot_key(store, table.game_id),
              mapping={"version": table.version, "tag": _tag(table), "table": pickle.dumps(table)})


def load(store: EventStore, game_id: str) -> Table | None:
    """The game's snapshot, or None (missing, or written by other rules)."""
    raw = store.redis.hgetall(snapshot_key(store, game_id))
    if not raw:
        return None
    table: Table = pickle.loads(raw[b"table"])
    return table if raw[b"tag"] == _tag(table) else None


def delete_all(store: EventStore) -> None:
    """Drop every snapshot."""
    for key in store.redis.scan_iter(match=f"{store.prefix}:*:snap"):
        store.redis.delete(key)
