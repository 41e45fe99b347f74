"""The attack phase: what the resolving card may do, its checks, and the events of each action."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from domain.contract import require_fields
from domain.errors import IllegalAction
from domain.events import Event
from domain.games.san_ni_ichi.cards import (
    ATTACK,
    BEATEN_BY,
    BLOCK,
    SAI,
    SHURIKEN,
    TONFA,
    YOSO,
    beats,
    card,
    kind,
    sort_key,
)
from domain.games.san_ni_ichi.state import (
    BLOCK_RESOLVED,
    CARD_DISCARDED,
    CARD_PLAYED,
    PILES_SWAPPED,
    SHURIKEN_THROWN,
    TONFA_USED,
    Played,
    State,
)

PLAY, DISCARD = "play", "discard"
ACTION_OF = {ATTACK: PLAY, YOSO: PLAY, SAI: "sai", SHURIKEN: "shuriken", TONFA: "tonfa"}
DISCARD_ACTION = {"type": DISCARD}
# The kinds of card that may be discarded by choice, by rules version (``State.rules_version``).
# "2": "You may choose to discard your card" is one of the rulebook's "rules for playing Attack Cards on
# Combat piles"; Yoso Kogeki is played "as an Attack card". A Sai, Shuriken or Tonfa does what its own
# text says whenever it can (docs/rules/san-ni-ichi.md, "Discarding by choice").
# "1" (games created until 2026-11-26): every card that asks its owner, weapons included.
DISCARDABLE = {"1": frozenset(ACTION_OF), "2": frozenset({ATTACK, YOSO})}


def discardable(state: State, p: Played) -> bool:
    """Whether the resolving card may be discarded by choice under the state's rules version."""
    return kind(p.card) in DISCARDABLE[state.rules_version]


# ---------------------------------------------------------------- what a card may do


def play_targets(state: State, p: Played) -> list[int]:
    """Seats an attack card or a Yoso Kogeki may be played on."""
    info = card(p.card)
    protected = state.protected
    if info.kind == YOSO:
        return [seat for seat in range(state.n) if seat != p.seat and seat not in protected]
    element = info.element or ""
    return [
        seat
        for seat, pile in enumerate(state.combat)
        if seat not in protected and (not pile or beats(element, pile[-1][1]))
    ]


def counter_targets(state: State, owner: int) -> list[int]:
    """Seats a pile may be countered to: unprotected, without a combat pile."""
    return [s for s in range(state.n) if s != owner and not state.combat[s] and s not in state.protected]


def swappable(state: State) -> list[int]:
    """Seats whose combat pile a Sai may swap."""
    return [s for s in range(state.n) if state.combat[s] and s not in state.protected]


def uses(state: State, p: Played) -> list[dict[str, Any]]:
    """Every way to use the resolving card (``discard`` aside); empty: it cannot be used."""
    k = kind(p.card)
    if k in (ATTACK, YOSO):
        out: list[dict[str, Any]] = []
        for target in play_targets(state, p):
            out.append({"type": PLAY, "target": target})
            if k == ATTACK and target == p.seat and state.combat[target]:
                out += [{"type": PLAY, "target": target, "counter_to": x} for x in counter_targets(state, p.seat)]
        return out
    if k == SAI:
        return [{"type": "sai", "piles": [a, b]} for a, b in combinations(swappable(state), 2)]
    if k == SHURIKEN:
        return [{"type": "shuriken", "target": s} for s in range(state.n)]
    if k == TONFA:
        return [
            {"type": "tonfa", "pile": pile, "discard": d}
            for pile in range(state.n)
            if state.combat[pile]
            for d in sorted({*state.hands[p.seat], state.combat[pile][-1][0]}, key=sort_key)
        ]
    return []  # Block: nothing to choose


def can_use(state: State, p: Played) -> bool:
    """Whether ``uses`` lists anything, without listing it (the engine asks before every card)."""
    k = kind(p.card)
    if k in (ATTACK, YOSO):
        return bool(play_targets(state, p))
    if k == SAI:
        return len(swappable(state)) >= 2
    if k == SHURIKEN:
        return True
    if k == TONFA:
        return any(state.combat)
    return False


