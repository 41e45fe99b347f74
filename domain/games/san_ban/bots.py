"""San Ban's ``greedy`` bot. It uses only what its seat may see (``view``'s rules)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from domain.errors import NotYourTurn
from domain.games.san_ban import state as st
from domain.games.san_ban.board import NEIGHBOURS, OPPOSITE, Board, beats, count_flips
from domain.games.san_ban.cards import Card
from domain.games.san_ban.state import ADD_MODES, ADVANCED, ELEMENTAL_MODES, GAMER, HAND_SIZE, OPEN_MODES, State


def greedy(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """Choose: the five strongest cards (gamer: strongest first); coin: go first;
    claim: the loser's strongest card; place: see ``best_place``."""
    ph = st.phase(state)
    if ph == st.CHOOSE:
        return _choose(state, seat)
    if ph == st.COIN_PHASE:
        return {"type": "choose_first", "first": True}
    if ph == st.CLAIM:
        five = [st.card(state, c) for c in state.hands[1 - seat]]  # type: ignore[index]
        return {"type": "claim", "card": max(five, key=lambda c: c.total).id}
    if ph == st.PLAY:
        return best_place(state, seat, rnd)
    raise NotYourTurn(f"seat {seat} has nothing to do in the {ph} phase")


def _choose(state: State, seat: int) -> dict[str, Any]:
    deck = [st.card(state, c) for c in state.decks[seat]]
    strongest = sorted(deck, key=lambda c: -c.total)[:HAND_SIZE]  # stable: deck order breaks ties
    if state.mode == GAMER:
        return {"type": "set_order", "cards": [c.id for c in strongest]}
    return {"type": "choose_hand", "cards": [c.id for c in deck if c in strongest]}


def threats(state: State, seat: int) -> list[Card]:
    """The cards the opponent might still place, as far as ``seat`` can tell.

    Open modes: the opponent's unplayed cards. Gamer/advanced (hidden hands): the
    bot assumes the opponent's cards are as strong as its own five.
    """
    if state.mode in OPEN_MODES:
        return [st.card(state, c) for c in st.remaining(state, 1 - seat)]
    return [st.card(state, c) for c in state.hands[seat]]  # type: ignore[index]


def exposure(board: Board, cell: int, placed: Card, enemies: Sequence[Card], elemental: bool) -> int:
    """Unsafe edges of ``placed`` on ``cell``: edges facing an empty cell that some
    card in ``enemies``, placed in that cell, would beat (greater facing edge, or
    an elemental win on equal edges when elemental is live; add is ignored)."""
    unsafe = 0
    for side, other in NEIGHBOURS[cell]:
        if board[other] is None and any(beats(e, OPPOSITE[side], placed, elemental) for e in enemies):
            unsafe += 1
    return unsafe


def best_place(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """The placement flipping the most cards now; ties: the fewest unsafe edges
    (``exposure``), then ``rnd``. In advanced mode the bot does not know which of
    its cards comes next, so it averages both measures over its unplayed cards."""
    board = state.board
    elemental, add = state.mode in ELEMENTAL_MODES, state.mode in ADD_MODES
    enemies = threats(state, seat)
    mine = st.remaining(state, seat)
    options: list[tuple[str | None, list[str]]]
    if state.mode == ADVANCED:
        options = [(None, sorted(mine))]
    elif state.mode == GAMER:
        options = [(None, [mine[0]])]
    else:
        options = [(c, [c]) for c in mine]
    scored = []
    for cell in (c for c, slot in enumerate(board) if slot is None):
        for card_id, possible in options:
            cards = [st.card(state, c) for c in possible]
            gain = sum(count_flips(board, state.by_id, cell, c, seat, elemental, add) for c in cards) / len(cards)
            risk = sum(exposure(board, cell, c, enemies, elemental) for c in cards) / len(cards)
            action = {"type": "place", "cell": cell} | ({"card": card_id} if card_id else {})
            scored.append(((gain, -risk), action))
    top = max(score for score, _ in scored)
    return rnd.choice([action for score, action in scored if score == top])
