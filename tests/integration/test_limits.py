"""Limits of the API (README, "Limits"): body sizes (413 before reading; a chunked body cut off at the
limit) and rate limits (429 with ``Retry-After``: creations, uploaded audits and refused tokens per
client address, actions per seat), counted in Redis so that every API process shares them; answers match openapi.yaml.

Each app here is the real app on the session's real Redis with low limits of its own; the flushed
Redis (``redis_client``) starts every test with no counts.
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from openapi_core import Config, OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from werkzeug.test import EnvironBuilder, TestResponse

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import DEFAULTS, create_app
from service.ports import NoScheduler
from tests.support.http import serving
from tests.support.spec import spec_with_toy_game

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
TWO = [{"name": "ann"}, {"name": "bob"}]
TOY = {"game": "toy", "players": TWO}
TOURNAMENT = {"game": "toy", "entrants": TWO, "format": "round-robin"}
ANOTHER = {"REMOTE_ADDR": "192.0.2.7"}  # a second client (TEST-NET-1 address: nothing is sent anywhere)


def make_app(redis_server: EmbeddedRedis, client: redis.Redis, **config: Any) -> Flask:
    """The real app (limits on unless said otherwise), with ``config`` over the defaults."""
    base = {"REDIS_URL": redis_server.url, "REDIS_CLIENT": client, "SCHEDULER": NoScheduler(), "TESTING": True}
    return create_app({**base, "RATE_LIMITS": True, **config})


@pytest.fixture(scope="module")
def openapi() -> OpenAPI:
    config = Config(extra_media_type_deserializers={"application/problem+json": json.loads})
    # the spec with the test-only toy game in its unions of games (tests/support/spec.py)
    return OpenAPI.from_dict(spec_with_toy_game(), config=config)


def send(client: FlaskClient, openapi: OpenAPI, method: str, path: str, **kw: Any) -> TestResponse:
    """Send through the test client and validate the answer against openapi.yaml (the operation is
    found from the method and path alone: the request's body may be one that must not be read)."""
    response = client.open(EnvironBuilder(path=path, method=method, **kw), buffered=True)
    request = WerkzeugOpenAPIRequest(EnvironBuilder(path=path, method=method).get_request())
    openapi.validate_response(request, WerkzeugOpenAPIResponse(response))
    return response


def assert_rate_limited(response: TestResponse, within: int) -> None:
    assert response.status_code == 429, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert response.json is not None and response.json["type"] == "/problems/rate-limited"
    assert 1 <= int(response.headers["Retry-After"]) <= within


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- body sizes -----------------------------------------------------------------------------------


class Unreadable(io.BytesIO):
    """A request body that fails the test if anything reads it."""

    def read(self, *_args: Any) -> bytes:
        raise AssertionError("the body was read")

    def readinto(self, *_args: Any) -> int:
        raise AssertionError("the body was read")

    def readline(self, *_args: Any) -> bytes:
        raise AssertionError("the body was read")


def test_413_from_the_content_length_before_reading(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    app = make_app(redis_server, redis_client, MAX_BODY_BYTES=1000, MAX_RECORD_BYTES=5000)
    client = app.test_client()
    for path, limit in (("/v1/games", 1000), ("/v1/audits", 5000), ("/v1/tournaments", 1000)):
        announced = {"CONTENT_LENGTH": str(limit + 1)}  # what the client says it will send
        r = send(client, openapi, "POST", path, input_stream=Unreadable(), environ_overrides=announced)
        assert r.status_code == 413 and r.json is not None, r.get_data(as_text=True)
        assert r.json["type"] == "/problems/payload-too-large" and str(limit) in r.json["detail"]


def test_an_uploaded_record_may_be_larger_than_any_other_body(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    client = make_app(redis_server, redis_client, MAX_BODY_BYTES=1000, MAX_RECORD_BYTES=5000).test_client()
    padded = json.dumps({"events": [], "pad": "x" * 3000})
    assert client.post("/v1/games", data=padded, content_type="application/json").status_code == 413
    audit = client.post("/v1/audits", data=padded, content_type="application/json")
    assert audit.status_code == 200 and audit.json is not None and audit.json["verified"] is False
    at_limit = json.dumps({"game": "toy", "players": TWO, "pad": ""})
    at_limit = at_limit.replace('"pad": ""', '"pad": "' + "x" * (1000 - len(at_limit)) + '"')
    assert len(at_limit) == 1000  # exactly the limit: judged (422: no field "pad"), not refused as too large
    assert client.post("/v1/games", data=at_limit, content_type="application/json").status_code == 422


def test_the_default_limits_admit_the_largest_real_bodies() -> None:
    # README "Limits": the largest record measured (a 1,000-round Kiri-ai game) is 5.4 MB compact, 8.4 MB
    # indented; the largest other body the schemas allow (a duplicate tournament) 0.9 MB, 1.5 MB indented
    assert DEFAULTS["MAX_RECORD_BYTES"] >= 1.5 * 8_400_000 and DEFAULTS["MAX_BODY_BYTES"] >= 1.3 * 1_520_000


def read_answer(sock: socket.socket, answer: bytes = b"") -> bytes:
    """One HTTP answer (head and ``Content-Length`` body) from ``sock``, however the connection goes on
    (``answer``: its first bytes, if received already)."""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536) or b"\r\n\r\n"  # closed early: let the caller's checks fail on it
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        (int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")) if k.lower() == b"content-length"), 0
    )
    while len(body) < length and (data := sock.recv(65536)):
        body += data
    return head + b"\r\n\r\n" + body


def chunked_post(url: str, path: str, payload: bytes, end: bool, chunk: int = 4096) -> bytes:
    """POST ``payload`` with ``Transfer-Encoding: chunked`` over a raw socket, with its final chunk or
    without it (``end``: a body with no end, as far as the server can tell); the server's answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
        sock.sendall(head.encode() + b"\r\n\r\n")
        for start in range(0, len(payload), chunk):
            piece = payload[start : start + chunk]
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        if end:
            sock.sendall(b"0\r\n\r\n")
        return read_answer(sock)


def test_a_chunked_body_is_cut_off_at_the_limit(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    app = make_app(redis_server, redis_client, MAX_BODY_BYTES=10_000)
    with serving(app) as url:
        # never finished: without the limit the server would wait for the rest for ever (recv times out)
        answer = chunked_post(url, "/v1/games", b" " * 30_000, end=False)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"/problems/payload-too-large" in answer and b"10000 bytes" in answer
        # werkzeug's stream stops at the limit without a word: a longer body must not pass as cut short
        just_over = json.dumps(TOY).encode() + b" " * (10_001 - len(json.dumps(TOY)))
        assert chunked_post(url, "/v1/games", just_over, end=True).startswith(b"HTTP/1.1 413")
        exactly = just_over[:10_000]  # valid JSON padded with spaces to exactly the limit: served
        assert chunked_post(url, "/v1/games", exactly, end=True).startswith(b"HTTP/1.1 201")


# -- rate limits ----------------------------------------------------------------------------------


def test_creations_are_limited_per_client_address(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    client = make_app(redis_server, redis_client, RATE_LIMIT_CREATE="3/minute").test_client()
    assert [client.post("/v1/games", json=TOY).status_code for _ in range(2)] == [201, 201]
    assert client.post("/v1/tournaments", json=TOURNAMENT).status_code == 201  # one budget for both
    assert_rate_limited(send(client, openapi, "POST", "/v1/games", json=TOY), within=60)
    refused = send(client, openapi, "POST", "/v1/tournaments", json=TOURNAMENT)
    assert_rate_limited(refused, within=60)
    assert refused.json is not None and "created from this address" in refused.json["detail"]
    assert client.post("/v1/games", json=TOY, environ_base=ANOTHER).status_code == 201  # another client
    assert client.get("/v1/catalog").status_code == 200  # nothing else is limited


def test_audits_of_uploaded_records_are_limited_per_client_address(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    client = make_app(redis_server, redis_client, RATE_LIMIT_AUDITS="2/minute").test_client()
    record = {"events": []}  # the body does not matter: every upload counts, before it is parsed
    assert client.post("/v1/audits", json=record).status_code == 200
    assert client.post("/v1/audits", data="{nope", content_type="application/json").status_code == 400
    refused = client.post("/v1/audits", json=record)
    assert_rate_limited(refused, within=60)
    assert refused.json is not None and "audited from this address" in refused.json["detail"]
    assert_rate_limited(send(client, openapi, "POST", "/v1/audits", json=record), within=60)  # as specified
    assert client.post("/v1/audits", json=record, environ_base=ANOTHER).status_code == 200  # another client
    assert client.post("/v1/games", json=TOY).status_code == 201  # a budget of its own
    assert DEFAULTS["RATE_LIMIT_AUDITS"] == "20/minute"


def test_bad_tokens_are_limited_per_client_address(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    client = make_app(redis_server, redis_client, RATE_LIMIT_BAD_TOKENS="3/minute").test_client()
    created = client.post("/v1/games", json=TOY).json
    assert created is not None
    game, token = created["id"], created["seats"][0]["token"]
    for _ in range(5):  # a good token is never counted
        assert client.get(f"/v1/games/{game}", headers=bearer(token)).status_code == 200
    wrong = [
        client.get(f"/v1/games/{game}", headers=bearer("guess-1")),
        client.post(f"/v1/games/{game}/actions", json={"action": {"type": "ack"}}, headers=bearer("guess-2")),
        client.get(f"/v1/games/{game}/events/stream?ticket=guess-3"),
    ]
    assert [r.status_code for r in wrong] == [401, 401, 401]
    refused = send(client, openapi, "GET", f"/v1/games/{game}", headers=bearer("guess-4"))
    assert_rate_limited(refused, within=60)
    assert refused.json is not None and "refused tokens or tickets" in refused.json["detail"]
    assert_rate_limited(send(client, openapi, "GET", "/v1/stream", query_string={"ticket": "guess-5"}), within=60)
    tickets = {"seats": [{"game": game, "token": "guess-6"}]}  # tokens in the body
    assert_rate_limited(send(client, openapi, "POST", "/v1/stream-tickets", json=tickets), within=60)
    # good credentials from the same address are still served, and so is everything without one
    assert client.get(f"/v1/games/{game}", headers=bearer(token)).status_code == 200
    assert client.get(f"/v1/games/{game}").status_code == 200
    assert client.get(f"/v1/games/{game}/actions").status_code == 200  # no token: a spectator's, not counted
    assert client.get(f"/v1/games/{game}", headers=bearer("guess"), environ_base=ANOTHER).status_code == 401
    metrics = client.get("/metrics").get_data(as_text=True)  # what the metrics count is the answer sent
    assert 'route="/v1/games/<game_id>",status="429"' in metrics


def test_actions_are_limited_per_seat(redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI) -> None:
    client = make_app(redis_server, redis_client, RATE_LIMIT_ACTIONS="2/minute").test_client()
    created = client.post("/v1/games", json=TOY).json
    assert created is not None
    game, (ann, bob) = created["id"], [s["token"] for s in created["seats"]]
    path = f"/v1/games/{game}/actions"
    pick = {"action": {"type": "pick", "n": 3}}
    assert client.post(path, json=pick, headers=bearer(ann)).status_code == 201
    assert client.post(path, json=pick, headers=bearer(ann)).status_code == 403  # refused, but counted
    assert_rate_limited(send(client, openapi, "POST", path, json=pick, headers=bearer(ann)), within=60)
    assert client.post(path, json={"action": {"type": "pick", "n": 1}}, headers=bearer(bob)).status_code == 201
    # the seat, not the header's spelling: another case of "Bearer" and extra spaces are the same seat
    assert_rate_limited(client.post(path, json=pick, headers={"Authorization": f"bearer   {ann} "}), within=60)
    other = client.post("/v1/games", json=TOY).json
    assert other is not None  # the same person's seat in another game has a budget of its own
    mine = other["seats"][0]["token"]
    assert client.post(f"/v1/games/{other['id']}/actions", json=pick, headers=bearer(mine)).status_code == 201


def test_an_action_past_its_seats_limit_writes_nothing_and_costs_no_extra_round_trip(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    """The append counts the seat's window in its own round trip, and refuses to write past it."""
    client = make_app(redis_server, redis_client, RATE_LIMIT_ACTIONS="1/minute").test_client()
    created = client.post("/v1/games", json=TOY).json
    assert created is not None
    game, (ann, bob) = created["id"], [s["token"] for s in created["seats"]]
    path = f"/v1/games/{game}/actions"
    assert client.post(path, json={"action": {"type": "pick", "n": 1}}, headers=bearer(ann)).status_code == 201
    redis_client.config_resetstat()
    answer = client.post(path, json={"action": {"type": "pick", "n": 3}}, headers=bearer(bob))
    assert answer.status_code == 201 and answer.json is not None
    calls = {name.removeprefix("cmdstat_"): stat["calls"] for name, stat in redis_client.info("commandstats").items()}
    # one script call from the app, the append, which also counted bob's window (the commands a script
    # runs are counted too: INCR and EXPIRE are its counting, HGET its checks; no read came before it)
    assert calls["evalsha"] == 1 and calls["incr"] == 1 and calls["expire"] == 1
    assert not {"eval", "hmget", "xrange", "get"} & set(calls)
    legal = client.get(f"/v1/games/{game}/actions", headers=bearer(ann)).json
    assert legal is not None and legal["actions"] == [{"type": "ack"}]  # ann lost the round: she must ack
    refused = send(client, openapi, "POST", path, json={"action": {"type": "ack"}}, headers=bearer(ann))
    assert_rate_limited(refused, within=60)  # a legal action, past the limit
    view = client.get(f"/v1/games/{game}").json
    assert view is not None and view["version"] == answer.json["version"]  # nothing written


def test_an_action_that_could_not_be_counted_keeps_its_own_answer(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(redis_server, redis_client, RATE_LIMIT_ACTIONS="5/minute")
    client = app.test_client()
    created = client.post("/v1/games", json=TOY).json
    assert created is not None
    game, ann = created["id"], created["seats"][0]["token"]

    def down(*_args: Any) -> None:
        raise redis.ConnectionError("Redis went away")

    with app.app_context():
        monkeypatch.setattr(app.extensions["kifu"].store, "count", down)
    refused = client.post(f"/v1/games/{game}/actions", json={"action": {"type": "ack"}}, headers=bearer(ann))
    assert refused.status_code == 422  # the rules' refusal (no ack is due), uncounted: not a 5xx


def test_limits_hold_across_api_processes_sharing_redis(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    first = make_app(redis_server, redis_client, RATE_LIMIT_CREATE="2/minute").test_client()
    second = make_app(redis_server, redis.Redis(port=redis_server.port), RATE_LIMIT_CREATE="2/minute").test_client()
    assert first.post("/v1/games", json=TOY).status_code == 201
    assert second.post("/v1/games", json=TOY).status_code == 201
    assert_rate_limited(first.post("/v1/games", json=TOY), within=60)
    assert_rate_limited(second.post("/v1/games", json=TOY), within=60)


@pytest.mark.parametrize(("proxies", "separate"), [(0, False), (1, True)])
def test_the_client_address_behind_trusted_proxies(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, proxies: int, separate: bool
) -> None:
    """With KIFU_TRUSTED_PROXIES=1 the proxy's X-Forwarded-For names the client; without, anyone could
    write one, so it is ignored and every request counts against the connection's address."""
    app = make_app(redis_server, redis_client, RATE_LIMIT_CREATE="1/minute", TRUSTED_PROXIES=proxies)
    client = app.test_client()

    def create(forwarded_for: str) -> int:
        return client.post("/v1/games", json=TOY, headers={"X-Forwarded-For": forwarded_for}).status_code

    assert create("203.0.113.1") == 201
    assert create("203.0.113.2") == (201 if separate else 429)
    assert create("203.0.113.1") == 429


def test_limits_are_on_by_default_and_off_only_for_testing_apps(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    def app(**config: Any) -> FlaskClient:
        base: Mapping[str, Any] = {"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client}
        return create_app({**base, "SCHEDULER": NoScheduler(), "RATE_LIMIT_CREATE": "1/minute", **config}).test_client()

    served = app(TESTING=True)  # the test suite's apps: hundreds of games a second from one address
    assert [served.post("/v1/games", json=TOY).status_code for _ in range(3)] == [201] * 3
    redis_client.flushall()
    production = app()
    assert [production.post("/v1/games", json=TOY).status_code for _ in range(2)] == [201, 429]
    redis_client.flushall()
    off = app(RATE_LIMITS=False)  # KIFU_RATE_LIMITS=false
    assert [off.post("/v1/games", json=TOY).status_code for _ in range(3)] == [201] * 3