def attack_actions(state: State, p: Played) -> list[dict[str, Any]]:
    """The resolving owner's legal actions: every use, then discard for a card its rules version lets
    be discarded by choice (``DISCARDABLE``); nothing when the card resolves automatically."""
    found = uses(state, p)
    return [*found, dict(DISCARD_ACTION)] if found and discardable(state, p) else found


def automatic(state: State, p: Played) -> Event | None:
    """The event of a card that needs no decision: a Block, or a card with no legal use."""
    if kind(p.card) == BLOCK:
        return Event(BLOCK_RESOLVED, {"seat": p.seat, "card": p.card, "protects": p.protect})
    if not can_use(state, p):
        return Event(CARD_DISCARDED, {"seat": p.seat, "card": p.card, "reason": "no_legal_play"})
    return None


# ---------------------------------------------------------------- checks


def seat_field(state: State, action: Mapping[str, Any], name: str) -> int:
    """The seat number in ``action[name]``, or ``IllegalAction``."""
    value = action[name]
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < state.n:
        raise IllegalAction(f"'{name}' must be a seat number 0-{state.n - 1}, not {value!r}")
    return value


def protector(state: State, seat: int) -> str:
    """Which Block protects ``seat`` (for messages)."""
    block = next((p for p in state.played if kind(p.card) == BLOCK and p.protect == seat), None)
    return f"{block.card} of seat {block.seat}" if block else "a Block"


def _check_target(state: State, p: Played, target: int) -> None:
    info = card(p.card)
    if target in state.protected:
        raise IllegalAction(
            f"{p.card} cannot be played on seat {target}: it is protected by {protector(state, target)} this round"
        )
    if info.kind == YOSO and target == p.seat:
        raise IllegalAction(f"{p.card} is played on another player's pile, never on your own")
    top = state.top(target)
    if info.kind == ATTACK and top is not None and not beats(info.element or "", top[1]):
        raise IllegalAction(
            f"{p.card} cannot be played on seat {target}: its top {top[0]} ({top[1]}) is not beaten by {info.element}"
        )


def _check_counter(state: State, p: Played, target: int, action: Mapping[str, Any]) -> int:
    if kind(p.card) == YOSO:
        raise IllegalAction(f"{p.card} cannot be used to counter (move your pile to another player)")
    if target != p.seat:
        raise IllegalAction(f"only a card played on your own pile counters; {p.card} goes to seat {target}")
    if not state.combat[p.seat]:
        raise IllegalAction(
            f"you have no combat pile: {p.card} would start one, so there is nothing to "
            "counter (play it on that player directly)"
        )
    to = seat_field(state, action, "counter_to")
    if to == p.seat:
        raise IllegalAction("a counter moves your pile to another player, not to yourself")
    if to in state.protected:
        raise IllegalAction(
            f"seat {to} is protected by {protector(state, to)} this round: a countered pile cannot be moved to it"
        )
    if state.combat[to]:
        raise IllegalAction(f"seat {to} already has a combat pile: a countered pile only goes to a player without one")
    return to


def _check_play(state: State, p: Played, action: Mapping[str, Any]) -> None:
    require_fields(action, ["target"], ["counter_to"])
    target = seat_field(state, action, "target")
    _check_target(state, p, target)
    if "counter_to" in action:
        _check_counter(state, p, target, action)


def _check_sai(state: State, p: Played, action: Mapping[str, Any]) -> None:
    require_fields(action, ["piles"])
    piles = action["piles"]
    if (
        not isinstance(piles, list)
        or len(piles) != 2
        or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < state.n for s in piles)
    ):
        raise IllegalAction(
            f"'piles' must be two seat numbers 0-{state.n - 1} in ascending order, e.g. [1, 3]; not {piles!r}"
        )
    a, b = piles
    if a >= b:
        raise IllegalAction("'piles' names two different seats in ascending order" + (f": [{b}, {a}]" if a > b else ""))
    for s in (a, b):
        if not state.combat[s]:
            raise IllegalAction(f"{p.card}: seat {s} has no combat pile to swap")
        if s in state.protected:
            raise IllegalAction(
                f"{p.card}: seat {s} is protected by {protector(state, s)} this round, its pile cannot be swapped"
            )


