"""The REST API on the toy game: errors, idempotency, conflicts and hidden information."""

from __future__ import annotations

import json

import pytest
from flask.testing import FlaskClient

from tests.support.api import Seat, create

TWO = [{"name": "ann"}, {"name": "bob"}]


def play_round(ann: Seat, bob: Seat, a: int, b: int) -> None:
    assert ann.act({"type": "pick", "n": a}).status_code == 201
    assert bob.act({"type": "pick", "n": b}).status_code == 201
    loser = bob if a >= b else ann
    assert loser.act({"type": "ack"}).status_code == 201


def test_create_returns_tokens_once_and_the_view(client: FlaskClient) -> None:
    r = client.post("/v1/games", json={"game": "toy", "players": TWO})
    assert r.status_code == 201
    body = r.json
    assert [s["seat"] for s in body["seats"]] == [0, 1] and all(s["token"] for s in body["seats"])
    assert body["status"] == "active" and body["to_act"] == [0, 1] and body["version"] == 2
    view = client.get(f"/v1/games/{body['id']}").json
    assert "token" not in json.dumps(view)
    stored = json.dumps(client.application.extensions["kifu"].store.meta(body["id"]))
    assert body["seats"][0]["token"] not in stored  # tokens are kept only as hashes


@pytest.mark.parametrize(
    "body, field",
    [
        ({"players": TWO}, "game"),
        ({"game": "toy"}, "players"),
        ({"game": "toy", "players": [{"name": ""}, {"name": "b"}]}, "players[0].name"),
        ({"game": "toy", "players": [{"name": "a"}, {"name": "b", "bot": 7}]}, "players[1].bot"),
        ({"game": "toy", "players": TWO, "colour": "red"}, "colour"),
        ({"game": "toy", "players": "ann"}, "players"),
    ],
)
def test_create_refuses_bad_bodies_with_field_errors(client: FlaskClient, body: dict, field: str) -> None:
    r = client.post("/v1/games", json=body)
    assert r.status_code == 422 and r.content_type == "application/problem+json"
    assert r.json["type"] == "/problems/invalid-request" and r.json["title"] == "Invalid request"
    assert field in r.json["errors"] and all(isinstance(m, list) for m in r.json["errors"].values())


@pytest.mark.parametrize(
    "body, words",
    [
        ({"game": "chess", "players": TWO}, "unknown game"),
        ({"game": "toy", "players": TWO[:1]}, "needs exactly 2 players"),
        ({"game": "toy", "players": TWO, "options": {"rounds": 7}}, "must be one of"),
        ({"game": "toy", "players": [{"name": "a", "bot": "genius"}, {"name": "b"}]}, "unknown bot"),
    ],
)
def test_create_refuses_bad_games_with_a_reason(client: FlaskClient, body: dict, words: str) -> None:
    r = client.post("/v1/games", json=body)
    assert r.status_code == 422 and words in r.json["detail"]


@pytest.mark.parametrize(
    "body, field, kind",
    [
        ({"game": "chess", "players": TWO}, "game", "unknown-game"),
        ({"game": "toy", "players": TWO, "options": {"rounds": 7}}, "options.rounds", "invalid-game-settings"),
        ({"game": "toy", "players": TWO, "options": {"colour": "red"}}, "options.colour", "invalid-game-settings"),
        (
            {"game": "toy", "players": TWO, "options": {"move_timeout_s": 0}},
            "options.move_timeout_s",
            "invalid-game-settings",
        ),
        ({"game": "toy", "players": TWO[:1]}, "players", "invalid-game-settings"),
        (
            {"game": "toy", "players": [{"name": "a"}, {"name": "b", "bot": "genius"}]},
            "players[1].bot",
            "invalid-game-settings",
        ),
        ({"game": "toy", "players": TWO, "deal": {"nonsense": 1}}, "deal", "invalid-game-settings"),
    ],
)
def test_invalid_games_name_the_exact_field_under_errors(
    client: FlaskClient, body: dict, field: str, kind: str
) -> None:
    """docs/api.md: validation errors carry ``errors`` (field -> messages), also the rules' own checks."""
    r = client.post("/v1/games", json=body)
    assert r.status_code == 422 and r.json["detail"] and r.json["type"] == f"/problems/{kind}"
    assert r.json["errors"] == {field: [r.json["detail"]]}


