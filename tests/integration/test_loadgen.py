"""The load generator of ``bench.compare`` counts what the servers did.

Two real HTTP servers (werkzeug, threaded, keep-alive) around two instances of
the API app on one Redis, as ``bench.compare`` runs two single-worker servers:
each app has its own table cache, so in ``pair`` mode the seats of a game are
served by two apps that do not share what they have seen. The load generator
runs for about a second in each shape; afterwards every game it created must be
finished, and the actions it counted must be exactly the actions in the logs.
Nothing here depends on how fast anything is.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import redis
import requests

from adapters.embedded_redis import EmbeddedRedis
from adapters.redis_store import EventStore
from bench import noop_app
from bench.loadgen import MOVES, Mode, run
from entrypoints.api import create_app
from service.ports import NoScheduler
from tests.support.http import serving


@pytest.fixture
def two_apis(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[tuple[str, str]]:
    config = {"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler(), "RATE_LIMITS": False}
    with ExitStack() as stack:
        a = stack.enter_context(serving(create_app(config), keep_alive=True))
        b = stack.enter_context(serving(create_app(config), keep_alive=True))
        yield a, b


def types_of(envelopes: Iterable[dict[str, Any]]) -> Counter[str]:
    return Counter(env["type"] for env in envelopes)


@pytest.mark.parametrize("mode", ["game", "pair"])
def test_actions_counted_are_the_actions_logged(
    mode: Mode, two_apis: tuple[str, str], redis_client: redis.Redis
) -> None:
    result = asyncio.run(run(mode, two_apis, clients=4, seconds=1.0, warmup=0.2))

    assert result.total_failures == Counter()
    assert result.unfinished_clients == 0
    assert result.total_creates == len(result.games) == len(set(result.games)) > 0
    assert result.finished_games == result.total_creates  # every game played to its end
    assert result.total_count == MOVES * result.finished_games
    assert 0 < result.count <= result.total_count  # the window's share of the run
    assert len(result.latencies_ms) == result.count

    store = EventStore(redis_client)
    logged = 0
    for game in result.games:
        log = store.read(game)
        assert store.head(game).version == len(log) == log[-1]["seq"]
        kinds = types_of(log)
        assert kinds["game_ended"] == 1
        logged += kinds["action_taken"]
    assert logged == result.total_count

    answer = requests.get(f"{two_apis[1]}/v1/games/{result.games[-1]}", timeout=10).json()
    assert answer["status"] == "finished"
    assert answer["version"] == store.head(result.games[-1]).version


def test_noop_requests_counted_are_the_requests_served() -> None:
    served = Counter[int]()
    lock = threading.Lock()

    def counting(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            with lock:
                served[int(status[:3])] += 1
            return start_response(status, headers, *exc)

        return noop_app.app.wsgi_app(environ, start)

    with serving(counting, keep_alive=True) as a, serving(counting, keep_alive=True) as b:
        result = asyncio.run(run("noop", (a, b), clients=4, seconds=1.0, warmup=0.2))

    assert result.total_failures == Counter()
    assert result.unfinished_clients == 0
    assert served == Counter({201: result.total_count})
    assert 0 < result.count <= result.total_count
