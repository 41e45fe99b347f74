"""Kifu with its game logs on a real Redis Cluster (3 masters, 3 replicas) and the rest on one Redis.

The deployment of docs/deployment.md: ``REDIS_URL`` keeps RQ's queues, the rate limits, the read models
and the projector's checkpoints, tickets and metrics; ``KIFU_EVENTS_URL=redis+cluster://...`` every
per-game key, the partition feeds and the outbox. Games are spread over the partitions, so over the
three masters.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from rq import Queue, SimpleWorker

from adapters.embedded_cluster import EmbeddedCluster
from adapters.embedded_redis import EmbeddedRedis
from adapters.redis_store import EventStore
from adapters.rq_scheduler import QUEUE_NAME
from bootstrap import Events, Kifu, build
from entrypoints.api import create_app
from entrypoints.sweeper import sweep_once
from service.ports import NoScheduler
from tests.support.kifu_run import wait_until
from workers import jobs

pytestmark = pytest.mark.cluster

DECKS = [["sb-001", "sb-002", "sb-003", "sb-004", "sb-005"], ["sb-006", "sb-007", "sb-008", "sb-009", "sb-010"]]
SAN_BAN = {"game": "san-ban", "players": [{"name": "a"}, {"name": "b"}], "options": {"mode": "standard"}}
GAMES = 8
BOTS = [{"name": "hal", "bot": "greedy"}, {"name": "eve", "bot": "random"}]


def place(move: int) -> dict[str, Any]:
    return {"type": "place", "cell": move, "card": DECKS[move % 2][move // 2]}


@pytest.fixture
def events(cluster_client: redis.RedisCluster) -> Events:
    return Events(cluster_client, wait_replicas=1, wait_ms=5000)


@pytest.fixture
def cluster_app(redis_server: EmbeddedRedis, redis_client: redis.Redis, events: Events) -> Iterator[Flask]:
    config = {"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client, "EVENTS": events, "TESTING": True}
    yield create_app({**config, "SCHEDULER": NoScheduler()})


@pytest.fixture
def api(cluster_app: Flask) -> FlaskClient:
    return cluster_app.test_client()


@pytest.fixture
def kifu(redis_client: redis.Redis, events: Events) -> Kifu:
    return build(redis_client, scheduler=NoScheduler(), events=events)


def created(api: FlaskClient, **extra: Any) -> tuple[str, list[str]]:
    answer = api.post("/v1/games", json={**SAN_BAN, "deal": {"first": 0, "decks": DECKS}, **extra})
    assert answer.status_code == 201, answer.get_json()
    body = answer.get_json()
    return body["id"], [s["token"] for s in body["seats"]]


def act(api: FlaskClient, game: str, token: str, move: int, **headers: str) -> Any:
    return api.post(
        f"/v1/games/{game}/actions",
        json={"action": place(move)},
        headers={"Authorization": f"Bearer {token}", **headers},
    )


def test_games_are_played_and_audited_over_http_with_their_logs_on_the_cluster(
    api: FlaskClient, kifu: Kifu, cluster_client: redis.RedisCluster, redis_client: redis.Redis
) -> None:
    games = [created(api) for _ in range(GAMES)]
    for move in range(9):
        for game, tokens in games:
            assert act(api, game, tokens[move % 2], move).status_code == 201
    for game, _tokens in games:
        assert api.get(f"/v1/games/{game}").get_json()["status"] == "finished"
        assert api.get(f"/v1/games/{game}/audit").get_json()["verified"]
    masters = {cluster_client.get_node_from_key(kifu.store.log_key(game)).name for game, _ in games}
    assert len(masters) > 1  # the games' logs are spread over the masters
    assert all(cluster_client.exists(kifu.store.log_key(game)) for game, _ in games)
    assert redis_client.keys("kifu:{p*}:game:*") == []  # nothing of a game's log on the app's Redis


def test_the_projector_lists_games_whose_logs_are_on_the_cluster(
    api: FlaskClient, kifu: Kifu, cluster_client: redis.RedisCluster
) -> None:
    games = [created(api)[0] for _ in range(GAMES)]
    assert kifu.projector().run_until_idle() == GAMES
    listed = {item["id"] for item in kifu.games_list.query(limit=50)["items"]}
    assert listed == set(games)
    for p in range(kifu.store.partitions):  # every entry acknowledged where the feeds are
        assert cluster_client.xpending(kifu.store.feed_key(p), "projector")["pending"] == 0
    assert kifu.projector().run_until_idle() == 0


def test_an_acknowledged_action_is_on_a_replica_already(
    api: FlaskClient, kifu: Kifu, cluster_client: redis.RedisCluster, redis_cluster: EmbeddedCluster
) -> None:
    game, tokens = created(api)
    version = act(api, game, tokens[0], 0).get_json()["version"]
    head_key = kifu.store.head_key(game)
    master = cluster_client.get_node_from_key(head_key)
    replicas = [n for n in redis_cluster.nodes if f"127.0.0.1:{n.port}" != master.name]
    seen = []
    for node in replicas:  # the master's replica answers reads of its slots after READONLY
        replica = redis.Redis(port=node.port)
        try:
            role = replica.execute_command("ROLE")
            if role[0] == b"slave" and role[2] == master.port:
                replica.execute_command("READONLY")
                seen.append(int(replica.hget(head_key, "version") or 0))
        finally:
            replica.close()
    assert seen == [version]  # WAIT 1: the replica had it before the 201


def test_an_action_its_replicas_do_not_confirm_answers_503_and_a_retry_with_its_key_finds_it_done(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, cluster_client: redis.RedisCluster
) -> None:
    strict = Events(cluster_client, wait_replicas=2, wait_ms=50)  # each master has one replica: never 2
    config = {"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client, "TESTING": True}
    api = create_app({**config, "EVENTS": strict, "SCHEDULER": NoScheduler()}).test_client()
    creation = api.post("/v1/games", json=SAN_BAN)  # a creation too: its write is not confirmed
    assert creation.status_code == 503 and creation.get_json()["type"] == "/problems/write-unconfirmed"
    lenient = create_app({**config, "EVENTS": Events(cluster_client, 1, 5000), "SCHEDULER": NoScheduler()})
    game_id, tokens = created(lenient.test_client())
    refused = act(api, game_id, tokens[0], 0, **{"Idempotency-Key": "first-move"})
    assert refused.status_code == 503
    assert refused.get_json()["type"] == "/problems/write-unconfirmed" and refused.headers["Retry-After"] == "1"
    again = act(api, game_id, tokens[0], 0, **{"Idempotency-Key": "first-move"})
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"  # it had been done


def test_the_player_stream_hears_games_in_several_partitions(api: FlaskClient, kifu: Kifu) -> None:
    games = [created(api) for _ in range(GAMES)]
    partitions = {kifu.store.partition(game) for game, _ in games}
    assert len(partitions) > 1
    versions = {game: kifu.store.head(game).version for game, _ in games}
    assert kifu.store.wait_many(versions, 0) == set()
    moved, tokens = games[-1]
    act(api, moved, tokens[0], 0)
    assert kifu.store.wait_many(versions, 2000) == {moved}


def test_a_process_hears_the_games_another_creates_on_the_cluster(
    redis_client: redis.Redis, events: Events, api: FlaskClient
) -> None:
    listening = build(redis_client, scheduler=NoScheduler(), events=events)
    stop, ready = threading.Event(), threading.Event()
    followers = listening.follow_appends(stop, ready)
    try:
        assert ready.wait(10) and len(followers) == 3  # one per master
        games = [created(api)[0] for _ in range(GAMES)]  # through another process's wiring (the app's)
        memory = listening.games.memory
        wait_until(lambda: all(memory.held_or_heard(g) is not None for g in games), "every creation heard", 10)
    finally:
        stop.set()


def test_the_sweeper_finds_overdue_games_on_every_master(api: FlaskClient, kifu: Kifu) -> None:
    players = [{"name": "a"}, {"name": "bot", "bot": "random"}]
    games = [created(api, players=players)[0] for _ in range(GAMES)]
    for game in games:  # seat 0 moves: the bot is to act, its job due now plus a grace
        kifu.games.act(game, 0, place(0))
    overdue = kifu.store.overdue(10**15)
    assert set(games) <= set(overdue)
    assert sweep_once(kifu, 10**15) >= len(games)


def test_a_bot_tournament_runs_to_the_end_with_its_logs_on_the_cluster(
    redis_server: EmbeddedRedis,
    redis_client: redis.Redis,
    redis_cluster: EmbeddedCluster,
    events: Events,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tournament's own log and its games' on the cluster; the RQ worker (wired from the environment,
    as ``kifu worker`` is) plays the bots and runs the tournament's steps."""
    monkeypatch.setenv("KIFU_EVENTS_URL", redis_cluster.url)
    monkeypatch.setattr(jobs, "_WIRED", {})  # the worker's wiring, built from this environment
    config = {"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client, "EVENTS": events, "TESTING": True}
    api = create_app(config).test_client()
    made = api.post("/v1/tournaments", json={"game": "san-ban", "entrants": BOTS * 2, "format": "swiss", "rounds": 2})
    assert made.status_code == 201, made.get_json()
    tid, organiser = made.get_json()["id"], made.get_json()["organiser_token"]
    assert api.post(f"/v1/tournaments/{tid}/start", headers={"Authorization": f"Bearer {organiser}"}).status_code == 200
    for _ in range(500):
        SimpleWorker([Queue(QUEUE_NAME, connection=redis_client)], connection=redis_client).work(burst=True)
        if api.get(f"/v1/tournaments/{tid}").get_json()["status"] == "finished":
            break
    assert api.get(f"/v1/tournaments/{tid}").get_json()["status"] == "finished"
    assert api.get(f"/v1/tournaments/{tid}/audit").get_json()["verified"]
    assert events.client.exists(EventStore(events.client).log_key(tid))  # the tournament's log: on the cluster
