from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app
from service.ports import NoScheduler


@pytest.fixture
def app(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[Flask]:
    yield create_app({"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client, "TESTING": True})


@pytest.fixture
def quiet_app(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[Flask]:
    """An app whose service schedules no bot jobs (for tests that drive every seat)."""
    yield create_app(
        {"REDIS_URL": redis_server.url, "REDIS_CLIENT": redis_client, "SCHEDULER": NoScheduler(), "TESTING": True}
    )


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
