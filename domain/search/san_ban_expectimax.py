"""San Ban's advanced mode searched by expectimax: the seat picks a cell, chance picks the card.

**Why not the tree search.** In ``advanced`` neither seat knows which of its cards comes next: a
placement names a cell, and the generator's shuffle (hidden from both) puts the seat's next card
there. A decision is a cell; what follows is chance (which of the placer's cards turns up), then
the other seat's cell, chance again, and so on: a game of nine placements with chance after each.
Here a search can be exact where the tree search samples: the **expectimax** value of a cell is
the mean, over the cards that may turn up, of the best the game offers after it, the other seat
choosing its cells to minimise it. Nothing else is hidden that matters to the rest of the game but
which cards the other seat still holds, and in the usual game that too is a chance with known
odds (below), so this search sees exactly the game the seat plays. Measured against ``greedy``
(``python -m bench.ladder --game san-ban --players 2 --options '{"mode": "advanced"}' --a search
--b greedy --games 1000 --jobs 2``):
the tree search of the other modes took 57.2% of the games, this search 62.2% of the same games
(README, "Bots that search").

**What it reads**, all of it in the seat's view: the board, the seat's own five as a set (the
order is hidden from the seat too, so it is never read: each of the unplayed cards is equally
likely to come next; after a fixed deal, which draws no shuffle, the cards come in the deck's
order, which the seat knows), the cards the other seat has placed, and the decks' sizes.

**The other seat's cards.** When the seat's deck is a random draw of five from one tier (the
default game; ``san_ban.drawn_tier`` says how that is told), the generator drew both
decks as ten cards of that tier, so the other seat's unplayed cards are a uniform draw from the
tier's cards the seat has not seen, and its next card is equally likely to be any of them: the
search averages over that *pool*, exactly, with no sampling. Otherwise (decks given by the
options or by a fixed deal) ``samples`` determinizations of ``SanBanKnowledge.determinize`` each
give the other seat's unplayed cards, each searched as the pool, and a cell's value is the mean
over them. **Approximation:** the other seat is searched as if it too knew only the pool (it knows
which of those cards it holds), and what its cells so far say of its hand is not read.

**Budget** (``Plan``): the search looks ``depth`` placements ahead and scores a cut position by
the game's score (``0.5 + (mine - theirs) / 20``, each seat's cards on the board and in hand, as the
tree search's ``evaluate``: a card not yet placed counts for its owner, so a cut after either
seat's turn is fair to both); with at most ``exact`` empty cells it searches to the end, where a
value is the chance to win (a draw half). Searching further did not win more games (README, "Bots
that search"), so ``search`` is the cheapest that plays as well. Positions met twice (the same
cards on the same cells) are valued once, and a position's score is carried along, not counted
again. ``search`` decides in 27 ms on average (p95 129 ms; the ladder's 1,000 games). Where the
other seat's cards are sampled, a decision costs ``samples`` searches (three for ``search``: about
0.09 s for the opening placement against 0.05 s after a random deal).

**Other decisions** of the mode: the coin winner's choice takes the answer of higher value, each
searched as a placement is (the best opening placement's value for ``first``, the other seat's
opening for ``second``): two searches, about 0.12 s, the mode's dearest decision (searched a
placement less deep, the row fell from 62.2% to 60.2%). A pick of five from a
larger deck takes the five strongest by their edges' sum (the tree search's first candidate) and
is not searched: every pick is valued 0.5, so an analysis judges none of them.
Ties between equal values are broken by the bot's random stream, so a decision is a pure function
of the seat's view and the stream.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from domain.games.san_ban import state as st
from domain.games.san_ban.board import element_beats
from domain.games.san_ban.cards import CATALOGUE, TIERS, Card
from domain.games.san_ban.state import ADVANCED, State
from domain.search.ismcts import Arm, Estimate, key
from domain.search.san_ban import KNOWLEDGE, LINKS, drawn_tier, edges_of, picks

ALGORITHM = "expectimax"
TIE = 1e-9  # values this close are equal
ME, OTHER = 0, 1  # the solver's sides: the searching seat, the other seat


@dataclass(frozen=True)
class Plan:
    """How far the expectimax looks (module docstring): ``depth`` placements, to the end with at most
    ``exact`` empty cells; ``samples`` determinizations where the other seat's cards are no random draw."""

    depth: int = 3
    exact: int = 5
    samples: int = 3

    def describe(self) -> dict[str, Any]:
        return {"depth": self.depth, "exact": self.exact, "samples": self.samples}


def applies(state: Any) -> bool:
    """Whether ``state`` is a San Ban game in the mode this search plays (``advanced``)."""
    return isinstance(state, State) and state.mode == ADVANCED


