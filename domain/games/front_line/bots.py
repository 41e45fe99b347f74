"""Front Line bots: ``random`` (the sampler) and ``greedy`` (most captures, then least exposure).

Both use only what their seat may see: the cards on the table (draw piles are
never looked at).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from itertools import combinations
from typing import Any

from domain.games.front_line import space
from domain.games.front_line.actions import PASS
from domain.games.front_line.state import REFILL, State, in_seats, phase, refill_count


def exposure(state: State, seat: int, front: Sequence[str], lost: Collection[str] = ()) -> int:
    """How many cards of ``front`` (``seat``'s front line) some opponent could capture next.

    An opponent's front line (less the cards in ``lost``) and reinforcements all
    count as possible initiators: the reinforcements move up as soon as it loses cards.
    """
    threatened: set[str] = set()
    for other in in_seats(state):
        if other == seat:
            continue
        cards = [c for c in (*state.front[other], *state.reserve[other]) if c not in lost]
        pos = space.position(cards, [], [(seat, front)], other)
        threatened.update(t.card.id for t in pos.targets)
    return len(threatened)


def _greedy_attack(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    pos = space.from_state(state, seat)
    packings = space.best_packings(pos)
    if not packings:
        return dict(PASS)
    mine = state.front[seat]
    scored = [(exposure(state, seat, mine, {t.card.id for t, _ in p}), i) for i, p in enumerate(packings)]
    least = min(score for score, _ in scored)
    chosen = packings[rnd.choice([i for score, i in scored if score == least])]
    return space.declaration([space.attack(pos, t, g) for t, g in chosen])


def _greedy_refill(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """Move up the reinforcements that leave the fewest cards exposed, then threaten the most targets."""
    reserve = state.reserve[seat]
    opponents = [(s, state.front[s]) for s in in_seats(state) if s != seat]
    scored = []
    for up in combinations(reserve, refill_count(state, seat)):
        front = [*state.front[seat], *up]
        behind = [c for c in reserve if c not in up]
        reach = len(space.position(front, behind, opponents, seat).targets)
        scored.append((exposure(state, seat, front), -reach, list(up)))
    best = min(score[:2] for score in scored)
    return {"type": "refill", "cards": rnd.choice([up for *score, up in scored if tuple(score) == best])}


def greedy(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """Attack: capture the most cards this turn, then leave the fewest of its own front line exposed;
    pass only when nothing can be captured. Refill: see ``_greedy_refill``."""
    if phase(state) == REFILL:
        return _greedy_refill(state, seat, rnd)
    return _greedy_attack(state, seat, rnd)
