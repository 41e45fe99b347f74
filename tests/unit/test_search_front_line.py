"""The Front Line search bot: it reads only its seat's information, plays legally, and is reproducible."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from domain import search
from domain.bots import choose_action
from domain.contract import changed
from domain.engine import Seat, admits, start, step
from domain.games.front_line import RULES, space
from domain.games.front_line import state as st
from domain.games.front_line.bots import exposure
from domain.games.front_line.cards import CATALOGUE, PER_PLAYER, deck
from domain.search import front_line
from domain.search.ismcts import Budget, Simulator

GAME = "front-line"
ROOT = Path(__file__).resolve().parents[2]
SMALL = Budget(24, **front_line.SETTINGS)  # type: ignore[arg-type]
CONFIGS: tuple[tuple[int, Mapping[str, Any]], ...] = (
    (2, {}),
    (3, {}),
    (4, {}),
    (2, {"deck": "per-player"}),
    (3, {"jokers": True}),
    (2, {"deck": "per-player", "jokers": True}),
    (4, {"deck": "per-player", "jokers": True}),
)

Position = tuple[st.State, int, int]  # state, seat to act, seats


@cache
def positions() -> tuple[Position, ...]:
    """Decisions from games of mixed greedy and random seats, at random points: attack and refill turns,
    every deck and joker option, 2-4 seats."""
    out: list[Position] = []
    rnd = random.Random(2024)
    for g, (n, options) in enumerate(CONFIGS * 2):
        levels = [rnd.choice(["greedy", "random"]) for _ in range(n)]
        _, table = start(GAME, f"t{g}", [Seat(i, f"p{i}", lv) for i, lv in enumerate(levels)], bytes([g]), options)
        seen: dict[str, list[Position]] = {st.ATTACK: [], st.REFILL: []}
        while not table.finished:
            seat = table.to_act[0]
            seen[st.phase(table.state)].append((table.state, seat, n))
            action = choose_action(table, seat, levels[seat], random.Random(rnd.random()))
            _, table = step(table, seat, action)
        for found in seen.values():
            out += rnd.sample(found, min(3, len(found)))
    return tuple(out)


def seat_view(state: st.State, seat: int) -> dict[str, Any]:
    return RULES.view(state, seat, False)


def reassigned(state: st.State, rnd: random.Random) -> st.State:
    """Another deal of the hidden cards ``seat`` cannot tell apart, written apart from the bot's ``determinize``:
    the cards actually in the draw piles and set aside, permuted among those places (each draw pile keeps its
    size; with per-player decks each card stays in its owner's pile or set aside)."""
    hidden = [c for pile in state.draw for c in pile] + list(state.set_aside)
    places = [len(pile) for pile in state.draw] + [len(state.set_aside)]
    if state.deck == PER_PLAYER:
        draw = []
        aside: list[str] = []
        for owner, pile in enumerate(state.draw):
            mine = [c for c in (*pile, *state.set_aside) if CATALOGUE[c].owner == owner]
            rnd.shuffle(mine)
            draw.append(tuple(mine[: len(pile)]))
            aside += mine[len(pile) :]
        return changed(state, draw=tuple(draw), set_aside=tuple(aside))
    rnd.shuffle(hidden)
    cut = [sum(places[:i]) for i in range(len(places) + 1)]
    draw = [tuple(hidden[cut[i] : cut[i + 1]]) for i in range(len(state.draw))]
    return changed(state, draw=tuple(draw), set_aside=tuple(hidden[cut[-2] :]))


def another(state: st.State, rnd: random.Random) -> st.State | None:
    """A reassignment that really differs from ``state`` (None when the hidden places allow only one)."""
    for _ in range(20):
        other = reassigned(state, rnd)
        if (other.draw, other.set_aside) != (state.draw, state.set_aside):
            return other
    return None


def small_search(state: st.State, seat: int, n: int, k: int) -> dict[str, Any]:
    return search.ismcts.search(RULES, front_line.KNOWLEDGE, state, seat, n, random.Random(k), SMALL).best


def legal(state: st.State, seat: int, action: Mapping[str, Any]) -> bool:
    return admits(GAME, RULES.action_space(state, seat), action)


def full_deck(state: st.State) -> list[str]:
    if state.deck == PER_PLAYER:
        return sorted(c for s in range(state.n_seats) for c in deck(PER_PLAYER, state.jokers, s))
    return sorted(deck(state.deck, state.jokers))


def every_card(state: st.State) -> list[str]:
    places = (*state.front, *state.reserve, *state.draw, *state.captured, state.set_aside)
    return sorted(c for p in places for c in p)


# ---------------------------------------------------------------- tests


def test_positions_cover_every_phase_and_option() -> None:
    found = {(st.phase(s), n, s.deck, s.jokers) for s, _, n in positions()}
    assert {p for p, *_ in found} == {st.ATTACK, st.REFILL}
    assert {(n, d, j) for _, n, d, j in found} >= {(2, "shared", False), (2, "per-player", True), (3, "shared", True)}
    assert any(st.phase(s) == st.REFILL for s, _, n in positions() if s.deck == PER_PLAYER)


def test_the_decision_ignores_what_the_seat_cannot_see() -> None:
    rnd = random.Random(7)
    changed_any = 0
    for k, (state, seat, n) in enumerate(positions()):
        other = another(state, rnd)
        if other is None:
            continue
        assert seat_view(other, seat) == seat_view(state, seat)
        assert every_card(other) == every_card(state)
        changed_any += 1
        assert small_search(state, seat, n, k) == small_search(other, seat, n, k)
    assert changed_any >= 30


def test_the_decision_ignores_what_the_seat_cannot_see_with_the_others_modelled_as_greedy() -> None:
    """``"opponents": "bots"``: the other seats played in the tree by the greedy bot's rule still give a
    decision that only the seat's view decides."""
    rnd = random.Random(8)
    tried = 0
    for k, (state, seat, n) in enumerate(positions()[::3]):
        other = another(state, rnd)
        if other is None:
            continue
        tried += 1
        models = {s: RULES.bots["greedy"] for s in range(n) if s != seat}
        first = search.ismcts.search(RULES, front_line.KNOWLEDGE, state, seat, n, random.Random(k), SMALL, None, models)
        again = search.ismcts.search(RULES, front_line.KNOWLEDGE, other, seat, n, random.Random(k), SMALL, None, models)
        assert first == again
    assert tried >= 10


@pytest.mark.parametrize("index", [3, 17, 41])
def test_the_search_level_ignores_what_the_seat_cannot_see(index: int) -> None:
    state, seat, n = positions()[index % len(positions())]
    other = another(state, random.Random(index))
    assert other is not None and seat_view(other, seat) == seat_view(state, seat)
    ours = search.choose(RULES, state, seat, n, "search", random.Random(index))
    assert ours == search.choose(RULES, other, seat, n, "search", random.Random(index))
    assert legal(state, seat, ours)


def test_every_determinization_keeps_the_view_and_plays_on_to_the_end() -> None:
    rnd = random.Random(11)
    differs = 0
    for state, seat, n in positions():
        sim = Simulator(RULES, n)
        for _ in range(3):
            world = front_line.KNOWLEDGE.determinize(state, seat, rnd)
            assert seat_view(world, seat) == seat_view(state, seat)
            assert every_card(world) == full_deck(state)  # each card of the deck(s) once: a legal deal
            assert [len(p) for p in world.draw] == [len(p) for p in state.draw]
            differs += (world.draw, world.set_aside) != (state.draw, state.set_aside)
            for _turn in range(500):
                if sim.result(world) is not None:
                    break
                (to_act,) = RULES.pending(world).seats
                world = sim.after(world, RULES.pending(world), {to_act: RULES.sample_action(world, to_act, rnd)})
            assert sim.result(world) is not None
    assert differs > len(positions())


def test_candidates_and_play_outs_are_legal() -> None:
    rnd = random.Random(5)
    for state, seat, _n in positions():
        world = front_line.KNOWLEDGE.determinize(state, seat, rnd)
        options = front_line.KNOWLEDGE.candidates(world, seat, rnd)
        assert options
        for action in [*options, front_line.KNOWLEDGE.rollout(world, seat, rnd)]:
            assert legal(world, seat, action), action
            RULES.decide(world, seat, action)  # the rules accept it too


def test_the_decision_is_legal() -> None:
    for k, (state, seat, n) in enumerate(positions()[::3]):
        assert legal(state, seat, small_search(state, seat, n, k))


def test_evaluate_is_a_reward_per_seat() -> None:
    for state, _seat, n in positions()[::5]:
        values = front_line.KNOWLEDGE.evaluate(state)
        assert len(values) == n and all(0.0 <= v <= 1.0 for v in values)


def test_same_seed_same_decision() -> None:
    for k, (state, seat, n) in enumerate(positions()[::7]):
        assert small_search(state, seat, n, k) == small_search(state, seat, n, k)


SCRIPT = """
import json, random, sys
from domain import search
from domain.games.front_line import RULES
from tests.unit.test_search_front_line import positions
state, seat, n = positions()[int(sys.argv[1])]
print(json.dumps(search.choose(RULES, state, seat, n, "search", random.Random(99))))
"""


def test_same_seed_same_decision_in_another_process() -> None:
    index = 9
    state, seat, n = positions()[index]
    here = search.choose(RULES, state, seat, n, "search", random.Random(99))
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(index)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        assert json.loads(done.stdout) == here


def test_the_fast_attack_rule_matches_the_games() -> None:
    """The module's bitmask helpers compute what ``space`` and the greedy bot's ``exposure`` compute."""
    for state, seat, _n in positions():
        if st.phase(state) != st.ATTACK:
            continue
        pos = space.from_state(state, seat)
        mine = (*state.front[seat], *state.reserve[seat])
        for t in pos.targets:
            assert front_line._groups(mine, len(state.front[seat]), t.card.id) == tuple(space.minimal_groups(t))
        key = (state.front, state.reserve, state.out, seat)
        assert front_line._exposure(*key, state.front[seat], ()) == exposure(state, seat, state.front[seat])
        best = space.best_packings(pos, limit=1)
        found = front_line._candidates(*key)  # the pass, then the best packings
        assert (len(found[1]) if len(found) > 1 else 0) == (len(best[0]) if best else 0)
