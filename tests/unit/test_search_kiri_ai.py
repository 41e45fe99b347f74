"""The Kiri-ai search bot (domain.search.kiri_ai): its information boundary, legality, reproducibility."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from domain.bots import choose_action
from domain.engine import Seat, Table, action_space, admits, start, step
from domain.games.kiri_ai import PROGRAM, RULES, SETUP, SPECIALS, State
from domain.search import choose
from domain.search.ismcts import Budget, Simulator, search
from domain.search.kiri_ai import KNOWLEDGE

GAME = "kiri-ai"
SALTS = ("00", "00")
SMALL = Budget(iterations=40)
OPTIONS: tuple[dict[str, Any] | None, ...] = (None, {"battlefield": "advanced"}, {"max_rounds": 6})


def _positions(games: int, seed: int) -> Iterator[tuple[Table, int]]:
    """(table, seat to decide) from games of mixed random and greedy play, every option, each decision."""
    rnd = random.Random(seed)
    for g in range(games):
        options = OPTIONS[g % len(OPTIONS)]
        seats = [Seat(0, "red"), Seat(1, "blue")]
        _events, table = start(GAME, f"t-{seed}-{g}", seats, seed=(seed * 1000 + g).to_bytes(8, "big"), options=options)
        while not table.finished:
            for seat in list(table.to_act):
                yield table, seat
            for seat in list(table.to_act):
                level = "greedy" if rnd.random() < 0.6 else "random"
                action = choose_action(table, seat, level, rnd)
                _events, table = step(table, seat, action, salts=SALTS)


def _sample(games: int, seed: int, every: int) -> list[tuple[Table, int]]:
    return [p for i, p in enumerate(_positions(games, seed)) if i % every == 0]


def _reassigned(state: State, seat: int) -> State:
    """Written apart from the module: the other consistent deal of what ``seat`` cannot see.

    Hidden from ``seat``: the opponent's special while unplayed, and the third special. They are the two
    specials other than ``seat``'s own, so the other assignment swaps them.
    """
    opp = 1 - seat
    if state.specials_used[opp] is not None:
        return state  # both known (the third is the one left): nothing to change
    theirs, third = state.specials[opp], state.third_special
    assert {theirs, third} == set(SPECIALS) - {state.specials[seat]}
    specials = (state.specials[0], third) if opp == 1 else (third, state.specials[1])
    return replace(state, specials=specials, third_special=theirs)


def _view(state: State, seat: int) -> dict[str, Any]:
    return RULES.view(state, seat, False)


def test_positions_cover_every_deciding_phase() -> None:
    phases = {(table.state.phase, table.state.battlefield) for table, _ in _sample(9, 1, 1)}
    assert phases >= {(SETUP, "advanced"), (PROGRAM, "advanced"), (PROGRAM, "standard")}


def test_the_decision_reads_only_the_seats_view() -> None:
    changed_any = 0
    for k, (table, seat) in enumerate(_sample(12, 2, 4)):
        state = table.state
        other = _reassigned(state, seat)
        assert _view(other, seat) == _view(state, seat)
        if state.specials_used[1 - seat] is None:
            assert other.specials[1 - seat] != state.specials[1 - seat]
            assert other.third_special != state.third_special
            changed_any += 1
        a = search(RULES, KNOWLEDGE, state, seat, 2, random.Random(k), SMALL).best
        b = search(RULES, KNOWLEDGE, other, seat, 2, random.Random(k), SMALL).best
        assert a == b
    assert changed_any >= 10


def test_the_real_level_reads_only_the_seats_view() -> None:
    positions = [p for p in _sample(6, 3, 5) if p[0].state.specials_used[1 - p[1]] is None][:4]
    assert len(positions) == 4
    for k, (table, seat) in enumerate(positions):
        other = _reassigned(table.state, seat)
        assert choose(RULES, table.state, seat, 2, "search", random.Random(k)) == choose(
            RULES, other, seat, 2, "search", random.Random(k)
        )


def test_every_determinization_keeps_the_view_and_plays_to_the_end() -> None:
    sim = Simulator(RULES, 2)
    rnd = random.Random(4)
    seen = set()
    for table, seat in _sample(9, 4, 4):
        state = table.state
        for _ in range(3):
            world = KNOWLEDGE.determinize(state, seat, rnd)
            assert _view(world, seat) == _view(state, seat)
            assert world.specials[seat] == state.specials[seat]
            assert sorted(s for s in (*world.specials, world.third_special) if s) == sorted(SPECIALS)
            if world.specials_used[1 - seat] is not None:
                assert world.specials[1 - seat] == world.specials_used[1 - seat]
            seen.add(world.specials[1 - seat])
            while sim.result(world) is None:
                pending = RULES.pending(world)
                joint = {s: RULES.sample_action(world, s, rnd) for s in pending.seats}
                world = sim.after(world, pending, joint)
    assert seen == set(SPECIALS)


def test_decisions_are_legal() -> None:
    for k, (table, seat) in enumerate(_sample(9, 5, 4)):
        action = search(RULES, KNOWLEDGE, table.state, seat, 2, random.Random(k), SMALL).best
        assert action in RULES.legal_actions(table.state, seat)
        assert admits(GAME, action_space(table, seat), action)
        rollout = KNOWLEDGE.rollout(table.state, seat, random.Random(k))
        assert rollout in RULES.legal_actions(table.state, seat)
        candidates = KNOWLEDGE.candidates(table.state, seat, random.Random(k))
        assert candidates
        assert all(c in RULES.legal_actions(table.state, seat) for c in candidates)


def test_the_search_level_plays_a_whole_game() -> None:
    for options in ({"max_rounds": 4}, {"battlefield": "advanced", "max_rounds": 4}):
        seats = [Seat(0, "red", "search"), Seat(1, "blue", "greedy")]
        _events, table = start(GAME, "whole", seats, seed=b"kiri-ai!", options=options)
        rnd = random.Random(6)
        while not table.finished:
            seat = table.to_act[0]
            action = choose_action(table, seat, "search" if seat == 0 else "greedy", rnd)
            assert action in RULES.legal_actions(table.state, seat)
            _events, table = step(table, seat, action, salts=SALTS)


def test_same_seed_same_decision() -> None:
    for k, (table, seat) in enumerate(_sample(6, 7, 7)):
        first = search(RULES, KNOWLEDGE, table.state, seat, 2, random.Random(k), SMALL)
        again = search(RULES, KNOWLEDGE, table.state, seat, 2, random.Random(k), SMALL)
        assert first.best == again.best
        assert [(a.action, a.visits, a.reward) for a in first.arms] == [
            (a.action, a.visits, a.reward) for a in again.arms
        ]


def _decisions() -> list[dict[str, Any]]:
    """The real level's decisions for both seats over a game's first two rounds, both battlefields."""
    out = []
    for options in (None, {"battlefield": "advanced"}):
        _events, table = start(GAME, "x", [Seat(0, "r"), Seat(1, "b")], seed=b"12345678", options=options)
        rnd = random.Random(1)
        for _ in range(2):
            out += [choose(RULES, table.state, seat, 2, "search", random.Random(seat)) for seat in (0, 1)]
            for seat in list(table.to_act):
                _events, table = step(table, seat, choose_action(table, seat, "greedy", rnd), salts=SALTS)
    return out


def test_same_seed_same_decision_in_another_process() -> None:
    """Another interpreter with another string-hash seed (this one's is random) decides the same."""
    child = "from tests.unit.test_search_kiri_ai import _decisions\nprint(repr(_decisions()))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    there = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True, env=env)
    assert there.stdout.strip() == repr(_decisions())
