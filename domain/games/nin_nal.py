"""Nin Nal (published as Ninjan): rules as in docs/rules/nin-nal.md.

Simultaneous selects each round, resolved from the highest card down; a card
that beats the top of a pile (by colour) must take it, otherwise it is placed.

Decisions where the rules are silent:

* Dealing: the shuffled deck gives the piles ``deck[0:3]`` (pile 0, 1, 2), seat
  ``s`` the hand ``deck[3 + 9s : 12 + 9s]``, and the rest is unused (face down,
  in a ``hidden`` private part). A fixed deal's unused cards are the rest of the
  48 in catalogue order (rock, paper, scissors; -6..-1, 1..10).
* Piles are numbered 0, 1, 2 and never move; a take puts the resolved card in
  the taken pile's place.
* Only a tie for **first** place is broken by throws; lower places with equal
  scores share their competition rank (1, 1, 3 style).
* A "tied throw" is a throw after which nobody drops out (one sign or all
  three). Option ``tie_break_throws`` (default 20) caps them; when the cap is
  reached the players still in share first place. ``0`` skips the throws.
* Ranks after a tie-break: a tied player's rank is 1 + the number of tied
  players who stayed in longer than them; players who drop out on the same
  throw share a rank. Seats outside the tie keep their competition rank.
* After the last card of a round resolves the next round starts at once; the
  view keeps the finished round under ``previous_round``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from domain.contract import Bot, Option, Pending, Rules, changed, evolver, require_fields, result_from_scores
from domain.errors import IllegalAction, InvalidOptions
from domain.events import HIDDEN, Event
from domain.rng import SeededRandom

COLOURS = ("rock", "paper", "scissors")
VALUES = (*range(-6, 0), *range(1, 11))
CARDS = tuple(f"{colour}-{value}" for colour in COLOURS for value in VALUES)
BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
THREE_WAY_ORDER = ("rock", "scissors", "paper")
SIGNS = COLOURS
N_PILES = 3
HAND_SIZE = 9
ROUNDS = HAND_SIZE
DEFAULT_TIE_BREAK_THROWS = 20

SELECT, RESOLVE, TIE_BREAK, OVER, DEAL = "select", "resolve", "tie_break", "over", "deal"

CARDS_DEALT = "cards_dealt"
CARDS_REVEALED = "cards_revealed"
PILE_TAKEN = "pile_taken"
CARD_PLACED = "card_placed"
SIGNS_THROWN = "signs_thrown"


def colour(card: str) -> str:
    """The colour of a card id (``paper--4`` -> ``paper``)."""
    return card.split("-", 1)[0]


def value(card: str) -> int:
    """The value of a card id (``paper--4`` -> -4)."""
    return int(card.split("-", 1)[1])


CARD_SET = frozenset(CARDS)
COLOUR_OF = {card: colour(card) for card in CARDS}  # parsed once: the rules ask for colours all the time
VALUE_OF = {card: value(card) for card in CARDS}


def beats(card: str, other: str) -> bool:
    """True when ``card`` beats ``other`` at rock-paper-scissors (colour only)."""
    return BEATS[COLOUR_OF[card]] == COLOUR_OF[other]


def resolution_order(cards: Sequence[str]) -> list[str]:
    """Highest value first; equal values: the RPS winner, or rock, scissors, paper for three."""
    by_value: dict[int, list[str]] = {}
    for card in cards:
        by_value.setdefault(VALUE_OF[card], []).append(card)
    out: list[str] = []
    for v in sorted(by_value, reverse=True):
        group = by_value[v]
        if len(group) == 2 and beats(group[1], group[0]):
            group = [group[1], group[0]]
        elif len(group) == 3:
            group = sorted(group, key=lambda c: THREE_WAY_ORDER.index(COLOUR_OF[c]))
        out += group
    return out


@dataclass(frozen=True)
class Revealed:
    """One card of this round, in resolution order, and how it resolved."""

    seat: int
    card: str
    move: str | None = None  # "take" or "place" once resolved
    pile: int | None = None
    taken: tuple[str, ...] = ()

    def to_view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "card": self.card, "resolved": self.move is not None}
        if self.move is not None:
            out.update(move=self.move, pile=self.pile)
        if self.move == "take":
            out["taken"] = list(self.taken)
        return out


@dataclass(frozen=True)
class State:
    """Everything the rules know (the server's view: hands and unused included)."""

    n_seats: int
    max_tied_throws: int
    phase: str = DEAL
    round: int = 0
    hands: tuple[tuple[str, ...], ...] = ()
    piles: tuple[tuple[str, ...], ...] = ()
    won: tuple[tuple[str, ...], ...] = ()
    unused: tuple[str, ...] = ()
    revealed: tuple[Revealed, ...] = ()
    previous_round: tuple[Revealed, ...] = ()
    tied: tuple[int, ...] = ()  # seats still in the tie-break
    tie_started: tuple[int, ...] = ()
    throws: tuple[tuple[tuple[int, str], ...], ...] = ()
    dropped: tuple[tuple[int, ...], ...] = ()  # drop-outs per throw, in order
    tied_throws: int = 0

    @property
    def current(self) -> Revealed | None:
        """The revealed card now resolving (None outside the resolve phase)."""
        if self.phase != RESOLVE:
            return None
        for card in self.revealed:
            if card.move is None:
                return card
        return None

    def scores(self) -> list[int]:
        """Sum of won card values per seat."""
        return [sum(VALUE_OF[c] for c in w) for w in self.won]

    def takeable(self, card: str) -> list[int]:
        """Piles whose top ``card`` beats."""
        beaten = BEATS[COLOUR_OF[card]]
        return [i for i, pile in enumerate(self.piles) if COLOUR_OF[pile[-1]] == beaten]


# ---------------------------------------------------------------- setup


def _validate_deal(deal: Mapping[str, Any], n_seats: int) -> tuple[list[str], list[list[str]]]:
    """The fixed deal's piles and hands, or ``InvalidOptions`` naming the problem."""
    unknown = sorted(set(deal) - {"piles", "hands"})
    if unknown:
        raise InvalidOptions(f"a Nin Nal deal has only 'piles' and 'hands'; unknown: {', '.join(unknown)}")
    piles, hands = deal.get("piles"), deal.get("hands")
    if not isinstance(piles, list) or len(piles) != N_PILES:
        raise InvalidOptions(f"deal 'piles' must be a list of {N_PILES} card ids")
    if not isinstance(hands, list) or len(hands) != n_seats:
        raise InvalidOptions(f"deal 'hands' must be a list of {n_seats} hands, one per seat")
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list) or len(hand) != HAND_SIZE:
            raise InvalidOptions(f"deal hand of seat {seat} must be a list of {HAND_SIZE} card ids")
    everything = [*piles, *(c for h in hands for c in h)]
    bad = [c for c in everything if c not in CARDS]
    if bad:
        raise InvalidOptions(f"unknown card id(s) in the deal: {', '.join(map(repr, bad))}")
    twice = sorted({c for c in everything if everything.count(c) > 1})
    if twice:
        raise InvalidOptions(f"card(s) dealt twice: {', '.join(twice)}")
    return list(piles), [list(h) for h in hands]