def test_every_problem_type_has_a_page_and_one_title(client: FlaskClient) -> None:
    from entrypoints.api.problems import KINDS

    index = client.get("/problems")
    assert index.status_code == 200 and index.content_type.startswith("text/html")
    for kind in KINDS.values():
        page = client.get(kind.type)
        assert page.status_code == 200 and kind.title in page.get_data(as_text=True)
        assert f'href="{kind.type}"' in index.get_data(as_text=True)
    assert client.get("/problems/no-such-problem").json["type"] == "/problems/not-found"
    titles = {}
    for r in (client.get("/v1/games/nope"), client.get("/v1/games/nope/events"), client.get("/nowhere")):
        titles.setdefault(r.json["type"], set()).add(r.json["title"])
    assert all(len(t) == 1 for t in titles.values())


def test_a_wrong_method_is_405_with_allow(client: FlaskClient) -> None:
    r = client.delete("/v1/games")
    assert r.status_code == 405 and r.json["type"] == "/problems/method-not-allowed"
    assert set(r.headers["Allow"].split(", ")) >= {"GET", "POST"}
    assert "GET" in client.put("/v1/catalog").headers["Allow"]


def test_malformed_json_is_400_problem(client: FlaskClient) -> None:
    for path in ("/v1/games", "/v1/audits"):
        r = client.post(path, data="{nope", content_type="application/json")
        assert r.status_code == 400 and r.content_type == "application/problem+json"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", str(2**63), str(-(2**63) - 1)])
def test_non_json_numbers_are_400_not_500(client: FlaskClient, number: str) -> None:
    game_id, (ann, _bob, _s) = create(client, "toy", TWO)
    body = f'{{"action": {{"type": "pick", "n": {number}}}}}'
    r = client.post(f"/v1/games/{game_id}/actions", data=body, content_type="application/json", headers=ann.headers)
    assert r.status_code == 400 and r.content_type == "application/problem+json"


@pytest.mark.parametrize("depth", [65, 990, 5000])
def test_deeply_nested_bodies_are_400_not_500(client: FlaskClient, depth: int) -> None:
    game_id, (ann, _bob, _s) = create(client, "toy", TWO)
    nested = "[" * depth + "]" * depth
    for path, body, headers in [
        ("/v1/games", nested, {}),
        ("/v1/audits", nested, {}),
        (f"/v1/games/{game_id}/actions", f'{{"action": {{"type": "pick", "n": {nested}}}}}', ann.headers),
    ]:
        r = client.post(path, data=body, content_type="application/json", headers=headers)
        assert r.status_code == 400 and r.content_type == "application/problem+json", (path, r.json)
    assert client.get(f"/v1/games/{game_id}/events").json["items"][-1]["seq"] == 2  # nothing appended


def test_huge_move_timeout_is_refused_before_anything_is_written(client: FlaskClient) -> None:
    body = {"game": "toy", "players": [{"name": "orphan"}, {"name": "b"}], "options": {"move_timeout_s": 2**62}}
    r = client.post("/v1/games", json=body)
    assert r.status_code == 422 and "move_timeout_s" in r.json["detail"]
    assert client.post("/v1/games", json={**body, "options": {"move_timeout_s": 604800}}).status_code == 201


