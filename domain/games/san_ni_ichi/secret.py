"""San, Ni, Ichi!'s secret choices: the select of each round and the smoke decision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.contract import require_fields
from domain.errors import IllegalAction
from domain.games.san_ni_ichi.cards import BLOCK, CARDS, TORINOKO, kind, sort_key
from domain.games.san_ni_ichi.state import State


def select_actions(state: State, seat: int) -> list[dict[str, Any]]:
    """One select per selectable card (a team Block: one per seat it may protect)."""
    out: list[dict[str, Any]] = []
    for c in sorted(state.hands[seat], key=sort_key):
        if kind(c) == TORINOKO:
            continue
        if kind(c) == BLOCK and state.teams:
            out += [{"type": "select", "card": c, "protect": s} for s in state.team(seat)]
        else:
            out.append({"type": "select", "card": c})
    return out


def smoke_actions(state: State, seat: int) -> list[dict[str, Any]]:
    """Smoke (in team play: covering self or the teammate) or not; without a smoke bomb, only not."""
    if not state.can_smoke(seat):
        return [{"type": "smoke", "use": False}]
    if state.teams:
        return [
            *({"type": "smoke", "use": True, "protect": s} for s in state.team(seat)),
            {"type": "smoke", "use": False},
        ]
    return [{"type": "smoke", "use": True}, {"type": "smoke", "use": False}]


def _check_protect(state: State, seat: int, action: Mapping[str, Any], needed: bool, what: str) -> None:
    """``protect``: required (team play, a Block or a smoke bomb used), else refused."""
    given = "protect" in action
    if needed and not given:
        raise IllegalAction(
            f"in team play {what} names the seat it covers: 'protect' is {seat} (you) "
            f"or {state.teammate(seat)} (your teammate)"
        )
    if given and not needed:
        why = "only in team play" if not state.teams else f"only with {what}"
        raise IllegalAction(f"'protect' is given {why}")
    protect = action.get("protect")
    if given and (type(protect) is not int or protect not in state.team(seat)):  # not True, not 1.0
        raise IllegalAction(
            f"'protect' must be {seat} (you) or {state.teammate(seat)} (your teammate), not {protect!r}"
        )


def check_select(state: State, seat: int, action: Mapping[str, Any]) -> None:
    if action.get("type") != "select":
        raise IllegalAction(
            f"every player now secretly selects a card: the action is 'select', not {action.get('type')!r}"
        )
    require_fields(action, ["card"], ["protect"])
    c = action["card"]
    if not isinstance(c, str) or c not in CARDS:
        raise IllegalAction(f"there is no card {c!r} in San, Ni, Ichi!")
    if c not in state.hands[seat]:
        raise IllegalAction(f"{c} is not in your hand")
    if kind(c) == TORINOKO:
        raise IllegalAction(f"{c} cannot be selected: a Torinoko (smoke bomb) is played in the damage phase")
    _check_protect(state, seat, action, state.teams and kind(c) == BLOCK, "a Block")


def check_smoke(state: State, seat: int, action: Mapping[str, Any]) -> None:
    if action.get("type") != "smoke":
        raise IllegalAction(
            f"the damage phase begins: every seat with two cards or more says secretly "
            f"whether it plays a smoke bomb; the action is 'smoke', not {action.get('type')!r}"
        )
    require_fields(action, ["use"], ["protect"])
    if not isinstance(action["use"], bool):
        raise IllegalAction(f"'use' is true or false, not {action['use']!r}")
    if action["use"] and not state.can_smoke(seat):
        raise IllegalAction(
            "you have no smoke bomb to play (a Torinoko that is not your last card): "
            "answer {'type': 'smoke', 'use': false}"
        )
    _check_protect(state, seat, action, state.teams and action["use"], "a smoke bomb used")
