"""No input produces a 500: arbitrary JSON bodies and query strings get a 4xx problem or a 2xx."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.api import create

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(["type", "card", "cards", "cell", "first", "pile", "sign", "space", "stance", "second"])
ACTIONS = st.dictionaries(KEYS, JSON, max_size=4) | JSON
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def assert_no_500(response: Any) -> None:
    assert response.status_code < 500, response.data
    if response.status_code >= 400:
        assert response.content_type == "application/problem+json"


@given(body=JSON, players=JSON, options=JSON, deal=JSON)
@SETTINGS
def test_create_game_with_any_body(quiet_app: Flask, body: Any, players: Any, options: Any, deal: Any) -> None:
    client = quiet_app.test_client()
    assert_no_500(client.post("/v1/games", data=json.dumps(body), content_type="application/json"))
    for game in ("san-ban", "nin-nal", "kiri-ai"):
        shaped = {"game": game, "players": players, "options": options, "deal": deal}
        assert_no_500(client.post("/v1/games", json=shaped))
        shaped["players"] = [{"name": "a"}, {"name": "b"}]
        assert_no_500(client.post("/v1/games", json=shaped))


@given(actions=st.lists(ACTIONS, min_size=1, max_size=5), version=JSON)
@SETTINGS
def test_any_action_on_each_game(quiet_app: Flask, actions: list[Any], version: Any) -> None:
    client = quiet_app.test_client()
    for game in ("san-ban", "nin-nal", "kiri-ai"):
        _gid, seats = create(client, game, [{"name": "a"}, {"name": "b"}])
        for action in actions:
            for seat in seats[:2]:
                assert_no_500(seat.act(action if isinstance(action, dict) else {"type": action}))
                assert_no_500(
                    seat.client.post(
                        f"/v1/games/{seat.game_id}/actions",
                        headers=seat.headers,
                        json={"action": action, "expected_version": version},
                    )
                )


@given(
    record=JSON,
    query=st.dictionaries(
        st.sampled_from(["step", "as", "after", "limit", "cursor", "x"]), st.text(max_size=6), max_size=3
    ),
)
@SETTINGS
def test_audits_and_queries_with_any_input(quiet_app: Flask, record: Any, query: dict[str, str]) -> None:
    client = quiet_app.test_client()
    assert_no_500(client.post("/v1/audits", json=record))
    assert_no_500(client.post("/v1/audits", json={"events": [record] if record else [], "seed": record}))
    _gid, seats = create(client, "san-ban", [{"name": "a"}, {"name": "b"}])
    for path in ("", "/actions", "/events", "/replay", "/record", "/audit"):
        assert_no_500(seats[0].get(path, query_string=query))
    assert_no_500(client.get("/v1/games", query_string=query))
