"""San Ban state: constants, the immutable ``State``, its queries, and ``evolve``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.contract import changed, evolver
from domain.events import Event
from domain.games.san_ban.board import N_CELLS
from domain.games.san_ban.cards import N_SEATS, Card

STANDARD, GAMER, ADVANCED, HARDCORE = "standard", "gamer", "advanced", "hardcore"
MODES = (STANDARD, GAMER, ADVANCED, HARDCORE)
OPEN_MODES = (STANDARD, HARDCORE)  # chosen hands are revealed, the order is free
FORCED_MODES = (GAMER, ADVANCED)  # the next card is forced, the opponent's cards hidden
ELEMENTAL_MODES = (ADVANCED, HARDCORE)
ADD_MODES = (HARDCORE,)
CLAIM_MODES = (HARDCORE,)
HAND_SIZE = 5
COIN = "coin"
SEATS = tuple(range(N_SEATS))

SETUP, CHOOSE, COIN_PHASE, PLAY, CLAIM, OVER = "setup", "choose", "coin", "play", "claim", "over"

DECKS_DEALT = "decks_dealt"
HANDS_CHOSEN = "hands_chosen"
COIN_FLIPPED = "coin_flipped"
FIRST_CHOSEN = "first_chosen"
CARD_PLACED = "card_placed"
CARDS_FLIPPED = "cards_flipped"
CARD_CLAIMED = "card_claimed"
CLAIM_DECLINED = "claim_declined"


@dataclass(frozen=True)
class Slot:
    """An occupied cell: the card and the seat whose colour it shows."""

    card: str
    owner: int


@dataclass(frozen=True)
class State:
    """Everything the server knows, hidden parts included (``view`` filters)."""

    mode: str
    dealt: bool = False
    decks: tuple[tuple[str, ...], ...] = ((), ())
    cards: tuple[Card, ...] = ()  # every card definition of the game
    shuffles: tuple[tuple[int, ...], ...] = ()  # advanced: the generator's shuffle per seat
    coin_winner: int | None = None  # hidden until ``coin_shown``
    coin_shown: bool = False
    first: int | None = None  # the first player, once known
    hands: tuple[tuple[str, ...], ...] | None = None  # the chosen five per seat
    orders: tuple[tuple[str, ...], ...] | None = None  # gamer/advanced: forced play order
    board: tuple[Slot | None, ...] = (None,) * N_CELLS
    played: tuple[tuple[str, ...], ...] = ((), ())
    claimed: str | None = None
    claim_declined: bool = False  # hardcore: the winner took nothing (the rulebook's "may")
    # Caches derived from the fields above (queried several times per action); kept out of ==.
    by_id: Mapping[str, Card] = field(default_factory=dict, compare=False, repr=False)  # ``cards`` by id
    n_placed: int = field(default=0, compare=False, repr=False)  # occupied cells of ``board``


def card(state: State, card_id: str) -> Card:
    """The definition of ``card_id``."""
    return state.by_id[card_id]


def must_choose(state: State) -> tuple[int, ...]:
    """Seats with a secret choice: every seat in gamer (the order), else decks above 5."""
    return tuple(s for s in SEATS if state.mode == GAMER or len(state.decks[s]) > HAND_SIZE)


def to_move(state: State) -> int:
    """The seat placing next (play phase)."""
    assert state.first is not None
    return state.first if state.n_placed % 2 == 0 else 1 - state.first


def remaining(state: State, seat: int) -> tuple[str, ...]:
    """``seat``'s unplayed cards: in play order when forced, else in hand order."""
    if state.hands is None:
        return ()
    if state.orders is not None:
        return state.orders[seat][len(state.played[seat]) :]
    played = state.played[seat]
    return tuple([c for c in state.hands[seat] if c not in played])


def holds(state: State, seat: int, card_id: str) -> bool:
    """Whether ``card_id`` is one of ``seat``'s unplayed cards: ``card_id in remaining(state, seat)``."""
    return state.hands is not None and card_id in state.hands[seat] and card_id not in state.played[seat]


def scores(state: State) -> list[int]:
    """Cards of each colour on the board plus cards still in hand."""
    colours = [slot.owner for slot in state.board if slot is not None]
    return [colours.count(s) + len(remaining(state, s)) for s in SEATS]


def winner(state: State) -> int | None:
    """The seat with the higher score, or None on a tie."""
    return leader(scores(state))


def leader(points: Sequence[int]) -> int | None:
    """The seat with the higher of the two ``points``, or None on a tie."""
    a, b = points
    return None if a == b else (0 if a > b else 1)


def phase(state: State) -> str:
    """setup, choose, coin, play, claim or over."""
    if not state.dealt:
        return SETUP
    if state.hands is None:
        return CHOOSE
    if state.first is None:
        return COIN_PHASE
    if state.n_placed < N_CELLS:
        return PLAY
    if state.mode in CLAIM_MODES and state.claimed is None and not state.claim_declined and winner(state) is not None:
        return CLAIM
    return OVER


def _per_seat(values: Iterable[Iterable[Any]]) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(v) for v in values)


def _decks_dealt(state: State, ev: Event) -> State:
    seats = [ev.private_for(s) for s in SEATS]
    cards = {cid: Card.from_dict(cid, raw) for part in seats for cid, raw in part.get("cards", {}).items()}
    first = ev.data.get("first")
    return changed(
        state,
        dealt=True,
        decks=_per_seat(p.get("deck", ()) for p in seats),
        cards=tuple(cards.values()),
        by_id=cards,
        shuffles=_per_seat(ev.hidden.get("shuffles", ())),
        coin_winner=ev.hidden.get("coin_winner"),
        first=first if first != COIN else None,
    )


def _hands_chosen(state: State, ev: Event) -> State:
    mine = [ev.private_for(s) for s in SEATS]
    hands = ev.data.get("hands") or [m.get("hand") or m.get("order", ()) for m in mine]
    orders = ev.hidden.get("orders") if state.mode == ADVANCED else hands if state.mode == GAMER else None
    return changed(state, hands=_per_seat(hands), orders=None if orders is None else _per_seat(orders))


def _card_placed(state: State, ev: Event) -> State:
    seat, cell = ev.data["seat"], ev.data["cell"]
    board, played = list(state.board), list(state.played)
    board[cell] = Slot(ev.data["card"], seat)
    played[seat] += (ev.data["card"],)
    return changed(
        state, board=tuple(board), played=tuple(played), n_placed=state.n_placed + (state.board[cell] is None)
    )


def _cards_flipped(state: State, ev: Event) -> State:
    seat, cells = ev.data["seat"], set(ev.data["cells"])
    board = tuple(
        Slot(slot.card, seat) if i in cells and slot is not None else slot for i, slot in enumerate(state.board)
    )
    return changed(state, board=board)


EVOLVERS: dict[str, Callable[[State, Event], State]] = {
    DECKS_DEALT: _decks_dealt,
    HANDS_CHOSEN: _hands_chosen,
    COIN_FLIPPED: lambda state, ev: changed(state, coin_winner=ev.data["winner"], coin_shown=True),
    FIRST_CHOSEN: lambda state, ev: changed(state, first=ev.data["first_player"]),
    CARD_PLACED: _card_placed,
    CARDS_FLIPPED: _cards_flipped,
    CARD_CLAIMED: lambda state, ev: changed(state, claimed=ev.data["card"]),
    CLAIM_DECLINED: lambda state, ev: changed(state, claim_declined=True),
}


evolve = evolver(EVOLVERS)