def _deal_event(piles: list[str], hands: list[list[str]], unused: list[str]) -> Event:
    private = {str(s): {"hand": hand} for s, hand in enumerate(hands)}
    private[HIDDEN] = {"unused": unused}
    public = {"piles": piles, "hand_sizes": [len(h) for h in hands]}
    return Event(CARDS_DEALT, public, private=private)


# ---------------------------------------------------------------- evolve


def _deal(state: State, ev: Event) -> State:
    n = state.n_seats
    hands = tuple(tuple(ev.private_for(s).get("hand", ())) for s in range(n))
    piles = tuple((c,) for c in ev.data["piles"])
    return changed(
        state, phase=SELECT, round=1, hands=hands, piles=piles, won=((),) * n, unused=tuple(ev.hidden.get("unused", ()))
    )


def _reveal(state: State, ev: Event) -> State:
    order = tuple(Revealed(int(r["seat"]), r["card"]) for r in ev.data["order"])
    played = {r.seat: r.card for r in order}
    hands = tuple(tuple([c for c in hand if c != played.get(s)]) for s, hand in enumerate(state.hands))
    return changed(state, phase=RESOLVE, hands=hands, revealed=order)


def _resolved(state: State, ev: Event) -> State:
    seat, card, pile = int(ev.data["seat"]), ev.data["card"], int(ev.data["pile"])
    piles, won = list(state.piles), list(state.won)
    if ev.type == PILE_TAKEN:
        won[seat] = (*won[seat], *piles[pile])
        piles[pile] = (card,)
        done = Revealed(seat, card, "take", pile, tuple(state.piles[pile]))
    else:
        piles[pile] = (*piles[pile], card)
        done = Revealed(seat, card, "place", pile)
    revealed = tuple([done if r.seat == seat and r.move is None else r for r in state.revealed])
    state = changed(state, piles=tuple(piles), won=tuple(won), revealed=revealed)
    return state if state.current is not None else _end_round(state)