def test_unknown_game_token_turn_and_version_errors(client: FlaskClient) -> None:
    game_id, (ann, bob, spectator) = create(client, "toy", TWO)
    assert client.get("/v1/games/nope").status_code == 404
    assert client.get(f"/v1/games/{game_id}", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get(f"/v1/games/{game_id}", headers={"Authorization": "Basic x"}).status_code == 401
    assert spectator.act({"type": "pick", "n": 1}).status_code == 401
    assert ann.act({"type": "ack"}).status_code == 422
    stale = ann.act({"type": "pick", "n": 1}, expected_version=1)
    assert stale.status_code == 409 and stale.json["current_version"] == 2
    assert ann.act({"type": "pick", "n": 1}, expected_version=2).status_code == 201
    again = ann.act({"type": "pick", "n": 2})
    assert again.status_code == 403 and "already made its secret choice" in again.json["detail"]
    assert bob.act({"type": "pick", "n": 1}).status_code == 201
    assert ann.act({"type": "ack"}).status_code == 403  # bob lost the round: his turn


def test_idempotency_key_returns_the_first_answer(client: FlaskClient) -> None:
    game_id, (ann, _bob, _s) = create(client, "toy", TWO)
    headers = {**ann.headers, "Idempotency-Key": "k1"}
    first = client.post(f"/v1/games/{game_id}/actions", json={"action": {"type": "pick", "n": 2}}, headers=headers)
    second = client.post(f"/v1/games/{game_id}/actions", json={"action": {"type": "pick", "n": 2}}, headers=headers)
    assert first.status_code == second.status_code == 201 and first.json == second.json
    assert "Idempotent-Replayed" not in first.headers and second.headers["Idempotent-Replayed"] == "true"
    assert ann.get().json["version"] == 3
    other = client.post(f"/v1/games/{game_id}/actions", json={"action": {"type": "pick", "n": 3}}, headers=headers)
    assert other.status_code == 422 and "Idempotency-Key" in other.json["detail"]


def test_a_creation_retry_answers_the_same_game_but_never_the_tokens_again(client: FlaskClient) -> None:
    """Whoever replays a creation key (the client itself, or anyone who saw the key) gets no token."""
    body = {"game": "toy", "players": TWO}
    first = client.post("/v1/games", json=body, headers={"Idempotency-Key": "c1"})
    second = client.post("/v1/games", json=body, headers={"Idempotency-Key": "c1"})
    assert first.status_code == second.status_code == 201
    assert first.json["id"] == second.json["id"] and second.headers["Idempotent-Replayed"] == "true"
    assert all(s["token"] for s in first.json["seats"]) and all(s["token"] is None for s in second.json["seats"])
    assert first.json["version"] == second.json["version"] == 2  # nothing created twice
    bare = [{k: v for k, v in s.items() if k != "token"} for s in first.json["seats"]]
    assert [{k: v for k, v in s.items() if k != "token"} for s in second.json["seats"]] == bare
    seat_0 = {"Authorization": f"Bearer {first.json['seats'][0]['token']}"}
    assert client.get(f"/v1/games/{first.json['id']}", headers=seat_0).json["you"] == 0


@pytest.mark.parametrize("key", ["", "x" * 201, "naïve", "tab\there"])
def test_a_bad_idempotency_key_is_refused_before_anything_happens(client: FlaskClient, key: str) -> None:
    r = client.post("/v1/games", json={"game": "toy", "players": TWO}, headers={"Idempotency-Key": key})
    assert r.status_code == 422 and "Idempotency-Key" in r.json["errors"]
    assert client.get("/v1/games").json["items"] == []


def test_seat_tokens_are_random_not_derived(client: FlaskClient) -> None:
    tokens = [
        s["token"]
        for _ in range(3)
        for s in client.post("/v1/games", json={"game": "toy", "players": TWO}).json["seats"]
    ]
    assert len(set(tokens)) == len(tokens) and all(len(t) >= 43 for t in tokens)  # 256 bits, urlsafe base64


SECRET_PICK = {"type": "pick", "n": 3}


def everything_seat_1_can_read(client: FlaskClient, bob: Seat, game_id: str) -> str:
    texts = [
        bob.get().data,
        bob.get("/actions").data,
        bob.get("/events").data,
        bob.get("/record").data,
        bob.get("/audit").data,
    ]
    texts += [bob.get(f"/replay?step={n}").data for n in range(1, bob.get().json["version"] + 1)]
    texts += [bob.get(f"/replay?step={n}&as=1").data for n in range(1, bob.get().json["version"] + 1)]
    return b"\n".join(texts).decode()


def test_no_endpoint_shows_another_seats_hand_or_unrevealed_choice(client: FlaskClient) -> None:
    game_id, (ann, bob, spectator) = create(client, "toy", TWO)
    cards = ann.get().json["state"]["cards"]
    assert len(cards) == 3
    salt_answer = ann.act(SECRET_PICK).json
    salt = salt_answer["events"][0]["data"]["private"]["0"]["salts"][0]
    for reader in (bob, spectator):
        seen = everything_seat_1_can_read(client, reader, game_id)
        assert salt not in seen
        assert '"private":{"0"' not in seen.replace(" ", "") and '"choices"' not in seen
        assert '"cards":[' not in seen.replace(" ", "")
        assert all(e["data"].get("private", {}).keys() <= {"1"} for e in reader.get("/events").json["items"])
    assert bob.get("/replay?step=3&as=0").status_code == 403
    assert ann.get("/replay?step=3&as=0").status_code == 200


def test_after_the_end_everything_is_public(client: FlaskClient) -> None:
    _game_id, (ann, bob, spectator) = create(client, "toy", TWO)
    cards = ann.get().json["state"]["cards"]
    for a, b in ((3, 1), (1, 2), (2, 2)):
        play_round(ann, bob, a, b)
    view = spectator.get().json
    assert view["status"] == "finished" and view["result"]["scores"] == [3, 2]  # the tie scores nothing
    assert view["state"]["cards"] == cards
    events = spectator.get("/events").json["items"]
    assert events[-1]["type"] == "game_sealed" and events[1]["data"]["private"]["0"]["cards"] == cards
    past = spectator.get("/replay?step=3&as=1").json
    assert past["view"]["state"]["cards"] is None  # what bob knew then
    assert "private" not in past["event"]["data"]
    record = spectator.get("/record").json
    assert record["complete"] and record["seed"]
    audit = client.post("/v1/audits", json=record).json
    assert audit["verified"], audit
    assert spectator.get("/audit").json["verified"]


def test_replay_steps_and_bounds(client: FlaskClient) -> None:
    _game_id, (ann, _bob, spectator) = create(client, "toy", TWO)
    ann.act({"type": "pick", "n": 1})
    r = spectator.get("/replay?step=1").json
    assert r["step"] == 1 and r["event"]["type"] == "game_created" and r["view"]["version"] == 1
    assert spectator.get("/replay?step=0").status_code == 422
    too_far = spectator.get("/replay?step=99")
    assert too_far.status_code == 422 and too_far.json["errors"] == {"step": ["step must be between 1 and 3"]}
    assert spectator.get("/replay?step=1&as=7").json["errors"] == {"as": ["there is no seat 7"]}
    assert spectator.get("/replay").status_code == 422
    assert spectator.get("/replay?step=x").status_code == 422
    # docs/api.md: the spectator view while in progress, also for a seat; as=own seat shows one's own
    mine = ann.get("/replay?step=3").json
    assert mine == spectator.get("/replay?step=3").json and mine["view"]["my_choice"] is None
    assert ann.get("/replay?step=3&as=0").json["view"]["my_choice"] == {"type": "pick", "n": 1}


def test_events_paginate(client: FlaskClient) -> None:
    _game_id, (ann, bob, spectator) = create(client, "toy", TWO)
    play_round(ann, bob, 1, 2)
    page = spectator.get("/events?limit=2").json
    assert [e["seq"] for e in page["items"]] == [1, 2] and page["next"] == 2
    rest = spectator.get(f"/events?after={page['next']}&limit=100").json
    assert rest["items"][0]["seq"] == 3 and rest["next"] is None
    assert rest["items"][0]["prev"] == page["items"][-1]["hash"]
    assert spectator.get(f"/events?cursor={page['next']}&limit=100").json == rest  # the lists' cursor (docs/api.md)
    assert spectator.get("/events?limit=0").status_code == 422
    for query in (f"after={2**53}", "after=99999999999999999999999", f"cursor={2**63}"):
        r = spectator.get(f"/events?{query}")
        assert r.status_code == 422 and r.content_type == "application/problem+json", query
    assert spectator.get(f"/replay?step={10**30}").status_code == 422


def requests_counted(client: FlaskClient, labels: str) -> float:
    """The value of ``kifu_http_requests_total{<labels>}`` on /metrics now (0 before the first)."""
    for line in client.get("/metrics").data.decode().splitlines():
        if line.startswith(f"kifu_http_requests_total{{{labels}}} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_catalog_health_and_metrics(client: FlaskClient) -> None:
    catalog = 'method="GET",route="/v1/catalog",status="200"'
    before = requests_counted(client, catalog)  # (the metrics are the test process's, across its apps)
    games = {g["id"]: g for g in client.get("/v1/catalog").json["games"]}
    assert games["toy"]["options"]["rounds"]["allowed"] == [1, 2, 3]
    assert "move_timeout_s" in games["toy"]["options"]
    assert client.get("/healthz").json == {"status": "ok"}
    assert client.get("/readyz").json == {"status": "ready"}
    assert requests_counted(client, catalog) == before + 1
    text = client.get("/metrics").data.decode()
    assert 'kifu_http_request_duration_seconds_count{method="GET",route="/v1/catalog"}' in text
    assert 'kifu_queue_jobs{queue="kifu"} ' in text and "# TYPE kifu_open_streams gauge" in text
    assert client.get("/nowhere").content_type == "application/problem+json"


# ---------------------------------------------------------------- open seats, resigning, deadlines


def test_a_double_slash_is_a_404_problem_not_an_html_redirect(client: FlaskClient) -> None:
    r = client.get("/v1//games")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"


def test_an_open_seat_is_joined_once_and_its_token_is_shown_once(client: FlaskClient) -> None:
    created = client.post("/v1/games", json={"game": "toy", "players": [{"name": "ann"}, {"open": True}]}).json
    gid = created["id"]
    assert created["seats"][1] == {"seat": 1, "name": None, "bot": None, "open": True, "token": None}
    key = {"Idempotency-Key": "join-1"}
    joined = client.post(f"/v1/games/{gid}/seats/1/join", json={"name": "bob"}, headers=key)
    assert joined.status_code == 201 and joined.json["token"] and joined.json["seat"] == 1
    again = client.post(f"/v1/games/{gid}/seats/1/join", json={"name": "bob"}, headers=key)
    assert again.status_code == 201 and again.json["token"] is None and again.headers["Idempotent-Replayed"] == "true"
    taken = client.post(f"/v1/games/{gid}/seats/1/join", json={"name": "eve"})
    assert taken.status_code == 409 and taken.json["type"] == "/problems/seat-taken"
    assert client.post(f"/v1/games/{gid}/seats/0/join", json={"name": "eve"}).status_code == 409
    assert client.post(f"/v1/games/{gid}/seats/1/join", json={"name": ""}).status_code == 422
    assert client.post("/v1/games/nope/seats/1/join", json={"name": "eve"}).status_code == 404
    missing = client.post(f"/v1/games/{gid}/seats/7/join", json={"name": "eve"})
    assert missing.status_code == 404 and missing.json["type"] == "/problems/not-found", missing.json
    bob = {"Authorization": f"Bearer {joined.json['token']}"}
    view = client.get(f"/v1/games/{gid}", headers=bob).json
    assert view["you"] == 1 and view["seats"][1] == {"seat": 1, "name": "bob", "bot": None}
    assert (
        client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "pick", "n": 2}}, headers=bob).status_code
        == 201
    )
    audit = client.get(f"/v1/games/{gid}/audit").json  # running: valid so far, no result proven
    assert audit["verdict"] == "in_progress" and not audit["verified"], audit


