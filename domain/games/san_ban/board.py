"""The 3x3 board and the three flip rules: capture, elemental, add (docs/rules/san-ban.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from domain.games.san_ban.cards import ELEMENTS, Card

N_CELLS = 9
WIDTH = 3
OPPOSITE = {"top": "bottom", "right": "left", "bottom": "top", "left": "right"}
CAPTURE, ELEMENTAL, ADD = "capture", "elemental", "add"


class Occupant(Protocol):
    """An occupied cell as the state keeps it (``state.Slot``): the card's id and its owner."""

    @property
    def card(self) -> str: ...
    @property
    def owner(self) -> int: ...


Board = Sequence[Occupant | None]  # per cell: its occupant, or None when empty
Cards = Mapping[str, Card]  # the card definitions by id


def _neighbours(cell: int) -> tuple[tuple[str, int], ...]:
    row, col = divmod(cell, WIDTH)
    out = []
    if row > 0:
        out.append(("top", cell - WIDTH))
    if col < WIDTH - 1:
        out.append(("right", cell + 1))
    if row < WIDTH - 1:
        out.append(("bottom", cell + WIDTH))
    if col > 0:
        out.append(("left", cell - 1))
    return tuple(out)


NEIGHBOURS = tuple(_neighbours(cell) for cell in range(N_CELLS))  # (side of this cell, neighbour cell)


def element_beats(mine: str | None, theirs: str | None) -> bool:
    """On equal edges: an element beats none; Water > Fire > Metal > Wood > Earth > Water."""
    if mine is None:
        return False
    if theirs is None:
        return True
    return ELEMENTS[(ELEMENTS.index(mine) + 1) % len(ELEMENTS)] == theirs


def beats(mine: Card, side: str, theirs: Card, elemental: bool) -> str | None:
    """The rule by which ``mine`` beats ``theirs`` across ``mine``'s ``side``, or None."""
    a, b = mine.edge(side), theirs.edge(OPPOSITE[side])
    if a > b:
        return CAPTURE
    if elemental and a == b and element_beats(mine.element, theirs.element):
        return ELEMENTAL
    return None


def flips(
    board: Board, cards: Cards, cell: int, placed: Card, seat: int, elemental: bool, add: bool
) -> list[tuple[str, list[int]]]:
    """Cells flipped by ``seat`` placing ``placed`` on ``cell``, grouped by rule.

    Every rule looks at the board before the placement (no chain reaction); a
    cell flipped by several rules is listed once, under the first of capture,
    elemental, add.
    """
    by_rule: dict[str, list[int]] = {CAPTURE: [], ELEMENTAL: [], ADD: []}
    sums: dict[int, list[tuple[int, int]]] = {}
    for side, other in NEIGHBOURS[cell]:
        slot = board[other]
        if slot is None:
            continue
        card, owner = cards[slot.card], slot.owner
        if add:
            sums.setdefault(placed.edge(side) + card.edge(OPPOSITE[side]), []).append((other, owner))
        rule = beats(placed, side, card, elemental) if owner != seat else None
        if rule is not None:
            by_rule[rule].append(other)
    if add:
        taken = set(by_rule[CAPTURE]) | set(by_rule[ELEMENTAL])
        by_rule[ADD] = [
            other
            for group in sums.values()
            if len(group) > 1
            for other, owner in group
            if owner != seat and other not in taken
        ]
    return [(rule, sorted(cells)) for rule, cells in by_rule.items() if cells]


def count_flips(board: Board, cards: Cards, cell: int, placed: Card, seat: int, elemental: bool, add: bool) -> int:
    """How many cards ``flips`` would turn."""
    return sum(len(cells) for _, cells in flips(board, cards, cell, placed, seat, elemental, add))
