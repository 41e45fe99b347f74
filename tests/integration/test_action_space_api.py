"""San Ban's pick of five through the API: described, not listed, matching the contract, and usable
as a front end would use it (build a pick from ``choose``, check it with ``engine.admits``, send it)."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse

from domain import engine
from tests.support.api import create

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
DECKS = [[f"sb-{i:03d}" for i in range(1, 13)], [f"sb-{i:03d}" for i in range(13, 25)]]


def test_a_gamer_pick_from_12_cards_is_described_and_a_built_pick_is_taken(quiet_app: Flask) -> None:
    client = quiet_app.test_client()
    _game, (ann, bob, _spectator) = create(
        client, "san-ban", [{"name": "ann"}, {"name": "bob"}], options={"mode": "gamer"}, deal={"decks": DECKS}
    )
    answer = ann.get("/actions")
    assert answer.status_code == 200
    assert len(answer.data) < 16 * 1024  # the 95,040 orders were 7.2 MB as a list
    openapi = OpenAPI.from_file_path(str(SPEC_PATH))
    openapi.validate_response(WerkzeugOpenAPIRequest(answer.request), WerkzeugOpenAPIResponse(answer))
    space = answer.json
    assert space["choose"] == {"type": "set_order", "count": 5, "from": DECKS[0], "ordered": True}

    built = {"type": "set_order", "cards": space["choose"]["from"][::-2][:5]}  # every other card, last first
    assert built not in space["actions"] and engine.admits("san-ban", space, built)
    twice = {"type": "set_order", "cards": [*built["cards"][:4], built["cards"][0]]}
    assert not engine.admits("san-ban", space, twice)
    assert ann.act(twice).status_code == 422
    assert ann.act(built).status_code == 201

    assert bob.act(bob.get("/actions").json["actions"][-1]).status_code == 201  # a ready-made pick
    assert ann.get().json["state"]["hands"][0] == built["cards"]  # the order ann built is her play order
