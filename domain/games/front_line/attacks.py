"""Front Line attack declarations: the validator with its rule messages, and the one suit rule it shares.

``check_declaration`` is what ``decide`` runs; ``space.py`` (action space, sampler,
listed declarations) enumerates the same rule independently over bitmasks, and the
tests compare both with a brute force written on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.errors import IllegalAction
from domain.games.front_line.cards import BEATS, Card, card
from domain.games.front_line.state import Attack, State


def suit_allows(attacker: Card, target: Card, joker_attack: bool) -> bool:
    """Whether a non-joker ``attacker`` may join an attack on ``target``.

    Normally its suit must beat the target's. The rules reverse (the target's
    suit must beat it) in an attack holding a joker, and when the target is a
    joker; both at once do not reverse back.
    """
    if joker_attack or target.joker:
        return attacker.suit in BEATS[target.suit]
    return target.suit in BEATS[attacker.suit]


def _suits(suit: str) -> str:
    return " and ".join(BEATS[suit])


def _owner_of_front(state: State, target: str) -> int | None:
    return next((s for s, f in enumerate(state.front) if target in f), None)


def _check_target(state: State, seat: int, target: Any, targets: set[str]) -> int:
    """The owner of ``target``, an opposing front-line card not yet attacked."""
    if not isinstance(target, str):
        raise IllegalAction(f"an attack's 'target' is a card id, not {target!r}")
    owner = _owner_of_front(state, target)
    if owner == seat or target in state.reserve[seat]:
        raise IllegalAction(f"{target} is your own card: attack a card in an opponent's front line")
    if owner is None:
        holder = next((s for s, r in enumerate(state.reserve) if target in r), None)
        if holder is not None:
            raise IllegalAction(f"{target} is a reinforcement of seat {holder}: only front-line cards can be attacked")
        raise IllegalAction(f"{target} is not in an opponent's front line")
    if target in targets:
        raise IllegalAction(
            f"{target} is the target of two attacks: each attack has its own target, and a card is captured once"
        )
    targets.add(target)
    return owner


def _check_cards(state: State, seat: int, target: str, cards: Any, used: set[str]) -> list[Card]:
    """The attacking cards: the attacker's own, unused, the first in the front line."""
    if not isinstance(cards, list) or not cards or not all(isinstance(c, str) for c in cards):
        raise IllegalAction(f"the attack on {target} needs 'cards': a non-empty list of card ids, initiator first")
    mine = (*state.front[seat], *state.reserve[seat])
    for c in cards:
        if c not in mine:
            raise IllegalAction(f"{c} is not one of your front-line or reinforcement cards")
        if cards.count(c) > 1:
            raise IllegalAction(f"{c} is listed twice in the attack on {target}")
        if c in used:
            raise IllegalAction(f"{c} is in two attacks: each card joins at most one attack per turn")
    used.update(cards)
    if cards[0] not in state.front[seat]:
        raise IllegalAction(
            f"{cards[0]} is a reinforcement: an attack's first card (its initiator) must be in the front line"
        )
    return [card(c) for c in cards]


def _check_suits(cards: Sequence[Card], target: Card) -> bool:
    """Whether the attack is a joker attack; refuses two jokers and every suit that may not join."""
    jokers = [c.id for c in cards if c.joker]
    if len(jokers) > 1:
        raise IllegalAction(
            f"{' and '.join(jokers)} are both in the attack on {target.id}: at most one joker per attack"
        )
    joker_attack = bool(jokers)
    for c in cards:
        if c.joker or suit_allows(c, target, joker_attack):
            continue
        if target.joker:
            raise IllegalAction(
                f"{c.id} cannot attack {target.id}: a joker can only be attacked by suits its "
                f"suit beats ({target.suit} beats {_suits(target.suit)})"
            )
        if joker_attack:
            raise IllegalAction(
                f"{c.id} cannot join the joker attack on {target.id}: with {jokers[0]} the rules "
                f"reverse, the target's suit must beat every other attacking card's "
                f"({target.suit} beats {_suits(target.suit)})"
            )
        raise IllegalAction(
            f"{c.id} cannot attack {target.id}: {c.suit} does not beat {target.suit} (every "
            f"attacking card's suit must beat the target's; {c.suit} beats {_suits(c.suit)})"
        )
    return joker_attack


def _check_sum(cards: Sequence[Card], target: Card) -> None:
    total = sum(c.attack for c in cards)
    if total <= target.defence:
        terms = " + ".join(f"{c.id} ({c.attack})" for c in cards) + (f" = {total}" if len(cards) > 1 else "")
        raise IllegalAction(
            f"{terms} does not exceed {target.id}, which defends at {target.defence}: "
            "the attacking ranks must add up to more"
        )


def _one_attack(state: State, seat: int, raw: Any, targets: set[str], used: set[str]) -> Attack:
    if not isinstance(raw, Mapping) or set(raw) != {"target", "cards"}:
        raise IllegalAction('each attack is {"target": card id, "cards": [card ids, initiator first]}')
    owner = _check_target(state, seat, raw["target"], targets)
    target = card(raw["target"])
    cards = _check_cards(state, seat, target.id, raw["cards"], used)
    joker_attack = _check_suits(cards, target)
    _check_sum(cards, target)
    return Attack(target.id, owner, tuple(c.id for c in cards), joker_attack)


def check_declaration(state: State, seat: int, attacks: Any) -> list[Attack]:
    """The attacks of a declaration, in the order given, or ``IllegalAction`` naming the rule and card."""
    if not isinstance(attacks, list) or not attacks:
        raise IllegalAction("'attacks' must be a non-empty list of attacks; to attack nothing, pass")
    targets: set[str] = set()
    used: set[str] = set()
    return [_one_attack(state, seat, raw, targets, used) for raw in attacks]