def search(
    state: State, seat: int, rnd: random.Random, plan: Plan, must_include: Mapping[str, Any] | None = None
) -> Estimate:
    """Each of ``seat``'s actions in ``state`` with its value (most valuable first; ties drawn by ``rnd``).

    ``must_include`` (the analysis's: the action taken) is valued too: every cell or coin answer is
    valued anyway, and a pick of five is not searched (every pick is valued 0.5)."""
    phase = st.phase(state)
    if phase == st.PLAY:
        values = _cells(state, seat, _pools(state, seat, rnd, plan), plan, ME)
        arms = [Arm({"type": "place", "cell": cell}, 1, v, 1) for cell, v in values.items()]
    elif phase == st.COIN_PHASE:
        pools = _pools(state, seat, rnd, plan)  # the same draws for both answers
        first = max(_cells(state, seat, pools, plan, ME).values())
        second = min(_cells(state, seat, pools, plan, OTHER).values())
        arms = [Arm({"type": "choose_first", "first": True}, 1, first, 1)]
        arms.append(Arm({"type": "choose_first", "first": False}, 1, second, 1))
    else:
        best = picks(state, seat)[0]
        arms = [Arm(best, 1, 0.5, 1)]
        if must_include is not None and key(must_include) != key(best):
            arms.append(Arm(dict(must_include), 1, 0.5, 1))
    return _ranked(arms, rnd)


def _ranked(arms: list[Arm], rnd: random.Random) -> Estimate:
    top = max(a.value for a in arms)
    tied = sorted((a for a in arms if a.value >= top - TIE), key=lambda a: key(a.action))
    chosen = tied[rnd.randrange(len(tied))]
    rest = sorted((a for a in arms if a is not chosen), key=lambda a: (-a.value, key(a.action)))
    return Estimate(dict(chosen.action), (chosen, *rest))


Pools = list[tuple[list[str], dict[str, Card]]]  # the other seat's possible unplayed cards, with their definitions


def _cells(state: State, seat: int, pools: Pools, plan: Plan, mover: int) -> dict[int, float]:
    """Each empty cell's value to ``seat`` when ``mover`` (``ME``: ``seat``; ``OTHER``) places there next,
    the mean over ``pools`` (``_pools``: one exact pool, or ``plan.samples`` determinized ones)."""
    total: dict[int, float] = {}
    for pool, defs in pools:
        for cell, v in _Solver(state, seat, pool, defs, plan).root(mover).items():
            total[cell] = total.get(cell, 0.0) + v
    return {cell: v / len(pools) for cell, v in total.items()}


def _pools(state: State, seat: int, rnd: random.Random, plan: Plan) -> Pools:
    """The other seat's possible unplayed cards, as pools to draw its next card from (module docstring)."""
    opp = 1 - seat
    own = state.decks[seat]
    seen = tuple(state.played[opp])
    defs = {c: state.by_id[c] for c in own} | {c: state.by_id[c] for c in seen}
    tier = drawn_tier(state, seat)
    if tier is not None:
        pool = [c for c in TIERS[tier] if c not in own and c not in seen]
        return [(pool, defs | {c: CATALOGUE[c] for c in pool})]
    out = []
    for _ in range(plan.samples):
        world = KNOWLEDGE.determinize(state, seat, rnd)
        pool = sorted(st.remaining(world, opp)) if world.hands is not None else []
        out.append((pool, defs | {c: world.by_id[c] for c in pool}))
    return out


