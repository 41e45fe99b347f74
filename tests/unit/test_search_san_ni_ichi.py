"""The San, Ni, Ichi! search bot: its information boundary, its determinizations, legal and reproducible
decisions (``domain.search.san_ni_ichi``)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any

import pytest

from domain import search
from domain.contract import changed
from domain.engine import Seat, admits, start, step
from domain.games.san_ni_ichi import RULES
from domain.games.san_ni_ichi.cards import TORINOKO, kind
from domain.games.san_ni_ichi.state import ATTACK_PHASE, SELECT, SMOKE, State
from domain.search.ismcts import Budget, Simulator
from domain.search.ismcts import search as run_search
from domain.search.san_ni_ichi import KNOWLEDGE, SETTINGS, greedy_model, known_cards

GAME = "san-ni-ichi"
SALTS = ("00", "00")
SETUPS: tuple[tuple[int, Mapping[str, Any]], ...] = (
    (3, {}),
    (4, {}),
    (4, {"teams": True}),
    (5, {"deck": "alt-1"}),
    (6, {"teams": True}),
    (4, {"scoring": "cards"}),
)
SMALL = Budget(12, **SETTINGS)  # type: ignore[arg-type]


Position = tuple[State, int, int]  # state, seat to decide, players


@cache
def positions() -> tuple[Position, ...]:
    """Every decision of every seat in random games of each setup (simultaneous steps: each seat)."""
    out: list[Position] = []
    for g, (n, options) in enumerate(SETUPS):
        for rep in range(2):
            seed = 1000 * g + rep
            seats = [Seat(i, f"p{i}", "random") for i in range(n)]
            _events, table = start(GAME, f"t{seed}", seats, seed=seed.to_bytes(8, "big"), options=dict(options))
            rnd = random.Random(seed)
            while not table.finished:
                out += [(table.state, s, n) for s in table.to_act]
                seat = table.to_act[0]
                _events, table = step(table, seat, RULES.sample_action(table.state, seat, rnd), salts=SALTS)
    return tuple(out)


def sample(k: int, seed: int, phase: str | None = None) -> list[Position]:
    pool = [p for p in positions() if phase is None or p[0].phase == phase]
    return random.Random(seed).sample(pool, min(k, len(pool)))


def view(state: State, seat: int) -> dict[str, Any]:
    return RULES.view(state, seat, False)


def reassigned(state: State, seat: int, rnd: random.Random) -> State | None:
    """Another deal of the other seats' hands the seat cannot tell apart (written apart from the bot's
    ``determinize``): the cards it cannot see, shuffled into hands of the same sizes, every seat that
    selects now holding a card it may select. None where nothing can change."""
    others = [s for s in range(state.n) if s != seat]
    unseen = [c for s in others for c in state.hands[s]]
    if len(set(unseen)) < 2 or sum(1 for s in others if state.hands[s]) < 2:
        return None
    for _ in range(500):
        rnd.shuffle(unseen)
        hands, at = list(state.hands), 0
        for s in others:
            hands[s] = tuple(unseen[at : at + len(state.hands[s])])
            at += len(hands[s])
        if state.phase == SELECT and any(
            not any(kind(c) != TORINOKO for c in hands[s]) for s in others if s in state.selecting
        ):
            continue
        if any(Counter(hands[s]) != Counter(state.hands[s]) for s in others):
            return changed(state, hands=tuple(hands))
    return None


def test_positions_cover_every_phase() -> None:
    phases = Counter(p[0].phase for p in positions())
    assert {SELECT, ATTACK_PHASE, SMOKE} <= set(phases)


@pytest.mark.parametrize("modelled", [False, True])
def test_another_deal_of_the_hidden_hands_gives_the_same_decision(modelled: bool) -> None:
    """The information boundary: a state that differs only in what the seat cannot see decides alike,
    also with the other seats played in the tree by the search's model of ``greedy`` (``"bots"``)."""
    assert SMALL.opponents == "bots"
    tried = 0
    for i, (state, seat, n) in enumerate(sample(60, 1)):
        other = reassigned(state, seat, random.Random(i))
        if other is None:
            continue
        tried += 1
        assert view(other, seat) == view(state, seat)
        assert other.hands != state.hands and other.hands[seat] == state.hands[seat]
        models = {s: greedy_model for s in range(n) if s != seat} if modelled else None
        first = run_search(RULES, KNOWLEDGE, state, seat, n, random.Random(i), SMALL, None, models).best
        assert run_search(RULES, KNOWLEDGE, other, seat, n, random.Random(i), SMALL, None, models).best == first
    assert tried >= 30


