"""``bench.ladder``'s cheating levels: ``foresight`` takes the candidate whose future ends best for it,
and the ``oracle`` searches the true state with the field modelled as ``search`` models it."""

from __future__ import annotations

import random

from bench import ladder
from domain import search
from domain.bots import choose_action, turn_stream
from domain.engine import Seat, Table, start, step
from domain.search.ismcts import rewards

LEVELS = ("search", "greedy", "greedy")
SECRET = (7_000_004).to_bytes(8, "big")


def _position(turns: int) -> Table:
    """A three-player Front Line game after ``turns`` steps of greedy play, seat 0 to attack with a choice."""
    seats = [Seat(i, f"bot{i}", level) for i, level in enumerate(LEVELS)]
    _events, table = start("front-line", "ladder-foresight", seats, seed=SECRET)
    for _ in range(turns):
        seat = table.to_act[0]
        rnd = turn_stream("greedy", SECRET, table.game_id, seat, table.turn_version)
        _events, table = step(table, seat, choose_action(table, seat, "greedy", rnd), salts=ladder.SALTS)
    return table


def _ending(table: Table, action: dict[str, object]) -> tuple[float, float]:
    _events, after = step(table, 0, action, salts=ladder.SALTS)
    after = ladder._play_out(after, ("greedy", *LEVELS[1:]), SECRET)
    assert after.result is not None
    winners = after.result["winners"]
    return (1 / len(winners) if 0 in winners else 0.0, rewards(after.result, 3)[0])


def test_foresight_takes_the_candidate_whose_future_ends_best() -> None:
    checked = 0
    for turns in range(0, 40):
        table = _position(turns)
        if table.finished or table.to_act != [0]:
            continue
        rnd = turn_stream("search", SECRET, table.game_id, 0, table.turn_version)
        candidates = search.KNOWLEDGE["front-line"].candidates(table.state, 0, rnd)
        endings = [_ending(table, a) for a in candidates]
        if len(set(endings)) < 2:
            continue
        chosen = ladder.foresee(table, 0, ("foresight", *LEVELS[1:]), SECRET)
        assert _ending(table, chosen) == max(endings)
        assert chosen in candidates
        checked += 1
    assert checked >= 2  # positions where the candidates' futures differ


def test_the_oracle_models_the_field_as_search_does() -> None:
    table = _position(0)
    bots = {s.seat: s.bot for s in table.seats}
    models = search.models_of(table.game, 0, bots)
    assert set(models) == {1, 2}  # the two greedy seats, never the searching one
    unmodelled = search.models_of(table.game, 0, {0: "search", 1: None, 2: "greedy"})
    assert set(unmodelled) == {2}  # a person is not modelled
    action = ladder.decide(table, 0, ladder.ORACLE, random.Random(3))
    assert action["type"] in ("attack", "pass")
