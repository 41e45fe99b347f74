"""A real HTTP server (werkzeug, threaded) around the app, on a free port; with or without the RQ queue."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from playwright.sync_api import Browser, Page
from rq import Queue, SimpleWorker

import tests.support.toy_game  # noqa: F401
from adapters.embedded_redis import EmbeddedRedis, free_port
from adapters.rq_scheduler import QUEUE_NAME
from entrypoints.api import create_app
from service.ports import NoScheduler
from tests.support.browser import Console, chromium
from tests.support.http import serving
from tests.support.kifu_run import ready, start_kifu_run, stop_kifu_run, wait_until


@pytest.fixture
def base_url(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    app = create_app(
        {"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), "SSE_HEARTBEAT_SECONDS": 0.2, "SSE_MAX_SECONDS": 30}
    )
    with serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, for one test module (tests/support/browser.py)."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, Console]]:
    """A fresh page of the module's Chromium (1280 x 900) and its console; no console error may be logged."""
    opened = browser.new_page(viewport={"width": 1280, "height": 900})
    console = Console(opened)
    yield opened, console
    opened.close()
    assert console.errors == []


@pytest.fixture
def tab(page: tuple[Page, Console]) -> tuple[Page, Console]:
    """The same as ``page``, by another name."""
    return page


@pytest.fixture
def web(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    """The app (API and web pages) over real HTTP, every seat human (nothing moves behind the test's back)."""
    app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), "SSE_HEARTBEAT_SECONDS": 0.5})
    with serving(app) as url:
        yield url


@pytest.fixture
def short_streams_url(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    """The API with tickets that open streams for 1 s and streams that last 1 s (issue 20's streams tests)."""
    settings = {"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), "SSE_HEARTBEAT_SECONDS": 0.2}
    app = create_app({**settings, "SSE_MAX_SECONDS": 1, "STREAM_TICKET_SECONDS": 1})
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


@pytest.fixture
def kifu_run(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A real ``kifu run`` (its data in ``tmp_path``): its base URL and process."""
    port = free_port()
    proc = start_kifu_run(tmp_path, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: ready(base), "readyz")
        yield base, proc
    finally:
        stop_kifu_run(proc, tmp_path)
