"""The Nin Nal search bot: its information boundary, its determinizations, legality, reproducibility."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from functools import cache
from typing import Any

import pytest

from domain import search as search_bots
from domain.contract import changed
from domain.engine import Seat, Table, start, step
from domain.games.nin_nal import CARDS, RESOLVE, RULES, SELECT, TIE_BREAK, State
from domain.search import nin_nal
from domain.search.ismcts import Budget, Simulator, search

GAME = "nin-nal"
SALTS = ("00",) * 2
SMALL = Budget(iterations=40, **nin_nal.SETTINGS)  # type: ignore[arg-type]


def _begin(players: int, seed: int, options: dict[str, Any] | None = None) -> Table:
    seats = [Seat(i, f"bot{i}", "random") for i in range(players)]
    _events, table = start(GAME, f"search-test-{seed}", seats, seed=seed.to_bytes(8, "big"), options=options)
    return table


def _positions(players: int, seed: int) -> list[tuple[State, int]]:
    """Every decision point of one random game (each seat of a simultaneous step, before and after
    the others committed), as (state, seat)."""
    rnd = random.Random(seed)
    table = _begin(players, seed)
    out: list[tuple[State, int]] = []
    while not table.finished:
        seat = table.to_act[0]
        out += [(table.state, s) for s in table.to_act]
        _events, table = step(table, seat, RULES.sample_action(table.state, seat, rnd), salts=SALTS)
    return out


@cache
def _sample() -> tuple[tuple[State, int, int], ...]:
    """Positions of every phase where a seat decides, from games of 2 to 5 players, tie-breaks included."""
    out: list[tuple[State, int, int]] = []
    for players in (2, 3, 4, 5):
        for g in range(2):
            positions = _positions(players, 1000 * players + g)
            picks = random.Random(g).sample(positions, 8)
            out += [(state, seat, players) for state, seat in picks]
    out += [(state, seat, 2) for state, seat in _tie_break_positions()[:4]]
    return tuple(out)


@cache
def _tie_break_positions() -> list[tuple[State, int]]:
    for seed in range(500):
        found = [(s, seat) for s, seat in _positions(2, seed) if s.phase == TIE_BREAK]
        if found:
            return found
    raise AssertionError("no random game reached a tie-break")


def _view(state: State, seat: int) -> dict[str, Any]:
    return RULES.view(state, seat, False)


def _unseen_from_view(view: dict[str, Any]) -> list[str]:
    """The cards a seat cannot see, computed from its view alone."""
    seen = set(view["hand"] or ())
    for pile in view["piles"]:
        seen.update(pile)
    for won in view["won"]:
        seen.update(won)
    seen.update(r["card"] for r in view["revealed"])
    return [c for c in CARDS if c not in seen]


def _reassigned(state: State, seat: int, rnd: random.Random) -> State:
    """Another deal of the unseen cards, consistent with ``seat``'s view (independent of the bot)."""
    unseen = _unseen_from_view(_view(state, seat))
    others = [s for s in range(state.n_seats) if s != seat]
    hidden = [c for s in others for c in state.hands[s]] + list(state.unused)
    assert Counter(hidden) == Counter(unseen)
    for _ in range(20):
        deck = list(unseen)
        rnd.shuffle(deck)
        hands = list(state.hands)
        for s in others:
            hands[s], deck = tuple(deck[: len(hands[s])]), deck[len(hands[s]) :]
        other = changed(state, hands=tuple(hands), unused=tuple(deck))
        if len(unseen) < 2 or (other.hands, other.unused) != (state.hands, state.unused):
            return other
    raise AssertionError("could not deal the unseen cards differently")


def test_positions_cover_every_phase() -> None:
    phases = Counter(state.phase for state, _seat, _n in _sample())
    assert phases[SELECT] and phases[RESOLVE] and phases[TIE_BREAK]


def test_the_decision_depends_only_on_the_seats_information_set() -> None:
    rnd = random.Random(7)
    for k, (state, seat, players) in enumerate(_sample()):
        other = _reassigned(state, seat, rnd)
        assert _view(other, seat) == _view(state, seat)
        mine = search(RULES, nin_nal.KNOWLEDGE, state, seat, players, random.Random(k), SMALL).best
        theirs = search(RULES, nin_nal.KNOWLEDGE, other, seat, players, random.Random(k), SMALL).best
        assert mine == theirs


def test_the_search_level_does_not_read_hidden_cards() -> None:
    rnd = random.Random(8)
    picks = [p for p in _sample() if p[0].phase == SELECT][:3] + [p for p in _sample() if p[0].phase == RESOLVE][:1]
    for k, (state, seat, players) in enumerate(picks):
        other = _reassigned(state, seat, rnd)
        mine = search_bots.choose(RULES, state, seat, players, "search", random.Random(k))
        assert mine == search_bots.choose(RULES, other, seat, players, "search", random.Random(k))


def test_every_determinization_keeps_the_view_and_plays_on_to_the_end() -> None:
    rnd = random.Random(9)
    for state, seat, players in _sample():
        sim = Simulator(RULES, players)
        for _ in range(3):
            world = nin_nal.KNOWLEDGE.determinize(state, seat, rnd)
            assert _view(world, seat) == _view(state, seat)
            assert Counter(c for h in world.hands for c in h) + Counter(world.unused) == Counter(
                c for h in state.hands for c in h
            ) + Counter(state.unused)
            while (result := sim.result(world)) is None:
                pending = RULES.pending(world)
                joint = {s: RULES.sample_action(world, s, rnd) for s in pending.seats}
                world = sim.after(world, pending, joint)
            assert len(result) == players


def test_the_decision_is_legal_and_reproducible() -> None:
    for k, (state, seat, players) in enumerate(_sample()):
        first = search(RULES, nin_nal.KNOWLEDGE, state, seat, players, random.Random(k), SMALL).best
        assert first in RULES.legal_actions(state, seat)
        assert first == search(RULES, nin_nal.KNOWLEDGE, state, seat, players, random.Random(k), SMALL).best


def test_rollouts_and_candidates_are_legal() -> None:
    rnd = random.Random(10)
    for state, seat, _players in _sample():
        world = nin_nal.KNOWLEDGE.determinize(state, seat, rnd)
        legal = RULES.legal_actions(world, seat)
        assert nin_nal.KNOWLEDGE.rollout(world, seat, rnd) in legal
        options = nin_nal.KNOWLEDGE.candidates(world, seat, rnd)
        assert options and all(a in legal for a in options)
        assert all(0.0 <= r <= 1.0 for r in nin_nal.KNOWLEDGE.evaluate(world))


_CHILD = """
import json, random, sys
from domain.games.nin_nal import RULES
from domain.search import choose
from tests.unit.test_search_nin_nal import _sample
out = []
for k, (state, seat, players) in enumerate(_sample()[:: len(_sample()) // 3][:3]):
    out.append(choose(RULES, state, seat, players, "search", random.Random(k)))
print(json.dumps(out))
"""


@pytest.mark.parametrize("hash_seed", ["1"])
def test_same_seed_same_decision_in_another_process(hash_seed: str) -> None:
    here = [
        search_bots.choose(RULES, state, seat, players, "search", random.Random(k))
        for k, (state, seat, players) in enumerate(_sample()[:: len(_sample()) // 3][:3])
    ]
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = subprocess.run(
        [sys.executable, "-c", _CHILD], cwd=root, env=env, capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(child.stdout) == here
