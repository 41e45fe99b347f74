"""The event store against a real Redis: conditional append, chain, idempotency, races."""

from __future__ import annotations

import threading
import uuid

import pytest
import redis

from adapters.redis_store import (
    NEW_DEPLOYMENT_PARTITIONS,
    OLDER_DEPLOYMENT_PARTITIONS,
    EventStore,
    deployment_partitions,
)
from domain.events import Event
from domain.record import GENESIS, envelopes
from service.ports import Append, DuplicateCommand, Head, Quota, QuotaExceeded, Quotas, VersionConflict
from tests.support.records import SALTS


def game_id() -> str:
    return "t" + uuid.uuid4().hex[:10]


def batch(n: int, first: int = 1, prev: str = GENESIS, tag: str = "x") -> list[dict]:
    return envelopes(
        [Event("thing_happened", {"i": i, "tag": tag}) for i in range(n)],
        first,
        prev,
        "2026-01-01T00:00:00.000Z",
        SALTS,
    )


@pytest.fixture(params=["one-redis", pytest.param("cluster", marks=pytest.mark.cluster)])
def store(request: pytest.FixtureRequest) -> EventStore:
    """The store on one Redis, and on a Redis Cluster: the same contract."""
    client = request.getfixturevalue("redis_client" if request.param == "one-redis" else "cluster_client")
    return EventStore(client, partitions=4)


def test_new_stream_append_and_range_reads(store: EventStore) -> None:
    gid = game_id()
    envs = batch(3)
    assert store.append(gid, Append(envs, Head(0, GENESIS))) == 3
    assert store.read(gid) == envs
    assert store.read(gid, after=1, limit=1) == envs[1:2]
    assert store.head(gid).version == 3 and store.head(gid).hash == envs[-1]["hash"]
    entry_ids = [i.decode() for i, _ in store.redis.xrange(store.log_key(gid))]
    assert entry_ids == ["1-0", "2-0", "3-0"]


def test_read_many_reads_each_games_own_range_in_one_call(store: EventStore) -> None:
    a, b, c = game_id(), game_id(), game_id()
    store.append(a, Append(envs_a := batch(5, tag="a"), Head(0, GENESIS)))
    store.append(b, Append(envs_b := batch(3, tag="b"), Head(0, GENESIS)))
    got = store.read_many({a: (1, 3), b: (0, 2), c: (0, 4)})
    assert got == {a: envs_a[1:4], b: envs_b[:2], c: []}
    assert store.read_many({a: (0, 0)}) == {a: []}


def test_expected_version_matrix(store: EventStore) -> None:
    gid = game_id()
    with pytest.raises(VersionConflict) as err:  # existing-stream append on a new stream
        store.append(gid, Append(batch(1, first=2), Head(1, GENESIS)))
    assert err.value.current == 0
    first = batch(2)
    store.append(gid, Append(first, Head(0, GENESIS)))
    with pytest.raises(VersionConflict):  # new-stream append on an existing stream
        store.append(gid, Append(batch(1), Head(0, GENESIS)))
    with pytest.raises(VersionConflict):  # right version, wrong head hash
        store.append(gid, Append(batch(1, first=3), Head(2, GENESIS)))
    assert store.append(gid, Append(batch(1, first=3, prev=first[-1]["hash"]), Head(2, first[-1]["hash"]))) == 3
    assert len(store.read(gid)) == 3


def test_a_refused_batch_writes_nothing(store: EventStore) -> None:
    gid = game_id()
    envs = batch(2)
    store.append(gid, Append(envs, Head(0, GENESIS)))
    before = store.redis.dump(store.log_key(gid))
    with pytest.raises(VersionConflict):
        store.append(gid, Append(batch(5, first=2, prev=envs[-1]["hash"]), Head(1, envs[0]["hash"])))
    partition = store.partition(gid)  # every key in the game's slot, as on a cluster they must be
    keys = [store.log_key(gid), store.head_key(gid), store.feed_key(partition), store.idem_key(gid, "i")]
    keys += [store.meta_key(gid), store.due_key(partition)]
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        store._append(keys=keys, args=[2, envs[-1]["hash"], gid, "0", "{}", 1, "h", 0, 3, "", "", "", "", 0, "{}"])
    with pytest.raises(redis.ResponseError, match="bad due time"):
        store._append(keys=keys, args=[2, envs[-1]["hash"], gid, "0", "{}", 1, "h", 0, 1, "soon", "", "", "", 0, "{}"])
    assert store.redis.dump(store.log_key(gid)) == before
    assert store.head(gid).version == 2


def test_idempotency_returns_the_first_record_and_appends_nothing(store: EventStore) -> None:
    gid = game_id()
    envs = batch(1)
    store.append(gid, Append(envs, Head(0, GENESIS), idempotency=("key-1", {"first": 1})))
    with pytest.raises(DuplicateCommand) as dup:
        store.append(
            gid,
            Append(
                batch(1, first=2, prev=envs[0]["hash"]), Head(1, envs[0]["hash"]), idempotency=("key-1", {"first": 2})
            ),
        )
    assert dup.value.record == {"first": 1}
    assert store.head(gid).version == 1


