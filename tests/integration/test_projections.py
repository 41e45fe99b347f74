"""The projector: games list, snapshots, crash-safe checkpoints and a full rebuild."""

from __future__ import annotations

import redis
from flask.testing import FlaskClient

from domain import engine
from domain.record import to_event
from projections import games_list, snapshots
from projections.projector import GROUP, Projector, rebuild
from service.store import EventStore
from tests.support.api import Seat, create


def finish(ann: Seat, bob: Seat) -> None:
    for _ in range(3):
        ann.act({"type": "pick", "n": 2})
        bob.act({"type": "pick", "n": 1})
        bob.act({"type": "ack"})


def make_games(client: FlaskClient) -> dict[str, str]:
    ids = {}
    ids["a"], (ann, bob, _s) = create(client, "toy", [{"name": "ann"}, {"name": "bob"}])
    finish(ann, bob)
    ids["b"], _ = create(client, "toy", [{"name": "ann"}, {"name": "cid"}])
    ids["c"], _ = create(client, "toy", [{"name": "dan"}, {"name": "eve"}])
    return ids


def store_of(client: FlaskClient) -> EventStore:
    return client.application.extensions["kifu"].store


def test_games_list_filters_newest_first_and_pages(client: FlaskClient) -> None:
    ids = make_games(client)
    Projector(store_of(client)).run_until_idle()
    everything = client.get("/v1/games").json
    assert [g["id"] for g in everything["items"]] == [ids["c"], ids["b"], ids["a"]]
    assert [g["id"] for g in client.get("/v1/games?player=ann").json["items"]] == [ids["b"], ids["a"]]
    assert [g["id"] for g in client.get("/v1/games?status=finished").json["items"]] == [ids["a"]]
    assert [g["id"] for g in client.get("/v1/games?status=active&player=ann").json["items"]] == [ids["b"]]
    assert client.get("/v1/games?game=san-ban").json["items"] == []
    first = client.get("/v1/games?limit=2").json
    second = client.get(f"/v1/games?limit=2&cursor={first['next']}").json
    assert [g["id"] for g in first["items"] + second["items"]] == [ids["c"], ids["b"], ids["a"]]
    assert second["next"] is None
    finished = next(g for g in everything["items"] if g["id"] == ids["a"])
    assert finished["status"] == "finished" and finished["result"]["winners"] == [0]
    assert client.get("/v1/games?status=won").status_code == 422
    assert client.get("/v1/games?cursor=bogus").status_code == 422


def test_rebuild_equals_the_live_projection(client: FlaskClient, redis_client: redis.Redis) -> None:
    make_games(client)
    store = store_of(client)
    Projector(store, snapshot_every=5).run_until_idle()
    live = games_list.dump(redis_client)
    live_snaps = {k: redis_client.hget(k, "version") for k in redis_client.scan_iter(match="kifu:*:snap")}
    assert live and live_snaps
    rebuild(store, snapshot_every=5)
    assert games_list.dump(redis_client) == live
    assert {k: redis_client.hget(k, "version") for k in redis_client.scan_iter(match="kifu:*:snap")} == live_snaps


def test_snapshot_loads_to_the_same_table_as_the_full_log(client: FlaskClient) -> None:
    ids = make_games(client)
    store = store_of(client)
    Projector(store, snapshot_every=7).run_until_idle()
    snap = snapshots.load(store, ids["a"])
    assert snap is not None and snap.version >= 7
    full = engine.replay([to_event(e) for e in store.read(ids["a"])])
    tail = store.read(ids["a"], after=snap.version)
    assert engine.replay([to_event(e) for e in tail], snap) == full


def test_an_entry_delivered_twice_is_applied_once(client: FlaskClient, redis_client: redis.Redis) -> None:
    game_id, (ann, bob, _s) = create(client, "toy", [{"name": "ann"}, {"name": "bob"}])
    store = store_of(client)
    crashed = Projector(store, consumer="crashy")
    crashed.ensure_groups()
    feed = store.feed_key(store.partition(game_id))
    redis_client.xreadgroup(GROUP, "crashy", {feed: ">"}, count=10)  # read, then "crash" before applying
    ann.act({"type": "pick", "n": 2})
    assert crashed.run_once() == 2  # the pending entry first, then the new one
    before = games_list.dump(redis_client)
    redis_client.xadd(feed, {"g": game_id, "from": "1", "to": "3"})  # a duplicate delivery
    crashed.run_until_idle()
    assert games_list.dump(redis_client) == before
    assert redis_client.xpending(feed, GROUP)["pending"] == 0
