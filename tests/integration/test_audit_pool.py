"""``POST /v1/audits`` verifies in a small pool of separate processes (``entrypoints/audit_pool.py``):
the report is ``verify_record``'s own, a full pool answers 503 with ``Retry-After``, a verification
past ``AUDIT_SECONDS`` is killed (422) and its process replaced, and so is one that dies.

Each app here is the real app (Flask's test client: no gevent, so the request's wait for its
verifier is a plain blocking one) on the session's real Redis, with a pool of its own. A verifier
is held busy by stopping its process (``SIGSTOP``) and let go with ``SIGCONT``: which request
finds the pool full is decided by the order of events (the pool's own count of admitted
verifications, waited for), never by how long anything takes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from openapi_core import OpenAPI
from werkzeug.test import TestResponse

import tests.support.toy_game  # noqa: F401  (registers "toy")
from adapters.embedded_redis import EmbeddedRedis
from bench.audit_stall import long_record
from domain.audit import verify_record
from entrypoints import gunicorn_conf
from entrypoints.api.audits import audit_pool
from tests.integration import test_limits
from tests.integration.test_limits import make_app, send
from tests.support.kifu_run import wait_until

TWO = [{"name": "ann"}, {"name": "bob"}]
openapi = test_limits.openapi  # the spec, to check answers against


def pool_app(redis_server: EmbeddedRedis, client: redis.Redis, **config: Any) -> Flask:
    return make_app(redis_server, client, RATE_LIMITS=False, **config)


def post(app: Flask, body: bytes) -> TestResponse:
    return app.test_client().post("/v1/audits", data=body, content_type="application/json")


def in_process(body: bytes) -> Any:
    """What ``verify_record`` reports in this process, as JSON carries it."""
    return json.loads(json.dumps(verify_record(json.loads(body))))


def small_record() -> bytes:
    return long_record(rounds=3)


def pid_of_the_verifier(app: Flask) -> int:
    pids = audit_pool(app).pids()
    assert len(pids) == 1, pids
    return pids[0]


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie not yet reaped counts: it runs nothing any more)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in {"Z", "X"}


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """The process ``pid`` stopped (it holds whatever it was given) until the block ends."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


class InThread:
    """A request sent from a thread of its own (it waits for a stopped verifier); its answer, later."""

    def __init__(self, send_it: Callable[[], TestResponse]) -> None:
        self.answer: TestResponse | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.send_it = send_it
        self.thread.start()

    def _run(self) -> None:
        self.answer = self.send_it()

    def result(self) -> TestResponse:
        self.thread.join(timeout=60)
        assert self.answer is not None, "the request was not answered"
        return self.answer