def _end_round(state: State) -> State:
    state = changed(state, revealed=(), previous_round=state.revealed)
    if state.round < ROUNDS:
        return changed(state, phase=SELECT, round=state.round + 1)
    scores = state.scores()
    tied = tuple(s for s, v in enumerate(scores) if v == max(scores))
    if len(tied) > 1 and state.max_tied_throws > 0:
        return changed(state, phase=TIE_BREAK, tied=tied, tie_started=tied)
    return changed(state, phase=OVER, tied=tied, tie_started=tied if len(tied) > 1 else ())


def _thrown(state: State, ev: Event) -> State:
    throw = tuple((int(t["seat"]), t["sign"]) for t in ev.data["throws"])
    dropped = tuple(int(s) for s in ev.data["dropped"])
    remaining = tuple(s for s in state.tied if s not in dropped)
    tied_throws = state.tied_throws + (0 if dropped else 1)
    over = len(remaining) == 1 or tied_throws >= state.max_tied_throws
    return changed(
        state,
        throws=(*state.throws, throw),
        tied=remaining,
        tied_throws=tied_throws,
        dropped=(*state.dropped, dropped) if dropped else state.dropped,
        phase=OVER if over else TIE_BREAK,
    )


_EVOLVERS = {
    CARDS_DEALT: _deal,
    CARDS_REVEALED: _reveal,
    PILE_TAKEN: _resolved,
    CARD_PLACED: _resolved,
    SIGNS_THROWN: _thrown,
}


# ---------------------------------------------------------------- decisions


def _pile_index(action: Mapping[str, Any]) -> int:
    pile = action["pile"]
    if not isinstance(pile, int) or isinstance(pile, bool):
        raise IllegalAction(f"'pile' is a pile number 0, 1 or 2, not {pile!r}")
    if not 0 <= pile < N_PILES:
        raise IllegalAction(f"pile {pile} does not exist (the piles are 0, 1 and 2)")
    return pile


def _describe_tops(state: State, piles: Sequence[int]) -> str:
    return ", ".join(f"pile {i} ({state.piles[i][-1]})" for i in piles)


def _check_resolve(state: State, seat: int, action: Mapping[str, Any]) -> tuple[str, int]:
    """The checked (move, pile) of the resolving seat, or ``IllegalAction`` naming the rule."""
    current = state.current
    if current is None or current.seat != seat:
        raise IllegalAction("it is not your card's turn to resolve")
    kind = action.get("type")
    if kind not in ("take", "place"):
        raise IllegalAction(f"{current.card} is resolving: the action is 'take' or 'place', not {kind!r}")
    require_fields(action, ["pile"])
    pile = _pile_index(action)
    takeable = state.takeable(current.card)
    top = state.piles[pile][-1]
    if kind == "place" and takeable:
        raise IllegalAction(
            f"{current.card} beats the top of {_describe_tops(state, takeable)}: you must take a pile you beat"
        )
    if kind == "take" and pile not in takeable:
        if not takeable:
            raise IllegalAction(f"{current.card} beats no pile top: place it on a pile")
        raise IllegalAction(
            f"{current.card} does not beat the top of pile {pile} ({top}); "
            f"you can take {_describe_tops(state, takeable)}"
        )
    return kind, pile


