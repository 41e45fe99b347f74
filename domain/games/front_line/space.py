"""The attack phase as data: every legal group per target over bitmasks of the attacker's cards.

A turn's legal declarations can number in the tens of thousands (every way to
split up to six cards over up to nine targets, with a choice of initiator; more
still as JSON, since attacks and supporting cards may come in any order), so they
are never listed. ``Position`` holds, per attackable target, every legal *group* (set of the
attacker's cards) as a bitmask; a declaration is any non-empty choice of groups
for distinct targets that are pairwise disjoint, each with one of its front-line
cards first. From it come ``action_space`` (the compact form sent to players),
``sample_action`` (a random legal action), the few declarations ``legal_actions``
lists, and the greedy bot's best packing.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from domain.games.front_line.attacks import suit_allows
from domain.games.front_line.cards import Card, card
from domain.games.front_line.state import State


@dataclass(frozen=True)
class Target:
    """An opposing front-line card and the attacker's legal groups against it."""

    card: Card
    owner: int
    groups: tuple[int, ...]  # every legal group, as masks, smallest first


@dataclass(frozen=True)
class Position:
    """The attacker ``seat``'s cards (front line first) and every attackable target."""

    seat: int
    cards: tuple[Card, ...]
    front: int  # mask of the front-line cards
    jokers: int  # mask of the jokers
    targets: tuple[Target, ...]  # attackable targets only, in seat then front-line order


def bits(mask: int) -> Iterator[int]:
    """The indexes set in ``mask``, lowest first."""
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


def submasks(mask: int) -> Iterator[int]:
    """Every non-empty submask of ``mask``."""
    sub = mask
    while sub:
        yield sub
        sub = (sub - 1) & mask


@lru_cache(maxsize=4096)
def attack_sums(values: tuple[int, ...]) -> tuple[int, ...]:
    """The attack total of every mask over ``values``."""
    sums = [0] * (1 << len(values))
    for mask in range(1, len(sums)):
        low = (mask & -mask).bit_length() - 1
        sums[mask] = sums[mask & (mask - 1)] + values[low]
    return tuple(sums)


def _groups(normal: int, rev: int, jokers: int, front: int, sums: Sequence[int], defence: int) -> tuple[int, ...]:
    """Every legal group: a normal one, or one joker with reversed cards; a front card; the sum above defence."""
    found = [g for g in submasks(normal) if g & front and sums[g] > defence]
    for j in bits(jokers):
        jbit = 1 << j
        found += [g | jbit for g in submasks(rev) if (g | jbit) & front and sums[g] > defence]
    return tuple(sorted(found, key=lambda g: (g.bit_count(), sums[g], g)))


def position(
    front: Sequence[str], reserve: Sequence[str], opponents: Sequence[tuple[int, Sequence[str]]], seat: int
) -> Position:
    """The attack position of ``seat`` with its ``front`` and ``reserve`` against (owner, front line) pairs."""
    cards = tuple(card(c) for c in (*front, *reserve))
    jokers = sum(1 << i for i, c in enumerate(cards) if c.joker)
    front_mask = (1 << len(front)) - 1
    sums = attack_sums(tuple(c.attack for c in cards))
    targets = []
    for owner, line in opponents:
        for t in map(card, line):
            normal = sum(1 << i for i, c in enumerate(cards) if not c.joker and suit_allows(c, t, False))
            rev = sum(1 << i for i, c in enumerate(cards) if not c.joker and suit_allows(c, t, True))
            groups = _groups(normal, rev, jokers, front_mask, sums, t.defence)
            if groups:
                targets.append(Target(t, owner, groups))
    return Position(seat, cards, front_mask, jokers, tuple(targets))


def from_state(state: State, seat: int) -> Position:
    """The attack position of ``seat`` in ``state`` (its targets: every other seat's front line)."""
    opponents = [(s, state.front[s]) for s in range(state.n_seats) if s != seat]
    return position(state.front[seat], state.reserve[seat], opponents, seat)


def attack(pos: Position, target: Target, group: int, initiator: int | None = None) -> dict[str, Any]:
    """One attack of a declaration: ``initiator`` (default: the group's first front card) then the rest."""
    first = initiator if initiator is not None else next(bits(group & pos.front))
    rest = [pos.cards[i].id for i in bits(group) if i != first]
    return {"target": target.card.id, "cards": [pos.cards[first].id, *rest]}


