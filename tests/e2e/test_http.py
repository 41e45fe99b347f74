"""Over real HTTP: SSE with Last-Event-ID, and concurrent writers on one game."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import requests

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import DEFAULTS, create_app
from service.ports import NoScheduler
from tests.support.http import serving

TIMEOUT = 10
CLIENTS = 100  # concurrent submitters on one game, all released at once


def create_toy(base: str) -> tuple[str, list[dict[str, str]]]:
    r = requests.post(
        f"{base}/v1/games", json={"game": "toy", "players": [{"name": "a"}, {"name": "b"}]}, timeout=TIMEOUT
    )
    assert r.status_code == 201
    return r.json()["id"], [{"Authorization": f"Bearer {s['token']}"} for s in r.json()["seats"]]


def act(base: str, game_id: str, headers: dict[str, str], action: dict[str, Any], **body: Any) -> requests.Response:
    return requests.post(
        f"{base}/v1/games/{game_id}/actions", json={"action": action, **body}, headers=headers, timeout=TIMEOUT
    )


def sse_events(response: requests.Response) -> Iterator[dict[str, Any]]:
    """Parse an SSE byte stream into {"id","event","data"} frames (comments skipped)."""
    frame: dict[str, Any] = {}
    for raw in response.iter_lines(decode_unicode=True):
        if raw == "":
            if "data" in frame:
                yield frame
            frame = {}
        elif not raw.startswith(":"):
            key, _, value = raw.partition(": ")
            frame[key] = json.loads(value) if key == "data" else value


def test_sse_streams_redacted_events_and_resumes_with_last_event_id(base_url: str) -> None:
    game_id, (ann, bob) = create_toy(base_url)
    url = f"{base_url}/v1/games/{game_id}/events/stream"
    with requests.get(url, headers=bob, stream=True, timeout=TIMEOUT) as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        frames = sse_events(stream)
        assert [next(frames)["id"] for _ in range(2)] == ["1", "2"]
        assert act(base_url, game_id, ann, {"type": "pick", "n": 3}).status_code == 201
        committed = next(frames)
        assert committed["id"] == "3" and committed["event"] == "choice_committed"
        assert "private" not in committed["data"]["data"]  # bob cannot see ann's choice
    assert act(base_url, game_id, bob, {"type": "pick", "n": 1}).status_code == 201
    with requests.get(url, headers={**bob, "Last-Event-ID": "3"}, stream=True, timeout=TIMEOUT) as stream:
        frames = sse_events(stream)
        resumed = next(frames)
        assert resumed["id"] == "4" and resumed["data"]["data"]["private"]["1"]["action"]["n"] == 1
        assert next(frames)["event"] == "choices_revealed"


def test_sse_stream_ends_after_the_seal(base_url: str) -> None:
    game_id, (ann, bob) = create_toy(base_url)
    for _ in range(3):
        act(base_url, game_id, ann, {"type": "pick", "n": 2})
        act(base_url, game_id, bob, {"type": "pick", "n": 1})
        act(base_url, game_id, bob, {"type": "ack"})
    with requests.get(f"{base_url}/v1/games/{game_id}/events/stream", stream=True, timeout=TIMEOUT) as stream:
        frames = list(sse_events(stream))
    assert frames[-1]["event"] == "game_sealed" and [int(f["id"]) for f in frames] == list(range(1, len(frames) + 1))
    url = f"{base_url}/v1/games/{game_id}/events/stream"
    last = {"Last-Event-ID": frames[-1]["id"]}  # a client that has it all: 204, so its EventSource stops
    assert requests.get(url, headers=last, timeout=TIMEOUT).status_code == 204
    earlier = {"Last-Event-ID": frames[-2]["id"]}
    with requests.get(url, headers=earlier, stream=True, timeout=TIMEOUT) as rest:
        assert [f["event"] for f in sse_events(rest)] == ["game_sealed"]


def test_sse_for_unknown_game_is_a_problem(base_url: str) -> None:
    r = requests.get(f"{base_url}/v1/games/nope/events/stream", timeout=TIMEOUT)
    assert r.status_code == 404 and r.headers["Content-Type"] == "application/problem+json"


def test_a_hundred_concurrent_clients_one_success_rest_conflict_no_gap(base_url: str) -> None:
    game_id, (ann, _bob) = create_toy(base_url)
    barrier = threading.Barrier(CLIENTS)
    codes: list[int] = []

    def client(n: int) -> None:
        barrier.wait()
        codes.append(act(base_url, game_id, ann, {"type": "pick", "n": 1 + n % 3}, expected_version=2).status_code)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [201] + [409] * (CLIENTS - 1)
    items = requests.get(f"{base_url}/v1/games/{game_id}/events", timeout=TIMEOUT).json()["items"]
    assert [e["seq"] for e in items] == [1, 2, 3]
    assert all(items[i]["prev"] == items[i - 1]["hash"] for i in range(1, 3))
    audit = requests.get(f"{base_url}/v1/games/{game_id}/audit", timeout=TIMEOUT).json()
    assert audit["verdict"] == "in_progress", audit  # the game runs on: every check passed, no result yet


def test_a_hundred_concurrent_clients_without_expected_version_all_serialise(base_url: str) -> None:
    """Without expected_version the server retries on a race: every command is judged on fresh state."""
    game_id, (ann, bob) = create_toy(base_url)
    barrier = threading.Barrier(CLIENTS)
    codes: list[int] = []

    def client(n: int) -> None:
        barrier.wait()
        codes.append(act(base_url, game_id, [ann, bob][n % 2], {"type": "pick", "n": 2}).status_code)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(codes) == CLIENTS and sorted(codes).count(201) == 2  # each seat commits exactly once
    assert set(codes) <= {201, 403, 422}  # the rest: already chosen, or no longer a pick phase
    items = requests.get(f"{base_url}/v1/games/{game_id}/events", timeout=TIMEOUT).json()["items"]
    assert [e["type"] for e in items].count("choice_committed") == 2
    assert [e["seq"] for e in items] == list(range(1, len(items) + 1))  # no gap, no duplicate
    audit = requests.get(f"{base_url}/v1/games/{game_id}/audit", timeout=TIMEOUT).json()
    assert audit["verdict"] == "in_progress", audit  # the game runs on: every check passed, no result yet


def test_an_idle_sse_stream_outlives_the_redis_socket_timeout(redis_server: EmbeddedRedis) -> None:
    """Blocking reads are sliced below the client's socket timeout; heartbeats keep the line alive.

    redis-py's default socket timeout is 5 s; here it is 0.3 s with 0.1 s slices and a
    0.6 s heartbeat, so a stream that lives through two heartbeats has outlived the timeout.
    """
    import redis as redis_lib

    client = redis_lib.Redis(port=redis_server.port, socket_timeout=0.3)
    app = create_app(
        {
            "REDIS_URL": redis_server.url,
            "REDIS_CLIENT": client,
            "SCHEDULER": NoScheduler(),
            "SSE_HEARTBEAT_SECONDS": 0.6,
            "SSE_WAIT_SLICE_SECONDS": 0.1,
        }
    )
    assert DEFAULTS["SSE_WAIT_SLICE_SECONDS"] < redis_lib.Connection().socket_timeout
    with serving(app) as base:
        game_id, (ann, _bob) = create_toy(base)
        with requests.get(f"{base}/v1/games/{game_id}/events/stream", stream=True, timeout=TIMEOUT) as stream:
            lines = stream.iter_lines(decode_unicode=True)
            seen = []
            while seen.count(": heartbeat") < 2:
                seen.append(next(lines))
            assert act(base, game_id, ann, {"type": "pick", "n": 3}).status_code == 201
            assert next(line for line in lines if line.startswith("id: ")) == "id: 3"