def test_feed_gets_one_entry_per_command_in_the_games_partition(store: EventStore) -> None:
    gid = game_id()
    store.append(gid, Append(batch(2), Head(0, GENESIS)))
    entries = store.redis.xrange(store.feed_key(store.partition(gid)))
    assert [(f[b"g"], f[b"from"], f[b"to"]) for _, f in entries] == [(gid.encode(), b"1", b"2")]
    tags = {
        k.split("}")[0]
        for k in (store.log_key(gid), store.head_key(gid), store.meta_key(gid), store.feed_key(store.partition(gid)))
    }
    assert len(tags) == 1  # one hash tag: the script runs on Redis Cluster too


def test_twenty_concurrent_writers_one_winner_per_version(store: EventStore) -> None:
    gid = game_id()
    store.append(gid, Append(batch(1), Head(0, GENESIS)))
    head = store.head(gid)
    results: list[str] = []
    barrier = threading.Barrier(20)

    def writer(i: int) -> None:
        envs = batch(2, first=2, prev=head.hash, tag=f"w{i}")
        barrier.wait()
        try:
            store.append(gid, Append(envs, Head(1, head.hash)))
            results.append("ok")
        except VersionConflict:
            results.append("conflict")

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["conflict"] * 19 + ["ok"]
    log = store.read(gid)
    assert [e["seq"] for e in log] == [1, 2, 3]
    assert len({e["data"]["tag"] for e in log[1:]}) == 1


def window(name: str, limit: int, seconds: int = 60) -> Quota:
    return Quota(f"test:{name}", limit, seconds)


def test_an_append_counts_its_quotas_and_writes_nothing_past_one(store: EventStore) -> None:
    gid = game_id()
    envs = batch(1)
    store.append(gid, Append(envs, Head(0, GENESIS), quotas=Quotas([window("a", 5), window("b", 1)])))
    quotas = Quotas([window("a", 5), window("b", 1)])
    with pytest.raises(QuotaExceeded) as past:
        store.append(gid, Append(batch(1, first=2, prev=envs[0]["hash"]), Head(1, envs[0]["hash"]), quotas=quotas))
    assert past.value.index == 1  # the second window
    assert 1 <= past.value.retry_after_s <= 60  # when that window ends
    assert store.head(gid).version == 1  # nothing written
    keys = [store.quota_key(gid, window(name, 0)) for name in "ab"]
    assert [store.redis.get(k) for k in keys] == [b"2", b"2"]
    assert 0 < store.redis.ttl(keys[0]) <= 60  # the window started at its first count
    assert store.partition(gid) == int(keys[0].split("{p")[1].split("}")[0])  # one hash slot with the game


def test_quotas_are_counted_once_whatever_the_outcome(store: EventStore) -> None:
    gid = game_id()
    envs = batch(1)
    store.append(gid, Append(envs, Head(0, GENESIS)))
    quotas = Quotas([window("c", 10)])
    with pytest.raises(VersionConflict):  # a refused append counts
        store.append(gid, Append(batch(1), Head(0, GENESIS), quotas=quotas))
    assert quotas.sent
    store.append(
        gid, Append(batch(1, first=2, prev=envs[0]["hash"]), Head(1, envs[0]["hash"]), quotas=quotas)
    )  # the retry
    store.count(gid, quotas)  # and whoever asks afterwards: counted already
    assert store.redis.get(store.quota_key(gid, window("c", 0))) == b"1"
    store.count(gid, Quotas([window("d", 1)]))  # a command that appended nothing
    with pytest.raises(QuotaExceeded) as past:
        store.count(gid, Quotas([window("d", 1)]))
    assert past.value.index == 0 and 1 <= past.value.retry_after_s <= 60
    assert store.redis.get(store.quota_key(gid, window("d", 0))) == b"2"


def test_a_deployment_decides_its_partition_count_once_by_its_data(store: EventStore) -> None:
    client = store.redis
    assert deployment_partitions(client, prefix="fresh") == NEW_DEPLOYMENT_PARTITIONS  # a new deployment
    assert EventStore(client, prefix="fresh").partitions == NEW_DEPLOYMENT_PARTITIONS  # read by every process
    client.xadd("older:{p3}:feed", {"g": "x", "from": "1", "to": "1"})  # game logs from before it was recorded
    assert deployment_partitions(client, prefix="older") == OLDER_DEPLOYMENT_PARTITIONS
    client.set("chosen:partitions", 7)  # recorded: never decided again
    client.xadd("chosen:{p3}:feed", {"g": "x", "from": "1", "to": "1"})
    assert EventStore(client, prefix="chosen").partitions == 7
