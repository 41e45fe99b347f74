"""The projector: games list, snapshots, crash-safe checkpoints and a full rebuild (also online)."""

from __future__ import annotations

import threading

import pytest
import redis
from flask.testing import FlaskClient
from freezegun import freeze_time

from bootstrap import Kifu
from domain import engine
from domain.record import to_event
from projections import games_list
from projections.projector import GROUP, PAUSE_KEY, Projector, RebuildRefused, rebuild
from projections.snapshots import Snapshots
from tests.support.api import Seat, create


def finish(ann: Seat, bob: Seat) -> None:
    for _ in range(3):
        ann.act({"type": "pick", "n": 2})
        bob.act({"type": "pick", "n": 1})
        bob.act({"type": "ack"})


def make_games(client: FlaskClient) -> dict[str, str]:
    """Three games, created a second apart (the list orders by creation time in milliseconds, and a
    fast server creates several games in one millisecond: their order is then their ids')."""
    ids = {}
    with freeze_time("2026-01-01T00:00:01Z"):
        ids["a"], (ann, bob, _s) = create(client, "toy", [{"name": "ann"}, {"name": "bob"}])
    finish(ann, bob)
    with freeze_time("2026-01-01T00:00:02Z"):
        ids["b"], _ = create(client, "toy", [{"name": "ann"}, {"name": "cid"}])
    with freeze_time("2026-01-01T00:00:03Z"):
        ids["c"], _ = create(client, "toy", [{"name": "dan"}, {"name": "eve"}])
    return ids


def kifu_of(client: FlaskClient) -> Kifu:
    client.get("/v1/catalog")  # the app wires its Kifu on first use
    return client.application.extensions["kifu"]


def projector(client: FlaskClient, **kw: object) -> Projector:
    wired = kifu_of(client)
    return Projector(wired.store, wired.client, **kw)  # type: ignore[arg-type]


def test_games_list_filters_newest_first_and_pages(client: FlaskClient) -> None:
    ids = make_games(client)
    projector(client).run_until_idle()
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


def test_the_lobby_lists_running_games_with_a_free_seat_until_it_is_taken(client: FlaskClient) -> None:
    ids = make_games(client)
    with freeze_time("2026-01-01T00:00:04Z"):
        ids["open"], _ = create(client, "toy", [{"name": "ann"}, {"open": True}])
    with freeze_time("2026-01-01T00:00:05Z"):
        ids["wide"], _ = create(client, "toy", [{"name": "fay"}, {"open": True}])
    with freeze_time("2026-01-01T00:00:06Z"):
        ids["gone"], (gil, *_rest) = create(client, "toy", [{"name": "gil"}, {"open": True}])
    gil.act({"type": "resign"})  # over before anyone joined: no longer in the lobby
    projector(client).run_until_idle()
    lobby = client.get("/v1/games?open=true").json["items"]
    assert [g["id"] for g in lobby] == [ids["wide"], ids["open"]]  # newest first
    assert all(g["status"] == "active" and any(s.get("open") for s in g["seats"]) for g in lobby)
    assert [g["id"] for g in client.get("/v1/games?open=true&player=fay").json["items"]] == [ids["wide"]]
    assert client.get("/v1/games?open=true&game=san-ban").json["items"] == []
    taken = client.post(f"/v1/games/{ids['open']}/seats/1/join", json={"name": "hal"})
    assert taken.status_code == 201, taken.json
    projector(client).run_until_idle()
    assert [g["id"] for g in client.get("/v1/games?open=true").json["items"]] == [ids["wide"]]
    others = [g["id"] for g in client.get("/v1/games?open=false").json["items"]]
    assert others == [ids["gone"], ids["open"], ids["c"], ids["b"], ids["a"]]
    assert [g["id"] for g in client.get("/v1/games?open=true&limit=1").json["items"]] == [ids["wide"]]
    for bad in ("1", "yes", "True", ""):
        assert client.get(f"/v1/games?open={bad}").status_code == 422


def test_rebuild_equals_the_live_projection(client: FlaskClient, redis_client: redis.Redis) -> None:
    make_games(client)
    projector(client, snapshot_every=5).run_until_idle()
    live = games_list.dump(redis_client)
    live_snaps = {k: redis_client.hget(k, "version") for k in redis_client.scan_iter(match="kifu:*:snap")}
    assert live and live_snaps
    rebuild(kifu_of(client).store, redis_client, snapshot_every=5)
    assert games_list.dump(redis_client) == live
    assert {k: redis_client.hget(k, "version") for k in redis_client.scan_iter(match="kifu:*:snap")} == live_snaps


def test_snapshot_loads_to_the_same_table_as_the_full_log(client: FlaskClient) -> None:
    ids = make_games(client)
    store = kifu_of(client).store
    projector(client, snapshot_every=7).run_until_idle()
    snap = Snapshots(kifu_of(client).client, store).load(ids["a"])
    assert snap is not None and snap.version >= 7
    full = engine.replay([to_event(e) for e in store.read(ids["a"])])
    tail = store.read(ids["a"], after=snap.version)
    assert engine.replay([to_event(e) for e in tail], snap) == full


def test_an_entry_delivered_twice_is_applied_once(client: FlaskClient, redis_client: redis.Redis) -> None:
    game_id, (ann, _bob, _s) = create(client, "toy", [{"name": "ann"}, {"name": "bob"}])
    store = kifu_of(client).store
    crashed = projector(client, consumer="crashy")
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