def test_the_report_is_verify_records_own(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    app = pool_app(redis_server, redis_client)
    client = app.test_client()
    created = client.post("/v1/games", json={"game": "toy", "players": TWO}).json
    assert created is not None
    running = client.get(f"/v1/games/{created['id']}/record").get_data()  # a game registered by the tests
    good = small_record()
    tampered = json.loads(good)
    tampered["events"][4]["hash"] = "0" * 64
    bodies = [good, json.dumps(tampered).encode(), running, b"[]", b'{"events": []}', b'"a record?"']
    for body in bodies:
        answer = post(app, body)
        assert answer.status_code == 200 and answer.json == in_process(body), body[:100]
    assert post(app, good).json == {**in_process(good), "verified": True}
    pid = pid_of_the_verifier(app)  # one process served them all, at a lower priority than this one
    assert os.getpriority(os.PRIO_PROCESS, pid) > os.getpriority(os.PRIO_PROCESS, 0)


@pytest.mark.parametrize(
    "body",
    [
        b"{nope",
        b'{"events": [], "events": []}',  # a key twice: two readers could see two records
        b'{"seed": NaN}',
        b'{"seed": 1e999}',
        b'{"seed": 9223372036854775808}',
        b"[" * 65 + b"]" * 65,
        b'{"seed": "\xff"}',  # not UTF-8
        b'{"seed": "\\ud800"}',  # a lone surrogate
        b"",
    ],
)
def test_a_body_that_is_not_strict_json_is_400(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI, body: bytes
) -> None:
    client = pool_app(redis_server, redis_client).test_client()
    answer = send(client, openapi, "POST", "/v1/audits", data=body, content_type="application/json")
    assert answer.status_code == 400 and answer.json is not None, answer.get_data(as_text=True)
    assert answer.json["type"] == "/problems/malformed-request"


def test_a_full_pool_answers_503_with_retry_after(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    app = pool_app(redis_server, redis_client, AUDIT_PROCESSES=1, AUDIT_QUEUE=1)
    body = small_record()
    assert post(app, body).status_code == 200  # the verifier is started
    pool = audit_pool(app)
    with stopped(pid_of_the_verifier(app)):
        running = InThread(lambda: post(app, body))  # given to the stopped verifier
        wait_until(lambda: pool.admitted == 1, "the first audit to be admitted")
        waiting = InThread(lambda: post(app, body))  # waits for the only verifier
        wait_until(lambda: pool.admitted == 2, "the second audit to be admitted")
        refused = send(app.test_client(), openapi, "POST", "/v1/audits", data=body, content_type="application/json")
        assert refused.status_code == 503 and refused.json is not None, refused.get_data(as_text=True)
        assert refused.json["type"] == "/problems/audits-busy" and int(refused.headers["Retry-After"]) >= 1
        assert refused.json["title"] == "Audits busy"
    for answer in (running.result(), waiting.result()):  # both served once the verifier goes on
        assert answer.status_code == 200 and answer.json == in_process(body)
    assert pool.admitted == 0
    assert post(app, body).status_code == 200


def test_a_verification_past_its_time_limit_is_killed_and_replaced(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI
) -> None:
    app = pool_app(redis_server, redis_client, AUDIT_PROCESSES=1, AUDIT_SECONDS=0.5)
    body = small_record()
    assert post(app, body).status_code == 200
    pid = pid_of_the_verifier(app)
    with stopped(pid):  # it will never answer: the limit is reached
        answer = send(app.test_client(), openapi, "POST", "/v1/audits", data=body, content_type="application/json")
    assert answer.status_code == 422 and answer.json is not None, answer.get_data(as_text=True)
    assert answer.json["type"] == "/problems/audit-too-long" and "0.5 s" in answer.json["detail"]
    assert gone(pid)
    again = post(app, body)
    assert again.status_code == 200 and again.json == in_process(body)
    assert pid_of_the_verifier(app) != pid


def test_a_verifier_that_dies_while_idle_is_replaced(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    app = pool_app(redis_server, redis_client, AUDIT_PROCESSES=1)
    body = small_record()
    assert post(app, body).status_code == 200
    pid = pid_of_the_verifier(app)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: gone(pid), "the verifier to die")
    answer = post(app, body)
    assert answer.status_code == 200 and answer.json == in_process(body)
    assert pid_of_the_verifier(app) != pid


def test_a_verifier_that_dies_while_verifying_is_replaced(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    app = pool_app(redis_server, redis_client, AUDIT_PROCESSES=1)
    body = small_record()
    assert post(app, body).status_code == 200
    pool, pid = audit_pool(app), pid_of_the_verifier(app)
    with stopped(pid):
        request = InThread(lambda: post(app, body))
        wait_until(lambda: pool.running == 1, "the record to be given to the verifier")
        os.kill(pid, signal.SIGKILL)
    failed = request.result()
    assert failed.status_code == 500 and failed.json is not None
    assert failed.json["type"] == "/problems/internal-error" and "verifier" in failed.json["detail"]
    answer = post(app, body)
    assert answer.status_code == 200 and answer.json == in_process(body)
    assert pid_of_the_verifier(app) != pid


def test_a_worker_that_exits_ends_its_verifiers(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> None:
    app = pool_app(redis_server, redis_client, AUDIT_PROCESSES=1)
    assert post(app, small_record()).status_code == 200
    pid = pid_of_the_verifier(app)
    gunicorn_conf.worker_exit(None, None)  # what gunicorn calls in a worker on its way out
    assert gone(pid) and not audit_pool(app).pids()
    refused = post(app, small_record())  # nothing is verified any more in this process
    assert refused.status_code == 503 and refused.json is not None
    assert refused.json["type"] == "/problems/audits-busy"


@pytest.mark.parametrize("setting", [{"AUDIT_PROCESSES": 0}, {"AUDIT_QUEUE": -1}, {"AUDIT_SECONDS": 0}])
def test_bad_pool_settings_stop_the_app_from_starting(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, setting: dict[str, int]
) -> None:
    with pytest.raises(ValueError, match="KIFU_AUDIT_"):
        pool_app(redis_server, redis_client, **setting)
