"""Snapshots as data: every game's table survives the codec; nothing else can be built from it."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import tests.support.toy_game  # noqa: F401
from domain import engine
from domain.engine import Seat
from domain.registry import all_games
from domain.snapshot import SnapshotError, decode, encode, table_from_data, table_to_data
from tests.support.records import SALTS

GAMES = [g.id for g in all_games()]


def tables_along_a_random_game(game_id: str, seed: int) -> list[engine.Table]:
    game = engine.get_game(game_id)
    rnd = random.Random(seed)
    table = engine.replay(
        engine.create(game_id, f"s{seed}", [Seat(i, f"p{i}") for i in range(game.max_players)], seed.to_bytes(8, "big"))
    )
    seen = [table]
    while not table.finished:
        seat = rnd.choice(table.to_act)
        table = engine.replay(
            engine.decide(table, seat, rnd.choice(engine.legal_actions(table, seat)), salts=SALTS), table
        )
        seen.append(table)
    return seen


@pytest.mark.parametrize("game_id", GAMES)
def test_every_table_of_a_game_round_trips_through_json(game_id: str) -> None:
    for table in tables_along_a_random_game(game_id, 3)[::7]:
        back = table_from_data(json.loads(json.dumps(table_to_data(table))))
        assert back == table and back.state == table.state
        assert (
            engine.legal_actions(back, back.to_act[0]) == engine.legal_actions(table, table.to_act[0])
            if table.to_act
            else back.finished
        )


def test_round_trip_keeps_python_types() -> None:
    value = {"t": (1, (2, None)), "l": [1, "x"], 3: {"nested": (True,)}, (1, 2): 0.5}
    assert decode(json.loads(json.dumps(encode(value)))) == value
    assert isinstance(decode(encode([1]))[0], int) and isinstance(decode(encode((1,))), tuple)


@pytest.mark.parametrize(
    "evil",
    [
        {"dc": ["os:system", {}]},  # not a domain class
        {"dc": ["subprocess:Popen", {"args": "true"}]},
        {"dc": ["domain.engine:get_game", {}]},  # a function, not a dataclass
        {"dc": ["domain.engine:Table", {"game_id": "x"}]},  # fields missing
        {"dc": ["domain.errors:IllegalAction", {}]},  # not a dataclass
        {"dc": ["domain.engine:Table.game", {}]},  # attribute paths are refused
        {"pickle": "gASVAAAA"},
        {"map": [[["unhashable"], 1]]},
        "just a string",
    ],
)
def test_anything_but_snapshot_data_is_refused(evil: Any) -> None:
    with pytest.raises(SnapshotError):
        table_from_data(evil)


def test_unencodable_values_are_refused_when_writing() -> None:
    with pytest.raises(SnapshotError):
        encode({1, 2})