def test_a_rebuild_while_a_projector_runs_pauses_it_and_both_end_right(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    """kifu rebuild-projections on a live service: the projector pauses, nothing crashes, nothing is lost."""
    make_games(client)
    live = projector(client, consumer="live")
    live.run_until_idle()
    stop, errors = threading.Event(), []

    def keep_projecting() -> None:
        try:
            live.run(stop, block_ms=20)
        except Exception as exc:
            errors.append(exc)

    assert not live._paused()  # its heartbeat is up before the rebuild looks for live projectors
    thread = threading.Thread(target=keep_projecting)
    thread.start()
    try:
        rebuild(kifu_of(client).store, redis_client)
        new_game, _ = create(client, "toy", [{"name": "zed"}, {"name": "yan"}])  # after the rebuild
        assert redis_client.get(PAUSE_KEY) is None
    finally:
        stop.set()
        thread.join()
    assert errors == []
    live.run_until_idle()
    after = games_list.dump(redis_client)
    assert {k: v for k, v in after.items() if new_game not in k} and new_game in str(after)
    rebuild(kifu_of(client).store, redis_client)  # offline now: the same model, built from nothing
    assert games_list.dump(redis_client) == after
    assert client.get("/v1/games?player=zed").json["items"][0]["id"] == new_game


def test_a_rebuild_is_refused_while_a_projector_does_not_pause(client: FlaskClient, redis_client: redis.Redis) -> None:
    make_games(client)
    projector(client).run_until_idle()
    redis_client.set("kifu:projector:alive:silent", "1", ex=60)  # a projector that is alive but stuck
    before = games_list.dump(redis_client)
    with pytest.raises(RebuildRefused, match="silent"):
        rebuild(kifu_of(client).store, redis_client, pause_wait_s=0.2)
    assert games_list.dump(redis_client) == before and redis_client.get(PAUSE_KEY) is None


def test_a_projector_whose_group_was_dropped_makes_it_again(client: FlaskClient, redis_client: redis.Redis) -> None:
    ids = make_games(client)
    proj = projector(client)
    proj.run_until_idle()
    store = kifu_of(client).store
    for p in range(store.partitions):
        redis_client.xgroup_destroy(store.feed_key(p), GROUP)
    assert proj.run_once() == 0  # NOGROUP: groups made again, no crash
    assert proj.run_until_idle() > 0  # the feeds replayed from the start, idempotently
    assert {g["id"] for g in client.get("/v1/games").json["items"]} == set(ids.values())


def test_the_projector_logs_only_the_sealed_games_their_command_did_not(client: FlaskClient) -> None:
    """A command logs the game it seals in the transparency log at once; one stopped between its append
    and the log leaves that to the projector, which adds only those (one round trip asks which the tree
    does not hold) and not the games logged already."""
    logged, (ann, bob, _s) = create(client, "toy", [{"name": "ann"}, {"name": "bob"}])
    finish(ann, bob)  # sealed and logged by its command
    kifu = kifu_of(client)
    added: list[str] = []
    notary = kifu.notary
    real_add = notary.add

    def counted_add(signature: dict[str, object], signer: object = None) -> int:
        added.append(str(signature["statement"]["game"]))  # type: ignore[index]
        return real_add(signature, signer)  # type: ignore[arg-type]

    kifu.games.commands.notary = None  # as if stopped between the append and the log
    unlogged, (cid, dan, _s) = create(client, "toy", [{"name": "cid"}, {"name": "dan"}])
    finish(cid, dan)
    assert notary.index_of(logged) is not None and notary.index_of(unlogged) is None
    notary.add = counted_add  # type: ignore[method-assign]
    kifu.projector("test").run_until_idle()
    assert added == [unlogged]
    assert notary.missing([logged, unlogged]) == [] and notary.size() == 2


def test_reading_a_logged_games_record_writes_nothing_and_an_unlogged_one_is_logged_first(
    client: FlaskClient,
) -> None:
    """A sealed game's record carries its inclusion proof. The log is asked first which games it does not
    hold: a logged game's record (and a tournament's ``log_all`` of it) is read without the log's append
    script, which may write; a game its command did not log is logged by the read, once."""
    logged, (ann, bob, _s) = create(client, "toy", [{"name": "ann"}, {"name": "bob"}])
    finish(ann, bob)
    kifu = kifu_of(client)
    notary = kifu.notary
    real_add = notary.add
    added: list[str] = []

    def counted_add(signature: dict[str, object], signer: object = None) -> int:
        added.append(str(signature["statement"]["game"]))  # type: ignore[index]
        return real_add(signature, signer)  # type: ignore[arg-type]

    kifu.games.commands.notary = None  # its command will not log the next game
    unlogged, (cid, dan, _s) = create(client, "toy", [{"name": "cid"}, {"name": "dan"}])
    finish(cid, dan)
    notary.add = counted_add  # type: ignore[method-assign]

    first = client.get(f"/v1/games/{logged}/record").get_json()
    assert added == [] and first["inclusion"]["index"] == notary.index_of(logged)
    assert kifu.games.log_all([logged]) is not None and added == []

    second = client.get(f"/v1/games/{unlogged}/record").get_json()
    assert added == [unlogged] and second["inclusion"]["index"] == notary.index_of(unlogged) == 1
    client.get(f"/v1/games/{unlogged}/record")
    assert kifu.games.log_all([logged, unlogged])["size"] == 2 and added == [unlogged]  # type: ignore[index]