class _Solver:
    """The expectimax over one pool of the other seat's cards (board cells as ``card * 2 + side``,
    side 0 the searching seat, -1 empty; a hand as a bit mask of card numbers)."""

    def __init__(self, state: State, seat: int, pool: list[str], defs: Mapping[str, Card], plan: Plan) -> None:
        mine = sorted(c for c in st.remaining(state, seat))  # a set: the seat's order is hidden from it
        on_board = [slot.card for slot in state.board if slot is not None]
        ids = sorted(set(mine) | set(pool) | set(on_board))
        number = {c: i for i, c in enumerate(ids)}
        cards = [defs[c] for c in ids]
        self.beats = _beat_table(cards)
        self.board = tuple(-1 if s is None else number[s.card] * 2 + (s.owner != seat) for s in state.board)
        self.mine = sum(1 << number[c] for c in mine)
        # A fixed deal draws no shuffle (public): then the seat's cards come in its deck's order, known to it.
        self.order = None if state.shuffles else [number[c] for c in st.remaining(state, seat)]
        self.pool = sum(1 << number[c] for c in pool)
        self.empty = self.board.count(-1)
        self.depth = self.empty if self.empty <= plan.exact else plan.depth
        # The game's score: cards of the seat's colour on the board and cards in its hand (of ten).
        self.points = sum(1 for o in self.board if o >= 0 and not o & 1) + len(mine)
        self.memo: dict[tuple[int, ...], float] = {}
        self.cards_of: dict[int, list[int]] = {}  # a hand's mask -> its card numbers

    def root(self, mover: int) -> dict[int, float]:
        board, mine, pool = self.board, self.mine, self.pool
        if not (mine if mover == ME else pool):  # the mover has no card left to place (a malformed pool)
            return {}
        at = _At(mine, pool, self.points, self.empty, self.depth)
        return {cell: self._chance(board, cell, mover, at) for cell in range(9) if board[cell] < 0}

    def _chance(self, board: tuple[int, ...], cell: int, mover: int, at: _At) -> float:
        """The value once ``mover`` has chosen ``cell``: the mean over the cards that may turn up."""
        mine, pool, points = at.mine, at.pool, at.points
        if mover == OTHER:
            turn_up = self._cards(pool)
        elif self.order is None:
            turn_up = self._cards(mine)
        else:
            turn_up = [next(c for c in self.order if mine >> c & 1)]
        total = 0.0
        left, depth = at.left - 1, at.depth - 1
        memo = self.memo
        for card in turn_up:
            after, flipped = self._place(board, cell, card, mover)
            value = memo.get(after)
            if value is None:
                # A card of the seat's goes from its hand to the board: only the flips change its score.
                score = points + flipped if mover == ME else points - flipped
                if not left:
                    value = memo[after] = 1.0 if score > 5 else 0.5 if score == 5 else 0.0
                elif depth <= 0:
                    value = memo[after] = 0.5 + (score - (10 - score)) / 20
                elif mover == ME:
                    value = self._value(after, OTHER, _At(mine & ~(1 << card), pool, score, left, depth))
                else:
                    value = self._value(after, ME, _At(mine, pool & ~(1 << card), score, left, depth))
            total += value
        return total / len(turn_up)

    def _value(self, board: tuple[int, ...], mover: int, at: _At) -> float:
        """The value of ``board`` (not met before, not the end, not cut) with ``mover`` to choose a cell."""
        if not (at.mine if mover == ME else at.pool):  # nothing left to place (a malformed pool): cut here
            value = 0.5 + (at.points - (10 - at.points)) / 20
        else:
            values = [self._chance(board, cell, mover, at) for cell in range(9) if board[cell] < 0]
            value = max(values) if mover == ME else _theirs(values)
        self.memo[board] = value
        return value

    def _place(self, board: tuple[int, ...], cell: int, card: int, mover: int) -> tuple[tuple[int, ...], int]:
        """The board once ``mover`` has placed ``card`` on ``cell``, and how many cards it flipped."""
        after = list(board)
        after[cell] = card * 2 + mover
        beats = self.beats
        flipped = 0
        for side, other, _facing in LINKS[cell]:  # the beat table knows the facing side
            there = board[other]
            if there >= 0 and (there & 1) != mover and beats[card][side][there >> 1]:
                after[other] = there ^ 1
                flipped += 1
        return tuple(after), flipped

    def _cards(self, mask: int) -> list[int]:
        found = self.cards_of.get(mask)
        if found is None:
            found = self.cards_of[mask] = _bits(mask)
        return found


class _At(NamedTuple):
    """Where a search stands besides the board: the two hands (the seat's, the other seat's pool), the
    seat's score, the empty cells, and the placements left before the cut."""

    mine: int
    pool: int
    points: int
    left: int
    depth: int


def _theirs(values: list[float]) -> float:
    """The other seat's choice among its cells, by their values to the searching seat: the lowest (it is
    searched as a player who plays its best). One place, so that a bench (``bench.ladder_variants``'
    ``softmin``) can model it otherwise."""
    return min(values)


def _beat_table(cards: list[Card]) -> list[list[list[bool]]]:
    """``[a][side][b]``: card ``a`` placed with ``side`` facing card ``b`` flips it (a greater edge, or an
    equal one whose element wins: the mode is elemental)."""
    edges = [edges_of(c) for c in cards]
    table = []
    for a, card in enumerate(cards):
        per_side = []
        for side in range(4):
            facing = (side + 2) % 4
            row = []
            for b, other in enumerate(cards):
                mine, theirs = edges[a][side], edges[b][facing]
                row.append(mine > theirs or (mine == theirs and element_beats(card.element, other.element)))
            per_side.append(row)
        table.append(per_side)
    return table


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
