"""San Ban's ``Game``: setup, who acts, legal actions, deciding, resolving, viewing."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations, permutations
from typing import Any, ClassVar

from domain.contract import Bot, Option, Pending, Rules, require_fields, result_from_scores
from domain.errors import IllegalAction, InvalidOptions
from domain.events import HIDDEN, Event
from domain.games.san_ban import space
from domain.games.san_ban import state as st
from domain.games.san_ban.board import N_CELLS, flips
from domain.games.san_ban.bots import greedy
from domain.games.san_ban.cards import (
    CATALOGUE,
    DECK_OPTION_SCHEMA,
    DECKS_OPTION_SCHEMA,
    TIERS,
    Card,
    check_deck,
    check_decks,
    deck_pair,
    parse_decks,
)
from domain.games.san_ban.state import (
    ADD_MODES,
    ADVANCED,
    CHOOSE,
    CLAIM,
    COIN,
    COIN_PHASE,
    ELEMENTAL_MODES,
    FORCED_MODES,
    GAMER,
    HAND_SIZE,
    MODES,
    OPEN_MODES,
    PLAY,
    SEATS,
    State,
)
from domain.rng import SeededRandom

CHOOSE_HAND, SET_ORDER, CHOOSE_FIRST, PLACE, CLAIM_CARD = "choose_hand", "set_order", "choose_first", "place", "claim"
ACTION_TYPES = (CHOOSE_HAND, SET_ORDER, CHOOSE_FIRST, PLACE, CLAIM_CARD)
DEAL_FIELDS = frozenset({"decks", "first"})
FIRST_CHOICES = (0, 1, COIN)
PHASE_ACTIONS = {COIN_PHASE: CHOOSE_FIRST, PLAY: PLACE, CLAIM: CLAIM_CARD}  # the choose phase: by mode
# ``pending`` runs several times per action; these answers are immutable, so shared.
ONE_SEAT = tuple(Pending((seat,)) for seat in SEATS)
NOBODY = Pending(())
BLANK = {mode: State(mode=mode) for mode in MODES}  # the state before any event, per mode


def _shuffle(hand: Sequence[str], perm: Sequence[int]) -> list[str]:
    """``hand`` in the order ``perm`` (the generator's shuffle of range(5)); identity when empty."""
    return [hand[i] for i in perm] if perm else list(hand)


def _defs(cards: Sequence[Card]) -> dict[str, dict[str, Any]]:
    return {c.id: c.to_dict() for c in cards}


class SanBan(Rules):
    """The San Ban rules (``RULES``); see the package docstring for the rulings."""

    id = "san-ban"
    name = "San Ban"
    rules_version = "1"
    min_players = 2
    max_players = 2
    options: ClassVar[Mapping[str, Option]] = {
        "mode": Option(
            st.STANDARD,
            "standard, gamer (own order, hidden hands), advanced (elemental, "
            "random hidden order) or hardcore (elemental, add, winner claims a card)",
            MODES,
        ),
        "first": Option(
            COIN,
            "the first player: 0, 1, or coin (the coin winner chooses)",
            FIRST_CHOICES,
        ),
        "tier": Option(
            2,
            "power tier (1 weak .. 5 strong) of the random decks",
            tuple(TIERS),
        ),
        "deck": Option(
            None,
            "null (random decks of 5 from the tier), one deck of 5-12 cards that each seat "
            "gets, or a list of 2 decks (one per seat); a card is a catalogue id or an inline card "
            "{id, top, right, bottom, left, element?}",
            schema=DECK_OPTION_SCHEMA,
            check=check_deck,
        ),
        "decks": Option(
            None,
            "null, or 2 decks (one per seat) as in option 'deck'; give one of the two",
            schema=DECKS_OPTION_SCHEMA,
            check=check_decks,
        ),
    }
    bots: ClassVar[Mapping[str, Bot]] = {"greedy": greedy}

    # -- setup ---------------------------------------------------------------

    def initial_state(self, options: Mapping[str, Any], n_seats: int, rules_version: str = "1") -> State:
        """No cards yet: ``decks_dealt`` brings them. (States are immutable: every game of a mode
        starts from the same one.)"""
        mode = options.get("mode", st.STANDARD)
        return BLANK.get(mode) or State(mode=mode)

    def setup(
        self, options: Mapping[str, Any], n_seats: int, rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> list[Event]:
        """Deal the decks; draw the coin and advanced shuffles; reveal at once if nobody chooses."""
        decks, first = self._opening(options, rng, deal)
        hidden: dict[str, Any] = {}
        if first == COIN:
            hidden["coin_winner"] = rng.below(2)
        if options["mode"] == ADVANCED and deal is None:
            hidden["shuffles"] = [rng.shuffled(range(HAND_SIZE)) for _ in SEATS]
        private: dict[str, Any] = {
            str(s): {"deck": [c.id for c in deck], "cards": _defs(deck)} for s, deck in enumerate(decks)
        }
        if hidden:
            private[HIDDEN] = hidden
        dealt = Event(st.DECKS_DEALT, {"deck_sizes": [len(d) for d in decks], "first": first}, private)
        state = self.evolve(self.initial_state(options, n_seats), dealt)
        return [dealt] if st.must_choose(state) else [dealt, *self.resolve(state, 0, {})]

    def _opening(
        self, options: Mapping[str, Any], rng: SeededRandom, deal: Mapping[str, Any] | None
    ) -> tuple[tuple[tuple[Card, ...], ...], Any]:
        """The decks and the first player, from the deal, the options, or the generator."""
        if deal is not None:
            unknown = sorted(set(deal) - DEAL_FIELDS)
            if unknown or "decks" not in deal:
                raise InvalidOptions('a San Ban fixed deal is {"decks": [deck 0, deck 1], "first"?: 0|1|"coin"}')
            first = deal.get("first", options["first"])
            if not any(first == c and type(first) is type(c) for c in FIRST_CHOICES):
                raise InvalidOptions(f"the deal's 'first' must be 0, 1 or \"coin\"; got {first!r}")
            return parse_decks(deal["decks"]), first
        if options["deck"] is not None and options["decks"] is not None:
            raise InvalidOptions("give option 'deck' or 'decks', not both")
        if options["decks"] is not None:
            return parse_decks(options["decks"]), options["first"]
        if options["deck"] is not None:
            return parse_decks(deck_pair(options["deck"])), options["first"]
        ids = rng.sample(TIERS[options["tier"]], 2 * HAND_SIZE)
        decks = tuple(tuple(CATALOGUE[i] for i in ids[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in SEATS)
        return decks, options["first"]

    # -- state ---------------------------------------------------------------

    evolve = staticmethod(st.evolve)

    def phase(self, state: State) -> str:
        """choose, coin, play, claim or over."""
        return st.phase(state)

    def pending(self, state: State) -> Pending:
        """The choosing seats together (secretly), else the one seat to act."""
        ph = st.phase(state)
        if ph == CHOOSE:
            return Pending(st.must_choose(state), simultaneous=True, public_reveal=state.mode in OPEN_MODES)
        if ph == COIN_PHASE and state.coin_winner is not None:
            return ONE_SEAT[state.coin_winner]
        if ph == PLAY:
            return ONE_SEAT[st.to_move(state)]
        win = st.winner(state)
        if ph == CLAIM and win is not None:
            return ONE_SEAT[win]
        return NOBODY

    def outcome(self, state: State) -> dict[str, Any] | None:
        """Scores, ranks and winners once over; hardcore adds the claimed card (null: none taken)."""
        if st.phase(state) != st.OVER:
            return None
        points = st.scores(state)
        win = st.leader(points)
        extra: dict[str, Any] = {}
        if state.claimed and win is not None:
            extra["claimed"] = {"seat": win, "card": state.claimed, "from": 1 - win}
        elif state.claim_declined:
            extra["claimed"] = None
        return result_from_scores(points, **extra)

    # -- actions -------------------------------------------------------------

    def _expected_type(self, state: State) -> str | None:
        """The one action type the current phase accepts."""
        ph = st.phase(state)
        if ph == CHOOSE:
            return SET_ORDER if state.mode == GAMER else CHOOSE_HAND
        return PHASE_ACTIONS.get(ph)

    def legal_actions(self, state: State, seat: int) -> list[dict[str, Any]]:
        """Every legal action of ``seat``, exactly as ``decide``/``validate_choice`` accept it."""
        kind = self._expected_type(state)
        if kind == CHOOSE_HAND:
            return [{"type": kind, "cards": list(c)} for c in combinations(state.decks[seat], HAND_SIZE)]
        if kind == SET_ORDER:
            return [{"type": kind, "cards": list(c)} for c in permutations(state.decks[seat], HAND_SIZE)]
        if kind == CHOOSE_FIRST:
            return [{"type": kind, "first": True}, {"type": kind, "first": False}]
        if kind == CLAIM_CARD:
            return [
                *({"type": kind, "card": c} for c in state.hands[1 - seat]),  # type: ignore[index]
                {"type": kind, "card": None},
            ]
        empty = [cell for cell, slot in enumerate(state.board) if slot is None]
        if state.mode in FORCED_MODES:
            return [{"type": PLACE, "cell": cell} for cell in empty]
        hand = st.remaining(state, seat)
        return [{"type": PLACE, "cell": cell, "card": c} for cell in empty for c in hand]

    def action_space(self, state: State, seat: int) -> dict[str, Any]:
        """``GET /actions``: the pick of five described (``space``), every other phase's actions listed."""
        kind = self._expected_type(state)
        if kind in (CHOOSE_HAND, SET_ORDER):
            return space.choose_space(kind, state.decks[seat])
        return {"actions": self.legal_actions(state, seat)}

    def admits(self, described: Mapping[str, Any], action: Any) -> bool:
        """Whether ``described``'s compact part (``choose``) admits ``action``: ``space.admits``."""
        return space.admits(described, action)

    def expand(self, described: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Every action ``described`` admits: ``space.expand``."""
        return space.expand(described)

    def sample_action(self, state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
        """A random legal action: the very one ``rnd.choice(self.legal_actions(state, seat))`` picks
        (one draw below the number of legal actions, the same index), without listing the placements."""
        if st.phase(state) != PLAY:
            return rnd.choice(self.legal_actions(state, seat))
        empty = [cell for cell, slot in enumerate(state.board) if slot is None]
        if state.mode in FORCED_MODES:
            return {"type": PLACE, "cell": rnd.choice(empty)}
        hand = st.remaining(state, seat)  # the legal actions list each empty cell with every card of the hand
        cell, card = divmod(rnd.randrange(len(empty) * len(hand)), len(hand))
        return {"type": PLACE, "cell": empty[cell], "card": hand[card]}

    def _check_kind(self, state: State, action: Mapping[str, Any]) -> str:
        """The action's type if this phase accepts it, else the reason why not."""
        kind = action.get("type")
        if kind not in ACTION_TYPES:
            raise IllegalAction(f"unknown action type {kind!r}; San Ban actions are {', '.join(ACTION_TYPES)}")
        expected = self._expected_type(state)
        if kind != expected:
            if {kind, expected} == {CHOOSE_HAND, SET_ORDER}:
                raise IllegalAction(f"in {state.mode} mode the hand is chosen with {expected!r}")
            now = f"expected {expected!r}" if expected else "the game is over"
            raise IllegalAction(f"{kind!r} is not possible in the {st.phase(state)} phase ({now})")
        return str(kind)

    def validate_choice(self, state: State, seat: int, action: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Check a secret ``choose_hand``/``set_order``: five distinct cards of the deck."""
        kind = self._check_kind(state, action)
        require_fields(action, ["cards"])
        cards = action["cards"]
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise IllegalAction(f"'cards' must be a list of {HAND_SIZE} card ids")
        if len(cards) != HAND_SIZE:
            raise IllegalAction(f"choose exactly {HAND_SIZE} cards from your deck (got {len(cards)})")
        for c in cards:
            if c not in state.decks[seat]:
                raise IllegalAction(f"{c} is not in your deck")
            if cards.count(c) > 1:
                raise IllegalAction(f"{c} is listed twice")
        return [{"type": kind, "cards": list(cards)}]

    def decide(self, state: State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """The events of a sequential action: choose_first, place or claim."""
        kind = self._check_kind(state, action)
        if kind == CHOOSE_FIRST:
            return self._choose_first(seat, action)
        if kind == PLACE:
            return self._place(state, seat, action)
        if kind == CLAIM_CARD:
            return self._claim(state, seat, action)
        raise IllegalAction(f"{kind!r} is a secret choice: it is committed, then revealed")

    def _choose_first(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        require_fields(action, ["first"])
        if not isinstance(action["first"], bool):
            raise IllegalAction("'first' must be true (you go first) or false (you go second)")
        first_player = seat if action["first"] else 1 - seat
        return [Event(st.FIRST_CHOSEN, {"seat": seat, "first": action["first"], "first_player": first_player})]

    def _place(self, state: State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        forced = state.mode in FORCED_MODES
        if forced and "card" in action:
            raise IllegalAction(f"in {state.mode} mode the next card is forced: omit 'card'")
        require_fields(action, ["cell"] if forced else ["cell", "card"])
        cell = action["cell"]
        if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell < N_CELLS:
            raise IllegalAction(f"'cell' must be a whole number 0-8 (row by row, 0 top-left); got {cell!r}")
        if state.board[cell] is not None:
            raise IllegalAction(f"cell {cell} is already occupied")
        if forced:
            card_id = st.remaining(state, seat)[0]  # the next card of the fixed order
        else:
            card_id = action["card"]
            if not isinstance(card_id, str) or not st.holds(state, seat, card_id):
                played = " (already played)" if card_id in state.played[seat] else ""
                raise IllegalAction(f"{card_id} is not in your hand{played}")
        placed = st.card(state, card_id)
        events = [Event(st.CARD_PLACED, {"seat": seat, "cell": cell, "card": card_id, "card_def": placed.to_dict()})]
        for rule, cells in flips(
            state.board, state.by_id, cell, placed, seat, state.mode in ELEMENTAL_MODES, state.mode in ADD_MODES
        ):
            events.append(Event(st.CARDS_FLIPPED, {"seat": seat, "cells": cells, "rule": rule}))
        return events

    def _claim(self, state: State, seat: int, action: Mapping[str, Any]) -> list[Event]:
        require_fields(action, ["card"])
        loser = 1 - seat
        five = state.hands[loser]  # type: ignore[index]
        if action["card"] is None:  # the rulebook: the winner "may" take a card
            return [Event(st.CLAIM_DECLINED, {"seat": seat, "from": loser})]
        if action["card"] not in five:
            raise IllegalAction(
                f"{action['card']} is not one of the loser's five cards ({', '.join(five)}); card null takes none"
            )
        return [Event(st.CARD_CLAIMED, {"seat": seat, "card": action["card"], "from": loser})]

    def resolve(self, state: State, part: int, choices: Mapping[int, Mapping[str, Any]]) -> list[Event]:
        """Reveal the chosen hands (publicly, or each to its seat), then the coin."""
        hands = []
        for s in SEATS:
            picked = choices[s]["cards"] if s in choices else state.decks[s]
            hands.append(list(picked) if state.mode == GAMER else [c for c in state.decks[s] if c in picked])
        events = [self._hands_event(state, hands)]
        if state.coin_winner is not None and state.first is None:
            events.append(Event(st.COIN_FLIPPED, {"winner": state.coin_winner}))
        return events

    def _hands_event(self, state: State, hands: list[list[str]]) -> Event:
        if state.mode in OPEN_MODES:
            cards = [st.card(state, c) for hand in hands for c in hand]
            return Event(st.HANDS_CHOSEN, {"hands": hands, "cards": _defs(cards)})
        key = "order" if state.mode == GAMER else "hand"
        private: dict[str, Any] = {str(s): {key: hand} for s, hand in enumerate(hands)}
        if state.mode == ADVANCED:
            perms = state.shuffles or ((),) * len(SEATS)
            private[HIDDEN] = {"orders": [_shuffle(hand, perm) for hand, perm in zip(hands, perms)]}
        return Event(st.HANDS_CHOSEN, {"hand_sizes": [len(h) for h in hands]}, private)

    # -- view ------------------------------------------------------------------

    def view(self, state: State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
        """What ``viewer`` (None: a spectator) may see; everything once ``reveal_all``."""
        return _view(state, viewer, reveal_all)


def _visible_hand(
    state: State, seat: int, viewer: int | None, reveal_all: bool, cards: Sequence[str]
) -> list[str] | None:
    """``cards`` of ``seat`` if ``viewer`` may see them (own advanced cards sorted: the order is secret)."""
    if state.hands is None:
        return None
    if reveal_all or state.mode in OPEN_MODES:
        return list(cards)
    if viewer != seat:
        return None
    return sorted(cards) if state.mode == ADVANCED else list(cards)


def _view(state: State, viewer: int | None, reveal_all: bool) -> dict[str, Any]:
    hands = [_visible_hand(state, s, viewer, reveal_all, st.remaining(state, s)) for s in SEATS]
    fives = state.orders or state.hands or ((),) * len(SEATS)
    chosen = [_visible_hand(state, s, viewer, reveal_all, fives[s]) for s in SEATS]
    own_deck = list(state.decks[viewer]) if viewer in SEATS else None
    shown = {slot.card for slot in state.board if slot is not None}
    shown.update(c for hand in chosen if hand for c in hand)
    shown.update(own_deck or ())
    if reveal_all:
        shown = {c.id for c in state.cards}
    ph = st.phase(state)
    return {
        "board": [None if slot is None else {"card": slot.card, "owner": slot.owner} for slot in state.board],
        "hands": hands,
        "hand_sizes": [HAND_SIZE - len(p) for p in state.played],
        "cards": {c.id: c.to_dict() for c in state.cards if c.id in shown},
        "mode": state.mode,
        "chosen": chosen,
        "deck": own_deck,
        "decks": [list(d) for d in state.decks] if reveal_all else None,
        "deck_sizes": [len(d) for d in state.decks],
        "first": state.first,
        "coin_winner": state.coin_winner if state.coin_shown or reveal_all else None,
        "next_player": st.to_move(state) if ph == PLAY else None,
        "scores": st.scores(state) if state.hands is not None else None,
        "claimed": {"seat": st.winner(state), "card": state.claimed} if state.claimed else None,
    }


RULES = SanBan()
