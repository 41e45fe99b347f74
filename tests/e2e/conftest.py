"""A real HTTP server (werkzeug, threaded) around the app, on a free port; with or without the RQ queue."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from rq import Queue, SimpleWorker

import tests.support.toy_game  # noqa: F401
from adapters.embedded_redis import EmbeddedRedis
from adapters.rq_scheduler import QUEUE_NAME
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


@pytest.fixture
def bot_server(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    """The API over HTTP with the real RQ scheduler (jobs run by ``work`` in the test)."""
    app = create_app({"REDIS_URL": redis_server.url})
    with serving(app) as url:
        yield url


def work(client: redis.Redis) -> None:
    """Run every queued job (bot turns, tournament steps) until the queue is empty."""
    SimpleWorker([Queue(QUEUE_NAME, connection=client)], connection=client).work(burst=True)
