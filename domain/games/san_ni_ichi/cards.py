"""San, Ni, Ichi! cards: the catalogue, elements, tie-break letters, decks and fixed deals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.errors import InvalidOptions

FIRE, WATER, WOOD = "fire", "water", "wood"
ELEMENTS = (FIRE, WATER, WOOD)
BEATS = {FIRE: WOOD, WOOD: WATER, WATER: FIRE}  # key beats value
BEATEN_BY = {loser: winner for winner, loser in BEATS.items()}  # BEATEN_BY[fire] == water
LETTERS = "abc"
MAX_STRENGTH = 10
HAND_SIZE = 7

ATTACK = "attack"
BLOCK, TONFA, SAI, YOSO, TORINOKO, SHURIKEN = ("block", "tonfa", "sai", "yoso-kogeki", "torinoko", "shuriken")
WEAPON_KINDS = (BLOCK, TONFA, SAI, YOSO, TORINOKO, SHURIKEN)
WEAPONS = tuple(f"{kind}-{11 + 2 * i + j}" for i, kind in enumerate(WEAPON_KINDS) for j in (0, 1))

STANDARD, ALT_1, ALT_2 = "standard", "alt-1", "alt-2"
DECK_NAMES = (STANDARD, ALT_1, ALT_2)
# deck -> players -> (highest attack strength, weapons in play): the rulebook's tables
DECKS: dict[str, dict[int, tuple[int, int]]] = {
    STANDARD: {3: (5, 6), 4: (6, 10), 5: (8, 11), 6: (10, 12)},
    ALT_1: {3: (6, 3), 4: (8, 4), 5: (9, 8)},
    ALT_2: {3: (7, 0), 4: (9, 1), 5: (10, 5)},
}


@dataclass(frozen=True)
class Card:
    """One card: its kind (``attack`` or a weapon), element (attack cards), strength, letter."""

    id: str
    kind: str
    strength: int
    element: str | None = None
    letter: str | None = None

    @property
    def key(self) -> tuple[int, str]:
        """Resolution order: ascending strength, then letter (weapons have unique strengths)."""
        return self.strength, self.letter or ""


def letter_of(element: str, strength: int) -> str:
    """The tie-break letter: fire, water, wood rotated left by (strength - 1) mod 3 get a, b, c."""
    shift = (strength - 1) % 3
    order = ELEMENTS[shift:] + ELEMENTS[:shift]
    return LETTERS[order.index(element)]


def _catalogue() -> dict[str, Card]:
    cards = {
        f"{e}-{s}": Card(f"{e}-{s}", ATTACK, s, e, letter_of(e, s))
        for e in ELEMENTS
        for s in range(1, MAX_STRENGTH + 1)
    }
    for weapon in WEAPONS:
        kind, strength = weapon.rsplit("-", 1)
        cards[weapon] = Card(weapon, kind, int(strength))
    return cards


CARDS: dict[str, Card] = _catalogue()


def card(card_id: str) -> Card:
    """The catalogue entry of ``card_id`` (a known id)."""
    return CARDS[card_id]


def kind(card_id: str) -> str:
    """``attack`` or the weapon's name (``yoso-kogeki``)."""
    return CARDS[card_id].kind


def strength(card_id: str) -> int:
    return CARDS[card_id].strength


def sort_key(card_id: str) -> tuple[int, str]:
    """Ascending strength, letters breaking ties: the resolution order."""
    return CARDS[card_id].key


def beats(element: str, other: str | None) -> bool:
    """Whether an attack card of ``element`` may go on a top of element ``other``.

    ``None`` is a Yoso Kogeki that started a pile: any attack card goes on it.
    """
    return other is None or BEATS[element] == other


def points(card_id: str, n_players: int) -> int:
    """Damage of a card in a damage pile: an attack card's strength, a weapon's players - 1."""
    info = CARDS[card_id]
    return info.strength if info.kind == ATTACK else n_players - 1


def deck_size(deck: str, n_players: int) -> tuple[int, int]:
    """(highest attack strength, weapons in play), or ``InvalidOptions`` naming the option."""
    sizes = DECKS[deck].get(n_players)
    if sizes is None:
        known = ", ".join(str(n) for n in DECKS[deck])
        raise InvalidOptions(
            f"option 'deck': {deck!r} does not exist for {n_players} players "
            f"(it is for {known} players); use 'standard'",
            ("options", "deck"),
        )
    return sizes


def attack_cards(top: int) -> list[str]:
    """Attack cards 1..top of each element, in catalogue order."""
    return [f"{e}-{s}" for e in ELEMENTS for s in range(1, top + 1)]


# ---------------------------------------------------------------- fixed deals


def validate_deal(deal: Mapping[str, Any], deck: str, n: int) -> tuple[list[str], list[list[str]]]:
    """The fixed deal's weapons and hands, or ``InvalidOptions`` naming the problem."""
    top, n_weapons = deck_size(deck, n)
    unknown = sorted(set(deal) - {"weapons", "hands"})
    if unknown:
        raise InvalidOptions(f"a San, Ni, Ichi! deal has only 'weapons' and 'hands'; unknown: {', '.join(unknown)}")
    weapons = _deal_weapons(deal.get("weapons"), n_weapons, f"{n}-player {deck}")
    hands = deal.get("hands")
    if not isinstance(hands, list) or len(hands) != n:
        raise InvalidOptions(f"deal 'hands' must be a list of {n} hands, one per seat")
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list) or len(hand) != HAND_SIZE or not all(isinstance(c, str) for c in hand):
            raise InvalidOptions(f"deal hand of seat {seat} must be a list of {HAND_SIZE} card ids")
    dealt = [c for hand in hands for c in hand]
    for c in dealt:
        _check_dealt_card(c, top, weapons, f"{n}-player {deck}")
    twice = sorted({c for c in dealt if dealt.count(c) > 1}, key=sort_key)
    if twice:
        raise InvalidOptions(f"card(s) dealt twice: {', '.join(twice)}")
    return sorted(weapons, key=sort_key), [list(h) for h in hands]


def _deal_weapons(weapons: Any, count: int, deck: str) -> list[str]:
    if not isinstance(weapons, list) or len(weapons) != count:
        raise InvalidOptions(f"deal 'weapons' must be a list of the {count} weapon ids in play (the {deck} deck)")
    bad = [w for w in weapons if w not in WEAPONS]
    if bad:
        raise InvalidOptions(f"not a weapon: {', '.join(map(repr, bad))}; the weapons are {', '.join(WEAPONS)}")
    if len(set(weapons)) != len(weapons):
        raise InvalidOptions("deal 'weapons' lists a weapon twice")
    return list(weapons)


def _check_dealt_card(c: str, top: int, weapons: Sequence[str], deck: str) -> None:
    info = CARDS.get(c)
    if info is None:
        raise InvalidOptions(f"unknown card id {c!r} in the deal")
    if info.kind == ATTACK and info.strength > top:
        raise InvalidOptions(f"{c} is not in the {deck} deck (attack cards 1-{top})")
    if info.kind != ATTACK and c not in weapons:
        raise InvalidOptions(f"{c} is dealt but is not among the deal's weapons")
