"""Front Line cards: suits and what they beat, ranks and their values, card ids, decks, fixed deals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.errors import InvalidOptions

SUITS = ("rock", "paper", "scissors", "lizard", "water")
BEATS: Mapping[str, tuple[str, str]] = {
    "rock": ("scissors", "lizard"),
    "paper": ("rock", "water"),
    "scissors": ("paper", "lizard"),
    "lizard": ("paper", "water"),
    "water": ("rock", "scissors"),
}
RANKS = ("a", "2", "3", "4", "5", "6", "7", "8", "9", "10", "j", "q", "k")
FACE_VALUES = {"a": 14, "j": 11, "q": 12, "k": 13}
ACE_DEFENCE = 1
JOKER = "joker"
MAX_SEATS = 4

SHARED, PER_PLAYER = "shared", "per-player"
DECKS = (SHARED, PER_PLAYER)
FRONT_SIZE = 3
RESERVE_SIZE = 3


@dataclass(frozen=True)
class Card:
    """One card: its suit, what it adds attacking and what it defends at, and whose deck it is from."""

    id: str
    suit: str
    rank: str  # "a", "2".."10", "j", "q", "k" or "joker"
    attack: int
    defence: int
    owner: int | None = None  # per-player decks: the seat whose deck holds the card

    @property
    def joker(self) -> bool:
        return self.rank == JOKER


def beats(suit: str, other: str) -> bool:
    """True when ``suit`` beats ``other`` (a suit never beats itself)."""
    return other in BEATS[suit]


def _base_ids(jokers: bool) -> list[str]:
    ids = [f"{suit}-{rank}" for suit in SUITS for rank in RANKS]
    return ids + [f"{JOKER}-{suit}" for suit in SUITS] if jokers else ids


def _make(card_id: str, base: str, owner: int | None) -> Card:
    left, right = base.split("-", 1)
    if left == JOKER:
        return Card(card_id, right, JOKER, 0, 0, owner)
    value = FACE_VALUES.get(right) or int(right)
    return Card(card_id, left, right, value, ACE_DEFENCE if right == "a" else value, owner)


def owned_id(seat: int, base: str) -> str:
    """The id of ``base`` in seat ``seat``'s own deck (``s1:paper-7``)."""
    return f"s{seat}:{base}"


def _catalogue() -> dict[str, Card]:
    out = {c: _make(c, c, None) for c in _base_ids(True)}
    for seat in range(MAX_SEATS):
        out.update({owned_id(seat, c): _make(owned_id(seat, c), c, seat) for c in _base_ids(True)})
    return out


CATALOGUE: Mapping[str, Card] = _catalogue()


def card(card_id: str) -> Card:
    """The card with id ``card_id`` (``KeyError`` when there is none)."""
    return CATALOGUE[card_id]


def deck(deck_kind: str, jokers: bool, seat: int = 0) -> list[str]:
    """A full deck in catalogue order: the shared one, or seat ``seat``'s own (ids carry the owner)."""
    ids = _base_ids(jokers)
    return ids if deck_kind == SHARED else [owned_id(seat, c) for c in ids]


# ---------------------------------------------------------------- fixed deals


def _pile_problem(pile: Any, seat: int, allowed: set[str], seen: set[str], deck_kind: str) -> str | None:
    if not isinstance(pile, list) or not pile or not all(isinstance(c, str) for c in pile):
        return f"the pile of seat {seat} must be a non-empty list of card ids"
    for c in pile:
        if c in seen:
            return f"{c} is dealt twice"
        seen.add(c)
        if c not in allowed:
            return _unknown(c, seat, deck_kind)
    return None


def _unknown(c: str, seat: int, deck_kind: str) -> str:
    if c in CATALOGUE and CATALOGUE[c].joker and CATALOGUE[c].owner in (None, seat):
        return f"{c} is a joker: jokers need option jokers=true"
    if deck_kind == PER_PLAYER:
        return f"{c} is not a card of seat {seat}'s own deck (with per-player decks its ids are s{seat}:rock-a ...)"
    return f"{c} is not a card of the shared deck (ids like rock-a, paper-10, lizard-q, joker-water)"


def check_deal(deal: Mapping[str, Any], n_seats: int, deck_kind: str, jokers: bool) -> list[list[str]]:
    """The piles of a fixed deal ``{"piles": [[ids] per seat]}``, or ``InvalidOptions`` naming the problem."""
    unknown = sorted(set(deal) - {"piles"})
    if unknown:
        raise InvalidOptions(f"a Front Line deal has only 'piles'; unknown: {', '.join(unknown)}")
    piles = deal.get("piles")
    if not isinstance(piles, list) or len(piles) != n_seats:
        raise InvalidOptions(f"deal 'piles' must be a list of {n_seats} piles, one per seat")
    seen: set[str] = set()
    for seat, pile in enumerate(piles):
        problem = _pile_problem(pile, seat, set(deck(deck_kind, jokers, seat)), seen, deck_kind)
        if problem:
            raise InvalidOptions(problem)
    return [list(p) for p in piles]


def split_pile(pile: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """A seat's dealt pile as front line, reinforcements and draw pile (top first)."""
    reserve_end = FRONT_SIZE + RESERVE_SIZE
    return list(pile[:FRONT_SIZE]), list(pile[FRONT_SIZE:reserve_end]), list(pile[reserve_end:])
