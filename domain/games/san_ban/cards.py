"""San Ban cards: the catalogue (``catalogue.py``) and deck checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from domain.errors import InvalidOptions
from domain.games.san_ban.catalogue import CARDS

SIDES = ("top", "right", "bottom", "left")
ELEMENTS = ("water", "fire", "metal", "wood", "earth")  # each beats the next, earth beats water
MIN_POWER, MAX_POWER = 1, 13  # 1-9, J=10, Q=11, K=12, A=13
MIN_DECK, MAX_DECK = 5, 12
MAX_ID_LENGTH = 40
N_SEATS = 2
INLINE_FIELDS = frozenset({"id", *SIDES, "element"})


@dataclass(frozen=True)
class Card:
    """One card: four edge powers and an optional element."""

    id: str
    top: int
    right: int
    bottom: int
    left: int
    element: str | None = None

    def edge(self, side: str) -> int:
        """The power of the edge on ``side`` (top, right, bottom, left)."""
        return int(getattr(self, side))

    @property
    def total(self) -> int:
        """Sum of the four edges: the bots' measure of strength."""
        return self.top + self.right + self.bottom + self.left

    def to_dict(self) -> dict[str, Any]:
        """The public definition (the view's ``cards`` entry), without the id."""
        return {"top": self.top, "right": self.right, "bottom": self.bottom, "left": self.left, "element": self.element}

    @classmethod
    def from_dict(cls, card_id: str, raw: Mapping[str, Any]) -> Card:
        """Inverse of ``to_dict``."""
        return _card(card_id, raw["top"], raw["right"], raw["bottom"], raw["left"], raw.get("element"))


@lru_cache(maxsize=4096)  # every deal is read back from its event (twice); cards are immutable, so shared
def _card(card_id: str, top: Any, right: Any, bottom: Any, left: Any, element: str | None) -> Card:
    return Card(card_id, int(top), int(right), int(bottom), int(left), element)


def _load_catalogue() -> tuple[dict[str, Card], dict[int, tuple[str, ...]]]:
    cards: dict[str, Card] = {}
    tiers: dict[int, list[str]] = {}
    for card_id, tier, top, right, bottom, left, element in CARDS:
        cards[card_id] = _card(card_id, top, right, bottom, left, element)
        tiers.setdefault(tier, []).append(card_id)
    return cards, {tier: tuple(ids) for tier, ids in sorted(tiers.items())}


CATALOGUE, TIERS = _load_catalogue()


def _power(card_id: str, side: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_POWER <= value <= MAX_POWER:
        raise InvalidOptions(
            f"card {card_id!r}: {side} must be a whole number {MIN_POWER}-{MAX_POWER} "
            f"(1-9, J=10, Q=11, K=12, A=13); got {value!r}"
        )
    return value


def parse_inline(raw: Mapping[str, Any]) -> Card:
    """An inline card ``{"id","top","right","bottom","left","element"?}``, checked."""
    card_id = raw.get("id")
    if not isinstance(card_id, str) or not 0 < len(card_id) <= MAX_ID_LENGTH:
        raise InvalidOptions(f"an inline card needs an 'id': a string of 1-{MAX_ID_LENGTH} characters")
    unknown = sorted(set(raw) - INLINE_FIELDS)
    missing = [side for side in SIDES if side not in raw]
    if unknown or missing:
        raise InvalidOptions(
            f"inline card {card_id!r}: "
            + (f"unknown field(s) {', '.join(unknown)}" if unknown else f"missing {', '.join(missing)}")
        )
    element = raw.get("element")
    if element is not None and element not in ELEMENTS:
        raise InvalidOptions(f"card {card_id!r}: element must be one of {', '.join(ELEMENTS)}; got {element!r}")
    top, right, bottom, left = (_power(card_id, side, raw[side]) for side in SIDES)
    card = Card(card_id, top, right, bottom, left, element)
    known = CATALOGUE.get(card_id)
    if known is not None and known != card:
        raise InvalidOptions(f"inline card {card_id!r} clashes with the catalogue card of that id")
    return card


def parse_card(raw: Any) -> Card:
    """A catalogue id or an inline card."""
    if isinstance(raw, str):
        if raw not in CATALOGUE:
            raise InvalidOptions(f"unknown card {raw!r} (catalogue ids are sb-001..sb-{len(CATALOGUE):03d})")
        return CATALOGUE[raw]
    if isinstance(raw, Mapping):
        return parse_inline(raw)
    raise InvalidOptions(f"a card is a catalogue id or an inline card object; got {raw!r}")


def parse_decks(raw: Any) -> tuple[tuple[Card, ...], ...]:
    """Two decks of 5-12 cards each, one per seat, or ``InvalidOptions`` naming the problem."""
    if not isinstance(raw, Sequence) or isinstance(raw, str) or len(raw) != N_SEATS:
        raise InvalidOptions(f"'decks' must be a list of {N_SEATS} decks, one per seat")
    decks = tuple(_parse_deck(seat, deck) for seat, deck in enumerate(raw))
    defined: dict[str, Card] = {}
    for card in (c for deck in decks for c in deck):
        if defined.setdefault(card.id, card) != card:
            raise InvalidOptions(f"card id {card.id!r} has two different definitions")
    return decks


def _parse_deck(seat: int, raw: Any) -> tuple[Card, ...]:
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not MIN_DECK <= len(raw) <= MAX_DECK:
        raise InvalidOptions(f"deck {seat} must be a list of {MIN_DECK}-{MAX_DECK} cards")
    cards = tuple(parse_card(item) for item in raw)
    ids = [c.id for c in cards]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise InvalidOptions(f"deck {seat} holds card {twice[0]!r} twice")
    return cards


_CARD_SCHEMA = {
    "oneOf": [
        {"type": "string", "description": "a catalogue id (sb-001 ... sb-060)"},
        {
            "type": "object",
            "description": "an inline card",
            "required": ["id", *SIDES],
            "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH},
                **{side: {"type": "integer", "minimum": MIN_POWER, "maximum": MAX_POWER} for side in SIDES},
                "element": {"enum": [*ELEMENTS, None]},
            },
            "additionalProperties": False,
        },
    ]
}
_DECK_SCHEMA = {"type": "array", "minItems": MIN_DECK, "maxItems": MAX_DECK, "items": _CARD_SCHEMA}
_PAIR_SCHEMA = {"type": "array", "minItems": N_SEATS, "maxItems": N_SEATS, "items": _DECK_SCHEMA}
DECK_OPTION_SCHEMA = {"oneOf": [{"type": "null"}, _DECK_SCHEMA, _PAIR_SCHEMA]}
DECKS_OPTION_SCHEMA = {"oneOf": [{"type": "null"}, _PAIR_SCHEMA]}


def check_decks(value: Any) -> str | None:
    """``Option.check`` for ``decks``: None (random decks) or two valid decks."""
    if value is None:
        return None
    try:
        parse_decks(value)
    except InvalidOptions as problem:
        return str(problem)
    return None


def deck_pair(value: Any) -> Any:
    """Option ``deck`` as two decks: one deck for each seat, or already a pair.

    A card is an id or an object, never a list, so a list of two lists is a pair.
    """
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) == N_SEATS
        and all(isinstance(d, Sequence) and not isinstance(d, str) for d in value)
    ):
        return value
    return [value, value]


def check_deck(value: Any) -> str | None:
    """``Option.check`` for ``deck``: None, one deck (each seat gets it) or one per seat."""
    return None if value is None else check_decks(deck_pair(value))
