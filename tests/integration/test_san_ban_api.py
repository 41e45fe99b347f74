"""San Ban through the API: hidden cards stay hidden on every endpoint; bots finish games."""

from __future__ import annotations

import random
import re

import redis
from flask.testing import FlaskClient
from rq import Queue, SimpleWorker

from adapters.rq_scheduler import QUEUE_NAME
from tests.support.api import Seat, create

DECK_0 = [f"sb-{i:03d}" for i in range(1, 7)]
DECK_1 = [f"sb-{i:03d}" for i in range(13, 19)]
CARD = re.compile(r"sb-\d{3}")


def readable_by(reader: Seat) -> str:
    """Everything ``reader`` can fetch about the game, as one text."""
    version = reader.get().json["version"]
    parts = [
        reader.get().data,
        reader.get("/actions").data,
        reader.get("/events?limit=1000").data,
        reader.get("/record").data,
        reader.get("/audit").data,
    ]
    parts += [reader.get(f"/replay?step={n}").data for n in range(1, version + 1)]
    return b"\n".join(parts).decode()


def unplayed_cards_of_seat_0_seen_by(reader: Seat, spectator: Seat) -> set[str]:
    on_board = {slot["card"] for slot in spectator.get().json["state"]["board"] if slot}
    return (set(CARD.findall(readable_by(reader))) & set(DECK_0)) - on_board


def test_gamer_mode_never_shows_seat_0s_cards_to_seat_1_or_spectators(quiet_app) -> None:
    client = quiet_app.test_client()
    _game, (ann, bob, spectator) = create(
        client,
        "san-ban",
        [{"name": "ann"}, {"name": "bob"}],
        options={"mode": "gamer"},
        deal={"first": 0, "decks": [DECK_0, DECK_1]},
    )
    rnd = random.Random(3)
    checked = 0
    while spectator.get().json["status"] == "active":
        for reader in (bob, spectator):
            assert unplayed_cards_of_seat_0_seen_by(reader, spectator) == set()
            checked += 1
        view = spectator.get().json
        seat = view["to_act"][0]
        actor = (ann, bob)[seat]
        assert actor.act(rnd.choice(actor.get("/actions").json["actions"])).status_code == 201
    assert checked > 10
    assert set(DECK_0) <= set(CARD.findall(spectator.get("/record").data.decode()))  # public at the end
    assert spectator.get("/audit").json["verified"]


def test_standard_mode_chosen_hand_is_secret_until_both_chose(quiet_app) -> None:
    client = quiet_app.test_client()
    _game, (ann, bob, spectator) = create(
        client,
        "san-ban",
        [{"name": "ann"}, {"name": "bob"}],
        options={"mode": "standard"},
        deal={"first": 0, "decks": [DECK_0, DECK_1]},
    )
    assert ann.act({"type": "choose_hand", "cards": DECK_0[1:]}).status_code == 201
    assert ann.get().json["my_choice"] == {"type": "choose_hand", "cards": DECK_0[1:]}
    for reader in (bob, spectator):
        assert unplayed_cards_of_seat_0_seen_by(reader, spectator) == set()
    assert bob.act({"type": "choose_hand", "cards": DECK_1[:5]}).status_code == 201
    assert spectator.get().json["state"]["hands"][0] == DECK_0[1:]  # open hands once revealed


def test_two_greedy_bots_finish_a_san_ban_game_through_the_worker(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    _game, (_a, _b, spectator) = create(
        client, "san-ban", [{"name": "g", "bot": "greedy"}, {"name": "r", "bot": "random"}]
    )
    SimpleWorker([Queue(QUEUE_NAME, connection=redis_client)], connection=redis_client).work(burst=True)
    view = spectator.get().json
    assert view["status"] == "finished" and sum(view["result"]["scores"]) == 10
    record = spectator.get("/record").json
    assert [s["bot_info"]["name"] for s in record["seats"]] == ["greedy", "random"]
    assert record["rules_version"] == "1" and spectator.get("/audit").json["verified"]
