"""A request body must be sent as ``application/json``, else 415 before anything is done
(``entrypoints/api/body.py``, ``require_json_type``).

``text/plain``, forms and no ``Content-Type`` are what a page of any site can send
without a CORS preflight: were they accepted, any page could create games, act
with a token it holds, or have visitors' browsers upload records. Every
operation of ``openapi.yaml`` that takes a body is tried (a new one is covered
as soon as the spec has it), each with a request that succeeds when sent as
JSON, and Redis is compared whole before and after: nothing written, not even a
rate limit's counter (the limits are on here).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import EnvironBuilder, TestResponse

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from bootstrap import build
from entrypoints.api import create_app
from service.ports import NoScheduler

SPEC = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text(encoding="utf-8"))
HTTP_METHODS = ("get", "put", "post", "delete", "patch")
# (operationId, method, path) of every operation of the spec that takes a body
BODY_OPERATIONS = sorted(
    (item[method]["operationId"], method, path)
    for path, item in SPEC["paths"].items()
    for method in HTTP_METHODS
    if method in item and "requestBody" in item[method]
)
TWO = [{"name": "ann"}, {"name": "bob"}]
# Content-Types a body is refused under (None: no Content-Type header at all).
REFUSED = (
    "text/plain",
    "text/plain;charset=UTF-8",  # what fetch() sends with a string body
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=kifu",
    None,
    "application/merge-patch+json",  # +json types: no endpoint takes one (docs/api.md, "Errors")
    "application/vnd.kifu+json",
    "application/json; charset=iso-8859-1",  # JSON bodies are UTF-8
    "application/jsonx",
)
ACCEPTED = ("application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF-8")


@dataclass
class World:
    """A game with a seat to act, a game with an open seat, a running tournament with a game in play."""

    client: FlaskClient
    redis: redis.Redis
    game: str
    tokens: list[str]
    open_game: str
    tournament: str
    organiser: str
    tournament_game: str
    forfeiting_seat: int

    def snapshot(self) -> dict[bytes, bytes | None]:
        """Every key of Redis with its serialized value."""
        return {key: self.redis.dump(key) for key in sorted(self.redis.scan_iter(count=1000))}


Request = tuple[str, dict[str, str], Any, int]  # path, headers, JSON body, status when sent as JSON
Answer = TestResponse


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _create_game(w: World) -> Request:
    return "/v1/games", {}, {"game": "toy", "players": TWO}, 201


def _take_action(w: World) -> Request:
    return f"/v1/games/{w.game}/actions", bearer(w.tokens[0]), {"action": {"type": "pick", "n": 1}}, 201


def _join_seat(w: World) -> Request:
    return f"/v1/games/{w.open_game}/seats/1/join", {}, {"name": "cy"}, 201


def _player_ticket(w: World) -> Request:
    return "/v1/stream-tickets", {}, {"seats": [{"game": w.game, "token": w.tokens[0]}]}, 201


def _audit_record(w: World) -> Request:
    return "/v1/audits", {}, w.client.get(f"/v1/games/{w.game}/record").json, 200


def _create_tournament(w: World) -> Request:
    return "/v1/tournaments", {}, {"game": "san-ban", "entrants": TWO, "format": "round-robin"}, 201


def _pause(w: World) -> Request:
    return f"/v1/tournaments/{w.tournament}/pause", bearer(w.organiser), {"reason": "lunch"}, 200


def _withdraw(w: World) -> Request:
    return f"/v1/tournaments/{w.tournament}/entrants/1/withdraw", bearer(w.organiser), {"reason": "left"}, 200


def _forfeit(w: World) -> Request:
    path = f"/v1/tournaments/{w.tournament}/games/{w.tournament_game}/forfeit"
    return path, bearer(w.organiser), {"seat": w.forfeiting_seat, "reason": "gone"}, 200


# A request per operation that succeeds when sent as JSON. An operation missing here is still tried for
# its 415, on its path with placeholder parameters (the refusal comes before the path is looked at).
REQUESTS: dict[str, Callable[[World], Request]] = {
    "createGame": _create_game,
    "takeAction": _take_action,
    "joinSeat": _join_seat,
    "createPlayerTicket": _player_ticket,
    "auditRecord": _audit_record,
    "createTournament": _create_tournament,
    "pauseTournament": _pause,
    "withdrawEntrant": _withdraw,
    "forfeitGame": _forfeit,
}


@pytest.fixture
def world(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[World]:
    app: Flask = create_app(
        {
            "REDIS_URL": redis_server.url,
            "REDIS_CLIENT": redis_client,
            "SCHEDULER": NoScheduler(),
            "TESTING": True,
            "RATE_LIMITS": True,  # a refused body must not even count against a limit
        }
    )
    client = app.test_client()
    created = client.post("/v1/games", json={"game": "toy", "players": TWO}).json
    open_game = client.post("/v1/games", json={"game": "toy", "players": [{"name": "ann"}, {"open": True}]}).json
    settings = {"game": "san-ban", "entrants": TWO, "format": "swiss"}
    made = client.post("/v1/tournaments", json=settings).json
    tid, organiser = made["id"], made["organiser_token"]
    assert client.post(f"/v1/tournaments/{tid}/start", headers=bearer(organiser)).status_code == 200
    build(redis_client, scheduler=NoScheduler()).tournaments.advance(tid)
    tournament_game = client.get(f"/v1/tournaments/{tid}").json["tables"][0]["game"]
    yield World(
        client=client,
        redis=redis_client,
        game=created["id"],
        tokens=[seat["token"] for seat in created["seats"]],
        open_game=open_game["id"],
        tournament=tid,
        organiser=organiser,
        tournament_game=tournament_game,
        forfeiting_seat=client.get(f"/v1/games/{tournament_game}").json["to_act"][0],
    )


def post(client: FlaskClient, path: str, headers: dict[str, str], body: bytes, content_type: str | None) -> Answer:
    """POST ``body`` with exactly this ``Content-Type`` (none at all for None)."""
    builder = EnvironBuilder(path=path, method="POST", headers=headers, data=body, content_type=content_type)
    environ = builder.get_environ()
    assert environ.get("CONTENT_TYPE", "") == (content_type or "")  # the test client added nothing
    return client.open(builder, buffered=True)


def request_for(operation: str, method: str, path: str, w: World) -> Request:
    if operation in REQUESTS:
        return REQUESTS[operation](w)
    placeholder = path.replace("{", "").replace("}", "")  # /v1/games/id/...: never reached
    return placeholder, {}, {}, 0


@pytest.mark.parametrize(("operation", "method", "path"), BODY_OPERATIONS, ids=[op for op, _m, _p in BODY_OPERATIONS])
def test_a_body_not_sent_as_json_is_415_and_changes_nothing(
    world: World, operation: str, method: str, path: str
) -> None:
    assert method == "post"  # the API's only method with a body
    url, headers, body, _status = request_for(operation, method, path, world)
    text = _json_text(body)
    before = world.snapshot()
    for content_type in REFUSED:
        r = post(world.client, url, headers, text, content_type)
        assert r.status_code == 415, (content_type, r.get_data(as_text=True))
        assert r.mimetype == "application/problem+json"
        assert r.json["type"] == "/problems/unsupported-media-type" and r.json["status"] == 415
        assert "Content-Type: application/json" in r.json["detail"], r.json
    assert world.snapshot() == before  # nothing written: no game, no event, no counter


@pytest.mark.parametrize("operation", sorted(REQUESTS))
def test_the_same_body_sent_as_json_is_taken(world: World, operation: str) -> None:
    url, headers, body, status = REQUESTS[operation](world)
    r = post(world.client, url, headers, _json_text(body), "application/json")
    assert r.status_code == status, r.get_data(as_text=True)


def test_every_operation_with_a_body_has_a_request_here() -> None:
    """So that the JSON side of each 415 is shown to succeed too (add one to REQUESTS)."""
    assert {op for op, _m, _p in BODY_OPERATIONS} == set(REQUESTS)


def test_json_is_json_whatever_the_case_and_with_a_utf8_charset(world: World) -> None:
    ids = set()
    for content_type in ACCEPTED:
        r = post(world.client, "/v1/games", {}, _json_text({"game": "toy", "players": TWO}), content_type)
        assert r.status_code == 201, (content_type, r.json)
        ids.add(r.json["id"])
    assert len(ids) == len(ACCEPTED)


def test_a_cross_site_creation_creates_nothing(world: World) -> None:
    """The attack itself: a page elsewhere posts a game as text/plain (no preflight). Refused, nothing made."""
    listed = world.redis.dbsize()
    text = _json_text({"game": "toy", "players": TWO})
    headers = {"Origin": "https://elsewhere.example"}
    r = post(world.client, "/v1/games", headers, text, "text/plain;charset=UTF-8")
    assert r.status_code == 415 and "text/plain" in r.json["detail"]
    assert world.redis.dbsize() == listed


def test_requests_without_a_body_need_no_content_type(world: World) -> None:
    ticket = post(world.client, f"/v1/games/{world.game}/stream-tickets", bearer(world.tokens[0]), b"", None)
    assert ticket.status_code == 201 and ticket.json["ticket"]
    paused = post(world.client, f"/v1/tournaments/{world.tournament}/pause", bearer(world.organiser), b"", None)
    assert paused.status_code == 200 and paused.json["status"] == "paused"
    resumed = post(world.client, f"/v1/tournaments/{world.tournament}/resume", bearer(world.organiser), b"", None)
    assert resumed.status_code == 200 and resumed.json["status"] == "running"
    # an empty body under a wrong type is still no body: judged as before (here: none was needed)
    empty = post(world.client, f"/v1/games/{world.game}/stream-tickets", bearer(world.tokens[0]), b"", "text/plain")
    assert empty.status_code == 201


def test_a_body_too_large_is_413_before_its_type_is_judged(world: World) -> None:
    """The transport's limits come first: an oversized text/plain body is refused unread, as 413."""
    limit = world.client.application.config["MAX_BODY_BYTES"]
    r = post(world.client, "/v1/games", {}, b" " * (limit + 1), "text/plain")
    assert r.status_code == 413


def _json_text(body: Any) -> bytes:
    return json.dumps(body).encode()
