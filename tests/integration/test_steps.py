"""``GET /v1/games/{id}/steps``: every step's replay in pages, the same as ``replay?step=K`` for each K.

Games of each of the five games are played to the end through the API (the Flask test client on the
session's real Redis; every seat human, each action one of its legal ones, chosen by a seeded random):
every item of every page, as the spectator and as each seat, must be what ``replay?step=K&as=S``
answers for its step, and the pages (``next``) must cover every step once. While a game runs the
visibility rules are replay's (your own seat only); the bounds of ``from`` and ``limit`` are 422; and
the server folds the log once per page, event by event (a spy counts ``engine.evolve``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
import pytest
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from domain import engine
from tests.support.spec import load_spec

MAX_ACTIONS = 600  # every game below ends well before


@dataclass(frozen=True)
class Played:
    """A game played through the API: its id, its seats' tokens and its last step."""

    id: str
    tokens: list[str]
    last: int


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def play(client: FlaskClient, game: str, seats: int, options: Mapping[str, Any], seed: int, actions: int) -> Played:
    """Create ``game`` with ``seats`` humans and play up to ``actions`` random legal actions (to its end)."""
    players = [{"name": f"p{i}"} for i in range(seats)]
    created = client.post("/v1/games", json={"game": game, "players": players, "options": dict(options)})
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    game_id, tokens = body["id"], [s["token"] for s in body["seats"]]
    rnd = random.Random(seed)
    for _ in range(actions):
        view = client.get(f"/v1/games/{game_id}").get_json()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        legal = client.get(f"/v1/games/{game_id}/actions", headers=auth(tokens[seat])).get_json()["actions"]
        answer = client.post(
            f"/v1/games/{game_id}/actions", json={"action": rnd.choice(legal)}, headers=auth(tokens[seat])
        )
        assert answer.status_code == 201, answer.get_json()
    last = client.get(f"/v1/games/{game_id}").get_json()["version"]
    return Played(game_id, tokens, last)


def pages(
    client: FlaskClient, game_id: str, limit: int, as_seat: int | None = None, token: str | None = None
) -> Iterator[dict[str, Any]]:
    """Every page of ``steps`` from step 1, following ``next`` (as ``cursor``)."""
    query: dict[str, Any] = {"limit": limit, **({"as": as_seat} if as_seat is not None else {})}
    answer = client.get(f"/v1/games/{game_id}/steps", query_string=query, headers=auth(token))
    while True:
        assert answer.status_code == 200, answer.get_json()
        page = answer.get_json()
        yield page
        if page["next"] is None:
            return
        query["cursor"] = page["next"]
        answer = client.get(f"/v1/games/{game_id}/steps", query_string=query, headers=auth(token))


def replays(
    client: FlaskClient, game_id: str, last: int, as_seat: int | None = None, token: str | None = None
) -> list[dict[str, Any]]:
    """``replay?step=K`` for every K, as ``steps`` items are (without ``last``)."""
    seen = []
    for step in range(1, last + 1):
        query = {"step": step, **({"as": as_seat} if as_seat is not None else {})}
        answer = client.get(f"/v1/games/{game_id}/replay", query_string=query, headers=auth(token))
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        assert body.pop("last") == last
        seen.append(body)
    return seen


STEPS = {**load_spec(), "$ref": "#/components/schemas/Steps"}
STEPS_FAST = jsonschema_rs.Draft202012Validator(STEPS, validate_formats=True)  # every page, in milliseconds
STEPS_SCHEMA = Draft202012Validator(STEPS, format_checker=Draft202012Validator.FORMAT_CHECKER)  # names the field


def validate_steps(page: Any) -> None:
    """``page`` against the spec's ``Steps`` (jsonschema_rs; on failure jsonschema says which field)."""
    if not STEPS_FAST.is_valid(page):
        STEPS_SCHEMA.validate(page)
        raise AssertionError("jsonschema_rs refused a page that jsonschema takes")


GAMES = [  # (game, seats, options, limit of a page): pages of several sizes, one of them the whole game
    ("san-ban", 2, {"mode": "advanced", "move_timeout_s": 3600}, 7),  # timed: each step's deadlines
    ("nin-nal", 3, {}, 50),
    ("kiri-ai", 2, {"max_rounds": 4}, 1000),
    ("san-ni-ichi", 3, {}, 33),
    ("front-line", 2, {}, 64),
]


