"""San, Ni, Ichi! state: phases, event names, the immutable ``State``, its queries, ``evolve``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.contract import changed, evolver
from domain.events import Event
from domain.games.san_ni_ichi.cards import TORINOKO, kind, points, sort_key

# Phases a seat can see; DAMAGE, TAKING and BETWEEN only exist inside one command's events.
DEAL, SELECT, ATTACK_PHASE, SMOKE, OVER = "deal", "select", "attack", "smoke", "over"
DAMAGE, TAKING, BETWEEN = "damage", "taking", "between"
STRENGTH, CARDS_SCORING = "strength", "cards"
# The rules versions still played, oldest first; new games get the last. "1": every resolving card
# may be discarded by choice (until 2026-11-26); "2": only an attack card or a Yoso Kogeki
# (``moves.DISCARDABLE``; docs/rules/san-ni-ichi.md, "Rules versions").
RULES_VERSIONS = ("1", "2")

CARDS_DEALT = "cards_dealt"
ROUND_STARTED = "round_started"
SELECTIONS_REVEALED = "selections_revealed"
CARD_PLAYED = "card_played"
CARD_DISCARDED = "card_discarded"
BLOCK_RESOLVED = "block_resolved"
PILES_SWAPPED = "piles_swapped"
SHURIKEN_THROWN = "shuriken_thrown"
TONFA_USED = "tonfa_used"
SMOKE_REQUESTED = "smoke_requested"
SMOKE_BOMBS_REVEALED = "smoke_bombs_revealed"
DAMAGE_TAKEN = "damage_taken"
CARD_DRAWN = "card_drawn"
ROUND_ENDED = "round_ended"
CARDS_DISCARDED = "cards_discarded"
GAME_FINISHED = "game_finished"

Entry = tuple[str, str | None]  # a combat pile card and its element (a Yoso Kogeki's may be None)
Pile = tuple[Entry, ...]


@dataclass(frozen=True)
class Played:
    """A card selected this round, in resolution order, and what became of it."""

    seat: int
    card: str
    protect: int | None = None  # a Block's protected seat
    how: str | None = None  # the resolving event's type, once resolved
    detail: tuple[tuple[str, Any], ...] = ()  # that event's data (seat and card left out)
    kept: bool = False  # a used Block, Sai or Tonfa lies on the table until the round ends


@dataclass(frozen=True)
class DamageLog:
    """The last damage phase: who smoked (covering whom), who took damage, what was drawn."""

    round: int
    smoked: tuple[tuple[int, str, int], ...] = ()  # seat, torinoko, covered seat
    declined: tuple[int, ...] = ()
    taken: tuple[tuple[int, int], ...] = ()  # seat, cards moved to its damage pile
    drawn: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class State:
    """Everything the rules know (the server's view: every hand)."""

    n: int
    deck: str
    teams: bool
    scoring: str
    rules_version: str  # the version ``game_created`` names (``RULES_VERSIONS``): what may be discarded
    strengths: int = 0
    phase: str = DEAL
    round: int = 0
    weapons: tuple[str, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    combat: tuple[Pile, ...] = ()
    damage: tuple[tuple[str, ...], ...] = ()
    discards: tuple[str, ...] = ()
    selecting: tuple[int, ...] = ()
    played: tuple[Played, ...] = ()
    previous: tuple[Played, ...] = ()  # the last finished round's selections
    protected: tuple[int, ...] = ()
    smokers: tuple[int, ...] = ()
    last_damage: DamageLog | None = None

    @property
    def current(self) -> Played | None:
        """The selected card now resolving (None outside the attack phase)."""
        if self.phase != ATTACK_PHASE:
            return None
        for p in self.played:
            if p.how is None:
                return p
        return None

    def top(self, seat: int) -> Entry | None:
        pile = self.combat[seat]
        return pile[-1] if pile else None

    def teammate(self, seat: int) -> int | None:
        """Seats 0+2, 1+3 (4 players); 0+3, 1+4, 2+5 (6 players)."""
        return (seat + self.n // 2) % self.n if self.teams else None

    def team(self, seat: int) -> tuple[int, ...]:
        mate = self.teammate(seat)
        return (seat,) if mate is None else tuple(sorted((seat, mate)))

    def team_list(self) -> list[list[int]] | None:
        """The teams (``[[0, 2], [1, 3]]``), or None without team play."""
        return [list(self.team(s)) for s in range(self.n // 2)] if self.teams else None

    def can_smoke(self, seat: int) -> bool:
        """Holds a Torinoko that is not its last card."""
        hand = self.hands[seat]
        return len(hand) >= 2 and any(kind(c) == TORINOKO for c in hand)

    def asked_to_smoke(self) -> tuple[int, ...]:
        """The seats that decide, secretly, whether to smoke: from public facts only.

        Every seat with two cards or more, while a Torinoko in play is not yet
        discarded; nobody otherwise. Asking only the holders would tell the table
        who holds one; a seat without one can only answer ``use: false``.
        """
        unseen = any(kind(w) == TORINOKO and w not in self.discards for w in self.weapons)
        return tuple(s for s, hand in enumerate(self.hands) if len(hand) >= 2) if unseen else ()

    def totals(self) -> list[int]:
        """Each seat's damage: strengths (weapons: players - 1), or cards with ``cards`` scoring."""
        if not self.damage:  # before the deal (a replay of step 1): nobody has a damage pile yet
            return [0] * self.n
        if self.scoring == CARDS_SCORING:
            return [len(d) for d in self.damage]
        return [sum(points(c, self.n) for c in d) for d in self.damage]

    def scores(self) -> list[int]:
        """Seat totals, or each seat's team total in team play."""
        totals = self.totals()
        return [sum(totals[s] for s in self.team(seat)) for seat in range(self.n)]


def lowest_entry(pile: Pile) -> Entry:
    """The lowest-strength card of a pile (letters break ties)."""
    return min(pile, key=lambda e: sort_key(e[0]))


# ---------------------------------------------------------------- evolve helpers


def _put(rows: tuple[tuple[Any, ...], ...], seat: int, row: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...]:
    return (*rows[:seat], row, *rows[seat + 1 :])


def _without(hand: tuple[str, ...], cards: Iterable[str]) -> tuple[str, ...]:
    gone = set(cards)
    return tuple(c for c in hand if c not in gone)


def _resolved(state: State, ev: Event, kept: bool = False, **changes: Any) -> State:
    """Mark the resolving card done; after the last one the damage phase begins."""
    resolving = ev.data["card"]
    detail = tuple(
        [(k, tuple(v) if isinstance(v, list) else v) for k, v in ev.data.items() if k not in {"seat", "card"}]
    )
    played = tuple(
        [changed(p, how=ev.type, detail=detail, kept=kept) if p.card == resolving else p for p in state.played]
    )
    if any(p.how is None for p in played):
        return changed(state, played=played, **changes)
    return changed(state, played=played, **changes, phase=DAMAGE, last_damage=DamageLog(state.round))


# ---------------------------------------------------------------- evolve (the attack phase's six events: one handler)


def _dealt(state: State, ev: Event) -> State:
    hands = tuple(tuple(ev.private_for(s).get("hand", ())) for s in range(state.n))
    return changed(
        state,
        strengths=ev.data["strengths"],
        weapons=tuple(ev.data["weapons_in_play"]),
        hands=hands,
        combat=((),) * state.n,
        damage=((),) * state.n,
    )


def _round_started(state: State, ev: Event) -> State:
    return changed(
        state,
        phase=SELECT,
        round=ev.data["round"],
        selecting=tuple(ev.data["selecting"]),
        played=(),
        protected=(),
        smokers=(),
    )


def _revealed(state: State, ev: Event) -> State:
    order = tuple(Played(r["seat"], r["card"], r.get("protect")) for r in ev.data["order"])
    hands = tuple(_without(h, [p.card for p in order if p.seat == s]) for s, h in enumerate(state.hands))
    return changed(state, phase=ATTACK_PHASE, played=order, hands=hands, protected=tuple(ev.data["protected"]))


def table_changes(state: State, ev: Event) -> dict[str, Any]:
    """What an attack-phase event changes on the table (combat piles, damage, hands, discards), the
    resolving card's own record aside (``_resolved``): a field name to its new value."""
    d, kind_of = ev.data, ev.type
    if kind_of == CARD_PLAYED:
        target = d["target"]
        combat = _put(state.combat, target, (*state.combat[target], (d["card"], d["element"])))
        counter = d.get("counter_to")
        if counter is not None:
            combat = _put(_put(combat, counter, combat[target]), target, ())
        return {"combat": combat}
    if kind_of == CARD_DISCARDED:
        return {"discards": (*state.discards, d["card"])}
    if kind_of == PILES_SWAPPED:
        a, b = d["piles"]
        return {"combat": _put(_put(state.combat, a, state.combat[b]), b, state.combat[a])}
    if kind_of == SHURIKEN_THROWN:
        target = d["target"]
        return {"damage": _put(state.damage, target, (*state.damage[target], d["card"]))}
    if kind_of == TONFA_USED:
        seat, pile = d["seat"], d["pile"]
        hand = _without((*state.hands[seat], d["took"]), [d["discarded"]])
        return {
            "combat": _put(state.combat, pile, state.combat[pile][:-1]),
            "hands": _put(state.hands, seat, hand),
            "discards": (*state.discards, d["discarded"]),
        }
    return {}  # a Block: it protected its seat from the reveal on


KEPT = frozenset({BLOCK_RESOLVED, PILES_SWAPPED, TONFA_USED})  # used, they lie on the table until the round ends


def _attack_event(state: State, ev: Event) -> State:
    return _resolved(state, ev, kept=ev.type in KEPT, **table_changes(state, ev))


def _smoke_requested(state: State, ev: Event) -> State:
    return changed(state, phase=SMOKE, smokers=tuple(ev.data["seats"]))


def _smoked(state: State, ev: Event) -> State:
    used = [(u["seat"], u["card"], u["covers"]) for u in ev.data["used"]]
    hands = tuple(_without(h, [c for s, c, _ in used if s == seat]) for seat, h in enumerate(state.hands))
    log = DamageLog(state.round, tuple(used), tuple(ev.data["declined"]))
    return changed(
        state,
        phase=TAKING,
        hands=hands,
        discards=(*state.discards, *(c for _, c, _ in used)),
        smokers=(),
        last_damage=log,
    )


def _damage_taken(state: State, ev: Event) -> State:
    seat = ev.data["seat"]
    pile = tuple(c for c, _ in state.combat[seat])
    log = state.last_damage or DamageLog(state.round)
    return changed(
        state,
        combat=_put(state.combat, seat, ()),
        damage=_put(state.damage, seat, (*state.damage[seat], *pile)),
        last_damage=changed(log, taken=(*log.taken, (seat, len(pile)))),
    )


def _drawn(state: State, ev: Event) -> State:
    seat, drawn = ev.data["seat"], ev.data["card"]
    pile = tuple(e for e in state.combat[seat] if e[0] != drawn)
    log = state.last_damage or DamageLog(state.round)
    return changed(
        state,
        combat=_put(state.combat, seat, pile),
        hands=_put(state.hands, seat, (*state.hands[seat], drawn)),
        last_damage=changed(log, drawn=(*log.drawn, (seat, drawn))),
    )


def _round_ended(state: State, ev: Event) -> State:
    return changed(
        state,
        phase=BETWEEN,
        discards=(*state.discards, *ev.data["discarded"]),
        played=(),
        previous=state.played,
        protected=(),
    )


def _cards_discarded(state: State, ev: Event) -> State:
    seat = ev.data["seat"]
    return changed(
        state,
        hands=_put(state.hands, seat, _without(state.hands[seat], ev.data["cards"])),
        discards=(*state.discards, *ev.data["cards"]),
    )


def _finished(state: State, ev: Event) -> State:
    left = [c for pile in state.combat for c, _ in pile]
    return changed(state, phase=OVER, combat=((),) * state.n, discards=(*state.discards, *left), selecting=())


EVOLVERS: Mapping[str, Callable[[State, Event], State]] = {
    CARDS_DEALT: _dealt,
    ROUND_STARTED: _round_started,
    SELECTIONS_REVEALED: _revealed,
    CARD_PLAYED: _attack_event,
    CARD_DISCARDED: _attack_event,
    BLOCK_RESOLVED: _attack_event,
    PILES_SWAPPED: _attack_event,
    SHURIKEN_THROWN: _attack_event,
    TONFA_USED: _attack_event,
    SMOKE_REQUESTED: _smoke_requested,
    SMOKE_BOMBS_REVEALED: _smoked,
    DAMAGE_TAKEN: _damage_taken,
    CARD_DRAWN: _drawn,
    ROUND_ENDED: _round_ended,
    CARDS_DISCARDED: _cards_discarded,
    GAME_FINISHED: _finished,
}


evolve = evolver(EVOLVERS)
