"""What the search knows of Front Line: the unseen draw piles, a few declarations worth trying, quick play-outs.

**What the seat sees.** Everything on the table: every seat's front line, reinforcements and
captured cards, the draw piles' and the set-aside pile's sizes, whose turn it is, who is out, the
passes, the pending refills and the last declaration; and the options that made the deck
(``deck``, ``jokers``: in the view).

**What it cannot see.** Every draw pile (its own too: content and order) and, with the shared deck,
the set-aside remainder. A determinization reads them only as the view determines them: with the
shared deck the unseen cards are the deck (with jokers when the option adds them) less every card
on the table or captured, a multiset the seat knows; they are shuffled with ``rnd`` and dealt into
the draw piles and the set-aside pile by their (public) sizes. With ``per-player`` decks the unseen
cards of owner ``o`` are ``o``'s own deck less its cards on the table or captured anywhere; each draw
pile takes its size from its owner's shuffled cards, the rest (only after a fixed deal) is set aside.
The hidden places are never read beyond their sizes. **Approximation:** a fixed deal's set-aside
cards are drawn like the others (the seat cannot tell a fixed deal's piles from a shuffle's).

**Searched actions.** A refill: every choice (at most three). An attack turn has up to millions of
declarations, but the attackers stay in place, so a declaration's effect is which targets it
captures; the candidates are sets of targets, each declared with its smallest groups: pass; the
packings that capture the most targets (``space.best_packings``), the ``TOP`` least exposed ones
first (the greedy bot's order: how many of the seat's front cards an opponent could capture next);
each of the best packing less one target (leaving a harmless card in an opponent's line keeps a
stronger one behind it); and every single capture. They are computed from the table alone (no
``rnd``), so every determinization of a node offers the same ones, and they are cached.

**Play-out.** Attack: many captures, found fast (``_quick_packing``: the targets with the fewest
usable cards first, each by its smallest free group; no exposure computed: that is what makes the
greedy bot slow), pass when nothing can be captured;
with probability ``EPSILON`` a random legal action (``sample_action``). Refill: move up the
reinforcements that defend best (an ace, defending at 1, stays behind to support an attack); the
greedy bot's refill (the least exposed line) measured no better in play-outs at twice the cost
(three players, 150 games each against ``greedy``: 1.34x the fair share at 404 ms per decision,
against 1.31x at 181 ms). A play-out is cut after ``rollout_depth`` steps and scored by
``evaluate``.

**The others in the tree** (``"opponents": "bots"``): a seat the game declares a ``greedy`` bot plays
in the tree as that bot does, its own rule (the most captures, then the least exposure) on each
drawn position; a person or a search bot as with ``"untried"``. The bot's rule is public (its level
is in the record, its code in this repository) and reads only the table, so the tree meets the
field's actual play; what it cannot know is the draw piles and the bot's random stream.

**Evaluation.** Each seat's captured cards plus ``MATERIAL`` per card it still holds on the table
and in its draw pile; a seat's reward is its mean over the other seats of a logistic of the
difference (a two-player reward in [0, 1], 0.5 when level), close to the place-based reward.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any

from domain.contract import changed
from domain.games.front_line import RULES
from domain.games.front_line.actions import PASS
from domain.games.front_line.cards import BEATS, CATALOGUE, PER_PLAYER, SUITS, deck
from domain.games.front_line.space import Position, Target, attack_sums, best_packings
from domain.games.front_line.state import REFILL, State, phase, refill_count

Action = dict[str, Any]
Piles = tuple[tuple[str, ...], ...]
Pairs = tuple[tuple[str, tuple[str, ...]], ...]  # (target, attacking cards, initiator first) per attack

TOP = 3  # least exposed packings of most captures searched
EPSILON = 0.05  # play-out: share of random actions
MATERIAL = 0.25  # evaluate: a held card's worth against a captured one
SCALE = 0.35  # evaluate: logistic slope per card of difference

_SUIT = {s: i for i, s in enumerate(SUITS)}
_BEATS = tuple(sum(1 << _SUIT[o] for o in BEATS[s]) for s in SUITS)  # suit index -> mask of suits it beats
# card id -> (suit index, attack, defence, joker)
_INFO: dict[str, tuple[int, int, int, bool]] = {
    c.id: (_SUIT[c.suit], c.attack, c.defence, c.joker) for c in CATALOGUE.values()
}


class FrontLineKnowledge:
    def determinize(self, state: State, seat: int, rnd: random.Random) -> State:
        if not state.dealt:
            return state
        seen = {c for piles in (state.front, state.reserve, state.captured) for pile in piles for c in pile}
        draw: list[tuple[str, ...]] = []
        aside: list[str] = []
        if state.deck == PER_PLAYER:
            for owner in range(state.n_seats):
                pool = [c for c in deck(PER_PLAYER, state.jokers, owner) if c not in seen]
                rnd.shuffle(pool)
                size = len(state.draw[owner])
                draw.append(tuple(pool[:size]))
                aside += pool[size:]
        else:
            pool = [c for c in deck(state.deck, state.jokers) if c not in seen]
            rnd.shuffle(pool)
            at = 0
            for owner in range(state.n_seats):
                size = len(state.draw[owner])
                draw.append(tuple(pool[at : at + size]))
                at += size
            aside = pool[at:]
        return changed(state, draw=tuple(draw), set_aside=tuple(aside))

    def candidates(self, state: State, seat: int, rnd: random.Random) -> list[Action]:
        if phase(state) == REFILL:
            return [_refill(up) for up in combinations(state.reserve[seat], refill_count(state, seat))]
        return [_declare(pairs) for pairs in _candidates(state.front, state.reserve, state.out, seat)]

    def rollout(self, state: State, seat: int, rnd: random.Random) -> Action:
        if rnd.random() < EPSILON:
            return RULES.sample_action(state, seat, rnd)
        if phase(state) == REFILL:
            return _rollout_refill(state, seat)
        return _declare(_quick_packing(state.front, state.reserve, state.out, seat))

    def evaluate(self, state: State) -> list[float]:
        n = state.n_seats
        worth = [
            len(state.captured[s])
            + (0.0 if s in state.out else MATERIAL * (len(state.front[s]) + len(state.reserve[s]) + len(state.draw[s])))
            for s in range(n)
        ]
        return [sum(_logistic(worth[s] - worth[o]) for o in range(n) if o != s) / (n - 1) for s in range(n)]

    def observe(self, before: State, after: State) -> str:
        """The cards a refill turned up from a draw pile into the reinforcements (the draw is
        automatic: the action names only the cards moved up)."""
        turned = [c for was, now in zip(before.reserve, after.reserve, strict=True) for c in now if c not in was]
        return ",".join(turned)


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-SCALE * x))


def _refill(up: Sequence[str]) -> Action:
    return {"type": "refill", "cards": list(up)}


def _declare(pairs: Pairs) -> Action:
    if not pairs:
        return dict(PASS)
    return {"type": "attack", "attacks": [{"target": t, "cards": list(cards)} for t, cards in pairs]}


# ---------------------------------------------------------------- the attack rule over bitmasks
# The same rule as ``attacks.check_declaration`` and ``space.position`` (the rules still judge every
# action the search plays: ``decide`` refuses an illegal one), computed without building ``Card``s.


@lru_cache(maxsize=1 << 16)
def _suit_masks(mine: tuple[str, ...], target: str) -> tuple[int, int, int]:
    """Masks of ``mine`` that may attack ``target``: without a joker, beside a joker, and the jokers."""
    ts, _, _, tj = _INFO[target]
    normal = rev = jokers = 0
    for i, c in enumerate(mine):
        s, _, _, j = _INFO[c]
        if j:
            jokers |= 1 << i
            continue
        if _BEATS[ts] >> s & 1:
            rev |= 1 << i
        if _BEATS[s] >> ts & 1:
            normal |= 1 << i
    return (rev if tj else normal), rev, jokers


def _submasks(mask: int) -> list[int]:
    out = []
    sub = mask
    while sub:
        out.append(sub)
        sub = (sub - 1) & mask
    return out


@lru_cache(maxsize=1 << 16)
def _groups(mine: tuple[str, ...], n_front: int, target: str) -> tuple[int, ...]:
    """The minimal legal groups of ``mine`` (front line first) against ``target``, smallest first."""
    normal, rev, jokers = _suit_masks(mine, target)
    sums = attack_sums(tuple(_INFO[c][1] for c in mine))
    defence = _INFO[target][2]
    front = (1 << n_front) - 1
    found = [g for g in _submasks(normal) if g & front and sums[g] > defence]
    j = jokers
    while j:
        bit = j & -j
        j ^= bit
        found += [g | bit for g in _submasks(rev) if (g | bit) & front and sums[g] > defence]
    found.sort(key=lambda g: (g.bit_count(), sums[g], g))
    minimal: list[int] = []
    for g in found:
        if not any(m & g == m for m in minimal):
            minimal.append(g)
    return tuple(minimal)


def _threatened(line: Sequence[str], attackers: tuple[str, ...]) -> int:
    """The cards of ``line`` (a mask) some group of ``attackers`` (all of them possible initiators) captures."""
    if not attackers:
        return 0
    sums = attack_sums(tuple(_INFO[c][1] for c in attackers))
    found = 0
    for i, t in enumerate(line):
        normal, rev, jokers = _suit_masks(attackers, t)
        defence = _INFO[t][2]
        if (normal and sums[normal] > defence) or (jokers and sums[rev] > defence):
            found |= 1 << i
    return found


def _exposure(front: Piles, reserve: Piles, out: tuple[int, ...], seat: int, line: Sequence[str], lost: Any) -> int:
    """``bots.exposure``: how many cards of ``line`` some opponent (less ``lost``) could capture next."""
    threatened = 0
    for other in range(len(front)):
        if other != seat and other not in out:
            cards = tuple(c for c in (*front[other], *reserve[other]) if c not in lost)
            threatened |= _threatened(line, cards)
    return threatened.bit_count()


def _attack(mine: tuple[str, ...], n_front: int, target: str, group: int) -> tuple[str, tuple[str, ...]]:
    ids = [mine[i] for i in range(len(mine)) if group >> i & 1]
    first = next(mine[i] for i in range(n_front) if group >> i & 1)
    return target, (first, *(c for c in ids if c != first))


def _targets(front: Piles, out: tuple[int, ...], seat: int) -> list[str]:
    return [t for s in range(len(front)) if s != seat and s not in out for t in front[s]]


@lru_cache(maxsize=1 << 16)
def _quick_packing(front: Piles, reserve: Piles, out: tuple[int, ...], seat: int) -> Pairs:
    """Many captures, fast: the targets with the fewest usable cards first, each by its smallest free group
    (fewest cards, then lowest total)."""
    mine = (*front[seat], *reserve[seat])
    info = [_INFO[c] for c in mine]
    vals = [i[1] for i in info]
    full = (1 << len(mine)) - 1
    sums = [0] * (full + 1)
    for mask in range(1, full + 1):
        low = (mask & -mask).bit_length() - 1
        sums[mask] = sums[mask & (mask - 1)] + vals[low]
    jokers = sum(1 << i for i, x in enumerate(info) if x[3])
    front_mask = (1 << len(front[seat])) - 1
    options = []
    for t in _targets(front, out, seat):
        ts, _, defence, tj = _INFO[t]
        normal = rev = 0
        for i, (s, _, _, joker) in enumerate(info):
            if not joker:
                if _BEATS[ts] >> s & 1:
                    rev |= 1 << i
                elif _BEATS[s] >> ts & 1:
                    normal |= 1 << i
        if tj:
            normal = rev
        if sums[normal] > defence or (jokers and sums[rev] > defence):
            options.append(((normal | rev).bit_count(), t, normal, rev, defence))
    options.sort()
    used = 0
    pairs = []
    for _, t, normal, rev, defence in options:
        best = _smallest(sums, normal & ~used, rev & ~used, jokers & ~used, front_mask, defence)
        if best:
            used |= best
            pairs.append(_attack(mine, len(front[seat]), t, best))
    return tuple(pairs)


def _smallest(sums: Sequence[int], normal: int, rev: int, jokers: int, front: int, defence: int) -> int:
    """The legal group of fewest cards, then lowest total, of the free cards given (0: none)."""
    best, best_key = 0, (99, 0)
    for g in _submasks(normal):
        if g & front and sums[g] > defence and (g.bit_count(), sums[g]) < best_key:
            best, best_key = g, (g.bit_count(), sums[g])
    while jokers and rev:
        bit = jokers & -jokers
        jokers ^= bit
        for g in _submasks(rev):
            if (g | bit) & front and sums[g] > defence and (g.bit_count() + 1, sums[g]) < best_key:
                best, best_key = g | bit, (g.bit_count() + 1, sums[g])
    return best


def _rollout_refill(state: State, seat: int) -> Action:
    """Move up the reinforcements that defend best (an ace, defending at 1, stays behind to support)."""
    reserve = state.reserve[seat]
    order = sorted(range(len(reserve)), key=lambda i: (-_INFO[reserve[i]][2], i))
    keep = sorted(order[: refill_count(state, seat)])
    return _refill([reserve[i] for i in keep])


@lru_cache(maxsize=1 << 14)
def _candidates(front: Piles, reserve: Piles, out: tuple[int, ...], seat: int) -> tuple[Pairs, ...]:
    """The searched declarations (the module docstring); the empty one is the pass."""
    mine = (*front[seat], *reserve[seat])
    n_front = len(front[seat])
    owner = {t: s for s in range(len(front)) for t in front[s]}
    targets = [
        Target(CATALOGUE[t], owner[t], g) for t in _targets(front, out, seat) if (g := _groups(mine, n_front, t))
    ]
    found: list[Pairs] = [()]
    if not targets:
        return tuple(found)
    pos = Position(seat, (), (1 << n_front) - 1, 0, tuple(targets))
    packings = best_packings(pos, limit=16)
    line = front[seat]
    scored = sorted(
        (_exposure(front, reserve, out, seat, line, {t.card.id for t, _ in p}), i) for i, p in enumerate(packings)
    )
    seen: set[tuple[str, ...]] = set()

    def add(chosen: Sequence[tuple[Target, int]]) -> None:
        names = tuple(sorted(t.card.id for t, _ in chosen))
        if chosen and names not in seen:
            seen.add(names)
            found.append(tuple(_attack(mine, n_front, t.card.id, g) for t, g in chosen))

    for _, i in scored[:TOP]:
        add(packings[i])
    best = packings[scored[0][1]]
    if len(best) > 1:
        for drop in range(len(best)):
            add(best[:drop] + best[drop + 1 :])
    for t in targets:
        add([(t, t.groups[0])])
    return tuple(found)


KNOWLEDGE = FrontLineKnowledge()
ITERATIONS = 200
SETTINGS: dict[str, object] = {"exploration": 0.7, "rollout_depth": 12, "opponents": "bots"}
