"""What the search knows of San Ban: the opponent's unseen cards, the hidden orders, and a quick play-out.

**What the seat sees.** Its own deck (ids and definitions), the deck sizes, the mode, the first
player (or that a coin decides), the coin's winner once shown, the board, the cards each seat has
placed (the ``card_placed`` events are public), and the chosen hands: both in ``standard`` and
``hardcore`` once revealed, only its own in ``gamer`` (with its order) and ``advanced`` (as a set:
the generator's shuffle of its own five is hidden from it too).

**What it cannot see**, and how a determinization draws it anew (everything else is kept):

* the opponent's deck, unless the seat has seen the cards (an open hand, cards on the board).
  The state carries no options, so whether a deck was drawn at random, given by the options
  (public) or by a fixed deal (hidden) is inferred from the seat's own deck alone, and the
  opponent's deck itself is never read: when the seat's deck looks like a random draw (five
  catalogue cards of one tier, and the opponent's deck also has five), the opponent's unseen cards
  are drawn without replacement from that tier less the seat's own five (the generator samples the
  ten cards of both decks from the tier at once) and less the opponent's seen cards; otherwise they
  are drawn first from the seat's own deck (option ``deck`` with one deck gives both seats the same
  one), then from the whole catalogue. **Approximation:** where the options did give the
  opponent's deck, the seat could know it exactly; this bot does not use that knowledge (it cannot
  tell those options from a fixed deal, whose decks are hidden);
* the opponent's chosen five in ``gamer``/``advanced`` (its placed cards plus a uniform draw from
  the rest of its deck) and their order (the placed ones first, the rest shuffled uniformly);
* in ``advanced``, the seat's own order: its placed cards, then its unplayed ones shuffled (a fixed
  deal draws no shuffle, which is public, and then the order is the deck order and is kept);
  during the choice, both generator shuffles are drawn anew;
* the coin's winner while it is not shown (fair coin).

**Approximation:** the opponent's hidden choices (its five, its gamer order) are drawn uniformly,
not as a player would choose them.

**Searched actions.** A placement: every legal one (at most 9 cells x 5 cards). The secret pick of
five: at most ``HAND_CANDIDATES`` sets, the strongest by the sum of their edges (792 sets of 12 are
too many to sample, and weak sets are rarely right). A gamer order: ten orders of the strongest five
(each card kept for last, the other four strongest first or weakest first), not all 120: with 120
arms per seat at a decoupled step each arm got two or three visits (a choice near random) and the
step cost three times a placement; ten measured better (67% -> 70.5% against greedy, 100 games each,
within the noise, and p95 time per decision 347 -> 100 ms). Coin: both
answers. Claim (hardcore): only the loser's strongest card, since the claim changes no one's place.

**Play-out.** Each placement flips the most cards now (capture and elemental counted directly, as
``board.beats`` does; add through the board's own ``count_flips``), then leaves the fewest edges
that one of the opponent's unplayed cards (in the determinized world) could beat from an empty
neighbour, ties broken at random; with probability ``EPSILON`` a random legal placement instead.
A pick of five takes the strongest five (gamer: strongest first); the coin winner goes first.
A game lasts at most nine placements, so play-outs run to the end (``evaluate`` is never needed).
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

from domain.contract import changed
from domain.games.san_ban import RULES
from domain.games.san_ban import state as st
from domain.games.san_ban.board import NEIGHBOURS, OPPOSITE, count_flips, element_beats
from domain.games.san_ban.cards import CATALOGUE, TIERS, Card
from domain.games.san_ban.state import (
    ADD_MODES,
    ADVANCED,
    ELEMENTAL_MODES,
    FORCED_MODES,
    GAMER,
    HAND_SIZE,
    OPEN_MODES,
    State,
)

Action = dict[str, Any]

HAND_CANDIDATES = 8  # the strongest sets of five searched in a pick from a deck of more
EPSILON = 0.1  # chance of a random placement in a play-out
CATALOGUE_IDS = tuple(sorted(CATALOGUE))
TIER_OF = {cid: tier for tier, ids in TIERS.items() for cid in ids}
# (side index of the placed card, neighbour cell, side index of the neighbour) per cell
_SIDE_INDEX = {"top": 0, "right": 1, "bottom": 2, "left": 3}
OPPOSITE_INDEX = (2, 3, 0, 1)  # bottom faces top, left faces right
LINKS = tuple(
    tuple((_SIDE_INDEX[side], other, _SIDE_INDEX[OPPOSITE[side]]) for side, other in NEIGHBOURS[cell])
    for cell in range(9)
)


def edges_of(card: Card) -> tuple[int, int, int, int]:
    return (card.top, card.right, card.bottom, card.left)


def _strength(card: Card) -> tuple[int, str]:
    return (-card.total, card.id)


class SanBanKnowledge:
    # -- determinization -----------------------------------------------------

    def determinize(self, state: State, seat: int, rnd: random.Random) -> State:
        if not state.dealt or st.phase(state) == st.OVER:
            return state
        opp = 1 - seat
        hands_known = state.hands is not None
        open_mode = state.mode in OPEN_MODES
        # The opponent's cards the seat has seen, and the size of its deck (public).
        if hands_known and open_mode:
            seen = tuple(state.hands[opp])  # type: ignore[index]
        elif hands_known:
            seen = tuple(state.played[opp])
        else:
            seen = ()
        size = len(state.decks[opp])
        if size == len(seen) and (state.first is not None or state.coin_shown):
            return state  # nothing hidden: open hands of whole decks, the first player known
        defs = dict(state.by_id)  # only the seen cards' and the seat's own definitions are read from it
        deck = list(seen) + self._fill(state, seat, seen, size - len(seen), rnd)
        own_deck = state.decks[seat]
        cards = {c: defs[c] if (c in own_deck or c in seen) else CATALOGUE[c] for c in own_deck}
        for c in deck:
            cards[c] = defs[c] if (c in own_deck or c in seen) else CATALOGUE[c]
        decks: list[tuple[str, ...]] = [(), ()]
        decks[seat] = own_deck
        decks[opp] = tuple(deck)
        updates: dict[str, Any] = {"decks": tuple(decks), "cards": tuple(cards.values()), "by_id": cards}
        if state.first is None and not state.coin_shown:
            updates["coin_winner"] = rnd.randrange(2)
        shuffled = state.mode == ADVANCED and bool(state.shuffles)  # a fixed deal draws no shuffle (public)
        if shuffled:
            updates["shuffles"] = tuple(tuple(rnd.sample(range(HAND_SIZE), HAND_SIZE)) for _ in range(2))
        if hands_known and not open_mode:
            hands = list(state.hands)  # type: ignore[arg-type]
            orders = list(state.orders)  # type: ignore[arg-type]
            played = state.played[opp]
            rest = [c for c in deck if c not in played]
            rnd.shuffle(rest)
            order = tuple(played) + tuple(rest[: HAND_SIZE - len(played)])
            orders[opp] = order
            hands[opp] = order if state.mode == GAMER else tuple(c for c in deck if c in order)
            if shuffled:
                mine = sorted(st.remaining(state, seat))  # the seat sees the set, not the order
                rnd.shuffle(mine)
                orders[seat] = tuple(state.played[seat]) + tuple(mine)
            updates["hands"] = tuple(hands)
            updates["orders"] = tuple(orders)
        return changed(state, **updates)

    def _fill(self, state: State, seat: int, seen: tuple[str, ...], n: int, rnd: random.Random) -> list[str]:
        """``n`` card ids for the opponent's unseen deck cards, drawn as the module docstring says."""
        if n <= 0:
            return []
        own = state.decks[seat]
        by_id = state.by_id
        tier = drawn_tier(state, seat)
        if tier is not None:
            pool = [c for c in TIERS[tier] if c not in own and c not in seen]
            return rnd.sample(pool, n)
        first = [c for c in own if c not in seen and c in CATALOGUE and by_id[c] == CATALOGUE[c]]
        rnd.shuffle(first)
        picked = first[:n]
        if len(picked) < n:
            rest = [c for c in CATALOGUE_IDS if c not in seen and c not in picked]
            picked += rnd.sample(rest, n - len(picked))
        return picked

    # -- candidates ----------------------------------------------------------

    def candidates(self, state: State, seat: int, rnd: random.Random) -> list[Action]:
        ph = st.phase(state)
        if ph == st.PLAY:
            return RULES.legal_actions(state, seat)
        if ph == st.CHOOSE:
            return picks(state, seat)
        if ph == st.CLAIM:
            return [_claim(state, seat)]
        return RULES.legal_actions(state, seat)

    # -- play-out ------------------------------------------------------------

    def rollout(self, state: State, seat: int, rnd: random.Random) -> Action:
        ph = st.phase(state)
        if ph == st.PLAY:
            return _place(state, seat, rnd)
        if ph == st.CHOOSE:
            return picks(state, seat)[0]
        if ph == st.COIN_PHASE:
            return {"type": "choose_first", "first": True}
        return _claim(state, seat)

    def evaluate(self, state: State) -> list[float]:
        a, b = st.scores(state)
        return [0.5 + (a - b) / 20, 0.5 + (b - a) / 20]

    def observe(self, before: State, after: State) -> str:
        """The card a placement put on the board: in ``gamer`` and ``advanced`` the action names
        only the cell, and the next choice depends on which card turned up there."""
        return ",".join(
            slot.card for slot, was in zip(after.board, before.board, strict=True) if slot is not None and was is None
        )


