"""Contract tests: ``openapi.yaml`` is a valid spec, covers exactly the app's routes, and real
requests and answers (toy game, real Redis) match it, errors included."""

from __future__ import annotations

import itertools
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from flask import Flask
from flask.testing import FlaskClient
from openapi_core import Config, OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.exceptions import OpenAPIError
from openapi_spec_validator import validate as validate_spec
from redis.backoff import NoBackoff
from redis.retry import Retry
from werkzeug.test import EnvironBuilder, TestResponse

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app
from service.ports import NoScheduler
from tests.support.spec import spec_with_toy_game

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
TWO = [{"name": "ann"}, {"name": "bob"}]

# (method, spec path, status) of every answer validated against the spec in this module.


@pytest.fixture(scope="module")
def spec_dict() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text())


@pytest.fixture(scope="module")
def openapi() -> OpenAPI:
    # openapi-core knows application/json and text/plain; teach it the other two types used
    config = Config(
        extra_media_type_deserializers={
            "application/problem+json": json.loads,
            "text/event-stream": lambda raw: raw.decode(),
        }
    )
    # the spec with the test-only toy game in its unions of games (tests/support/spec.py)
    return OpenAPI.from_dict(spec_with_toy_game(), config=config)


def make_app(redis_server: EmbeddedRedis, client: redis.Redis) -> Flask:
    return create_app(
        {"REDIS_URL": redis_server.url, "REDIS_CLIENT": client, "SCHEDULER": NoScheduler(), "TESTING": True}
    )