def _throw_result(state: State, choices: Mapping[int, Mapping[str, Any]]) -> Event:
    throws = [{"seat": s, "sign": choices[s]["sign"]} for s in sorted(choices)]
    shown = {t["sign"] for t in throws}
    dropped: list[int] = []
    if len(shown) == 2:
        a, b = sorted(shown)
        loser = b if BEATS[a] == b else a
        dropped = [t["seat"] for t in throws if t["sign"] == loser]
    remaining = [s for s in state.tied if s not in dropped]
    return Event(
        SIGNS_THROWN, {"throw": len(state.throws) + 1, "throws": throws, "dropped": dropped, "remaining": remaining}
    )


def _action_options(state: State, seat: int) -> tuple[str, str, Sequence[Any]]:
    """The legal actions of ``seat`` as (type, field, the field's legal values in listing order)."""
    if state.phase == SELECT:
        return "select", "card", state.hands[seat]
    if state.phase == TIE_BREAK:
        return "throw", "sign", SIGNS
    card = state.current.card  # type: ignore[union-attr]
    takeable = state.takeable(card)
    if takeable:
        return "take", "pile", takeable
    return "place", "pile", range(N_PILES)


@cache  # one per set of seats: at most 2**5
def _choosing(seats: tuple[int, ...]) -> Pending:
    """``seats`` choose secretly at once."""
    return Pending(seats, simultaneous=True)


@cache
def _acting(seats: tuple[int, ...]) -> Pending:
    """``seats`` (one, or nobody) act in turn."""
    return Pending(seats)


# ---------------------------------------------------------------- the game


