"""Request input that is no Unicode text, or no ASCII number, is refused before anything happens (issue 19).

``"\\ud800"`` is valid JSON text but no UTF-8 string: nothing can hash or store
it. Every write path refuses it (and raw CESU-8, and bodies that are not UTF-8)
as a malformed body, 400, with nothing written first. Query integers take ASCII
digits only (Python's ``int`` also reads Arabic-Indic or fullwidth digits).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from bootstrap import build

Body = dict[str, Any]
LONE = "\ud800"  # json.dumps writes it as the JSON text "\ud800"
TWO = [{"name": "ann"}, {"name": "bob"}]
DECK = [f"sb-{i:03d}" for i in range(1, 6)]
INLINE = {"id": LONE, "top": 1, "right": 1, "bottom": 1, "left": 1}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class World:
    """A game with an open seat, and a running swiss of two humans with its first game."""

    client: FlaskClient
    redis: redis.Redis
    game: str  # toy game, seat 1 open
    ann: str  # the token of its seat 0
    tid: str
    organiser: str
    tournament_game: str


@pytest.fixture
def world(quiet_app: Flask, redis_client: redis.Redis) -> World:
    client = quiet_app.test_client()
    created = client.post("/v1/games", json={"game": "toy", "players": [{"name": "ann"}, {"open": True}]})
    assert created.status_code == 201, created.json
    body = {"game": "san-ban", "entrants": TWO, "format": "swiss"}
    made = client.post("/v1/tournaments", json=body)
    assert made.status_code == 201, made.json
    tid, organiser = made.json["id"], made.json["organiser_token"]
    assert client.post(f"/v1/tournaments/{tid}/start", headers=bearer(organiser)).status_code == 200
    build(redis_client).tournaments.advance(tid)
    game = client.get(f"/v1/tournaments/{tid}").json["tables"][0]["game"]
    assert game is not None
    ann = created.json["seats"][0]["token"]
    return World(client, redis_client, created.json["id"], ann, tid, organiser, game)


def stored(rc: redis.Redis) -> dict[Any, Any]:
    """Everything the service keeps (logs, heads, metas, idempotency records, feeds, tickets, projections)
    but the request counters, which count refused requests too."""
    read: dict[Any, Callable[[Any], Any]] = {
        b"string": rc.get,
        b"hash": rc.hgetall,
        b"stream": rc.xrange,
        b"zset": lambda k: rc.zrange(k, 0, -1, withscores=True),
        b"set": rc.smembers,
        b"list": lambda k: rc.lrange(k, 0, -1),
    }
    return {key: read[rc.type(key)](key) for key in sorted(rc.keys("*")) if b"metrics" not in key}


# Every write path that takes a string from the body: its path, body and headers in a world, and what
# the same request answers with the surrogate replaced by "x" (taken, or refused for another reason)
Write = Callable[[World], tuple[str, Body, dict[str, str], int]]
WRITES: dict[str, Write] = {
    "player name": lambda w: ("/v1/games", {"game": "toy", "players": [{"name": LONE}, {"name": "b"}]}, {}, 201),
    "fixed deal card": lambda w: (
        "/v1/games",
        {"game": "san-ban", "players": TWO, "deal": {"first": 0, "decks": [[*DECK[:4], INLINE], DECK]}},
        {},
        201,
    ),
    "deck option card": lambda w: (
        "/v1/games",
        {"game": "san-ban", "players": TWO, "options": {"deck": [*DECK[:4], INLINE]}},
        {},
        201,
    ),
    "join name": lambda w: (f"/v1/games/{w.game}/seats/1/join", {"name": LONE}, {}, 201),
    "entrant name": lambda w: (
        "/v1/tournaments",
        {"game": "san-ban", "entrants": [{"name": LONE}, {"name": "b"}], "format": "swiss"},
        {},
        201,
    ),
    "pause reason": lambda w: (f"/v1/tournaments/{w.tid}/pause", {"reason": LONE}, bearer(w.organiser), 200),
    "withdraw reason": lambda w: (
        f"/v1/tournaments/{w.tid}/entrants/1/withdraw",
        {"reason": LONE},
        bearer(w.organiser),
        200,
    ),
    "forfeit reason": lambda w: (
        f"/v1/tournaments/{w.tid}/games/{w.tournament_game}/forfeit",
        {"seat": 0, "reason": LONE},
        bearer(w.organiser),
        200,
    ),
    "tournament deal card": lambda w: (
        "/v1/tournaments",
        {
            "game": "san-ban",
            "entrants": [{"name": n} for n in "abcd"],
            "format": "duplicate",
            "rounds": 1,
            "deals": [{"first": 0, "decks": [[*DECK[:4], INLINE], DECK]}],
        },
        {},
        201,
    ),
    "action": lambda w: (f"/v1/games/{w.game}/actions", {"action": {"type": LONE}}, bearer(w.ann), 422),
    "player ticket": lambda w: ("/v1/stream-tickets", {"seats": [{"game": w.game, "token": LONE}]}, {}, 401),
    "key": lambda w: ("/v1/games", {"game": "toy", "players": TWO, LONE: 1}, {}, 422),
}


def assert_malformed(r: Any) -> None:
    assert r.status_code == 400, (r.status_code, r.json)
    assert r.content_type == "application/problem+json" and r.json["type"] == "/problems/malformed-request"


@pytest.mark.parametrize("name", list(WRITES))
def test_a_lone_surrogate_is_a_400_and_nothing_is_written(world: World, name: str) -> None:
    path, body, headers, clean = WRITES[name](world)
    text = json.dumps(body)
    assert "\\ud800" in text and text.isascii()  # valid JSON text, as a client sends it
    versions = {g: world.client.get(f"/v1/games/{g}").json["version"] for g in (world.game, world.tournament_game)}
    log = world.client.get(f"/v1/tournaments/{world.tid}/events").json["items"]
    before = stored(world.redis)
    r = world.client.post(path, data=text, content_type="application/json", headers=headers)
    assert_malformed(r)
    assert "surrogate" in r.json["detail"]
    assert stored(world.redis) == before  # nothing half done: no game, no resignation, no log entry
    assert {g: world.client.get(f"/v1/games/{g}").json["version"] for g in versions} == versions
    assert world.client.get(f"/v1/tournaments/{world.tid}/events").json["items"] == log
    text = json.dumps(body).replace("\\ud800", "x")  # the same request with a real string
    r = world.client.post(path, data=text, content_type="application/json", headers=headers)
    assert r.status_code == clean, r.json


def test_raw_cesu8_bytes_are_a_400(world: World) -> None:
    """The surrogate's three bytes (CESU-8, "modified UTF-8") are no UTF-8: refused, not guessed at."""
    before = stored(world.redis)
    for raw in (b"\xed\xa0\x80", b"\xed\xa0\xbd\xed\xb8\x80"):  # lone; and a CESU-8 pair (U+1F600)
        body = b'{"game": "toy", "players": [{"name": "' + raw + b'"}, {"name": "b"}]}'
        r = world.client.post("/v1/games", data=body, content_type="application/json")
        assert_malformed(r)
        assert "UTF-8" in r.json["detail"]
        path = f"/v1/tournaments/{world.tid}/games/{world.tournament_game}/forfeit"
        body = b'{"seat": 0, "reason": "' + raw + b'"}'
        assert_malformed(
            world.client.post(path, data=body, content_type="application/json", headers=bearer(world.organiser))
        )
    assert stored(world.redis) == before


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig", "latin-1"])
def test_a_body_that_is_not_utf8_is_a_400(world: World, encoding: str) -> None:
    before = stored(world.redis)
    body = json.dumps({"game": "toy", "players": [{"name": "zoë"}, {"name": "b"}]}, ensure_ascii=False)
    r = world.client.post("/v1/games", data=body.encode(encoding), content_type="application/json")
    assert_malformed(r)
    assert stored(world.redis) == before
    ok = world.client.post("/v1/games", data=body.encode(), content_type="application/json")
    assert ok.status_code == 201 and ok.json["seats"][0]["name"] == "zoë"