def drawn_tier(state: State, seat: int) -> int | None:
    """The tier both decks were drawn from at random, as far as ``seat`` can tell: its own deck is five
    catalogue cards of one tier and the other seat's deck has five too (``_fill``); else None."""
    own = state.decks[seat]
    tiers = {TIER_OF.get(c) for c in own}
    if len(own) != HAND_SIZE or len(state.decks[1 - seat]) != HAND_SIZE or len(tiers) != 1:
        return None
    (tier,) = tiers
    if tier is None or any(state.by_id[c] != CATALOGUE[c] for c in own):
        return None
    return tier


def picks(state: State, seat: int) -> list[Action]:
    """The searched picks of five (module docstring), the strongest first."""
    deck = state.decks[seat]
    ranked = sorted(deck, key=lambda c: _strength(st.card(state, c)))
    if state.mode == GAMER:
        five = ranked[:HAND_SIZE]
        orders = []
        for last in reversed(five):  # the weakest kept for last first: the greedy order leads
            rest = [c for c in five if c != last]
            orders += [[*rest, last], [*rest[::-1], last]]
        return [{"type": "set_order", "cards": o} for o in orders]
    if len(deck) == HAND_SIZE:
        return [{"type": "choose_hand", "cards": list(deck)}]
    totals = {c: st.card(state, c).total for c in deck}
    sets = sorted(combinations(deck, HAND_SIZE), key=lambda s: -sum(totals[c] for c in s))
    return [{"type": "choose_hand", "cards": list(s)} for s in sets[:HAND_CANDIDATES]]


