"""San, Ni, Ichi!'s ``greedy`` bot: keep its own (team's) projected damage low, the others' high.

It reads only what its seat may see: the bot first blanks every other hand
(``_masked``); unrevealed selections and smoke decisions live in the engine, not in
the state. Opponents it cannot see are modelled as random players.

* Projection: a seat's damage if the damage phase came now (damage pile + the
  piles with the highest top) + ``PILE_WEIGHT`` x the piles left in play; the
  bot's value is the mean and the minimum of the other teams' projections,
  averaged, minus its own.
* Select: Monte-Carlo over ``SAMPLES`` guesses of the others' cards (drawn from the
  cards it cannot see), each round played out with its own card chosen greedily
  and the others' at random.
* Attack phase: every legal action, the rest of the revealed round played out
  ``CONTINUATIONS`` times at random.
* Smoke: when it lowers the projection by more than a smoke bomb's keep value
  (nothing when the bomb would otherwise be wasted).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from domain.contract import changed
from domain.games.san_ni_ichi import flow, moves, secret
from domain.games.san_ni_ichi.cards import TORINOKO, WEAPONS, attack_cards, kind, points, strength
from domain.games.san_ni_ichi.state import (
    ATTACK_PHASE,
    BETWEEN,
    CARDS_SCORING,
    SELECT,
    SMOKE,
    State,
    evolve,
)

SAMPLES = 6
CONTINUATIONS = 3
PILE_WEIGHT = 0.4
BOMB_KEEP_VALUE = 2.5


def greedy(state: State, seat: int, rnd: random.Random, samples: int = SAMPLES) -> dict[str, Any]:
    """The greedy action of ``seat`` (which must be pending); ``samples``: its guesses of the others'
    cards when it selects (the bot's ``SAMPLES``; a search's model of it may guess less often)."""
    mine = _masked(state, seat)
    if mine.phase == SELECT:
        return _select(mine, seat, rnd, samples)
    if mine.phase == SMOKE:
        return _smoke(mine, seat, rnd)
    return _resolve(mine, seat, rnd)


def _masked(state: State, seat: int) -> State:
    """The state as ``seat`` knows it: every other hand blanked."""
    hands = tuple(h if s == seat else () for s, h in enumerate(state.hands))
    return changed(state, hands=hands)


# ---------------------------------------------------------------- valuation


def _projected(state: State) -> list[float]:
    """Each seat's damage if the damage phase came now, piles left in play weighted."""

    def pts(c: str) -> int:
        return 1 if state.scoring == CARDS_SCORING else points(c, state.n)

    exposed = [s for s in range(state.n) if state.combat[s]]
    high = max((strength(state.combat[s][-1][0]) for s in exposed), default=0)
    out = []
    for s, total in enumerate(state.totals()):
        pile = sum(pts(c) for c, _ in state.combat[s])
        taken = bool(state.combat[s]) and strength(state.combat[s][-1][0]) == high
        out.append(total + (pile if taken and state.phase != BETWEEN else PILE_WEIGHT * pile))
    return out


def _value(state: State, seat: int) -> float:
    """Others' projected damage (mean and minimum, averaged) minus the bot's team's."""
    proj = _projected(state)
    team = state.team(seat)
    others = [sum(proj[s] for s in state.team(o)) for o in range(state.n) if o not in team and min(state.team(o)) == o]
    if not others:
        return -sum(proj[s] for s in team)
    return (sum(others) / len(others) + min(others)) / 2 - sum(proj[s] for s in team)


def _best(scored: Sequence[tuple[float, int]], rnd: random.Random) -> int:
    top = max(v for v, _ in scored)
    return rnd.choice([i for v, i in scored if v >= top - 1e-9])


# ---------------------------------------------------------------- playing a round out


def _play_out(state: State, seat: int, rnd: random.Random) -> State:
    """The rest of the attack phase: the bot's team greedy one step ahead, the others at random."""
    team = state.team(seat)
    while state.phase == ATTACK_PHASE and (current := state.current) is not None:
        ev = moves.automatic(state, current)
        if ev is None:
            actions = moves.attack_actions(state, current)
            if current.seat in team:
                after = [evolve(state, moves.event_of(state, current, a)) for a in actions]
                state = after[_best([(_value(s, seat), i) for i, s in enumerate(after)], rnd)]
                continue
            ev = moves.event_of(state, current, rnd.choice(actions))
        state = evolve(state, ev)
    return state


def _resolve(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    current = state.current
    assert current is not None
    actions = moves.attack_actions(state, current)
    last = all(p.how is not None for p in state.played if p is not current)
    runs = 1 if last else CONTINUATIONS
    scored = []
    for i, action in enumerate(actions):
        after = evolve(state, moves.event_of(state, current, action))
        total = sum(_value(_play_out(after, seat, rnd), seat) for _ in range(runs))
        scored.append((total / runs, i))
    return actions[_best(scored, rnd)]


# ---------------------------------------------------------------- selecting


def _unseen(state: State, seat: int) -> list[str]:
    """Selectable cards ``seat`` cannot see (they are in other hands)."""
    seen = {
        *state.hands[seat],
        *state.discards,
        *(c for d in state.damage for c in d),
        *(c for pile in state.combat for c, _ in pile),
        *(p.card for p in state.played),
    }
    deck = [*attack_cards(state.strengths), *(w for w in WEAPONS if w in state.weapons)]
    return [c for c in deck if c not in seen and kind(c) != TORINOKO]


def _select(state: State, seat: int, rnd: random.Random, samples: int) -> dict[str, Any]:
    actions = secret.select_actions(state, seat)
    if len(actions) == 1:
        return actions[0]
    pool = _unseen(state, seat)
    others = [s for s in state.selecting if s != seat]
    totals = [0.0] * len(actions)
    for _ in range(samples):
        guess = dict(zip(others, rnd.sample(pool, min(len(pool), len(others))), strict=False))
        for i, action in enumerate(actions):
            picks: dict[int, Mapping[str, Any]] = {s: {"card": c} for s, c in guess.items()}
            picks[seat] = action
            revealed = evolve(state, flow.reveal_selections(state, picks))
            totals[i] += _value(_play_out(revealed, seat, rnd), seat)
    return actions[_best([(t, i) for i, t in enumerate(totals)], rnd)]


# ---------------------------------------------------------------- smoke


def _smoke(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    actions = secret.smoke_actions(state, seat)
    hand = state.hands[seat]
    bombs = sum(kind(c) == TORINOKO for c in hand)
    keep = 0.0 if bombs >= len(hand) - bombs else BOMB_KEEP_VALUE
    scored = []
    for i, action in enumerate(actions):
        after = evolve(state, flow.reveal_smoke(state, {seat: action}))
        for ev in flow.damage_events(after):
            after = evolve(after, ev)
        scored.append((_value(after, seat) - (keep if action["use"] else 0.0), i))
    return actions[_best(scored, rnd)]
