"""``kifu run`` with its game logs on a real Redis Cluster, through the loss of a master, a replica and the
plain Redis: no acknowledged action lost, no chain forked, every game goes on and verifies.

The cluster (3 masters, 3 replicas, node timeout 2 s) and the plain Redis are this test's own; ``kifu
run`` is given both URLs, as docs/deployment.md says. A player thread plays human games over HTTP, each
move with its own ``Idempotency-Key`` (a 503 is retried with the same key, as the docs tell clients to),
and keeps every acknowledged answer: the game, the version it reached and the hash of its last event.
Bot games are created before and after the master is killed; the RQ worker plays them. After each fault
the play goes on; at the end every acknowledged event is in its game's log, every game is finished and
verified, and the games list (the projector's read model) has them all, finished.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from adapters.embedded_cluster import EmbeddedCluster, steady_port
from adapters.embedded_redis import EmbeddedRedis, free_port
from adapters.redis_store import EventStore, deployment_partitions
from tests.support.kifu_run import DECKS, TIMEOUT, ready, start_kifu_run, stop_kifu_run, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

HUMAN_GAMES = 3
BOT_GAMES = 2
BOTS = [{"name": "hal", "bot": "greedy"}, {"name": "eve", "bot": "random"}]


def place(move: int) -> dict[str, Any]:
    return {"type": "place", "cell": move, "card": DECKS[move % 2][move // 2]}


@dataclass
class Player:
    """Plays the human games move by move, round robin, and keeps what was acknowledged."""

    base: str
    games: list[tuple[str, list[str]]]
    acknowledged: list[tuple[str, int, str, float]] = field(default_factory=list)  # game, version, hash, when
    retried: int = 0
    moves_done: dict[str, int] = field(default_factory=dict)

    def move(self, game: str, tokens: list[str], move: int) -> None:
        """One move, retried with its key until answered 201 (a 503 or a dropped connection: again)."""
        headers = {"Authorization": f"Bearer {tokens[move % 2]}", "Idempotency-Key": f"{game}:{move}"}
        answer, retries = answered(f"{self.base}/v1/games/{game}/actions", {"action": place(move)}, headers)
        body = answer.json()
        self.acknowledged.append((game, body["version"], body["events"][-1]["hash"], time.monotonic()))
        self.retried += retries

    def play(self, moves: range) -> None:
        for move in moves:
            for game, tokens in self.games:
                self.move(game, tokens, move)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[str, EmbeddedRedis, EmbeddedCluster]]:
    # appendfsync always: the read models' MULTI is on disk; a port no client socket takes while it is down
    plain = EmbeddedRedis(tmp_path / "plain", port=steady_port()).start()
    cluster = EmbeddedCluster(tmp_path / "cluster").start()
    port = free_port()
    run = start_kifu_run(tmp_path, port, REDIS_URL=plain.url, KIFU_EVENTS_URL=cluster.url)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: ready(base), "kifu run to be ready", 60)
        yield base, plain, cluster
    finally:
        stop_kifu_run(run, tmp_path)
        cluster.stop()
        plain.stop()


def created(base: str, players: list[dict[str, Any]], deal: bool = True) -> tuple[str, list[str]]:
    """A new game, its creation retried with its key while the store answers 503."""
    body: dict[str, Any] = {"game": "san-ban", "players": players, "options": {"mode": "standard"}}
    if deal:
        body["deal"] = {"first": 0, "decks": DECKS}
    answer, _retries = answered(f"{base}/v1/games", body, {"Idempotency-Key": os.urandom(8).hex()})
    return answer.json()["id"], [s["token"] for s in answer.json()["seats"]]


def answered(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[requests.Response, int]:
    """POST ``body`` with its ``Idempotency-Key`` until answered 201, as the docs tell a client to: a 503 or
    a dropped connection is retried with the same key, anything else fails; a minute of 503s fails too.
    The answer, and how many retries it took."""
    deadline, retries = time.monotonic() + 60, 0
    while True:
        try:
            answer = requests.post(url, json=body, headers=headers, timeout=10)
        except requests.RequestException:
            answer = None
        if answer is not None and answer.status_code == 201:
            return answer, retries
        assert answer is None or answer.status_code == 503, (answer.status_code, answer.text)
        assert time.monotonic() < deadline, f"{url}: no answer but 503 for a minute"
        retries += 1
        time.sleep(0.1)  # a client's pause before its retry (not a timing: the answer decides, the deadline bounds)


def kill(process: Any) -> None:
    """SIGKILL a server and whatever it forked (an AOF rewrite still holding its files), as a machine dies."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def master_of_most(cluster: EmbeddedCluster, games: list[str]) -> EmbeddedRedis:
    """The master that holds the logs of most of ``games``."""
    client = redis.RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)
    try:
        store = EventStore(client, deployment_partitions(client))
        names = [client.get_node_from_key(store.log_key(game)).name for game in games]
    finally:
        client.close()
    busiest = max(set(names), key=names.count)
    return next(n for n in cluster.nodes if f"127.0.0.1:{n.port}" == busiest)


