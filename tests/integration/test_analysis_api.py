"""``POST``/``GET /v1/games/{id}/analysis`` on a real Redis, the jobs run by real RQ workers.

A game of a search bot against a greedy one is played out by the ``kifu`` queue's worker; its analysis
is asked for, run by the ``kifu-analysis`` queue's worker, and read back: every decision judged, in the
issue's shape. Asked again, nothing is queued twice; a game still running is refused; the requests
are rate-limited per address.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from flask.testing import FlaskClient
from rq import Queue, SimpleWorker

from adapters.analysis_store import ANALYSIS_QUEUE, KEY
from adapters.embedded_redis import EmbeddedRedis
from adapters.rq_scheduler import QUEUE_NAME
from domain.analysis import LABELS
from domain.bots import rerun
from entrypoints.api import create_app
from entrypoints.cli import main as cli
from tests.support.api import create


def _work(redis_client: redis.Redis, queue: str) -> None:
    SimpleWorker([Queue(queue, connection=redis_client)], connection=redis_client).work(burst=True)


def _finished_game(client: FlaskClient, redis_client: redis.Redis) -> str:
    players = [{"name": "deep", "bot": "search"}, {"name": "quick", "bot": "greedy"}]
    game_id, _seats = create(client, "nin-nal", players)
    _work(redis_client, QUEUE_NAME)
    assert client.get(f"/v1/games/{game_id}").json["status"] == "finished"
    return game_id


def test_a_finished_games_analysis_is_queued_run_and_read(client: FlaskClient, redis_client: redis.Redis) -> None:
    game_id = _finished_game(client, redis_client)
    path = f"/v1/games/{game_id}/analysis"
    missing = client.get(path)
    assert missing.status_code == 404 and missing.json["type"] == "/problems/not-analysed"

    asked = client.post(path)
    assert asked.status_code == 202, asked.json
    assert asked.headers["Location"] == path
    assert asked.json["status"] == "queued" and asked.json["progress"] == 0 and asked.json["decisions"] == []
    again = client.post(path)
    assert again.status_code == 202
    assert Queue(ANALYSIS_QUEUE, connection=redis_client).count == 1  # asked twice, queued once

    _work(redis_client, ANALYSIS_QUEUE)
    done = client.get(path)
    assert done.status_code == 200
    body: dict[str, Any] = done.json
    assert body["status"] == "done" and body["progress"] == 1 and body["level"] == "search"
    record = client.get(f"/v1/games/{game_id}/record").json
    decisions = body["decisions"]
    committed = [
        (n, e["data"]["seat"])
        for n, e in enumerate(record["events"], start=1)
        if e["type"] in ("action_taken", "choice_committed") and not e["data"].get("by")
    ]
    assert [(d["step"], d["seat"]) for d in decisions] == committed
    for d in decisions:
        assert d["loss"] >= 0 and d["label"] in LABELS
        event = record["events"][d["step"] - 1]
        taken = event["data"]["action"] if event["type"] == "action_taken" else event["private"][str(d["seat"])]
        assert d["action"] == (taken if event["type"] == "action_taken" else taken["action"])
        if d["label"] == "best" and not d["forced"]:
            assert d["best"] == d["action"] or d["loss"] == 0
        if not d["forced"]:
            assert d["loss"] == pytest.approx(max(0.0, d["best_value"] - d["value"]), abs=1e-9)
    assert client.post(path).status_code == 200  # done: answered as it is, nothing queued
    assert Queue(ANALYSIS_QUEUE, connection=redis_client).count == 0


def test_only_a_finished_game_is_analysed(client: FlaskClient) -> None:
    game_id, _seats = create(client, "nin-nal", [{"name": "a"}, {"name": "b"}])
    running = client.post(f"/v1/games/{game_id}/analysis")
    assert running.status_code == 409 and running.json["type"] == "/problems/game-not-finished"
    unknown = client.post("/v1/games/g0000000000000000/analysis")
    assert unknown.status_code == 404 and unknown.json["type"] == "/problems/game-not-found"
    tournament = client.post(
        "/v1/tournaments",
        json={"game": "nin-nal", "format": "round-robin", "entrants": [{"name": "a"}, {"name": "b"}]},
    )
    assert tournament.status_code == 201, tournament.json
    for method in (client.get, client.post):  # a tournament's log is not a game's
        answer = method(f"/v1/games/{tournament.json['id']}/analysis")
        assert answer.status_code == 404 and answer.json["type"] == "/problems/game-not-found"


def test_a_failed_or_lost_analysis_is_queued_again(client: FlaskClient, redis_client: redis.Redis) -> None:
    game_id = _finished_game(client, redis_client)
    path = f"/v1/games/{game_id}/analysis"
    client.post(path)
    Queue(ANALYSIS_QUEUE, connection=redis_client).empty()  # the job is lost: its status still says queued
    assert client.post(path).status_code == 202
    assert Queue(ANALYSIS_QUEUE, connection=redis_client).count == 1
    redis_client.hset(KEY.format(game_id), mapping={"status": "failed", "error": "the worker died"})
    Queue(ANALYSIS_QUEUE, connection=redis_client).empty()
    assert client.post(path).json["status"] == "queued"
    _work(redis_client, ANALYSIS_QUEUE)
    assert client.get(path).json["status"] == "done"


def test_analysis_requests_are_rate_limited(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    config = {"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client, "TESTING": True}
    app = create_app({**config, "RATE_LIMITS": True, "RATE_LIMIT_ANALYSES": "2/minute"})
    client = app.test_client()
    answers = [client.post("/v1/games/g0000000000000000/analysis").status_code for _ in range(3)]
    assert answers == [404, 404, 429]


def test_the_workers_bot_moves_re_run_from_the_revealed_seed(
    client: FlaskClient, redis_client: redis.Redis, tmp_path: Path
) -> None:
    """The RQ worker's search bot drew its stream from the game's secret seed: ``kifu verify --bots`` derives
    the same stream from the seed the sealed record reveals and confirms every bot move."""
    game_id = _finished_game(client, redis_client)
    record = client.get(f"/v1/games/{game_id}/record").json
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    done = CliRunner().invoke(cli, ["verify", "--bots", str(path)])
    assert done.exit_code == 0, done.output
    line = next(x for x in done.output.splitlines() if x.startswith("ok   bots:"))
    assert "every one the bot's" in line and "search:" in line and "greedy:" in line
    assert not [d for d in rerun(record) if not d["same"]]
