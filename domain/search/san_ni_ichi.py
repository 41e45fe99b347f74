"""What the search knows of San, Ni, Ichi!: the unseen hands, the searched actions, a quick play-out.

**What the seat sees.** Its own hand; the weapons in play and out; the combat piles, damage piles
and discards; the hand sizes; who selects and who is asked to smoke; this round's and the last
round's selections once revealed and what each did (a Tonfa's take and discard included); the last
damage phase (who smoked, covering whom, who drew which card back).

**What it cannot see:** the other hands (a teammate's too) and the others' sealed choices (this
round's selections, the smoke decisions). Those choices live in the engine's commitments, never in
the state, so the search never meets them: at a simultaneous step every seat chooses in the tree
without seeing the others' choice. Every card is dealt, so the other hands together hold exactly the
cards the seat cannot see, a multiset its view fixes (all cards in play less what it sees).

**Determinization.** That multiset (read as a sorted pool of the other hands, never who holds which
card) is dealt anew, shuffled with ``rnd``, into hands of the sizes the view shows, under two facts
the view implies:

* cards the table saw enter a hand and not leave it (``known_cards``: a Tonfa's take, a covered
  seat's draw, less what that seat selected or discarded since) stay in that hand;
* while selecting, every selecting seat holds a card it may select (a hand of Torinoko only is
  discarded before the round): the deal is drawn again until so (at most ``TRIES`` times).

**Approximations (stated plainly).** Known cards are only those the state still records: this and
the last round's Tonfa takes and the last damage phase's draws. A card that entered a hand earlier
(or, during the smoke step, last round's draws, which the state no longer holds) is treated as
unknown, although the seat saw it. The other hands are drawn uniformly, not weighted by what the
others' past choices suggest (a smoke bomb not played, a card not selected).

**Searched actions.** Every legal one (at most 8 selects, a few dozen plays and counters, 15 Sai
swaps, 6 Shuriken targets, two smoke answers), except a Tonfa's: pile x discard can reach 48, so
only the discards that matter are searched: the card taken (which only removes it from the pile)
and the lowest and the highest card of the hand.

**The others in the tree** (``"opponents": "bots"``): a seat the game declares a ``greedy`` bot plays
in the tree as that bot does (``greedy_model``: its own rule on the drawn position, its hand there
drawn with the others, guessing the others' cards once, ``MODEL_SAMPLES``, where the bot guesses six);
a person or a search bot as with ``"untried"``. The bot's rule is public (its level is in the
record, its code in this repository), so the tree meets the field's actual play instead of a guess
at it; what it still cannot know is the bot's cards and its random stream.

**Play-out.** A select is a random selectable card (the seat's cards in a determinization are
themselves a guess); a resolving card takes the action best for its owner's team were the damage
phase now (the greedy bot's projection: damage piles, plus the piles with the highest top, plus
``PILE_WEIGHT`` x the other piles; the mean and the minimum of the other seats' projections
averaged, less the own team's), computed on a light copy of the piles and tops (the bot's ``board_after``), with a
random legal action instead with probability ``EPSILON``; a smoke bomb is played when the seat's own
pile has the highest top. A game lasts about 7 rounds (some 30-60 steps), so play-outs run to the end
(``rollout_depth`` 200 is never reached in practice): measured with four and three players, the exact
end beat a cut after 12 steps (about two rounds) scored by ``evaluate`` (at 1.6 times the cost).
``evaluate`` (each seat's chance to beat each other seat from the projected scores, team totals in
team play, ``SOFTNESS``) only scores a play-out cut short.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

from domain.contract import changed
from domain.games.san_ni_ichi import RULES, moves
from domain.games.san_ni_ichi.bots import PILE_WEIGHT, board, board_after, greedy, projected
from domain.games.san_ni_ichi.cards import BLOCK, CARDS, TONFA, TORINOKO, kind, sort_key, strength
from domain.games.san_ni_ichi.state import ATTACK_PHASE, SELECT, SMOKE, Played, State

Action = dict[str, Any]

ITERATIONS = 150
SETTINGS: dict[str, object] = {"exploration": 0.7, "rollout_depth": 200, "opponents": "bots"}
# The tree's model of a ``greedy`` seat guesses the others' cards this often (the bot: 6). ``"bots"`` names
# this model: changing it would need another value of ``opponents``, so that recorded decisions re-run.
MODEL_SAMPLES = 1
EPSILON = 0.1  # chance of a random resolution in a play-out
SOFTNESS = 4.0  # the score lead that makes a win 73% likely in ``evaluate`` (points)
TRIES = 200  # determinizations drawn before giving up on the selecting seats' constraint


def known_cards(state: State, seat: int) -> dict[int, list[str]]:
    """Cards the table saw enter another seat's hand, still there by the public record.

    Only what the state still records: last round's and this round's Tonfa takes and last
    damage phase's draws, less the cards those seats selected or discarded since."""
    known: dict[int, list[str]] = {s: [] for s in range(state.n) if s != seat}

    def tonfa(p: Played) -> None:
        if p.seat == seat or p.how != "tonfa_used":
            return
        d = dict(p.detail)
        hand = known[p.seat]
        hand.append(d["took"])
        if d["discarded"] in hand:
            hand.remove(d["discarded"])

    for p in state.previous:
        tonfa(p)
    log = state.last_damage
    if log is not None:
        for s, c in log.drawn:
            if s != seat:
                known[s].append(c)
    for p in state.played:
        if p.seat != seat and p.card in known[p.seat]:
            known[p.seat].remove(p.card)
    for p in state.played:
        tonfa(p)
    return known


