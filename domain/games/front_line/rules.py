"""Front Line's ``Game``: setup, who acts, actions, deciding, viewing, the result."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from domain.contract import Bot, Option, Pending, Rules, require_fields, result_from_scores
from domain.errors import IllegalAction
from domain.events import HIDDEN, Event
from domain.games.front_line import actions, decode
from domain.games.front_line import state as st
from domain.games.front_line.attacks import check_declaration
from domain.games.front_line.bots import greedy
from domain.games.front_line.cards import (
    DECKS,
    FRONT_SIZE,
    PER_PLAYER,
    SHARED,
    check_deal,
    deck,
    split_pile,
)
from domain.rng import SeededRandom

ACTION_TYPES = ("attack", "pass", "refill")
NOBODY = Pending(())


def _deal_event(piles: Sequence[Sequence[str]], set_aside: Sequence[str]) -> Event:
    """``cards_dealt``: front lines and reinforcements public; draw piles and set-aside cards hidden."""
    split = [split_pile(p) for p in piles]
    public = {
        "front": [f for f, _, _ in split],
        "reinforcements": [r for _, r, _ in split],
        "draw_sizes": [len(d) for _, _, d in split],
        "set_aside": len(set_aside),
    }
    return Event(st.CARDS_DEALT, public, {HIDDEN: {"draw": [d for _, _, d in split], "set_aside": list(set_aside)}})


def _dealt_piles(
    options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
) -> tuple[list[list[str]], list[str]]:
    """Each seat's pile (front, reinforcements, draw pile, in that order) and the set-aside cards."""
    kind, jokers = options["deck"], options["jokers"]
    if deal is not None:
        piles = check_deal(deal, n_seats, kind, jokers)
        used = {c for p in piles for c in p}
        decks = [deck(kind, jokers)] if kind == SHARED else [deck(kind, jokers, s) for s in range(n_seats)]
        return piles, [c for d in decks for c in d if c not in used]
    if kind == PER_PLAYER:
        return [rng.shuffled(deck(kind, jokers, s)) for s in range(n_seats)], []
    cards = rng.shuffled(deck(kind, jokers))
    each = len(cards) // n_seats
    return [cards[s * each : (s + 1) * each] for s in range(n_seats)], cards[n_seats * each :]


def _check_refill(state: st.State, seat: int, action: Mapping[str, Any]) -> list[str]:
    require_fields(action, ["cards"])
    cards, need, reserve = action["cards"], st.refill_count(state, seat), state.reserve[seat]
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise IllegalAction("'cards' must be a list of your reinforcements' ids")
    for c in cards:
        if c not in reserve:
            raise IllegalAction(f"{c} is not one of your reinforcements ({', '.join(reserve)})")
        if cards.count(c) > 1:
            raise IllegalAction(f"{c} is listed twice")
    if len(cards) != need:
        gaps = FRONT_SIZE - len(state.front[seat])
        raise IllegalAction(
            f"move up exactly {need} reinforcement(s): your front line has {gaps} gap(s) and "
            f"{len(reserve)} reinforcement(s) can fill them (you chose {len(cards)})"
        )
    return list(cards)


