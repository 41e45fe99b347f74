"""POST /v1/audits with a tournament archive: verified in the audit pool by ``verify_archive``, with the
report ``GET /v1/tournaments/{tid}/audit`` answers, under the same limits as a game record.

The body's top-level ``format`` decides: ``kifu-tournament/1`` is an archive, anything else a game record
(as before). Every answer is checked against ``openapi.yaml`` (``send``). Verifiers are held busy by
stopping their process, as in ``test_audit_pool``: nothing here depends on how long anything takes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from openapi_core import OpenAPI
from werkzeug.test import TestResponse

from adapters.embedded_redis import EmbeddedRedis
from domain.audit import verify_record
from domain.tournament.archive import ARCHIVE_FORMAT, verify_archive
from entrypoints.api.audits import audit_pool
from tests.integration import test_limits
from tests.integration.test_audit_pool import InThread, gone, pid_of_the_verifier, stopped
from tests.integration.test_limits import assert_rate_limited, make_app, send
from tests.integration.test_tournaments import (
    bots,
    mutate_game_event,
    mutate_result,
    mutate_standing,
    run_to_end,
    started,
    work,
)
from tests.support.kifu_run import wait_until

Body = dict[str, Any]
TWO = [{"name": "ann"}, {"name": "bob"}]
openapi = test_limits.openapi  # the spec, to check answers against


@pytest.fixture
def finished(client: FlaskClient, redis_client: redis.Redis) -> tuple[str, Body]:
    """A finished bot swiss of 4 San Ban entrants over 2 rounds (4 games), and its archive."""
    tid, _made = started(client, {"game": "san-ban", "entrants": bots(4), "format": "swiss", "rounds": 2})
    run_to_end(client, redis_client, tid)
    return tid, client.get(f"/v1/tournaments/{tid}/record").json


def upload(client: FlaskClient, openapi: OpenAPI, body: Any) -> Body:
    """The report ``POST /v1/audits`` answers for ``body`` (200, and as the spec says)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = send(client, openapi, "POST", "/v1/audits", data=data, content_type="application/json")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    report: Body = answer.json
    return report


def offline(body: Any, client: FlaskClient) -> Body:
    """``kifu verify-tournament --keys`` of ``body``, as the server verifies an upload: against its keys."""
    return as_json(verify_archive(body, keys=client.get("/v1/keys").json, unsigned_ok=True))


def as_json(report: Body) -> Body:
    loaded: Body = json.loads(json.dumps(report))
    return loaded


def failing(report: Body) -> dict[str, str]:
    assert report["verdict"] == "failed" and report["verified"] is False, report
    return {c["name"]: c["detail"] for c in report["checks"] if not c["ok"]}


def test_a_finished_tournaments_archive_is_verified_as_its_stored_audit(
    client: FlaskClient, openapi: OpenAPI, finished: tuple[str, Body]
) -> None:
    tid, archive = finished
    report = upload(client, openapi, archive)
    assert report["verdict"] == "verified" and report["verified"] is True, report
    assert report["format"] == ARCHIVE_FORMAT and report["games"] == len(archive["games"]) == 4
    assert report == client.get(f"/v1/tournaments/{tid}/audit").json  # the stored tournament's own report
    assert report == offline(archive, client)  # and kifu verify-tournament --keys's
    assert [c["name"] for c in report["checks"]] == [
        "format", "tournament_chain", "header", "complete", "signature", "games", "transparency", "membership",
        "rules", "deals", "standings",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("forge", "check"), [(mutate_game_event, "games"), (mutate_standing, "standings"), (mutate_result, "rules")]
)
def test_a_forged_archive_fails_naming_the_failing_check(
    client: FlaskClient,
    openapi: OpenAPI,
    finished: tuple[str, Body],
    forge: Callable[[Body], str],
    check: str,
) -> None:
    forged = copy.deepcopy(finished[1])
    named = forge(forged)
    report = upload(client, openapi, forged)
    bad = failing(report)
    assert check in bad and named in bad[check], report
    assert report == offline(forged, client)


def test_an_archive_of_a_tournament_in_progress_is_in_progress(
    client: FlaskClient, openapi: OpenAPI, redis_client: redis.Redis
) -> None:
    tid, _made = started(client, {"game": "toy", "entrants": TWO, "format": "swiss"})
    work(redis_client)  # its first game starts
    archive = client.get(f"/v1/tournaments/{tid}/record").json
    assert archive["complete"] is False and len(archive["games"]) == 1
    report = upload(client, openapi, archive)
    assert report["verdict"] == "in_progress" and report["verified"] is False, report
    checks = {c["name"]: c["ok"] for c in report["checks"]}
    assert checks == {"format": True, "tournament_chain": True, "header": True, "complete": False, "signature": True}
    assert set(report) == set(client.get(f"/v1/tournaments/{tid}/audit").json)  # the same report's shape


