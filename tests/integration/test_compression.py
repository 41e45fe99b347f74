"""gzip of large answers (``entrypoints/api/compression.py``) on a real app and Redis.

A finished San Ban game gives a record, an event page and replays of several kilobytes;
each comes back gzip-encoded to a client that accepts gzip and decodes to exactly the
plain answer, and plain to one that does not. Server-Sent Events and small answers are
never compressed; every JSON answer varies on ``Accept-Encoding``.
"""

from __future__ import annotations

import gzip
import json
import random
from typing import Any

import pytest
from flask import Flask

from tests.support.api import Seat, create

GZIP = {"Accept-Encoding": "gzip"}
DECKS = [[f"sb-{i:03d}" for i in range(1, 6)], [f"sb-{i:03d}" for i in range(13, 18)]]


class Spectator(Seat):
    """A spectator that may send headers of its own."""

    def get(self, path: str = "", headers: dict[str, str] | None = None, **kw: Any) -> Any:
        return self.client.get(f"/v1/games/{self.game_id}{path}", headers=headers or {}, **kw)


@pytest.fixture
def finished(quiet_app: Flask) -> Spectator:
    """A spectator of a San Ban game played to its end (sealed) by random legal actions."""
    _game, (ann, bob, spectator) = create(
        quiet_app.test_client(), "san-ban", [{"name": "ann"}, {"name": "bob"}], deal={"first": 0, "decks": DECKS}
    )
    rnd = random.Random(5)
    while spectator.get().json["status"] == "active":
        actor = (ann, bob)[spectator.get().json["to_act"][0]]
        assert actor.act(rnd.choice(actor.get("/actions").json["actions"])).status_code == 201
    return Spectator(spectator.client, spectator.game_id, None)


@pytest.mark.parametrize("path", ["/record", "/events?limit=1000", "/replay?step=5"])
def test_a_large_answer_is_gzipped_for_a_client_that_accepts_it_and_decodes_to_the_plain_one(
    finished: Spectator, path: str
) -> None:
    plain = finished.get(path)
    zipped = finished.get(path, headers=GZIP)
    assert plain.status_code == zipped.status_code == 200
    assert len(plain.data) >= 1400  # large enough to be compressed
    assert "Content-Encoding" not in plain.headers
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert int(zipped.headers["Content-Length"]) == len(zipped.data) < len(plain.data) / 2
    assert json.loads(gzip.decompress(zipped.data)) == plain.json
    for answer in (plain, zipped):
        assert "Accept-Encoding" in answer.vary
        assert answer.mimetype == "application/json"


@pytest.mark.parametrize("accept", ["identity", "gzip;q=0", "br", "deflate"])
def test_no_gzip_unless_the_client_accepts_it(finished: Spectator, accept: str) -> None:
    answer = finished.get("/record", headers={"Accept-Encoding": accept})
    assert "Content-Encoding" not in answer.headers
    assert answer.json["events"] and "Accept-Encoding" in answer.vary


def test_a_wildcard_accepts_gzip(finished: Spectator) -> None:
    answer = finished.get("/record", headers={"Accept-Encoding": "br;q=1.0, *;q=0.5"})
    assert answer.headers["Content-Encoding"] == "gzip"


def test_server_sent_events_are_never_compressed(finished: Spectator) -> None:
    stream = finished.get("/events/stream", headers=GZIP)
    assert stream.status_code == 200 and stream.mimetype == "text/event-stream"
    assert "Content-Encoding" not in stream.headers
    body = stream.get_data(as_text=True)  # the stream of a sealed game ends at its seal
    assert body.startswith("retry: ") and "event: game_sealed" in body


def test_a_small_answer_is_not_compressed(finished: Spectator) -> None:
    for path in ("/actions", "/audit"):  # a spectator's actions (a few bytes), an audit report (~1 KB)
        answer = finished.get(path, headers=GZIP)
        assert answer.status_code == 200 and len(answer.data) < 1400, len(answer.data)
        assert "Content-Encoding" not in answer.headers
        assert "Accept-Encoding" in answer.vary


def test_a_problem_is_small_and_not_compressed(quiet_app: Flask) -> None:
    answer = quiet_app.test_client().get("/v1/games/nope", headers=GZIP)
    assert answer.status_code == 404 and answer.mimetype == "application/problem+json"
    assert "Content-Encoding" not in answer.headers and "Accept-Encoding" in answer.vary