@pytest.mark.parametrize("player", [{"open": True, "name": "x"}, {"open": True, "bot": "random"}, {}, {"open": 1}])
def test_a_seat_is_named_or_open_not_both(client: FlaskClient, player: dict) -> None:
    r = client.post("/v1/games", json={"game": "toy", "players": [{"name": "ann"}, player]})
    assert r.status_code == 422 and any(k.startswith("players[1]") for k in r.json["errors"])


def test_any_seat_may_resign_and_the_record_says_so(client: FlaskClient) -> None:
    _game_id, (ann, bob, spectator) = create(client, "toy", TWO)
    assert ann.act({"type": "pick", "n": 3}).status_code == 201
    r = bob.act({"type": "resign"})
    assert r.status_code == 201 and r.json["status"] == "finished"
    result = spectator.get().json["result"]
    assert result["winners"] == [0] and result["ranks"] == [1, 2] and result["resigned"] == 1
    assert ann.act({"type": "resign"}).json["type"] == "/problems/game-over"
    assert spectator.get("/audit").json["verified"]
    assert {"type": "resign"} not in ann.get("/actions").json["actions"]  # always allowed, never listed


def test_a_timed_game_shows_when_each_seat_to_act_runs_out(client: FlaskClient) -> None:
    from datetime import datetime, timedelta

    _game_id, (ann, _bob, spectator) = create(client, "toy", TWO, options={"move_timeout_s": 90})
    started = datetime.fromisoformat(spectator.get("/events").json["items"][-1]["at"])
    due = (started + timedelta(seconds=90)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert spectator.get().json["deadlines"] == [due, due]
    ann.act({"type": "pick", "n": 3})  # a secret commitment does not restart bob's clock; ann is done
    assert spectator.get().json["deadlines"] == [None, due]
    _untimed, seats = create(client, "toy", TWO)
    assert seats[2].get().json["deadlines"] == [None, None]
