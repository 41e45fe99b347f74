"""A San, Ni, Ichi! game stored before rules version 2 goes on under version 1 once loaded from Redis.

The log is the old server's own (``tests/unit/data/san-ni-ichi-rules-1.record.json``, cut before the
Sai's chosen discard), loaded as the API and the workers load a game: from the log, from a snapshot,
and past a snapshot written before rules versions (its state has no ``rules_version``: ignored).
"""

from __future__ import annotations

import orjson
import redis

from adapters.redis_store import EventStore
from domain import engine
from domain.engine import Table
from domain.record import GENESIS
from projections.snapshots import Snapshots
from service.memory import GameMemory
from service.ports import Append, Head
from service.reader import GameReader
from tests.unit.test_rules_versions import SAI_DISCARD, old_record

OFFERED = [{"type": "sai", "piles": [1, 2]}, {"type": "discard"}]


def stored_old_game(store: EventStore) -> str:
    """The old server's log up to the Sai, appended as the old server appended it (under its own id)."""
    record = old_record()
    game_id, envs = record["game_id"], record["events"][: SAI_DISCARD - 1]
    assert store.append(game_id, Append(envs, Head(0, GENESIS))) == len(envs)
    return game_id


def offers_the_discard(table: Table) -> bool:
    return table.state.rules_version == "1" and engine.legal_actions(table, 3) == OFFERED


def test_a_stored_version_1_game_offers_the_discard_from_its_log_and_its_snapshot(redis_client: redis.Redis) -> None:
    store = EventStore(redis_client, partitions=4)
    game_id = stored_old_game(store)
    table, _ = GameReader(store, GameMemory()).load(game_id)
    assert table.rules_version == "1" and offers_the_discard(table)
    snapshots = Snapshots(redis_client, store)
    pipe = redis_client.pipeline()
    snapshots.save(pipe, table)
    pipe.execute()
    snapshot = snapshots.load(game_id)
    assert snapshot is not None and snapshot.version == table.version and offers_the_discard(snapshot)
    assert offers_the_discard(GameReader(store, GameMemory(), snapshots.load).load(game_id)[0])


def test_a_snapshot_from_before_rules_versions_is_ignored_and_the_log_decides(redis_client: redis.Redis) -> None:
    store = EventStore(redis_client, partitions=4)
    game_id = stored_old_game(store)
    table, _ = GameReader(store, GameMemory()).load(game_id)
    snapshots = Snapshots(redis_client, store)
    pipe = redis_client.pipeline()
    snapshots.save(pipe, table)
    pipe.execute()
    key = snapshots.key(game_id)
    raw = orjson.loads(redis_client.hget(key, "table") or b"")
    state_fields = raw["dc"][1]["state"]["dc"][1]
    del state_fields["rules_version"]  # the San, Ni, Ichi! state as the old server snapshotted it
    redis_client.hset(key, "table", orjson.dumps(raw))
    assert snapshots.load(game_id) is None
    assert offers_the_discard(GameReader(store, GameMemory(), snapshots.load).load(game_id)[0])