def _check_shuriken(state: State, p: Played, action: Mapping[str, Any]) -> None:
    require_fields(action, ["target"])
    seat_field(state, action, "target")


def _check_tonfa(state: State, p: Played, action: Mapping[str, Any]) -> None:
    require_fields(action, ["pile", "discard"])
    pile = seat_field(state, action, "pile")
    if not state.combat[pile]:
        raise IllegalAction(f"{p.card}: seat {pile} has no combat pile to take a card from")
    took = state.combat[pile][-1][0]
    hand = sorted({*state.hands[p.seat], took}, key=sort_key)
    if action["discard"] not in hand:
        raise IllegalAction(
            f"{p.card}: {action['discard']!r} is not in your hand after taking {took}; discard one of {', '.join(hand)}"
        )


CHECKS = {ATTACK: _check_play, YOSO: _check_play, SAI: _check_sai, SHURIKEN: _check_shuriken, TONFA: _check_tonfa}


def check(state: State, p: Played, action: Mapping[str, Any]) -> None:
    """Refuse an action the resolving card may not take, naming the rule."""
    k = kind(p.card)
    kind_of = action.get("type")
    expected = ACTION_OF.get(k)
    if kind_of == DISCARD:
        if not discardable(state, p):
            raise IllegalAction(
                f"{p.card} cannot be discarded: only an attack card or a Yoso Kogeki may be discarded by choice "
                f"(a weapon does what it says; rules version {state.rules_version}); the action is {expected!r}"
            )
        require_fields(action, [])
        return
    if expected is None or kind_of != expected:
        allowed = " or ".join(repr(t) for t in (expected, DISCARD if discardable(state, p) else None) if t)
        raise IllegalAction(f"{p.card} is resolving: the action is {allowed or 'none'}, not {kind_of!r}")
    CHECKS[k](state, p, action)
    if dict(action) not in uses(state, p):  # a safety net: the checks above should have said why
        raise IllegalAction(f"{p.card} cannot be used that way now: {dict(action)!r}")


def _element(state: State, p: Played, target: int) -> str | None:
    """An attack card's own element; a Yoso Kogeki's: what beats the top it lands on (if any)."""
    info = card(p.card)
    if info.kind == ATTACK:
        return info.element
    top = state.top(target)
    return BEATEN_BY[top[1]] if top is not None and top[1] is not None else None


def event_of(state: State, p: Played, action: Mapping[str, Any]) -> Event:
    """The event of a legal action of the resolving card (unchecked: see ``check``)."""
    kind_of, base = action["type"], {"seat": p.seat, "card": p.card}
    if kind_of == DISCARD:
        return Event(CARD_DISCARDED, {**base, "reason": "chosen"})
    if kind_of == PLAY:
        target = action["target"]
        data = {**base, "target": target, "element": _element(state, p, target)}
        if "counter_to" in action:
            data["counter_to"] = action["counter_to"]
        return Event(CARD_PLAYED, data)
    if kind_of == "sai":
        return Event(PILES_SWAPPED, {**base, "piles": list(action["piles"])})
    if kind_of == "shuriken":
        return Event(SHURIKEN_THROWN, {**base, "target": action["target"]})
    pile = action["pile"]
    return Event(TONFA_USED, {**base, "pile": pile, "took": state.combat[pile][-1][0], "discarded": action["discard"]})


def attack_event(state: State, p: Played, action: Mapping[str, Any]) -> Event:
    """The event of the resolving owner's action, or ``IllegalAction`` naming the rule."""
    check(state, p, action)
    return event_of(state, p, action)
