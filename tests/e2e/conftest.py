"""A real HTTP server (werkzeug, threaded) around the app, on a free port."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis
from werkzeug.serving import make_server

import tests.support.toy_game  # noqa: F401
from service.api import create_app
from service.games import NoScheduler
from service.redis_server import EmbeddedRedis, free_port


@pytest.fixture
def base_url(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    app = create_app({"REDIS_URL": redis_server.url, "SECRET": "e2e", "SCHEDULER": NoScheduler(),
                      "SSE_HEARTBEAT_SECONDS": 0.2, "SSE_MAX_SECONDS": 30})
    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    server.shutdown()
    thread.join()