@pytest.fixture
def api_app(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Flask:
    return make_app(redis_server, redis_client)


def spec_path_of(rule: str) -> str:
    """Flask's ``/v1/games/<game_id>`` -> the template shape ``/v1/games/{}``."""
    return re.sub(r"<(?:[^:>]+:)?[^>]+>", "{}", rule)


def template(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


class Contract:
    """Sends requests through Flask's test client and checks both sides against the spec."""

    def __init__(self, client: FlaskClient, openapi: OpenAPI, spec: dict[str, Any]) -> None:
        self.client = client
        self.openapi = openapi
        self.spec = spec

    def call(
        self,
        method: str,
        path: str,
        expect: int,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        request_valid: bool = True,
        **kw: Any,
    ) -> TestResponse:
        """Send, check the status, validate request and answer; ``kw`` goes to
        ``EnvironBuilder`` (``json``, ``data``, ``query_string``, ...).

        ``request_valid=False``: the request is one the spec itself refuses (the server
        must refuse it too, with the documented error)."""
        headers = dict(headers or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        args = {"path": path, "method": method.upper(), "headers": headers, **kw}
        response = self.client.open(EnvironBuilder(**args), buffered=True)
        body = response.get_data(as_text=True)
        assert response.status_code == expect, body
        request = WerkzeugOpenAPIRequest(EnvironBuilder(**args).get_request())
        if request_valid:
            self.openapi.validate_request(request)
        else:
            with pytest.raises(OpenAPIError):
                self.openapi.validate_request(request)
        self.openapi.validate_response(request, WerkzeugOpenAPIResponse(response))
        if expect >= 400 and path != "/readyz":  # a readiness answer, not an error
            assert response.mimetype == "application/problem+json", body
            assert response.json["status"] == expect
        return response

    def act(
        self, game_id: str, token: str | None, action: dict[str, Any], expect: int = 201, **kw: Any
    ) -> TestResponse:
        body = {"action": action, **kw.pop("body", {})}
        path = f"/v1/games/{game_id}/actions"
        return self.call("post", path, expect, token=token, json=body, **kw)


@pytest.fixture
def api(api_app: Flask, openapi: OpenAPI, spec_dict: dict[str, Any]) -> Contract:
    return Contract(api_app.test_client(), openapi, spec_dict)


@pytest.fixture
def game(api: Contract) -> Iterator[dict[str, Any]]:
    """A fresh two-seat toy game: its creation answer."""
    yield api.call("post", "/v1/games", 201, json={"game": "toy", "players": TWO}).json


def project(api: Contract) -> None:
    """Bring the games list up to date (the projector runs as its own process in production)."""
    api.client.application.extensions["kifu"].projector().run_until_idle()


def finish(api: Contract, game_id: str, tokens: list[str]) -> list[dict[str, Any]]:
    """Play the toy game to its end (seat 0 wins every round); return every action answer."""
    answers = []
    while (view := api.call("get", f"/v1/games/{game_id}", 200).json)["status"] == "active":
        for seat in view["to_act"]:
            pick = {"type": "pick", "n": 3 if seat == 0 else 1}
            action = {"type": "ack"} if view["phase"] == "ack" else pick
            answers.append(api.act(game_id, tokens[seat], action).json)
    return answers


# -- the spec itself ---------------------------------------------------------------------


def test_spec_is_valid_openapi(spec_dict: dict[str, Any]) -> None:
    validate_spec(spec_dict)
    assert spec_dict["openapi"].startswith("3.2")  # itemSchema: each Server-Sent Event has a schema


def test_spec_paths_are_exactly_the_app_routes(api_app: Flask, spec_dict: dict[str, Any]) -> None:
    routes = {
        (spec_path_of(rule.rule), method.lower())
        for rule in api_app.url_map.iter_rules()
        if rule.endpoint != "static"
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    documented = {
        (template(path), method)
        for path, item in spec_dict["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }
    assert routes - documented == set(), "routes missing from openapi.yaml"
    assert documented - routes == set(), "documented paths the app does not serve"


def test_every_error_answer_is_a_problem(spec_dict: dict[str, Any]) -> None:
    responses = spec_dict["components"]["responses"]
    for path, item in spec_dict["paths"].items():
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            for status, answer in op["responses"].items():
                if int(status) < 400 or path == "/readyz":  # 503 there is a readiness answer
                    continue
                resolved = responses[answer["$ref"].rsplit("/", 1)[1]] if "$ref" in answer else answer
                assert list(resolved["content"]) == ["application/problem+json"], (method, path, status)


# -- a representative flow ----------------------------------------------------------------


def test_flow_on_the_toy_game_matches_the_spec(api: Contract, game: dict[str, Any]) -> None:
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    assert game["you"] is None and game["version"] == 2
    api.call("get", "/v1/catalog", 200)
    api.call("get", "/healthz", 200)
    api.call("get", "/readyz", 200)

    assert api.call("get", f"/v1/games/{gid}", 200, token=tokens[0]).json["you"] == 0
    assert api.call("get", f"/v1/games/{gid}", 200).json["state"]["cards"] is None
    legal = api.call("get", f"/v1/games/{gid}/actions", 200, token=tokens[0]).json
    assert legal["actions"] == [{"type": "pick", "n": n} for n in (1, 2, 3)]
    spectator = api.call("get", f"/v1/games/{gid}/actions", 200).json
    assert spectator == {"seat": None, "version": 2, "actions": []}

    retry = {"Idempotency-Key": "k1", "If-Match": '"2"'}
    first = api.act(gid, tokens[0], {"type": "pick", "n": 3}, headers=retry).json
    again = api.act(gid, tokens[0], {"type": "pick", "n": 3}, headers=retry).json
    assert again == first and first["events"][0]["type"] == "choice_committed"
    assert api.call("get", f"/v1/games/{gid}", 200, token=tokens[0]).json["my_choice"]
    second = api.act(gid, tokens[1], {"type": "pick", "n": 1}, body={"expected_version": 3}).json
    types = [e["type"] for e in second["events"]]
    assert types == ["choice_committed", "choices_revealed", "round_scored"]

    events = f"/v1/games/{gid}/events"
    page = api.call("get", events, 200, query_string={"after": 1, "limit": 2}).json
    assert [e["seq"] for e in page["items"]] == [2, 3] and page["next"] == 3
    api.call("get", events, 200, token=tokens[0])
    api.call("get", f"/v1/games/{gid}/replay", 200, token=tokens[0], query_string={"step": 3, "as": 0})
    api.call("get", f"/v1/games/{gid}/replay", 200, query_string={"step": 5})
    running = api.call("get", f"/v1/games/{gid}/record", 200).json
    assert running["complete"] is False and "note" in running
    early = api.call("post", "/v1/audits", 200, json=running).json  # the chain checks; the rest must wait
    assert early["verified"] is False and early["verdict"] == "in_progress" and early["sealed"] is False
    assert {c["name"]: c["ok"] for c in early["checks"]} == {
        "format": True,
        "hash_chain": True,
        "header": True,
        "private_parts": True,
        "seed": True,
        "commitments": True,
        "signature": True,
        "sealed": False,
    }
    server_side = api.call("get", f"/v1/games/{gid}/audit", 200).json  # every part, still no result proven
    assert server_side["verdict"] == "in_progress" and server_side["verified"] is False
    assert [c["name"] for c in server_side["checks"] if not c["ok"]] == ["sealed"]

    older = api.call("post", "/v1/games", 201, json={"game": "toy", "players": TWO}).json["id"]
    project(api)
    query = {"game": "toy", "status": "active", "limit": 1}
    listed = api.call("get", "/v1/games", 200, query_string=query).json
    assert len(listed["items"]) == 1 and listed["next"]
    query = {"player": "ann", "cursor": listed["next"]}
    rest = api.call("get", "/v1/games", 200, query_string=query).json
    assert {g["id"] for g in listed["items"] + rest["items"]} == {gid, older}
    assert rest["next"] is None

    last = finish(api, gid, tokens)[-1]
    assert last["status"] == "finished" and last["events"][-1]["type"] == "game_sealed"
    view = api.call("get", f"/v1/games/{gid}", 200).json
    assert view["status"] == "finished" and view["result"]["winners"] == [0]
    for seat in (None, 0, 1):
        query = {"step": 3} if seat is None else {"step": 3, "as": seat}
        api.call("get", f"/v1/games/{gid}/replay", 200, query_string=query)

    stream = api.call("get", f"/v1/games/{gid}/events/stream", 200, headers={"Last-Event-ID": "10"})
    frames = stream.get_data(as_text=True)
    assert frames.startswith("retry: 1000") and "id: 11\nevent" in frames and "id: 10\nevent" not in frames
    assert frames.rstrip().split("\n")[-2] == "event: game_sealed"

    record = api.call("get", f"/v1/games/{gid}/record", 200).json
    assert record["complete"] is True and record["seed"]
    report = api.call("post", "/v1/audits", 200, json=record).json
    assert report["verified"] is True and report["head"] == record["head"]
    api.call("get", f"/v1/games/{gid}/audit", 200)
    record["events"][2]["data"]["seat"] = 1  # tamper with event 3: the report names it
    assert api.call("post", "/v1/audits", 200, json=record).json["first_bad_event"] == 3
    api.call("post", "/v1/audits", 200, json={"events": []})
    project(api)
    done = api.call("get", "/v1/games", 200, query_string={"status": "finished"}).json["items"]
    assert [g["id"] for g in done] == [gid] and done[0]["result"]["winners"] == [0]
    metrics = api.call("get", "/metrics", 200).get_data(as_text=True)
    assert 'route="/v1/games/<game_id>/actions",status="201"' in metrics


def test_bot_seats_have_no_token(api: Contract) -> None:
    body = {
        "game": "toy",
        "players": [{"name": "ann"}, {"name": "rob", "bot": "random"}],
        "options": {"rounds": 2},
        "deal": {"cards": [1, 2, 3]},
    }
    key = {"Idempotency-Key": "create-1"}
    created = api.call("post", "/v1/games", 201, json=body, headers=key).json
    assert [s["token"] is None for s in created["seats"]] == [False, True]
    replayed = api.call("post", "/v1/games", 201, json=body, headers=key).json
    assert replayed == {**created, "seats": [{**s, "token": None} for s in created["seats"]]}
    record = api.call("get", f"/v1/games/{created['id']}/record", 200).json
    assert record["seats"][1]["bot_info"]["name"] == "random"


def test_a_search_seat_commits_to_its_settings(api: Contract) -> None:
    """A search seat's budget is in ``game_created`` (``bot_settings``), the creation answer, the view and
    the record's ``bot_info.settings``: the catalog's settings for the level when the game was created.
    The other seats have none."""
    catalog = api.call("get", "/v1/catalog", 200).json
    listed = next(g for g in catalog["games"] if g["id"] == "nin-nal")["bot_settings"]["search-strong"]
    body = {"game": "nin-nal", "players": [{"name": "ann"}, {"name": "rob", "bot": "search-strong"}]}
    created = api.call("post", "/v1/games", 201, json=body).json
    assert created["seats"][1]["bot_settings"] == listed
    assert "bot_settings" not in created["seats"][0]
    game_id = created["id"]
    view = api.call("get", f"/v1/games/{game_id}", 200).json
    assert [s.get("bot_settings") for s in view["seats"]] == [None, listed]
    record = api.call("get", f"/v1/games/{game_id}/record", 200).json
    assert record["events"][0]["data"]["seats"][1]["bot_settings"] == listed
    assert record["seats"][1]["bot_info"] == {"name": "search-strong", "version": "nin-nal/1", "settings": listed}
    assert record["seats"][0]["bot_info"] is None


def test_an_advanced_san_ban_search_seat_commits_to_the_settings_its_options_list(api: Contract) -> None:
    """San Ban's advanced mode is searched by expectimax: the catalog lists those settings under
    ``bot_settings_by_options`` (its ``bot_settings`` stay the tree search's, which the other modes
    commit to), and a game of that mode commits its search seat to them."""
    catalog = api.call("get", "/v1/catalog", 200).json
    san_ban = next(g for g in catalog["games"] if g["id"] == "san-ban")
    assert san_ban["bot_settings"]["search"]["algorithm"] == "so-ismcts"
    [entry] = san_ban["bot_settings_by_options"]
    assert entry["options"] == {"mode": "advanced"}
    listed = entry["bot_settings"]["search"]
    assert listed["algorithm"] == "expectimax" and set(listed) == {"algorithm", "depth", "exact", "samples"}
    assert all(g["bot_settings_by_options"] == [] for g in catalog["games"] if g["id"] != "san-ban")
    players = [{"name": "ann"}, {"name": "deep", "bot": "search"}]
    advanced = {"game": "san-ban", "players": players, "options": {"mode": "advanced"}}
    created = api.call("post", "/v1/games", 201, json=advanced).json
    assert created["seats"][1]["bot_settings"] == listed
    record = api.call("get", f"/v1/games/{created['id']}/record", 200).json
    assert record["seats"][1]["bot_info"]["settings"] == listed
    gamer = api.call("post", "/v1/games", 201, json={**advanced, "options": {"mode": "gamer"}}).json
    assert gamer["seats"][1]["bot_settings"] == san_ban["bot_settings"]["search"]


def test_503_problem_when_redis_is_down(
    redis_server: EmbeddedRedis, openapi: OpenAPI, spec_dict: dict[str, Any]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused at once
        # no retries: redis-py's default retry backs off (sleeps) between attempts
        down = redis.Redis(port=sock.getsockname()[1], socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        contract = Contract(make_app(redis_server, down).test_client(), openapi, spec_dict)
        assert contract.call("get", "/readyz", 503).json["status"] == "unavailable"
        contract.call("get", "/healthz", 200)
        # every other route answers a 503 problem, never a 500
        created = contract.call("post", "/v1/games", 503, json={"game": "toy", "players": TWO})
        assert "event store" in created.json["detail"]
        contract.call("get", "/v1/games/g_x", 503)
        contract.call("get", "/v1/games", 503)
        contract.call("post", "/v1/games/g_x/actions", 503, token="a" * 43, json={"action": {"type": "ack"}})


# -- every error status -------------------------------------------------------------------


def test_400_malformed_json(api: Contract, game: dict[str, Any]) -> None:
    token = game["seats"][0]["token"]
    for path, extra in (("/v1/games", {}), ("/v1/audits", {}), (f"/v1/games/{game['id']}/actions", {"token": token})):
        api.call("post", path, 400, data="{nope", content_type="application/json", request_valid=False, **extra)


def test_401_unknown_missing_or_malformed_token(api: Contract, game: dict[str, Any]) -> None:
    gid = game["id"]
    for path in ("", "/actions", "/events", "/record", "/audit", "/events/stream"):
        api.call("get", f"/v1/games/{gid}{path}", 401, token="not-a-seat-token")
    api.call("get", f"/v1/games/{gid}/replay", 401, token="nope", query_string={"step": 1})
    api.call("get", f"/v1/games/{gid}", 401, headers={"Authorization": "Basic YTpi"})
    api.act(gid, "nope", {"type": "pick", "n": 1}, 401)
    # no token at all: acting needs a seat (the spec says so too)
    api.act(gid, None, {"type": "pick", "n": 1}, 401, request_valid=False)


def test_403_not_your_turn_and_foreign_replay(api: Contract, game: dict[str, Any]) -> None:
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    pick = {"type": "pick", "n": 2}
    api.act(gid, tokens[0], pick)
    api.act(gid, tokens[0], pick, 403)  # its secret choice is already in
    api.act(gid, tokens[1], pick)
    api.act(gid, tokens[0], {"type": "ack"}, 403)  # a tie: seat 1 acknowledges
    replay = f"/v1/games/{gid}/replay"
    api.call("get", replay, 403, token=tokens[0], query_string={"step": 2, "as": 1})
    api.call("get", replay, 403, query_string={"step": 2, "as": 0})


def test_403_after_the_end(api: Contract, game: dict[str, Any]) -> None:
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    finish(api, gid, tokens)
    assert "over" in api.act(gid, tokens[0], {"type": "ack"}, 403).json["detail"]


def test_404_unknown_game(api: Contract) -> None:
    for path in ("", "/actions", "/events", "/events/stream", "/record", "/audit"):
        api.call("get", f"/v1/games/gnope{path}", 404)
    api.call("get", "/v1/games/gnope/replay", 404, query_string={"step": 1})
    api.act("gnope", "x", {"type": "ack"}, 404)


def test_409_stale_expected_version(api: Contract, game: dict[str, Any]) -> None:
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    pick = {"type": "pick", "n": 1}
    r = api.act(gid, tokens[0], pick, 409, body={"expected_version": 1})
    assert r.json["current_version"] == 2
    r = api.act(gid, tokens[0], pick, 409, headers={"If-Match": "7"})
    assert r.json["current_version"] == 2


def test_422_schema_errors_carry_field_errors(api: Contract, game: dict[str, Any]) -> None:
    gid, token = game["id"], game["seats"][0]["token"]
    acts, pick = f"/v1/games/{gid}/actions", {"type": "pick", "n": 1}
    cases = [
        ("post", "/v1/games", {"json": {"game": "toy", "players": TWO, "colour": "red"}}, "colour"),
        ("post", "/v1/games", {"json": {"game": "toy", "players": [{"name": ""}]}}, "players[0].name"),
        ("post", "/v1/games", {"json": ["not", "an", "object"]}, "_schema"),
        ("post", acts, {"json": {"act": pick}, "token": token}, "action"),
        ("post", acts, {"json": {"action": pick, "expected_version": "2"}, "token": token}, "expected_version"),
        ("post", acts, {"json": {"action": pick}, "token": token, "headers": {"If-Match": "latest"}}, "If-Match"),
        ("get", "/v1/games", {"query_string": {"status": "paused"}}, "status"),
        ("get", "/v1/games", {"query_string": {"limit": 0}}, "limit"),
        ("get", "/v1/games", {"query_string": {"cursor": "bogus"}}, "cursor"),
        ("get", f"/v1/games/{gid}/events", {"query_string": {"after": -1}}, "after"),
        ("get", f"/v1/games/{gid}/events/stream", {"query_string": {"after": "x"}}, "after"),
        ("get", f"/v1/games/{gid}/replay", {}, "step"),
        ("get", f"/v1/games/{gid}/replay", {"query_string": {"step": 0}}, "step"),
        ("get", f"/v1/games/{gid}/events", {"query_string": {"after": 2**60}}, "after"),
        ("post", acts, {"json": {"action": pick, "expected_version": 2**60}, "token": token}, "expected_version"),
    ]
    for method, path, kw, field in cases:
        r = api.call(method, path, 422, request_valid=False, **kw)
        assert field in r.json["errors"], (path, r.json)
    # a header the spec types as a string: an id the stream never sent (past 2^53-1) is ignored, not refused
    stream = api.client.get(f"/v1/games/{gid}/events/stream", headers={"Last-Event-ID": str(2**60)}, buffered=False)
    assert stream.status_code == 200
    head = b"".join(itertools.islice(stream.iter_encoded(), 2)).decode()  # "retry: 1000", then the first event
    stream.close()
    assert "id: 1\nevent: game_created" in head  # from the start, as without the header


def test_422_rule_violations_explain_the_rule(api: Contract, game: dict[str, Any]) -> None:
    gid, token = game["id"], game["seats"][0]["token"]
    for action in ({"type": "ack"}, {"type": "pick", "n": 9}, {"type": "pick"}):
        r = api.act(gid, token, action, 422)
        assert r.json["detail"] and "errors" not in r.json
    # a game the catalogue lacks: the spec's union of games refuses it too, the server with its rule
    chess = api.call("post", "/v1/games", 422, json={"game": "chess", "players": TWO}, request_valid=False)
    assert chess.json["type"] == "/problems/unknown-game" and chess.json["detail"]
    for body in (
        {"game": "toy", "players": TWO[:1]},
        {"game": "toy", "players": TWO, "options": {"rounds": 7}},
        {"game": "toy", "players": [{"name": "a", "bot": "genius"}, {"name": "b"}]},
    ):
        assert api.call("post", "/v1/games", 422, json=body).json["detail"]
    for query in ({"step": 99}, {"step": 1, "as": 5}):
        api.call("get", f"/v1/games/{gid}/replay", 422, query_string=query)
    key = {"Idempotency-Key": "same"}
    api.act(gid, token, {"type": "pick", "n": 1}, headers=key)
    api.act(gid, token, {"type": "pick", "n": 2}, 422, headers=key)  # same key, other request