@pytest.mark.parametrize("digits", ["١", "３", "٣", "1١", "१०"])  # Arabic-Indic, fullwidth, Devanagari
def test_query_integers_take_ascii_digits_only(world: World, digits: str) -> None:
    game, tid = world.game, world.tid
    queries = [
        f"/v1/games?limit={digits}",
        f"/v1/games?cursor={digits * 13}:g",
        f"/v1/games/{game}/events?after={digits}",
        f"/v1/games/{game}/events?cursor={digits}",
        f"/v1/games/{game}/events?limit={digits}",
        f"/v1/games/{game}/events/stream?after={digits}",
        f"/v1/games/{game}/events/stream?cursor={digits}",
        f"/v1/games/{game}/replay?step={digits}",
        f"/v1/games/{game}/replay?step=1&as={digits}",
        f"/v1/tournaments/{tid}/games?limit={digits}",
        f"/v1/tournaments/{tid}/games?cursor={digits}",
        f"/v1/tournaments/{tid}/events?after={digits}",
        f"/v1/tournaments/{tid}/events?limit={digits}",
        f"/v1/tournaments/{tid}/events/stream?after={digits}",
        f"/v1/tournaments/{tid}/events/stream?cursor={digits}",
    ]
    for url in queries:
        name = url.split("?")[1].split("=")[0] if "&" not in url else "as"
        bad = world.client.get(url.replace(digits, "x"))  # what any other bad integer gets
        r = world.client.get(url)
        assert r.status_code == bad.status_code == 422, (url, r.status_code, bad.status_code)
        assert r.json["type"] == bad.json["type"] == "/problems/invalid-request" and name in r.json["errors"], url
    for url in (f"/v1/games/{game}/replay?step=1&as=0", "/v1/games?limit=5", f"/v1/games/{game}/events?after=%2B1"):
        assert world.client.get(url, headers=bearer(world.ann)).status_code == 200, url  # ASCII digits, a sign


