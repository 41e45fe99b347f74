"""What the search knows of Nin Nal: the unseen cards and how a hand is played out.

**What the seat sees.** Its own hand, the three piles (every card, bottom to top), every seat's won
cards, this round's revealed cards and how they resolved, the hand sizes, the round and the
tie-break's throws. **What it cannot see:** the other hands, the other seats' selects before the
reveal (the state does not hold them: the engine keeps them sealed) and the unused cards.

**Determinization.** The unseen cards are computed from the view alone: the 48 cards less the seat's
hand, the piles, the won cards and the revealed cards, in catalogue order. They are shuffled with
the search's ``rnd`` and dealt into the other hands (their sizes are public) and the unused cards
(the rest); the other hands and the unused cards of the state are never read, only their sizes.
Everything the seat sees is kept as it is.

**Searched actions.** Every legal select (at most nine cards) and every take or place (at most three
piles): the action space is small. A tie-break throw is one sign drawn at random per iteration, so
the throw the search returns is a random sign (any biased throw could be exploited).

**Play-out.** A select takes the card with the richest pile it would take if it resolved first (the
sum of the pile's values; a card that takes nothing counts 0, so a card forced onto a poor pile is
avoided), with probability ``EPSILON`` a random card instead; a resolving card takes the richest
pile it may take, else is placed on the poorest pile (as the greedy bot's own look-ahead). A play-out
is cut after ``ROLLOUT_DEPTH`` steps (two rounds with two players, a bit over one with four), as a
long play-out of this luck-heavy game is mostly noise.

**Evaluation of a cut play-out (approximation).** The round in progress is finished with the
play-out's resolve policy, then each pair of seats is scored by the chance that the one ahead stays
ahead, a normal distribution of the score difference with a spread of ``SIGMA`` points times the
square root of the rounds left (a seat's reward is its mean over the others: 1 first, 0 last, as
the final places are mapped). ``SIGMA`` is a rough guess, not fitted; the play-outs' policy, not
the greedy bot's, finishes the round.

**Budget.** UCB1's exploration is 0.2, not the default 0.7: the rewards of two selects differ by a
few hundredths, and with a wide exploration the visits stay nearly even, so the most visited action
(the decision) would be close to a random one.

**The others in the tree** follow the play-out policy while they have untried actions
(``opponents="policy"``): with nine of 36 unseen cards in each hand, every determinization deals
them other cards, and an untried card at random would make them play at random (measured: 56.5%
-> 68.1% against ``greedy`` with two players, 1.56x -> 2.28x the fair share with four; 200 games
before, 1,000 after: ``python -m bench.ladder``).
"""

from __future__ import annotations

import math
import random
from typing import Any

from domain.contract import changed
from domain.games.nin_nal import BEATS, CARDS, COLOUR_OF, RESOLVE, ROUNDS, RULES, SELECT, SIGNS, TIE_BREAK, State

VALUES = {card: int(card.split("-", 1)[1]) for card in CARDS}
PREY = {card: BEATS[COLOUR_OF[card]] for card in CARDS}  # the colour of the pile tops a card takes

EPSILON = 0.2  # chance of a random select in a play-out
SIGMA = 6.0  # spread of the score difference per round left, in points
ROLLOUT_DEPTH = 6


def _worth(piles: tuple[tuple[str, ...], ...]) -> list[int]:
    return [sum(VALUES[c] for c in pile) for pile in piles]


def _unseen(state: State, seat: int) -> list[str]:
    """The cards ``seat`` cannot see, from its view's parts alone, in catalogue order."""
    seen = set(state.hands[seat])
    for pile in state.piles:
        seen.update(pile)
    for won in state.won:
        seen.update(won)
    seen.update(r.card for r in state.revealed)
    return [c for c in CARDS if c not in seen]


def _finish_round(state: State) -> list[int]:
    """The scores once this round's unresolved cards resolve by the play-out's policy."""
    scores = [sum(VALUES[c] for c in won) for won in state.won]
    if state.phase != RESOLVE:
        return scores
    tops = [COLOUR_OF[pile[-1]] for pile in state.piles]
    worth = _worth(state.piles)
    for card in state.revealed:
        if card.move is not None:
            continue
        prey = PREY[card.card]
        takeable = [i for i in range(3) if tops[i] == prey]
        if takeable:
            i = max(takeable, key=worth.__getitem__)
            scores[card.seat] += worth[i]
            worth[i] = VALUES[card.card]
        else:
            i = min(range(3), key=worth.__getitem__)
            worth[i] += VALUES[card.card]
        tops[i] = COLOUR_OF[card.card]
    return scores


class NinNalKnowledge:
    def determinize(self, state: State, seat: int, rnd: random.Random) -> State:
        if not state.hands:
            return state
        pool = _unseen(state, seat)
        rnd.shuffle(pool)
        hands = list(state.hands)
        at = 0
        for s in range(state.n_seats):
            if s != seat:
                size = len(state.hands[s])
                hands[s] = tuple(pool[at : at + size])
                at += size
        return changed(state, hands=tuple(hands), unused=tuple(pool[at:]))

    def candidates(self, state: State, seat: int, rnd: random.Random) -> list[dict[str, Any]]:
        if state.phase == TIE_BREAK:
            return [{"type": "throw", "sign": rnd.choice(SIGNS)}]
        return RULES.legal_actions(state, seat)

    def rollout(self, state: State, seat: int, rnd: random.Random) -> dict[str, Any]:
        """Select the card with the richest take (sometimes at random); take the richest pile it
        may take, else place on the poorest; throw at random."""
        phase = state.phase
        if phase == SELECT:
            hand = state.hands[seat]
            if len(hand) == 1 or rnd.random() < EPSILON:
                return {"type": "select", "card": rnd.choice(hand)}
            tops = [COLOUR_OF[pile[-1]] for pile in state.piles]
            worth = _worth(state.piles)
            best, best_score = hand[0], -math.inf
            for card in hand:
                prey = PREY[card]
                gain = max((worth[i] for i in range(3) if tops[i] == prey), default=0)
                score = gain + 0.5 * rnd.random()
                if score > best_score:
                    best, best_score = card, score
            return {"type": "select", "card": best}
        if phase == RESOLVE:
            current = state.current
            assert current is not None
            prey = PREY[current.card]
            worth = _worth(state.piles)
            takeable = [i for i, pile in enumerate(state.piles) if COLOUR_OF[pile[-1]] == prey]
            if takeable:
                return {"type": "take", "pile": max(takeable, key=worth.__getitem__)}
            return {"type": "place", "pile": min(range(3), key=worth.__getitem__)}
        return {"type": "throw", "sign": rnd.choice(SIGNS)}

    def evaluate(self, state: State) -> list[float]:
        n = state.n_seats
        scores = _finish_round(state)
        left = ROUNDS - state.round + (1 if state.phase == SELECT else 0)
        spread = SIGMA * math.sqrt(left) if left > 0 else 0.5
        out = []
        for s in range(n):
            ahead = sum(
                0.5 * (1.0 + math.erf((scores[s] - scores[o]) / (spread * math.sqrt(2.0)))) for o in range(n) if o != s
            )
            out.append(ahead / (n - 1))
        return out

    def observe(self, before: Any, after: Any) -> str:
        return ""  # the revealed cards are the selects: the joint action


KNOWLEDGE = NinNalKnowledge()
ITERATIONS = 450
SETTINGS: dict[str, object] = {"exploration": 0.2, "rollout_depth": ROLLOUT_DEPTH, "opponents": "policy"}
