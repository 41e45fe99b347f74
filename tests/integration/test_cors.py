"""CORS: off by default; configured origins get preflights answered and the headers they need."""

from __future__ import annotations

import pytest
import redis
from flask import Flask
from werkzeug.test import TestResponse

from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app
from entrypoints.api.cors import origins
from service.ports import NoScheduler

ALLOWED = "https://play.example"


def app_with(redis_server: EmbeddedRedis, client: redis.Redis, cors: object) -> Flask:
    return create_app(
        {
            "REDIS_URL": redis_server.url,
            "REDIS_CLIENT": client,
            "SCHEDULER": NoScheduler(),
            "TESTING": True,
            "CORS_ORIGINS": cors,
        }
    )


def preflight(app: Flask, origin: str) -> TestResponse:
    return app.test_client().options(
        "/v1/games/g1/actions",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Authorization, Content-Type, Idempotency-Key",
        },
    )


def test_no_origin_is_allowed_by_default(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    app = app_with(redis_server, redis_client, "")
    r = preflight(app, ALLOWED)
    assert "Access-Control-Allow-Origin" not in r.headers
    assert (
        "Access-Control-Allow-Origin" not in app.test_client().get("/v1/catalog", headers={"Origin": ALLOWED}).headers
    )


def test_a_configured_origin_gets_its_preflight_answered(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    app = app_with(redis_server, redis_client, f"{ALLOWED}, https://other.example")
    r = preflight(app, ALLOWED)
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == ALLOWED
    allowed = {h.strip().lower() for h in r.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type", "idempotency-key"} <= allowed
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    created = app.test_client().post(
        "/v1/games",
        json={"game": "toy", "players": [{"name": "a"}, {"name": "b"}]},
        headers={"Origin": ALLOWED, "Idempotency-Key": "k"},
    )
    assert created.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "Idempotent-Replayed" in created.headers["Access-Control-Expose-Headers"]
    error = app.test_client().get("/v1/games/nope", headers={"Origin": ALLOWED})
    assert error.status_code == 404 and error.headers["Access-Control-Allow-Origin"] == ALLOWED  # errors too


def test_an_origin_not_configured_gets_no_cors_header(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    app = app_with(redis_server, redis_client, ALLOWED)
    r = preflight(app, "https://evil.example")
    assert "Access-Control-Allow-Origin" not in r.headers


@pytest.mark.parametrize(
    "setting, expected",
    [
        ("", []),
        ("*", ["*"]),
        ("https://a.example/, https://b.example", ["https://a.example", "https://b.example"]),
        (["https://a.example"], ["https://a.example"]),
        (None, []),
    ],
)
def test_origins_setting(setting: object, expected: list[str]) -> None:
    assert origins(setting) == expected