@pytest.mark.parametrize("digits", ["١", "１"])  # Arabic-Indic one, fullwidth one
def test_path_integers_take_ascii_digits_only(world: World, digits: str) -> None:
    """``<int:seat>`` read "١" as seat 1: a path with other digits names no resource."""
    before = stored(world.redis)
    r = world.client.post(f"/v1/games/{world.game}/seats/{digits}/join", json={"name": "cid"})
    assert r.status_code == 404 and r.content_type == "application/problem+json"
    r = world.client.post(f"/v1/tournaments/{world.tid}/entrants/{digits}/withdraw", headers=bearer(world.organiser))
    assert r.status_code == 404
    assert stored(world.redis) == before


def test_a_repeated_key_is_a_400_and_the_other_refusals_keep_their_messages(world: World) -> None:
    """Python keeps the last of two equal keys, another reader the first: the body means two things."""
    before = stored(world.redis)
    r = world.client.post(
        "/v1/games", data='{"game": "toy", "game": "chess", "players": []}', content_type="application/json"
    )
    assert_malformed(r)
    assert "'game' appears twice" in r.json["detail"]
    deep = world.client.post("/v1/games", data="[" * 65 + "]" * 65, content_type="application/json")
    assert_malformed(deep)
    assert deep.json["detail"] == "the body is nested deeper than 64 levels"
    nan = world.client.post("/v1/games", data='{"game": NaN}', content_type="application/json")
    assert_malformed(nan)
    assert nan.json["detail"].startswith("the body is not valid JSON (numbers must be finite, integers 64-bit)")
    assert stored(world.redis) == before