@pytest.mark.slow
@pytest.mark.parametrize(("game", "seats", "options", "limit"), GAMES, ids=[g[0] for g in GAMES])
def test_every_step_is_the_replay_of_that_step(
    quiet_app: Flask, game: str, seats: int, options: dict[str, Any], limit: int
) -> None:
    client = quiet_app.test_client()
    played = play(client, game, seats, options, seed=len(game), actions=MAX_ACTIONS)
    assert client.get(f"/v1/games/{played.id}").get_json()["status"] == "finished"
    viewers: list[tuple[int | None, str | None]] = [(None, None), *((s, None) for s in range(seats))]
    viewers.append((0, played.tokens[1]))  # once sealed, any caller may see any seat: seat 0's steps
    seen: dict[int | None, list[dict[str, Any]]] = {}
    for as_seat, token in viewers:
        walked = list(pages(client, played.id, limit, as_seat, token))
        for page in walked:
            validate_steps(page)
            assert page["last"] == played.last
            assert page["first"] == page["items"][0]["step"]
        items = [item for page in walked for item in page["items"]]
        assert [item["step"] for item in items] == list(range(1, played.last + 1))  # each step once, in order
        assert len(walked) == -(-played.last // limit)
        if token is None:
            assert items == replays(client, played.id, played.last, as_seat), (game, as_seat)
            seen[as_seat] = items
        else:  # the same answers as seat 0's own (each of those was compared with its replay above)
            assert items == seen[as_seat], (game, as_seat, "with another seat's token")
        if "move_timeout_s" in options:  # the steps of a human's turn show its deadline, as replay's do
            assert any(any(item["view"]["deadlines"]) for item in items)


def test_a_page_from_the_middle_is_the_same_steps(quiet_app: Flask) -> None:
    client = quiet_app.test_client()
    played = play(client, "nin-nal", 2, {}, seed=3, actions=MAX_ACTIONS)
    whole = client.get(f"/v1/games/{played.id}/steps", query_string={"limit": 1000}).get_json()
    assert whole["next"] is None and len(whole["items"]) == played.last
    middle = client.get(f"/v1/games/{played.id}/steps", query_string={"from": 5, "limit": 4}).get_json()
    assert middle == {"first": 5, "last": played.last, "items": whole["items"][4:8], "next": 9}
    tail = client.get(f"/v1/games/{played.id}/steps", query_string={"from": played.last}).get_json()
    assert tail == {"first": played.last, "last": played.last, "items": whole["items"][-1:], "next": None}
    by_default = client.get(f"/v1/games/{played.id}/steps").get_json()  # from 1, 200 steps
    assert by_default["first"] == 1 and by_default["items"] == whole["items"][:200]


def test_while_the_game_runs_only_your_own_seat(quiet_app: Flask) -> None:
    client = quiet_app.test_client()
    played = play(client, "san-ban", 2, {"mode": "gamer"}, seed=1, actions=3)
    url = f"/v1/games/{played.id}/steps"
    assert client.get(f"/v1/games/{played.id}").get_json()["status"] == "active"
    spectator = client.get(url, query_string={"limit": 1000}).get_json()
    assert spectator["items"] == replays(client, played.id, played.last)
    as_seat_0 = client.get(url, query_string={"as": 0}, headers=auth(played.tokens[0]))
    assert as_seat_0.status_code == 200
    assert as_seat_0.get_json()["items"] == replays(client, played.id, played.last, 0, played.tokens[0])
    assert as_seat_0.get_json()["items"] != spectator["items"]  # gamer mode hides the hands from spectators
    for query, token in (({"as": 1}, played.tokens[0]), ({"as": 0}, None), ({"as": 0}, played.tokens[1])):
        refused = client.get(url, query_string=query, headers=auth(token))
        assert refused.status_code == 403, (query, token)
        assert refused.get_json()["type"] == "/problems/forbidden"
    assert client.get(url, headers=auth("not-a-token")).status_code == 401
    assert client.get("/v1/games/gnothere/steps").status_code == 404


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"from": 0}, "from"),
        ({"from": -1}, "from"),
        ({"from": "x"}, "from"),
        ({"from": "３"}, "from"),
        ({"cursor": 0}, "cursor"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"as": 100}, "as"),
        ({"as": 2}, "as"),  # a seat the game does not have
        ({"step": 1}, "step"),  # not a parameter of steps
        ({"from": 2**53}, "from"),
    ],
)
def test_bad_queries_are_422(quiet_app: Flask, query: dict[str, Any], field: str) -> None:
    client = quiet_app.test_client()
    played = play(client, "san-ban", 2, {}, seed=2, actions=2)
    answer = client.get(f"/v1/games/{played.id}/steps", query_string=query)
    assert answer.status_code == 422, answer.get_json()
    assert field in answer.get_json()["errors"]


def test_from_beyond_the_last_step_is_422(quiet_app: Flask) -> None:
    client = quiet_app.test_client()
    played = play(client, "san-ban", 2, {}, seed=2, actions=2)
    url = f"/v1/games/{played.id}/steps"
    assert client.get(url, query_string={"from": played.last}).status_code == 200
    beyond = client.get(url, query_string={"from": played.last + 1})
    assert beyond.status_code == 422
    assert list(beyond.get_json()["errors"]) == ["from"]
    assert client.get(url, query_string={"cursor": played.last + 1}).status_code == 422


def test_a_page_folds_the_log_once(quiet_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each event of the page's range is folded once (a replay per step would fold 1 + 2 + ... + n)."""
    client = quiet_app.test_client()
    played = play(client, "kiri-ai", 2, {"max_rounds": 3}, seed=5, actions=MAX_ACTIONS)
    folded = []
    real_evolve = engine.evolve

    def counting_evolve(table: Any, ev: Any) -> Any:
        folded.append(ev.type)
        return real_evolve(table, ev)

    monkeypatch.setattr(engine, "evolve", counting_evolve)
    page = client.get(f"/v1/games/{played.id}/steps", query_string={"limit": 1000, "as": 1}).get_json()
    assert len(page["items"]) == played.last > 20
    assert len(folded) == played.last
    folded.clear()
    page = client.get(f"/v1/games/{played.id}/steps", query_string={"from": 11, "limit": 10}).get_json()
    assert [item["step"] for item in page["items"]] == list(range(11, 21))
    assert len(folded) <= 20  # the ten steps before the page (their table events only), then the page's ten
