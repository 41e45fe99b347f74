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
from domain.games.san_ni_ichi.cards import CARDS, TORINOKO, WEAPONS, attack_cards, kind, points
from domain.games.san_ni_ichi.state import (
    ATTACK_PHASE,
    BETWEEN,
    CARDS_SCORING,
    SELECT,
    SMOKE,
    Played,
    State,
    evolve,
    table_changes,
)

SAMPLES = 6
CONTINUATIONS = 3
PILE_WEIGHT = 0.4
BOMB_KEEP_VALUE = 2.5
STRENGTH = {c: info.strength for c, info in CARDS.items()}
POINTS = {n: {c: points(c, n) for c in CARDS} for n in range(3, 7)}


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

# The table the valuation reads: each seat's combat pile worth (its damage), its top's strength (0: no
# pile; every card is at least 1) and its damage total. ``board_after`` moves it by an attack action without
# evolving the whole state (the play-out values every action of the bot's team that way).
Board = tuple[list[int], list[int], list[int]]


def board(state: State) -> Board:
    """The table the valuation reads, from the state."""
    tops = [STRENGTH[pile[-1][0]] if pile else 0 for pile in state.combat]
    if state.scoring == CARDS_SCORING:
        return [len(pile) for pile in state.combat], tops, [len(d) for d in state.damage] or [0] * state.n
    value_of = POINTS[state.n]
    worth = [sum([value_of[c] for c, _ in pile]) for pile in state.combat]
    return worth, tops, [sum([value_of[c] for c in d]) for d in state.damage] or [0] * state.n


def projected(state: State, table: Board | None = None) -> list[float]:
    """Each seat's damage if the damage phase came now, piles left in play weighted (``table``: the
    piles after an action not yet evolved into ``state``, ``board_after``)."""
    worth, tops, totals = board(state) if table is None else table
    high = max(tops)
    now = state.phase != BETWEEN
    return [
        total + (pile if now and tops[s] == high and tops[s] else PILE_WEIGHT * pile)
        for s, (total, pile) in enumerate(zip(totals, worth, strict=True))
    ]


def _value(state: State, seat: int, table: Board | None = None) -> float:
    """Others' projected damage (mean and minimum, averaged) minus the bot's team's (``table``: as in
    ``projected``)."""
    proj = projected(state, table)
    team, other_teams = _sides(state, seat)
    others = [sum(proj[s] for s in other) for other in other_teams]
    if not others:
        return -sum(proj[s] for s in team)
    return (sum(others) / len(others) + min(others)) / 2 - sum(proj[s] for s in team)


_SIDES: dict[tuple[int, bool, int], tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]] = {}


def _sides(state: State, seat: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """``seat``'s team and the other teams (each once, by its lowest seat): they depend on the table's
    size and team play only, so they are worked out once per table shape."""
    key = (state.n, state.teams, seat)
    sides = _SIDES.get(key)
    if sides is None:
        team = state.team(seat)
        sides = _SIDES[key] = (
            team,
            tuple(state.team(o) for o in range(state.n) if o not in team and min(state.team(o)) == o),
        )
    return sides


def board_after(state: State, current: Played, action: Mapping[str, Any], table: Board) -> Board:
    """``table`` once ``current`` took ``action`` (as ``evolve`` of its event would leave the piles)."""
    worth, tops, totals = table
    kind_of = action["type"]
    if kind_of == "discard":
        return table
    gain = 1 if state.scoring == CARDS_SCORING else POINTS[state.n][current.card]
    if kind_of == "shuriken":
        totals = list(totals)
        totals[action["target"]] += gain
        return worth, tops, totals
    worth, tops = list(worth), list(tops)
    if kind_of == "play":
        target, to = action["target"], action.get("counter_to")
        worth[target] += gain
        tops[target] = STRENGTH[current.card]
        if to is not None:
            worth[to], tops[to], worth[target], tops[target] = worth[target], tops[target], 0, 0
    elif kind_of == "sai":
        a, b = action["piles"]
        worth[a], worth[b], tops[a], tops[b] = worth[b], worth[a], tops[b], tops[a]
    else:  # tonfa: the pile's top goes to the hand
        pile = state.combat[action["pile"]]
        worth[action["pile"]] -= 1 if state.scoring == CARDS_SCORING else POINTS[state.n][pile[-1][0]]
        tops[action["pile"]] = STRENGTH[pile[-2][0]] if len(pile) > 1 else 0
    return worth, tops, totals


def _best(scored: Sequence[tuple[float, int]], rnd: random.Random) -> int:
    top = max(v for v, _ in scored)
    return rnd.choice([i for v, i in scored if v >= top - 1e-9])


# ---------------------------------------------------------------- playing a round out


def _play_out(state: State, seat: int, rnd: random.Random) -> State:
    """The rest of the attack phase: the bot's team greedy one step ahead, the others at random.

    What comes back is the table once every card resolved, for ``_value`` only: the cards are not
    marked resolved nor the phase moved on (``table_changes``: what each event does to the table)."""
    team = state.team(seat)
    for card in [p for p in state.played if p.how is None] if state.phase == ATTACK_PHASE else ():
        actions = moves.attack_actions(state, card)  # none: the card resolves by itself
        if not actions:
            ev = moves.automatic(state, card)
            assert ev is not None
        elif card.seat in team:
            now = board(state)
            values = [(_value(state, seat, board_after(state, card, a, now)), i) for i, a in enumerate(actions)]
            ev = moves.event_of(state, card, actions[_best(values, rnd)])
        else:
            ev = moves.event_of(state, card, rnd.choice(actions))
        state = changed(state, **table_changes(state, ev))
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