def declaration(attacks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The action declaring ``attacks``."""
    return {"type": "attack", "attacks": list(attacks)}


# ---------------------------------------------------------------- the compact action space


def _usable(pos: Position, t: Target) -> tuple[int, int, int]:
    """Masks of the cards that join at least one legal group on ``t``: without joker, with joker, jokers."""
    normal = rev = jokers = 0
    for g in t.groups:
        if g & pos.jokers:
            jokers |= g & pos.jokers
            rev |= g & ~pos.jokers
        else:
            normal |= g
    return normal, rev, jokers


def _ids(pos: Position, mask: int) -> list[str]:
    return [pos.cards[i].id for i in bits(mask)]


def attack_space(pos: Position) -> dict[str, Any]:
    """The ``attack`` part of ``action_space`` (its meaning: the ``actions`` module docstring)."""
    n_front = pos.front.bit_length()
    cards = {
        c.id: {"zone": "front" if i < n_front else "reinforcements", "attack": c.attack, "joker": c.joker}
        for i, c in enumerate(pos.cards)
    }
    targets = []
    for t in pos.targets:
        normal, rev, jokers = _usable(pos, t)
        targets.append(
            {
                "target": t.card.id,
                "owner": t.owner,
                "defence": t.card.defence,
                "normal": _ids(pos, normal),
                "reversed": _ids(pos, rev),
                "jokers": _ids(pos, jokers),
            }
        )
    return {"cards": cards, "targets": targets}


# ---------------------------------------------------------------- sampling


def sample_declaration(pos: Position, rnd: random.Random) -> dict[str, Any]:
    """A random legal declaration (``pos`` has a target). Every legal declaration has positive probability.

    Targets are visited in random order; each is attacked with probability 1/2 by a
    uniformly chosen legal group of the cards still free. When that attacks nothing,
    a uniformly chosen target is attacked by a uniformly chosen group. In each attack
    the initiator is a uniformly chosen front card of the group, the others follow in
    random order. (A declaration is reached by skipping every target outside it.)
    """
    used = 0
    attacks = []
    for t in rnd.sample(pos.targets, len(pos.targets)):
        free = [g for g in t.groups if not g & used]
        if free and rnd.random() < 0.5:
            group = rnd.choice(free)
            used |= group
            attacks.append(_random_attack(pos, t, group, rnd))
    if not attacks:
        t = rnd.choice(pos.targets)
        attacks.append(_random_attack(pos, t, rnd.choice(t.groups), rnd))
    return declaration(attacks)


def _random_attack(pos: Position, target: Target, group: int, rnd: random.Random) -> dict[str, Any]:
    """The attack of ``group`` on ``target``: a random front card of it first, the others in random order."""
    one = attack(pos, target, group, rnd.choice(list(bits(group & pos.front))))
    supporters = one["cards"][1:]
    rnd.shuffle(supporters)
    return {"target": one["target"], "cards": [one["cards"][0], *supporters]}


# ---------------------------------------------------------------- listed declarations and packing


def minimal_groups(t: Target) -> list[int]:
    """The legal groups of ``t`` with no legal proper subgroup."""
    out: list[int] = []
    for g in t.groups:  # smallest first, so a subgroup is always seen before
        if not any(m & g == m for m in out):
            out.append(g)
    return out


def listed_declarations(pos: Position) -> list[dict[str, Any]]:
    """A small set of legal declarations: per target its smallest group with and without a joker,
    plus one declaration capturing as many targets as possible when that is more than one."""
    out = []
    for t in pos.targets:
        plain = next((g for g in t.groups if not g & pos.jokers), None)
        joker = next((g for g in t.groups if g & pos.jokers), None)
        out += [declaration([attack(pos, t, g)]) for g in (plain, joker) if g is not None]
    best = best_packings(pos, limit=1)
    if best and len(best[0]) > 1:
        out.append(declaration([attack(pos, t, g) for t, g in best[0]]))
    return out


def best_packings(pos: Position, limit: int = 64) -> list[list[tuple[Target, int]]]:
    """Declarations capturing the most targets, as (target, group) lists: one per target set, up to ``limit``."""
    options = [minimal_groups(t) for t in pos.targets]  # a packing with bigger groups frees no more cards
    memo: dict[tuple[int, int], int] = {}

    def most(i: int, used: int) -> int:
        if i == len(options):
            return 0
        key = (i, used)
        if key not in memo:
            memo[key] = max([most(i + 1, used), *(1 + most(i + 1, used | g) for g in options[i] if not g & used)])
        return memo[key]

    found: dict[int, list[tuple[Target, int]]] = {}
    leaves = [0]

    def walk(i: int, used: int, need: int, chosen: list[tuple[Target, int]], tset: int) -> None:
        if len(found) >= limit or leaves[0] >= 4 * limit:
            return
        if need == 0:
            found.setdefault(tset, list(chosen))
            leaves[0] += 1
            return
        for g in options[i]:
            if not g & used and 1 + most(i + 1, used | g) == need:
                walk(i + 1, used | g, need - 1, [*chosen, (pos.targets[i], g)], tset | 1 << i)
        if most(i + 1, used) == need:
            walk(i + 1, used, need, chosen, tset)

    top = most(0, 0)
    if top:
        walk(0, 0, top, [], 0)
    return list(found.values())


def count_declarations(pos: Position) -> int:
    """How many legal declarations there are (attacks and supporters unordered; the initiator counts)."""
    memo: dict[tuple[int, int], int] = {}

    def count(i: int, used: int) -> int:
        if i == len(pos.targets):
            return 1
        key = (i, used)
        if key not in memo:
            t = pos.targets[i]
            memo[key] = count(i + 1, used) + sum(
                (g & pos.front).bit_count() * count(i + 1, used | g) for g in t.groups if not g & used
            )
        return memo[key]

    return count(0, 0) - 1
