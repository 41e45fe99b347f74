"""Front Line state: the immutable ``State``, its queries, the event names and ``evolve``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.contract import changed, evolver
from domain.events import Event
from domain.games.front_line.cards import FRONT_SIZE, RESERVE_SIZE, SHARED

DEAL, ATTACK, REFILL, OVER = "deal", "attack", "refill", "over"

CARDS_DEALT = "cards_dealt"
ATTACKED = "attacked"
PASSED = "passed"
FRONT_REFILLED = "front_refilled"


@dataclass(frozen=True)
class Attack:
    """One resolved attack: the captured target, its owner, the attacking cards (initiator first)."""

    target: str
    owner: int
    cards: tuple[str, ...]
    joker: bool

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "owner": self.owner, "cards": list(self.cards), "joker": self.joker}


@dataclass(frozen=True)
class LastTurn:
    """The latest declaration: its seat and attacks (none: the seat passed)."""

    seat: int
    attacks: tuple[Attack, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "passed": not self.attacks, "attacks": [a.to_dict() for a in self.attacks]}


Piles = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class State:
    """Everything the server knows: draw piles and set-aside cards included (``view`` hides them)."""

    n_seats: int
    deck: str = SHARED
    jokers: bool = False
    dealt: bool = False
    front: Piles = ()
    reserve: Piles = ()  # the reinforcements
    draw: Piles = ()  # face down, top first
    captured: Piles = ()
    set_aside: tuple[str, ...] = ()
    out: tuple[int, ...] = ()  # seats out of the game, in the order they went out
    turn: int = 0  # the seat whose turn it is (it stays while the losers refill)
    passes: int = 0  # consecutive passes
    refills: tuple[int, ...] = ()  # seats still to refill after the last attack, in order
    last: LastTurn | None = None
    turns: int = 0  # completed turns


# ---------------------------------------------------------------- queries


def in_seats(state: State) -> list[int]:
    """Seats still in the game."""
    return [s for s in range(state.n_seats) if s not in state.out]


def is_over(state: State) -> bool:
    """At most one seat is in, or every seat still in passed in a row (no refill pending)."""
    if not state.dealt or state.refills:
        return False
    still_in = len(in_seats(state))
    return still_in <= 1 or state.passes >= still_in


def phase(state: State) -> str:
    """``deal``, ``attack``, ``refill`` or ``over``."""
    if not state.dealt:
        return DEAL
    if is_over(state):
        return OVER
    return REFILL if state.refills else ATTACK


def acting_seat(state: State) -> int | None:
    """The one seat to act now (None before the deal and once over)."""
    ph = phase(state)
    if ph == ATTACK:
        return state.turn
    return state.refills[0] if ph == REFILL else None


def next_seat(state: State, seat: int) -> int:
    """The next seat to the left of ``seat`` that is still in (``seat`` itself if none is)."""
    for step in range(1, state.n_seats + 1):
        other = (seat + step) % state.n_seats
        if other not in state.out:
            return other
    return seat


def refill_count(state: State, seat: int) -> int:
    """How many reinforcements move up: one per gap in the front line, as far as they go."""
    return min(FRONT_SIZE - len(state.front[seat]), len(state.reserve[seat]))


def has_choice(state: State, seat: int) -> bool:
    """Whether the seat chooses which reinforcements move up (some, not all, of them must)."""
    return 0 < refill_count(state, seat) < len(state.reserve[seat])


def auto_refill(state: State, seat: int, moved: Sequence[str], chosen: bool) -> Event:
    """The ``front_refilled`` event: ``moved`` go up, the draw pile refills the reinforcements."""
    kept = len(state.reserve[seat]) - len(moved)
    drawn = list(state.draw[seat][: RESERVE_SIZE - kept])
    out = not state.front[seat] and not moved
    return Event(
        FRONT_REFILLED,
        {
            "seat": seat,
            "moved": list(moved),
            "drawn": drawn,
            "chosen": chosen,
            "draw_size": len(state.draw[seat]) - len(drawn),
            "out": out,
        },
    )


def scores(state: State) -> list[int]:
    """Captured cards per seat (a joker counts one)."""
    return [len(c) for c in state.captured] if state.captured else [0] * state.n_seats


# ---------------------------------------------------------------- evolve


def _dealt(state: State, ev: Event) -> State:
    n = state.n_seats
    hidden = ev.hidden
    draw = hidden.get("draw", [[]] * n)
    return changed(
        state,
        dealt=True,
        front=_piles(ev.data["front"]),
        reserve=_piles(ev.data["reinforcements"]),
        draw=_piles(draw),
        captured=((),) * n,
        set_aside=tuple(hidden.get("set_aside", ())),
    )


def _piles(raw: Sequence[Sequence[str]]) -> Piles:
    return tuple(tuple(p) for p in raw)


def _attacked(state: State, ev: Event) -> State:
    seat = ev.data["seat"]
    attacks = tuple(Attack(a["target"], a["owner"], tuple(a["cards"]), a["joker"]) for a in ev.data["attacks"])
    lost = {a.target for a in attacks}
    front = tuple(tuple(c for c in f if c not in lost) for f in state.front)
    captured = list(state.captured)
    captured[seat] = (*captured[seat], *(a.target for a in attacks))
    losers = sorted({a.owner for a in attacks}, key=lambda s: (s - seat) % state.n_seats)
    return changed(
        state, front=front, captured=tuple(captured), refills=tuple(losers), passes=0, last=LastTurn(seat, attacks)
    )


def _passed(state: State, ev: Event) -> State:
    seat = ev.data["seat"]
    return _end_turn(changed(state, passes=state.passes + 1, last=LastTurn(seat)))


def _refilled(state: State, ev: Event) -> State:
    seat, moved, drawn = ev.data["seat"], ev.data["moved"], ev.data["drawn"]
    front, reserve, draw = list(state.front), list(state.reserve), list(state.draw)
    front[seat] = (*front[seat], *moved)
    reserve[seat] = (*(c for c in reserve[seat] if c not in moved), *drawn)
    draw[seat] = draw[seat][len(drawn) :]
    out = state.out if front[seat] else (*state.out, seat)
    refills = tuple(s for s in state.refills if s != seat)
    state = changed(state, front=tuple(front), reserve=tuple(reserve), draw=tuple(draw), out=out, refills=refills)
    return state if refills else _end_turn(state)


def _end_turn(state: State) -> State:
    return changed(state, turn=next_seat(state, state.turn), turns=state.turns + 1)


_EVOLVERS: Mapping[str, Callable[[State, Event], State]] = {
    CARDS_DEALT: _dealt,
    ATTACKED: _attacked,
    PASSED: _passed,
    FRONT_REFILLED: _refilled,
}


evolve = evolver(_EVOLVERS)
