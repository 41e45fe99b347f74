"""A real HTTP server (werkzeug, threaded) around the app, on a free port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

import tests.support.toy_game  # noqa: F401
from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app
from service.ports import NoScheduler
from tests.support.http import serving


@pytest.fixture
def base_url(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    app = create_app(
        {"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), "SSE_HEARTBEAT_SECONDS": 0.2, "SSE_MAX_SECONDS": 30}
    )
    with serving(app) as url:
        yield url
