"""OpenSpiel-style random playthroughs over every registered game.

For each game: random games from ``legal_actions`` always finish; every listed
action is accepted; the log rebuilds the live table; the final result has the
documented shape; the record of each game verifies offline.
"""

from __future__ import annotations

import json
import random

import pytest

import tests.support.toy_game  # noqa: F401
from domain import engine
from domain.audit import verify_record
from domain.engine import Seat
from domain.registry import all_games
from tests.support.records import SALTS, sealed_record

MAX_ACTIONS = 3000
GAMES = [g.id for g in all_games()]


def play_random(game_id: str, seed: int, n_players: int) -> tuple[engine.Table, list]:
    rnd = random.Random(seed)
    seats = [Seat(i, f"p{i}") for i in range(n_players)]
    events = engine.create(game_id, f"rand{seed}", seats, seed.to_bytes(8, "big"))
    table = engine.replay(events)
    for _ in range(MAX_ACTIONS):
        if table.finished:
            return table, events
        seat = rnd.choice(table.to_act)
        assert engine.legal_actions(table, seat), f"seat {seat} is to act but has no legal action"
        new = engine.decide(table, seat, engine.sample_action(table, seat, rnd), salts=SALTS)
        table, events = engine.replay(new, table), events + new
    raise AssertionError(f"{game_id}: no end after {MAX_ACTIONS} actions")


@pytest.mark.parametrize("game_id", GAMES)
def test_random_games_finish_replay_and_verify(game_id: str) -> None:
    game = engine.get_game(game_id)
    for seed in range(8):
        n = game.min_players + seed % (game.max_players - game.min_players + 1)
        table, events = play_random(game_id, seed, n)
        assert engine.replay(events) == table
        result = table.result
        assert result is not None and len(result["scores"]) == len(result["ranks"]) == n
        assert result["winners"] == [s for s, r in enumerate(result["ranks"]) if r == 1]
        report = verify_record(sealed_record(events, seed.to_bytes(8, "big")))
        assert report["verified"], report


@pytest.mark.parametrize("game_id", GAMES)
def test_every_listed_action_is_accepted_at_every_step_of_a_game(game_id: str) -> None:
    game = engine.get_game(game_id)
    rnd = random.Random(7)
    events = engine.create(game_id, "all", [Seat(i, f"p{i}") for i in range(game.min_players)], b"x")
    table = engine.replay(events)
    while not table.finished:
        seat = table.to_act[0]
        actions = engine.legal_actions(table, seat)
        space = engine.action_space(table, seat)
        assert len(json.dumps(space)) < 50_000  # GET /actions stays small in every position
        sampled = [engine.sample_action(table, seat, rnd) for _ in range(4)]
        for action in [*rnd.sample(actions, min(len(actions), 12)), *space["actions"][:12], *sampled]:
            engine.decide(table, seat, action, salts=SALTS)  # must not raise
        for other in set(range(len(table.seats))) - set(table.to_act):
            assert engine.legal_actions(table, other) == [] and engine.action_space(table, other) == {"actions": []}
        table = engine.replay(engine.decide(table, seat, rnd.choice(actions), salts=SALTS), table)