class FrontLine(Rules):
    """The Front Line rules (``RULES``); the package docstring lists the rulings."""

    id = "front-line"
    name = "Front Line"
    rules_version = "1"
    min_players = 2
    max_players = 4
    options: ClassVar[Mapping[str, Option]] = {
        "jokers": Option(
            False,
            "add one joker per suit (joker-rock ... joker-water; rank 0; an attack holding one reverses the suit rule)",
            (False, True),
        ),
        "deck": Option(
            SHARED,
            "shared (one 65-card deck dealt evenly, the remainder set aside) or per-player "
            "(each player shuffles a full deck of their own; ids carry the owner: s1:paper-7)",
            DECKS,
        ),
    }
    bots: ClassVar[Mapping[str, Bot]] = {"greedy": greedy}  # random: the engine's, through sample_action

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str = "1") -> st.State:
        """No cards yet: ``cards_dealt`` brings them."""
        return st.State(n_seats=n_seats, deck=options.get("deck", SHARED), jokers=options.get("jokers", False))

    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]:
        """Shuffle and deal (or take the fixed deal): 3 front, 3 reinforcements, the rest face down."""
        piles, set_aside = _dealt_piles(options, n_seats, rng, deal)
        return [_deal_event(piles, set_aside)]

    evolve = staticmethod(st.evolve)

    def pending(self, state: st.State) -> Pending:
        """The seat whose turn it is, or the next seat to refill; nobody once over."""
        seat = st.acting_seat(state)
        return NOBODY if seat is None else Pending((seat,))

    def legal_actions(self, state: st.State, seat: int) -> list[dict[str, Any]]:
        """A short list of legal actions, never every declaration (see ``actions.legal_actions``)."""
        return actions.legal_actions(state, seat)

    def action_space(self, state: st.State, seat: int) -> dict[str, Any]:
        """Every legal action, compactly and exactly (see ``actions``'s module docstring)."""
        return actions.action_space(state, seat)

    def admits(self, described: Mapping[str, Any], action: Any) -> bool:
        """Whether ``described``'s ``refill`` or ``attack`` admits ``action`` (``decode.admits``)."""
        return decode.admits(described, action)

    def expand(self, described: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Every action ``described`` admits (``decode.expand``)."""
        return decode.expand(described)

    def sample_action(self, state: st.State, seat: int, rnd: random.Random) -> dict[str, Any]:
        """A random legal action; every legal action has positive probability."""
        return actions.sample_action(state, seat, rnd)

    def decide(self, state: st.State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """The events of an attack declaration, a pass, or a refill (the refills without choice: ``advance``)."""
        kind = action.get("type")
        if kind not in ACTION_TYPES:
            raise IllegalAction(f"unknown action type {kind!r}; Front Line actions are {', '.join(ACTION_TYPES)}")
        if st.phase(state) == st.REFILL:
            if kind != "refill":
                raise IllegalAction(
                    f"seat {seat} lost cards and must first choose which reinforcements move up "
                    "to its front line: the action is 'refill'"
                )
            return [st.auto_refill(state, seat, _check_refill(state, seat, action), chosen=True)]
        if st.phase(state) != st.ATTACK:
            raise IllegalAction(f"nothing can be played in the {st.phase(state)} phase")
        if kind == "refill":
            raise IllegalAction("there is nothing to refill: the action is 'attack' or 'pass'")
        if kind == "pass":
            require_fields(action, [])
            return [Event(st.PASSED, {"seat": seat, "passes": state.passes + 1})]
        require_fields(action, ["attacks"])
        attacks = check_declaration(state, seat, action["attacks"])
        return [Event(st.ATTACKED, {"seat": seat, "attacks": [a.to_dict() for a in attacks]})]

    def advance(self, state: st.State) -> list[Event]:
        """The next loser's refill when it needs no choice (all or none of its reinforcements move up),
        else ``[]``: the engine runs it after every action until a seat must act."""
        if not state.refills or st.has_choice(state, state.refills[0]):
            return []
        seat = state.refills[0]
        return [st.auto_refill(state, seat, state.reserve[seat][: st.refill_count(state, seat)], chosen=False)]

    def validate_choice(self, state: st.State, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Front Line has no secret choices."""
        raise IllegalAction("Front Line has no secret choices: every action is played in turn")

    def resolve(self, state: st.State, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]:
        """Nothing to resolve (no secret choices)."""
        return []

    def view(self, state: st.State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
        """The table (all public); draw piles and set-aside cards only as counts until ``reveal_all``."""
        return _view(state, reveal_all)

    def phase(self, state: st.State) -> str:
        """deal, attack, refill or over."""
        return st.phase(state)

    def outcome(self, state: st.State) -> dict[str, Any] | None:
        """Captured cards per seat, most first; extras ``reason`` (elimination or passes) and ``turns``."""
        if st.phase(state) != st.OVER:
            return None
        reason = "elimination" if len(st.in_seats(state)) <= 1 else "passes"
        return result_from_scores(st.scores(state), reason=reason, turns=state.turns)


def _view(state: st.State, reveal_all: bool) -> dict[str, Any]:
    ph = st.phase(state)
    refilling = state.refills[0] if ph == st.REFILL else None
    out: dict[str, Any] = {
        "deck": state.deck,
        "jokers": state.jokers,
        "front": [list(f) for f in state.front],
        "reinforcements": [list(r) for r in state.reserve],
        "captured": [list(c) for c in state.captured],
        "draw_sizes": [len(d) for d in state.draw],
        "set_aside": len(state.set_aside),
        "turn": state.turn if ph in (st.ATTACK, st.REFILL) else None,
        "out": list(state.out),
        "scores": st.scores(state),
        "passes": state.passes,
        "refill": None
        if refilling is None
        else {"seat": refilling, "count": st.refill_count(state, refilling), "from": list(state.reserve[refilling])},
        "refills_pending": list(state.refills),
        "last_turn": state.last.to_dict() if state.last else None,
        "turns": state.turns,
    }
    if reveal_all:
        out["draw_piles"] = [list(d) for d in state.draw]
        out["set_aside_cards"] = list(state.set_aside)
    return out


RULES = FrontLine()