def test_the_search_level_sees_only_its_seat() -> None:
    phases = (SELECT, ATTACK_PHASE, SMOKE)
    for i, (state, seat, n) in enumerate(p for phase in phases for p in sample(1, 2, phase)):
        other = reassigned(state, seat, random.Random(i))
        assert other is not None and view(other, seat) == view(state, seat)
        chosen = search.choose(RULES, state, seat, n, "search", random.Random(i))
        assert search.choose(RULES, other, seat, n, "search", random.Random(i)) == chosen


def test_determinizations_keep_the_view_and_play_on_to_the_end() -> None:
    for i, (state, seat, n) in enumerate(sample(80, 3)):
        rnd = random.Random(i)
        sim = Simulator(RULES, n)
        for _ in range(3):
            world = KNOWLEDGE.determinize(state, seat, rnd)
            assert view(world, seat) == view(state, seat)
            assert sorted(c for h in world.hands for c in h) == sorted(c for h in state.hands for c in h)
            if world.phase == SELECT:
                assert all(any(kind(c) != TORINOKO for c in world.hands[s]) for s in world.selecting)
            while sim.result(world) is None:
                pending = RULES.pending(world)
                joint = {s: RULES.sample_action(world, s, rnd) for s in pending.seats}
                world = sim.after(world, pending, joint)


def test_cards_seen_entering_a_hand_stay_there() -> None:
    """A Tonfa's take and a covered seat's draw are public: every determinization keeps them in place."""
    seen = 0
    for i, (state, seat, _n) in enumerate(positions()):
        known = known_cards(state, seat)
        if not any(known.values()):
            continue
        seen += 1
        for s, cards in known.items():
            assert not Counter(cards) - Counter(state.hands[s])  # what the record says is true
        world = KNOWLEDGE.determinize(state, seat, random.Random(i))
        for s, cards in known.items():
            assert not Counter(cards) - Counter(world.hands[s])
    assert seen >= 5


def test_decisions_are_legal() -> None:
    for i, (state, seat, n) in enumerate(sample(40, 4)):
        action = run_search(RULES, KNOWLEDGE, state, seat, n, random.Random(i), SMALL).best
        assert action in RULES.legal_actions(state, seat) or admits(GAME, RULES.action_space(state, seat), action)


def test_candidates_are_legal_and_never_empty() -> None:
    for i, (state, seat, _n) in enumerate(sample(150, 5)):
        world = KNOWLEDGE.determinize(state, seat, random.Random(i))
        legal = RULES.legal_actions(world, seat)
        found = KNOWLEDGE.candidates(world, seat, random.Random(i))
        assert found and all(a in legal for a in found)
        assert KNOWLEDGE.rollout(world, seat, random.Random(i)) in legal


def test_same_seed_same_decision() -> None:
    for i, (state, seat, n) in enumerate(sample(10, 6)):
        first = run_search(RULES, KNOWLEDGE, state, seat, n, random.Random(i), SMALL).best
        assert run_search(RULES, KNOWLEDGE, state, seat, n, random.Random(i), SMALL).best == first


SCRIPT = """
import random
from domain.engine import Seat, start, step
from domain import search
from domain.games.san_ni_ichi import RULES
seats = [Seat(i, f"p{i}", "random") for i in range(4)]
_e, table = start("san-ni-ichi", "x", seats, seed=b"12345678")
rnd = random.Random(5)
for _ in range(9):
    _e, table = step(table, table.to_act[0], RULES.sample_action(table.state, table.to_act[0], rnd), salts=("00", "00"))
seat = table.to_act[0]
print(search.choose(RULES, table.state, seat, 4, "search", random.Random(11)))
"""


@pytest.mark.parametrize("hash_seeds", [("1", "2")])
def test_same_decision_in_another_process(hash_seeds: tuple[str, str]) -> None:
    answers = set()
    for hash_seed in hash_seeds:
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        answers.add(done.stdout)
    assert len(answers) == 1