def test_a_game_record_is_still_verified_as_a_game_record(
    client: FlaskClient, openapi: OpenAPI, finished: tuple[str, Body]
) -> None:
    record = finished[1]["games"][0]
    report = upload(client, openapi, record)
    assert report["verdict"] == "verified" and report["sealed"] is True and report["format"] == record["format"]
    assert report == as_json(verify_record(record, keys=client.get("/v1/keys").json))
    tampered = copy.deepcopy(record)
    tampered["events"][2]["hash"] = "0" * 64
    assert upload(client, openapi, tampered)["first_bad_event"] == 3


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"format": ARCHIVE_FORMAT}, "archive"),  # an archive with nothing in it
        ({"format": ARCHIVE_FORMAT, "tournament": {"events": []}, "games": []}, "archive"),
        ({"format": "kifu-tournament/2", "tournament": {}, "games": []}, "record"),  # not this archive format
        ({"tournament": {}, "games": []}, "record"),
        ([ARCHIVE_FORMAT], "record"),
    ],
)
def test_the_top_level_format_alone_decides_what_a_body_is(
    client: FlaskClient, openapi: OpenAPI, body: Any, kind: str
) -> None:
    report = upload(client, openapi, body)
    assert failing(report) == {"format": report["checks"][0]["detail"]}
    if kind == "archive":
        assert report["format"] == ARCHIVE_FORMAT and "games" in report and "sealed" not in report
        assert report == offline(body, client)
    else:
        assert "sealed" in report and "games" not in report
        assert report == as_json(verify_record(body))


# -- the same limits as a record -------------------------------------------------------------------


def archive_bytes(archive: Body) -> bytes:
    return json.dumps(archive).encode()


def post(app: Flask, openapi: OpenAPI, body: bytes) -> TestResponse:
    return send(app.test_client(), openapi, "POST", "/v1/audits", data=body, content_type="application/json")


def answered(response: TestResponse) -> Body:
    """The JSON of an answer (a report or a problem)."""
    body: Body | None = response.json
    assert body is not None, response.get_data(as_text=True)
    return body


def test_an_archive_over_the_record_limit_is_413_and_a_cut_one_400(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI, finished: tuple[str, Body]
) -> None:
    body = archive_bytes(finished[1])
    app = make_app(redis_server, redis_client, RATE_LIMITS=False, MAX_RECORD_BYTES=len(body) - 1)
    too_large = post(app, openapi, body)
    assert too_large.status_code == 413 and answered(too_large)["type"] == "/problems/payload-too-large"
    cut = post(app, openapi, body[: len(body) // 2])
    assert cut.status_code == 400 and answered(cut)["type"] == "/problems/malformed-request"
    roomy = make_app(redis_server, redis_client, RATE_LIMITS=False, MAX_RECORD_BYTES=len(body))
    assert answered(post(roomy, openapi, body))["verified"] is True  # exactly at the limit: verified


def test_archives_count_towards_the_audit_rate_limit(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI, finished: tuple[str, Body]
) -> None:
    body = archive_bytes(finished[1])
    app = make_app(redis_server, redis_client, RATE_LIMIT_AUDITS="2/minute")
    assert answered(post(app, openapi, body))["verified"] is True
    assert answered(post(app, openapi, archive_bytes(finished[1]["games"][0])))["verified"] is True  # a record too
    assert_rate_limited(post(app, openapi, body), within=60)


def test_an_archive_waits_for_a_busy_pool_or_is_refused_and_is_killed_past_the_time_limit(
    redis_server: EmbeddedRedis, redis_client: redis.Redis, openapi: OpenAPI, finished: tuple[str, Body]
) -> None:
    body = archive_bytes(finished[1])
    app = make_app(redis_server, redis_client, RATE_LIMITS=False, AUDIT_PROCESSES=1, AUDIT_QUEUE=0, AUDIT_SECONDS=2)
    assert post(app, openapi, body).status_code == 200  # the verifier is started
    pool, pid = audit_pool(app), pid_of_the_verifier(app)
    with stopped(pid):  # it holds the next archive and never answers: the limit is reached
        held = InThread(lambda: post(app, openapi, body))
        wait_until(lambda: pool.admitted == 1, "the archive to be admitted")
        busy = post(app, openapi, body)
        assert busy.status_code == 503 and answered(busy)["type"] == "/problems/audits-busy"
        assert int(busy.headers["Retry-After"]) >= 1
        too_long = held.result()
    assert too_long.status_code == 422 and answered(too_long)["type"] == "/problems/audit-too-long"
    assert "2 s" in answered(too_long)["detail"] and gone(pid)
    again = post(app, openapi, body)
    assert again.status_code == 200 and answered(again) == offline(finished[1], app.test_client())
    assert pid_of_the_verifier(app) != pid