def test_no_acknowledged_action_is_lost_when_a_master_a_replica_and_the_plain_redis_die(
    stack: tuple[str, EmbeddedRedis, EmbeddedCluster],
) -> None:
    base, plain, cluster = stack
    humans = [created(base, [{"name": "ann"}, {"name": "bob"}]) for _ in range(HUMAN_GAMES)]
    bots = [created(base, BOTS, deal=False)[0] for _ in range(BOT_GAMES)]
    player = Player(base, humans)
    player.play(range(3))

    # a master dies: its replica is promoted; the dead one comes back as the new master's replica
    victim = master_of_most(cluster, [g for g, _ in humans])
    on_victim = {g for g, _ in humans if master_of_most(cluster, [g]) is victim}
    killed_at = time.monotonic()
    kill(victim.process)
    player.play(range(3, 5))  # through the failover: 503s retried with their keys
    paused = min(when for g, _v, _h, when in player.acknowledged if when > killed_at and g in on_victim) - killed_at
    victim.start()
    bots += [created(base, BOTS, deal=False)[0] for _ in range(BOT_GAMES)]

    # a replica dies, and comes back
    replica = next(n for n in cluster.nodes if n is not victim and _role(n) == "slave")
    kill(replica.process)
    player.play(range(5, 7))
    replica.start()

    # the plain Redis dies: RQ's queues, the read models; it comes back from its AOF
    kill(plain.process)
    plain.start()
    player.play(range(7, 9))
    print(f"a master killed: its games' first acknowledged action {paused:.2f} s later; {player.retried} retries")

    for game, _tokens in humans:
        record = requests.get(f"{base}/v1/games/{game}/record", timeout=TIMEOUT).json()
        hashes = {env["seq"]: env["hash"] for env in record["events"]}
        for acked_game, version, digest, _when in player.acknowledged:
            if acked_game == game:
                assert hashes.get(version) == digest, (game, version)  # acknowledged, and never forked
    everyone = [g for g, _ in humans] + bots

    def finished(game: str) -> bool:
        return bool(requests.get(f"{base}/v1/games/{game}", timeout=TIMEOUT).json()["status"] == "finished")

    wait_until(lambda: all(finished(g) for g in everyone), "every game to finish (the bots through the worker)", 120)
    for game in everyone:
        assert requests.get(f"{base}/v1/games/{game}/audit", timeout=TIMEOUT).json()["verified"], game

    def listed() -> bool:
        items = requests.get(f"{base}/v1/games?status=finished&limit=100", timeout=TIMEOUT).json()["items"]
        return {item["id"] for item in items} >= set(everyone)

    wait_until(listed, "the games list to converge", 60)


def _role(node: EmbeddedRedis) -> str:
    client = redis.Redis(port=node.port, socket_timeout=2)
    try:
        return str(client.execute_command("ROLE")[0].decode())
    except redis.RedisError:
        return "down"
    finally:
        client.close()