class NinNal(Rules):
    """The Nin Nal rules (see the module docstring)."""

    id = "nin-nal"
    name = "Nin Nal"
    rules_version = "1"
    min_players = 2
    max_players = 5
    options: ClassVar[Mapping[str, Option]] = {
        "tie_break_throws": Option.whole_number(
            DEFAULT_TIE_BREAK_THROWS,
            "Tied rock-paper-scissors throws (nobody drops out) allowed when players tie "
            "for first; after that many the players still in share first place "
            "(0: ties share first at once).",
            0,
            1000,
        ),
    }

    def __init__(self) -> None:
        self.bots: Mapping[str, Bot] = {"greedy": greedy_bot}

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str = "1") -> State:
        """The state before the deal."""
        return State(n_seats=n_seats, max_tied_throws=options.get("tie_break_throws", DEFAULT_TIE_BREAK_THROWS))

    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]:
        """Shuffle (or take the fixed deal): three face-up piles, nine cards per hand."""
        if deal is not None:
            piles, hands = _validate_deal(deal, n_seats)
            used = set(piles).union(*hands)
            return [_deal_event(piles, hands, [c for c in CARDS if c not in used])]
        deck = rng.shuffled(CARDS)
        start = [N_PILES + HAND_SIZE * s for s in range(n_seats + 1)]
        hands = [deck[a:b] for a, b in itertools.pairwise(start)]
        return [_deal_event(deck[:N_PILES], hands, deck[start[-1] :])]

    evolve = staticmethod(evolver(_EVOLVERS))

    def pending(self, state: State) -> Pending:
        """Everybody selects at once; one owner resolves; tied players throw at once."""
        if state.phase == SELECT:
            return _choosing(tuple(range(state.n_seats)))
        if state.phase == TIE_BREAK:
            return _choosing(state.tied)
        current = state.current
        return _acting((current.seat,) if current else ())

    def legal_actions(self, state: State, seat: int) -> list[dict[str, Any]]:
        """Every action ``seat`` may take now, exactly as accepted."""
        kind, field, options = _action_options(state, seat)
        return [{"type": kind, field: option} for option in options]

    def sample_action(self, state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
        """A uniformly random legal action: the very draw ``rnd.choice(legal_actions)`` makes, unlisted."""
        kind, field, options = _action_options(state, seat)
        return {"type": kind, field: rnd.choice(options)}

    def decide(self, state: State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """The events of a take or place by the resolving card's owner."""
        if state.phase != RESOLVE:
            raise IllegalAction(f"in the {state.phase} phase choices are made secretly, not as turns")
        kind, pile = _check_resolve(state, seat, action)
        card = state.current.card  # type: ignore[union-attr]
        if kind == "take":
            return [Event(PILE_TAKEN, {"seat": seat, "card": card, "pile": pile, "cards": list(state.piles[pile])})]
        return [Event(CARD_PLACED, {"seat": seat, "card": card, "pile": pile})]

    def validate_choice(self, state: State, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Check a secret select (or tie-break throw); it is revealed in one part."""
        kind = action.get("type")
        if state.phase == SELECT:
            if kind != "select":
                raise IllegalAction(f"every player now selects a card: the action is 'select', not {kind!r}")
            require_fields(action, ["card"])
            card = action["card"]
            if not isinstance(card, str) or card not in CARD_SET:
                raise IllegalAction(f"there is no card {card!r} in Nin Nal")
            if card not in state.hands[seat]:
                raise IllegalAction(f"{card} is not in your hand")
        elif state.phase == TIE_BREAK:
            if kind != "throw":
                raise IllegalAction(f"the tie-break is rock-paper-scissors: the action is 'throw', not {kind!r}")
            require_fields(action, ["sign"])
            if action["sign"] not in SIGNS:
                raise IllegalAction(f"sign {action['sign']!r} is not one of {', '.join(SIGNS)}")
        else:
            raise IllegalAction(f"nothing is chosen secretly in the {state.phase} phase")
        return [dict(action)]

    def resolve(self, state: State, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]:
        """The revealed selects in resolution order, or the outcome of a tie-break throw."""
        if state.phase == TIE_BREAK:
            return [_throw_result(state, choices)]
        owner = {choices[s]["card"]: s for s in choices}
        order = [{"seat": owner[c], "card": c} for c in resolution_order(list(owner))]
        return [Event(CARDS_REVEALED, {"round": state.round, "order": order})]

    def view(self, state: State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
        """What ``viewer`` may see: never another hand, an unrevealed select or the unused cards."""
        current = state.current
        out: dict[str, Any] = {
            "piles": [list(p) for p in state.piles],
            "won": [list(w) for w in state.won],
            "hand": list(state.hands[viewer]) if viewer is not None and state.hands else None,
            "hand_sizes": [len(h) for h in state.hands],
            "round": state.round,
            "rounds": ROUNDS,
            "revealed": [r.to_view() for r in state.revealed],
            "previous_round": [r.to_view() for r in state.previous_round],
            "resolving": None
            if current is None
            else {"seat": current.seat, "card": current.card, "can_take": state.takeable(current.card)},
            "scores": state.scores() if state.won else [0] * state.n_seats,
            "tie_break": _tie_break_view(state) if state.tie_started else None,
        }
        if reveal_all:
            out["hands"] = [list(h) for h in state.hands]
            out["unused"] = list(state.unused)
        return out

    def phase(self, state: State) -> str:
        """``select``, ``resolve``, ``tie_break`` or ``over`` (``deal`` before setup)."""
        return state.phase

    def outcome(self, state: State) -> dict[str, Any] | None:
        """Scores and ranks, the tie for first broken by the throws; None until over."""
        if state.phase != OVER:
            return None
        scores = state.scores()
        result = result_from_scores(scores)
        if not state.tie_started:
            return result
        ranks = list(result["ranks"])
        for seat in state.tie_started:
            if seat not in state.tied:
                ranks[seat] = 1 + len(state.tie_started) - len(_dropped_by(state, seat))
        tie_break = {**_tie_break_view(state), "shared": len(state.tied) > 1}
        return {**result, "ranks": ranks, "winners": [s for s, r in enumerate(ranks) if r == 1], "tie_break": tie_break}


def _tie_break_view(state: State) -> dict[str, Any]:
    """The tie for first: who tied, who is still in, every revealed throw."""
    return {
        "seats": list(state.tie_started),
        "remaining": list(state.tied),
        "throws": [[{"seat": s, "sign": g} for s, g in t] for t in state.throws],
        "tied_throws": state.tied_throws,
        "max_tied_throws": state.max_tied_throws,
    }


def _dropped_by(state: State, seat: int) -> set[int]:
    """Tied seats that dropped out no later than ``seat`` (itself included)."""
    out: set[int] = set()
    for group in state.dropped:
        out |= set(group)
        if seat in group:
            return out
    return set()


# ---------------------------------------------------------------- greedy bot

SAMPLES = 24


def _simulate(
    piles: list[list[str]], order: Sequence[tuple[int, str]], n: int, first: tuple[str, int] | None = None
) -> list[int]:
    """Points each seat takes while ``order`` resolves, everybody playing greedily.

    ``first`` forces the first card's move. Greedy: take the richest pile you
    beat; otherwise place on the poorest pile (to keep others' takes small).
    """
    gains = [0] * n
    piles = [list(p) for p in piles]
    for i, (seat, card) in enumerate(order):
        takeable = [p for p in range(N_PILES) if beats(card, piles[p][-1])]
        if i == 0 and first is not None:
            move, pile = first
        elif takeable:
            move, pile = "take", max(takeable, key=lambda p: sum(map(value, piles[p])))
        else:
            move, pile = "place", min(range(N_PILES), key=lambda p: sum(map(value, piles[p])))
        if move == "take":
            gains[seat] += sum(map(value, piles[pile]))
            piles[pile] = [card]
        else:
            piles[pile].append(card)
    return gains


def _utility(gains: Sequence[int], seat: int) -> float:
    others = [g for s, g in enumerate(gains) if s != seat]
    return gains[seat] - max(others, default=0)


def _unseen(state: State, seat: int) -> list[str]:
    """Cards ``seat`` cannot see: other hands and the unused ones."""
    seen = set(state.hands[seat]).union(*state.piles, *state.won)
    seen |= {r.card for r in (*state.revealed, *state.previous_round)}
    return [c for c in CARDS if c not in seen]


def _greedy_select(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    pool = _unseen(state, seat)
    opponents = [s for s in range(state.n_seats) if s != seat]
    totals = {c: 0.0 for c in state.hands[seat]}
    for _ in range(SAMPLES):
        guess = rnd.sample(pool, len(opponents))
        for card in totals:
            played = {card: seat, **dict(zip(guess, opponents))}
            order = [(played[c], c) for c in resolution_order(list(played))]
            piles = [list(p) for p in state.piles]
            totals[card] += _utility(_simulate(piles, order, state.n_seats), seat)
    best = max(totals.values())
    return {"type": "select", "card": rnd.choice([c for c, t in totals.items() if t == best])}


def _greedy_resolve(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    actions = RULES.legal_actions(state, seat)
    if len(actions) == 1:
        return actions[0]
    rest = [(r.seat, r.card) for r in state.revealed if r.move is None]
    piles = [list(p) for p in state.piles]
    scored = [
        (_utility(_simulate(piles, rest, state.n_seats, (a["type"], a["pile"])), seat), i)
        for i, a in enumerate(actions)
    ]
    best = max(u for u, _ in scored)
    return actions[rnd.choice([i for u, i in scored if u == best])]


def greedy_bot(state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
    """Monte-Carlo select over guessed opponent cards, look-ahead over the revealed round.

    Sees only what ``view`` shows ``seat``; throws are uniformly random (the
    only unexploitable strategy).
    """
    if state.phase == SELECT:
        return _greedy_select(state, seat, rnd)
    if state.phase == TIE_BREAK:
        return {"type": "throw", "sign": rnd.choice(SIGNS)}
    return _greedy_resolve(state, seat, rnd)


RULES = NinNal()
