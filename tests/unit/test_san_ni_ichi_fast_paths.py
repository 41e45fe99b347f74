"""San, Ni, Ichi!'s fast paths equal the plain definitions they replace.

The ``greedy`` bot values a position from a light table of the piles (``bots._board``) and, in its
play-outs, values each action of its team by moving that table (``bots._after``) instead of evolving
the whole state for every action; ``moves.play_targets`` reads the piles directly. A bot's decisions
are part of the record (``kifu verify --bots`` re-runs them, and the search's ``"bots"`` model plays
the bot's rule), so these must give exactly what the plain definitions gave: the same values to the
bit, the same action and the same random stream consumed. Each is held here against the rule
written out the obvious way, on every position of seeded games over the table shapes (three to six
seats, team play, card scoring, another deck).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from domain.engine import Seat, sample_action, start, step
from domain.games.san_ni_ichi import bots, moves
from domain.games.san_ni_ichi.cards import BEATS, YOSO, kind, points, strength
from domain.games.san_ni_ichi.state import ATTACK_PHASE, BETWEEN, CARDS_SCORING, State, evolve
from tests.support.records import SALTS

SHAPES: tuple[tuple[int, dict[str, Any]], ...] = (
    (3, {}),
    (4, {}),
    (4, {"teams": True}),
    (5, {"scoring": "cards"}),
    (5, {"deck": "alt-1"}),
    (6, {"teams": True}),
    (3, {"scoring": "cards"}),
)
GAMES_PER_SHAPE = 3


def positions(level: str) -> Iterator[tuple[State, int, random.Random]]:
    """Every decision of seeded games over ``SHAPES`` played by ``level`` (``greedy`` or ``random``):
    (state, seat to act, a stream for the decision)."""
    for shape, (n, options) in enumerate(SHAPES):
        for g in range(GAMES_PER_SHAPE):
            seed = shape * 100 + g
            seats = [Seat(i, f"bot{i}", level) for i in range(n)]
            _events, table = start("san-ni-ichi", f"fast-{seed}", seats, seed=seed.to_bytes(8, "big"), options=options)
            while not table.finished:
                seat = table.to_act[0]
                yield table.state, seat, random.Random(seed * 1000 + table.turn_version)
                play = random.Random(table.turn_version)
                action = bots.greedy(table.state, seat, play) if level == "greedy" else sample_action(table, seat, play)
                _events, table = step(table, seat, action, salts=SALTS)


# ---------------------------------------------------------------- the plain definitions


def plain_value(state: State, seat: int) -> float:
    """The bot's value, as its docstring says: the others' projections (mean and minimum, averaged)
    less its own team's; a projection is the damage pile, plus the combat pile when it has the highest
    top (outside the pause between rounds), else ``PILE_WEIGHT`` of it."""

    def pts(c: str) -> int:
        return 1 if state.scoring == CARDS_SCORING else points(c, state.n)

    exposed = [s for s in range(state.n) if state.combat[s]]
    high = max((strength(state.combat[s][-1][0]) for s in exposed), default=0)
    proj = []
    for s, total in enumerate(state.totals()):
        pile = sum(pts(c) for c, _ in state.combat[s])
        taken = bool(state.combat[s]) and strength(state.combat[s][-1][0]) == high
        proj.append(total + (pile if taken and state.phase != BETWEEN else bots.PILE_WEIGHT * pile))
    team = state.team(seat)
    others = [sum(proj[s] for s in state.team(o)) for o in range(state.n) if o not in team and min(state.team(o)) == o]
    if not others:
        return -sum(proj[s] for s in team)
    return (sum(others) / len(others) + min(others)) / 2 - sum(proj[s] for s in team)


def plain_play_out(state: State, seat: int, rnd: random.Random) -> State:
    """The rest of the attack phase: every action of the bot's team evolved and valued, the others'
    chosen at random."""
    team = state.team(seat)
    while state.phase == ATTACK_PHASE and (current := state.current) is not None:
        ev = moves.automatic(state, current)
        if ev is None:
            actions = moves.attack_actions(state, current)
            if current.seat in team:
                after = [evolve(state, moves.event_of(state, current, a)) for a in actions]
                state = after[bots._best([(plain_value(s, seat), i) for i, s in enumerate(after)], rnd)]
                continue
            ev = moves.event_of(state, current, rnd.choice(actions))
        state = evolve(state, ev)
    return state


def plain_play_targets(state: State, seat: int, card: str) -> list[int]:
    """Unprotected seats; a Yoso Kogeki another's, an attack card an empty pile or a top it beats."""
    out = []
    for s in range(state.n):
        if s in state.protected:
            continue
        top = state.combat[s][-1] if state.combat[s] else None
        if kind(card) == YOSO:
            if s != seat:
                out.append(s)
        elif top is None or top[1] is None or BEATS[card.split("-", maxsplit=1)[0]] == top[1]:
            out.append(s)
    return out


# ---------------------------------------------------------------- the fast paths against them


def test_the_value_is_the_plain_one_to_the_bit() -> None:
    checked = 0
    for state, _seat, _rnd in positions("random"):
        if state.hands:
            for seat in range(state.n):
                assert bots._value(state, seat) == plain_value(state, seat)
                checked += 1
    assert checked > 1000


def test_a_play_out_leaves_the_plain_one_s_table_by_the_same_draws() -> None:
    checked = 0
    for state, seat, rnd in positions("random"):
        if state.phase == ATTACK_PHASE:
            for who in {seat, (seat + 1) % state.n}:
                plain_rnd = random.Random()
                plain_rnd.setstate(rnd.getstate())
                fast_rnd = random.Random()
                fast_rnd.setstate(rnd.getstate())
                assert bots.board(bots._play_out(state, who, fast_rnd)) == bots.board(
                    plain_play_out(state, who, plain_rnd)
                )
                assert fast_rnd.getstate() == plain_rnd.getstate()
                checked += 1
    assert checked > 300


def test_the_greedy_bot_decides_as_with_the_plain_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    decisions = list(positions("greedy"))
    fast = []
    for state, seat, rnd in decisions:
        fast_rnd = random.Random()
        fast_rnd.setstate(rnd.getstate())
        fast.append((bots.greedy(state, seat, fast_rnd), fast_rnd.getstate()))
    monkeypatch.setattr(bots, "_value", plain_value)
    monkeypatch.setattr(bots, "_play_out", plain_play_out)
    for (state, seat, rnd), (action, stream) in zip(decisions, fast, strict=True):
        assert bots.greedy(state, seat, rnd) == action
        assert rnd.getstate() == stream
    assert len(decisions) > 1000


def test_play_targets_are_the_plain_ones() -> None:
    checked = 0
    for state, _seat, _rnd in positions("random"):
        current = state.current
        if current is not None and kind(current.card) in ("attack", YOSO):
            assert moves.play_targets(state, current) == plain_play_targets(state, current.seat, current.card)
            checked += 1
    assert checked > 300


def test_can_use_says_whether_there_is_a_use() -> None:
    """At every card of the rest of each round played at random, the automatic ones included."""
    checked = set()
    for position, _seat, rnd in positions("random"):
        state = position
        while state.phase == ATTACK_PHASE and (current := state.current) is not None:
            usable = moves.can_use(state, current)
            assert usable == bool(moves.uses(state, current))
            checked.add((kind(current.card), usable))
            ev = moves.automatic(state, current)
            state = evolve(
                state, ev or moves.event_of(state, current, rnd.choice(moves.attack_actions(state, current)))
            )
    assert {(k, u) for k in ("attack", "sai", "tonfa") for u in (True, False)} <= checked, checked