def _claim(state: State, seat: int) -> Action:
    five = [st.card(state, c) for c in state.hands[1 - seat]]  # type: ignore[index]
    return {"type": "claim", "card": min(five, key=_strength).id}


def _beats(mine: int, theirs: int, mine_el: str | None, theirs_el: str | None, elemental: bool) -> bool:
    """``board.beats`` on two facing edges: greater, or equal and the element wins (when live)."""
    if mine > theirs:
        return True
    return elemental and mine == theirs and mine_el is not None and element_beats(mine_el, theirs_el)


def _surroundings(
    state: State, seat: int, empty: list[int]
) -> tuple[list[list[tuple[int, int, str | None]]], list[list[int]]]:
    """Per empty cell: its neighbours showing the opponent's colour, as (side, their facing edge, their
    element), and its sides facing an empty cell."""
    board, by_id = state.board, state.by_id
    foes: list[list[tuple[int, int, str | None]]] = [[] for _ in board]
    exposed: list[list[int]] = [[] for _ in board]
    for cell in empty:
        for side, other, facing in LINKS[cell]:
            slot = board[other]
            if slot is None:
                exposed[cell].append(side)
            elif slot.owner != seat:
                theirs = by_id[slot.card]
                foes[cell].append((side, edges_of(theirs)[facing], theirs.element))
    return foes, exposed


def _place(state: State, seat: int, rnd: random.Random) -> Action:
    """A play-out placement: the most flips now, then the fewest edges that one of the opponent's
    unplayed cards could beat from an empty neighbour, ties at random; sometimes a random one."""
    if rnd.random() < EPSILON:
        return RULES.sample_action(state, seat, rnd)
    board = state.board
    by_id = state.by_id
    empty = [cell for cell, slot in enumerate(board) if slot is None]
    forced = state.mode in FORCED_MODES
    hand = st.remaining(state, seat)
    mine = hand[:1] if forced else hand
    elemental, add = state.mode in ELEMENTAL_MODES, state.mode in ADD_MODES
    # The opponent's strongest edge per side among its unplayed cards.
    enemy = [edges_of(by_id[c]) for c in st.remaining(state, 1 - seat)]
    threat = [max(column) for column in zip(*enemy)] if enemy else [0, 0, 0, 0]
    foes, exposed = _surroundings(state, seat, empty)
    best: list[tuple[int, str]] = []
    top = (-1, 0)
    for card_id in mine:
        placed = by_id[card_id]
        edges = edges_of(placed)
        element = placed.element
        for cell in empty:
            if add:
                n = count_flips(board, by_id, cell, placed, seat, elemental, add)
            else:
                n = 0
                for side, edge, their_element in foes[cell]:
                    n += _beats(edges[side], edge, element, their_element, elemental)
            risk = 0
            for side in exposed[cell]:
                risk += threat[OPPOSITE_INDEX[side]] > edges[side]
            score = (n, -risk)
            if score > top:
                best, top = [(cell, card_id)], score
            elif score == top:
                best.append((cell, card_id))
    cell, card_id = best[rnd.randrange(len(best))]
    return {"type": "place", "cell": cell} if forced else {"type": "place", "cell": cell, "card": card_id}


KNOWLEDGE = SanBanKnowledge()
ITERATIONS = 400
SETTINGS: dict[str, object] = {"exploration": 1.0}