class SanNiIchiKnowledge:
    def determinize(self, state: State, seat: int, rnd: random.Random) -> State:
        if not state.hands:
            return state
        others = [s for s in range(state.n) if s != seat and state.hands[s]]
        if not others:
            return state
        pool = sorted((c for s in others for c in state.hands[s]), key=sort_key)  # a multiset: no owner
        free = Counter(pool)
        fixed: dict[int, list[str]] = {}
        for s, cards in known_cards(state, seat).items():
            fixed[s] = []
            for c in cards:
                if free[c] > 0 and len(fixed[s]) < len(state.hands[s]):
                    free[c] -= 1
                    fixed[s].append(c)
        rest = [c for c in sorted(free, key=sort_key) for _ in range(free[c])]
        needs = [s for s in others if state.phase == SELECT and s in state.selecting]
        hands = list(state.hands)
        for _ in range(TRIES):
            rnd.shuffle(rest)
            at = 0
            for s in others:
                size = len(state.hands[s]) - len(fixed.get(s, ()))
                hands[s] = (*fixed.get(s, ()), *rest[at : at + size])
                at += size
            if all(any(kind(c) != TORINOKO for c in hands[s]) for s in needs):
                break
        return changed(state, hands=tuple(hands))

    def candidates(self, state: State, seat: int, rnd: random.Random) -> list[Action]:
        if state.phase != ATTACK_PHASE:
            return RULES.legal_actions(state, seat)
        current = state.current
        assert current is not None
        actions = moves.attack_actions(state, current)
        if kind(current.card) != TONFA:
            return actions
        hand = state.hands[seat]
        keep = {min(hand, key=sort_key), max(hand, key=sort_key)} if hand else set()
        return [a for a in actions if a["discard"] in keep or a["discard"] == state.combat[a["pile"]][-1][0]]

    def rollout(self, state: State, seat: int, rnd: random.Random) -> Action:
        """Select at random; resolve for the best one-step projection (``EPSILON``: at random);
        smoke when the seat's own pile would be taken now."""
        if state.phase == SELECT:
            card = rnd.choice([c for c in state.hands[seat] if KIND[c] != TORINOKO])
            if state.teams and KIND[card] == BLOCK:
                return {"type": "select", "card": card, "protect": rnd.choice(state.team(seat))}
            return {"type": "select", "card": card}
        if state.phase == SMOKE:
            return _smoke(state, seat)
        current = state.current
        assert current is not None
        actions = moves.attack_actions(state, current)
        if len(actions) == 1 or rnd.random() < EPSILON:
            return dict(rnd.choice(actions))
        return _best_resolution(state, current, actions, rnd)

    def evaluate(self, state: State) -> list[float]:
        """Each seat's chance to beat each other seat, from the projected scores' differences."""
        proj = projected(state)
        scores = [sum(proj[s] for s in state.team(seat)) for seat in range(state.n)]
        n = state.n
        return [
            sum(1.0 / (1.0 + math.exp((mine - o) / SOFTNESS)) for j, o in enumerate(scores) if j != i) / (n - 1)
            for i, mine in enumerate(scores)
        ]

    def observe(self, before: Any, after: Any) -> str:
        return ""  # the selections, takes and smoke answers are the actions; the rest follows from the table


def _smoke(state: State, seat: int) -> Action:
    if not state.can_smoke(seat) or not state.combat[seat]:
        return {"type": "smoke", "use": False}
    tops = [strength(p[-1][0]) if p else 0 for p in state.combat]
    if tops[seat] < max(tops):
        return {"type": "smoke", "use": False}
    return {"type": "smoke", "use": True, "protect": seat} if state.teams else {"type": "smoke", "use": True}


def _best_resolution(state: State, current: Played, actions: list[Action], rnd: random.Random) -> Action:
    """The action whose result, were the damage phase now, is best for the owner's team (ties at random)."""
    n = state.n
    now = board(state)
    mine = state.team(current.seat)
    share = 0.5 / (n - len(mine))
    best: list[Action] = []
    best_value = -1e9
    for action in actions:
        worth, tops, totals = board_after(state, current, action, now)
        high = max(tops)
        value, low = 0.0, 1e9
        for s in range(n):
            p = totals[s] + (worth[s] if tops[s] == high else PILE_WEIGHT * worth[s])
            if s in mine:
                value -= p
            else:
                value += p * share
                low = min(low, p)
        value += low / 2
        if value > best_value + 1e-9:
            best, best_value = [action], value
        elif value > best_value - 1e-9:
            best.append(action)
    return dict(rnd.choice(best))


KIND = {c: info.kind for c, info in CARDS.items()}
KNOWLEDGE = SanNiIchiKnowledge()


def greedy_model(state: State, seat: int, rnd: random.Random) -> Action:
    """The tree's model of a ``greedy`` seat (``"opponents": "bots"``): the bot's own rule, guessing the
    others' cards ``MODEL_SAMPLES`` times where the bot guesses six (its select costs a sixth)."""
    return greedy(state, seat, rnd, MODEL_SAMPLES)


MODELS = {"greedy": greedy_model}
