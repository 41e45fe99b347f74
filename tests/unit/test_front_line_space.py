"""Front Line's declaration validator, action space and sampler against an independent brute force.

The brute force enumerates every declaration of a small position: every assignment
of the attacker's cards to a target or to nothing, with every choice of initiator
in each attack. A separately written rule check (below, sharing no code with the
domain) judges each one; ``decide`` must accept exactly the ones it judges legal,
``action_space`` must let a front end build exactly those, and the sampler's support
(every outcome of its random draws, walked by ``Explorer``) must be exactly those
plus pass: it never draws an illegal declaration and every legal one has a chance.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from itertools import product
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from domain.errors import IllegalAction
from domain.games.front_line import RULES, space
from domain.games.front_line import state as st

# ---------------------------------------------------------------- the rules, written again

STRONGER = {
    "rock": {"scissors", "lizard"},
    "paper": {"rock", "water"},
    "scissors": {"paper", "lizard"},
    "lizard": {"paper", "water"},
    "water": {"rock", "scissors"},
}
FACES = {"j": 11, "q": 12, "k": 13}


def parts(card: str) -> tuple[str, str]:
    """(suit, rank) of an id, the owner prefix dropped; a joker's rank is ``joker``."""
    left, right = card.rsplit(":", maxsplit=1)[-1].split("-")
    return (right, "joker") if left == "joker" else (left, right)


def attack_value(card: str) -> int:
    rank = parts(card)[1]
    return 0 if rank == "joker" else 14 if rank == "a" else FACES.get(rank) or int(rank)


def defence_value(card: str) -> int:
    rank = parts(card)[1]
    return 0 if rank == "joker" else 1 if rank == "a" else FACES.get(rank) or int(rank)


def judge(front: Sequence[str], target: str, cards: Sequence[str]) -> bool:
    """One attack, by the rulebook and the service's rulings."""
    if cards[0] not in front:
        return False
    jokers = [c for c in cards if parts(c)[1] == "joker"]
    if len(jokers) > 1:
        return False
    target_suit, target_rank = parts(target)
    reverse = bool(jokers) or target_rank == "joker"
    for c in cards:
        if c in jokers:
            continue
        suit = parts(c)[0]
        if reverse and suit not in STRONGER[target_suit]:
            return False
        if not reverse and target_suit not in STRONGER[suit]:
            return False
    return sum(map(attack_value, cards)) > defence_value(target)


Attacks = list[tuple[str, list[str]]]


def every_declaration(
    front: Sequence[str], reserve: Sequence[str], targets: Sequence[str]
) -> Iterator[tuple[Attacks, bool]]:
    """Every declaration (as (target, cards) lists, initiator first) and whether it is legal."""
    mine = [*front, *reserve]
    for assignment in product(range(len(targets) + 1), repeat=len(mine)):
        groups = [(t, [c for c, a in zip(mine, assignment) if a == i + 1]) for i, t in enumerate(targets)]
        groups = [(t, g) for t, g in groups if g]
        if not groups:
            continue
        for firsts in product(*(g for _, g in groups)):
            attacks = [(t, [first, *(c for c in g if c != first)]) for (t, g), first in zip(groups, firsts)]
            yield attacks, all(judge(front, t, cards) for t, cards in attacks)


def buildable(space_: Mapping[str, Any], attacks: Attacks) -> bool:
    """Whether the documented combination rule (``actions`` module docstring) builds ``attacks``."""
    if "attack" not in space_ or not attacks:
        return False
    cards, targets = space_["attack"]["cards"], {t["target"]: t for t in space_["attack"]["targets"]}
    seen_targets: set[str] = set()
    seen_cards: set[str] = set()
    for target, group in attacks:
        t = targets.get(target)
        if t is None or target in seen_targets or len(set(group)) < len(group) or seen_cards & set(group):
            return False
        seen_targets.add(target)
        seen_cards |= set(group)
        if any(c not in cards for c in group):
            return False
        jokers = [c for c in group if cards[c]["joker"]]
        if not jokers and not all(c in t["normal"] for c in group):
            return False
        if jokers and (
            len(jokers) > 1
            or jokers[0] not in t["jokers"]
            or not all(c in t["reversed"] for c in group if c != jokers[0])
        ):
            return False
        if cards[group[0]]["zone"] != "front" or sum(cards[c]["attack"] for c in group) <= t["defence"]:
            return False
    return True


# ---------------------------------------------------------------- positions

POOL = [f"{s}-{r}" for s in STRONGER for r in ("a", "2", "3", "5", "8", "k")] + [f"joker-{s}" for s in STRONGER]
POOL_ALL = [f"{s}-{r}" for s in STRONGER for r in ("a", *map(str, range(2, 11)), "j", "q", "k")] + [
    f"joker-{s}" for s in STRONGER
]


def make_state(front: Sequence[str], reserve: Sequence[str], opponents: Sequence[Sequence[str]]) -> st.State:
    """Seat 0 to attack with ``front`` and ``reserve``; each opponent with a front line only."""
    n = 1 + len(opponents)
    return st.State(
        n_seats=n,
        jokers=True,
        dealt=True,
        front=(tuple(front), *map(tuple, opponents)),
        reserve=(tuple(reserve),) + ((),) * (n - 1),
        draw=((),) * n,
        captured=((),) * n,
    )


def accepted(state: st.State, action: Mapping[str, Any]) -> bool:
    try:
        RULES.decide(state, 0, action)
    except IllegalAction:
        return False
    return True


def as_action(attacks: Attacks) -> dict[str, Any]:
    return {"type": "attack", "attacks": [{"target": t, "cards": list(c)} for t, c in attacks]}


def as_attacks(action: Mapping[str, Any]) -> Attacks:
    return [(a["target"], list(a["cards"])) for a in action["attacks"]]


def normal_form(attacks: Attacks) -> frozenset[tuple[str, str, frozenset[str]]]:
    return frozenset((t, cards[0], frozenset(cards)) for t, cards in attacks)


@hs.composite
def positions(draw: hs.DrawFn) -> tuple[list[str], list[str], list[list[str]]]:
    n_front = draw(hs.integers(1, 3))
    n_reserve = draw(hs.integers(0, min(3, 5 - n_front)))
    most = {1: 6, 2: 6, 3: 6, 4: 4, 5: 3}[n_front + n_reserve]  # keeps (targets + 1) ** cards small
    opponents = draw(hs.lists(hs.integers(1, 3), min_size=1, max_size=2).filter(lambda o: sum(o) <= most))
    n_targets = sum(opponents)
    cards = draw(
        hs.lists(
            hs.sampled_from(POOL),
            min_size=n_front + n_reserve + n_targets,
            max_size=n_front + n_reserve + n_targets,
            unique=True,
        )
    )
    front, reserve = cards[:n_front], cards[n_front : n_front + n_reserve]
    rest = cards[n_front + n_reserve :]
    lines = [rest[sum(opponents[:i]) : sum(opponents[: i + 1])] for i in range(len(opponents))]
    return front, reserve, lines


# ---------------------------------------------------------------- every outcome of the sampler


class Explorer(random.Random):
    """A ``random.Random`` that walks every outcome of the sampler's random draws, depth first.

    Each ``choice`` branches over its sequence; each ``random()`` over 0.0 and 0.999, so that both sides
    of any threshold in (0, 0.999] are taken. ``sample`` keeps the population's order and ``shuffle``
    changes nothing: the orders of attacks and of supporting cards never matter to legality (the brute
    force checks shuffled orders), and every order has a chance under the real ones. Any other draw fails.
    """

    def __init__(self) -> None:
        super().__init__(0)
        self.path: list[int] = []
        self.widths: list[int] = []
        self.depth = 0

    def _branch(self, width: int) -> int:
        if self.depth == len(self.path):
            self.path.append(0)
            self.widths.append(width)
        assert self.widths[self.depth] == width, "the same draws must give the same choices"
        self.depth += 1
        return self.path[self.depth - 1]

    def random(self) -> float:
        return (0.0, 0.999)[self._branch(2)]

    def choice(self, seq: Any) -> Any:
        return seq[self._branch(len(seq))]

    def sample(self, population: Sequence[Any], k: int, *, counts: Any = None) -> list[Any]:
        assert counts is None
        return list(population)[:k]

    def shuffle(self, x: list[Any]) -> None:  # type: ignore[override]
        return None

    def _randbelow(self, n: int) -> int:
        raise AssertionError("the sampler draws in a way the explorer does not follow")

    def next_path(self) -> bool:
        """Move to the next unexplored path (False when every path has been walked)."""
        while self.path and self.path[-1] + 1 >= self.widths[-1]:
            self.path.pop()
            self.widths.pop()
        self.depth = 0
        if not self.path:
            return False
        self.path[-1] += 1
        return True


def sampler_support(state: st.State, limit: int = 200_000) -> list[dict[str, Any]]:
    """Every action ``sample_action`` can return for seat 0 (orders aside), one per path of its draws."""
    explorer = Explorer()
    out = [RULES.sample_action(state, 0, explorer)]
    while explorer.next_path():
        out.append(RULES.sample_action(state, 0, explorer))
        assert len(out) < limit, "the sampler has too many paths to explore"
    return out


# ---------------------------------------------------------------- the properties


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(positions(), hs.integers(0, 2**32))
def test_validator_action_space_and_sampler_equal_the_brute_force(
    position: tuple[list[str], list[str], list[list[str]]], seed: int
) -> None:
    front, reserve, lines = position
    state = make_state(front, reserve, lines)
    space_ = RULES.action_space(state, 0)
    json.dumps(space_)
    legal: set[frozenset[tuple[str, str, frozenset[str]]]] = set()
    rnd = random.Random(seed)
    for attacks, ok in every_declaration(front, reserve, [t for line in lines for t in line]):
        action = as_action(attacks)
        assert accepted(state, action) == ok, (attacks, ok)
        assert buildable(space_, attacks) == ok, (attacks, ok)
        if ok:
            legal.add(normal_form(attacks))
            shuffled = [(t, [g[0], *rnd.sample(g[1:], len(g) - 1)]) for t, g in rnd.sample(attacks, len(attacks))]
            assert accepted(state, as_action(shuffled))
    assert space.count_declarations(space.from_state(state, 0)) == len(legal)
    support = sampler_support(state)
    assert {"type": "pass"} in support  # passing is always possible
    for action in support:
        assert action == {"type": "pass"} or accepted(state, action)
    assert {normal_form(as_attacks(a)) for a in support if a != {"type": "pass"}} == legal
    for _ in range(20):
        action = RULES.sample_action(state, 0, rnd)
        assert action == {"type": "pass"} or normal_form(as_attacks(action)) in legal
        assert accepted(state, action) or action == {"type": "pass"}
    for action in RULES.legal_actions(state, 0)[1:]:
        assert normal_form(as_attacks(action)) in legal


# ---------------------------------------------------------------- the sampler reaches everything

SAMPLE_TOP = (
    ["rock-9", "scissors-2", "paper-10"],
    ["lizard-k", "joker-water", "scissors-3"],
    [["lizard-q", "rock-2", "water-6"]],
)  # the rulebook's second turn


def test_the_sampler_reaches_every_legal_declaration_and_pass() -> None:
    front, reserve, lines = SAMPLE_TOP
    legal = {normal_form(a) for a, ok in every_declaration(front, reserve, lines[0]) if ok}
    assert len(legal) == 30
    state = make_state(*SAMPLE_TOP)
    rnd = random.Random(4)
    seen = set()
    passes = 0
    for _ in range(8000):
        action = RULES.sample_action(state, 0, rnd)
        if action == {"type": "pass"}:
            passes += 1
        else:
            seen.add(normal_form(as_attacks(action)))
    assert seen == legal
    assert 0.15 < passes / 8000 < 0.35  # 1 / (1 + 3 attackable targets)


def test_the_sampler_passes_when_nothing_can_be_captured() -> None:
    state = make_state(["rock-2"], [], [["paper-k"]])
    assert RULES.sample_action(state, 0, random.Random(1)) == {"type": "pass"}
    assert RULES.action_space(state, 0) == {
        "actions": [{"type": "pass"}],
        "attack": {"cards": {"rock-2": {"zone": "front", "attack": 2, "joker": False}}, "targets": []},
    }
    assert RULES.legal_actions(state, 0) == [{"type": "pass"}]


def test_action_space_example() -> None:
    state = make_state(*SAMPLE_TOP)
    assert RULES.action_space(state, 0)["attack"]["targets"] == [
        {
            "target": "lizard-q",
            "owner": 1,
            "defence": 12,
            "normal": ["rock-9", "scissors-2", "scissors-3"],
            "reversed": [],
            "jokers": [],
        },
        {
            "target": "rock-2",
            "owner": 1,
            "defence": 2,
            "normal": ["paper-10"],
            "reversed": ["scissors-2", "lizard-k", "scissors-3"],
            "jokers": ["joker-water"],
        },
        {
            "target": "water-6",
            "owner": 1,
            "defence": 6,
            "normal": ["paper-10", "lizard-k"],
            "reversed": ["rock-9", "scissors-2", "scissors-3"],
            "jokers": ["joker-water"],
        },
    ]


def test_a_refill_action_space_lists_every_choice() -> None:
    state = make_state(["rock-2"], ["paper-3", "water-4", "lizard-5"], [["paper-k"]])
    state = st.State(**{**state.__dict__, "refills": (0,)})
    assert RULES.action_space(state, 0) == {
        "actions": [
            {"type": "refill", "cards": c}
            for c in (["paper-3", "water-4"], ["paper-3", "lizard-5"], ["water-4", "lizard-5"])
        ],
        "refill": {"count": 2, "from": ["paper-3", "water-4", "lizard-5"]},
    }


# ---------------------------------------------------------------- the largest positions


def per_player_state(mine: Sequence[str], opponents: Sequence[Sequence[str]]) -> st.State:
    n = 1 + len(opponents)
    return st.State(
        n_seats=n,
        deck="per-player",
        jokers=True,
        dealt=True,
        front=(tuple(mine[:3]), *map(tuple, opponents)),
        reserve=(tuple(mine[3:]),) + ((),) * (n - 1),
        draw=((),) * n,
        captured=((),) * n,
    )


# found by hill climbing (bench/front_line_bots.py): the largest action space, the most declarations
LARGEST = (
    ["s0:joker-scissors", "s0:scissors-q", "s0:scissors-10", "s0:scissors-j", "s0:scissors-k", "s0:scissors-a"],
    [
        ["s1:joker-water", "s1:water-10", "s1:joker-rock"],
        ["s2:joker-rock", "s2:water-10", "s2:joker-water"],
        ["s3:joker-rock", "s3:water-10", "s3:joker-water"],
    ],
)
MOST = (
    ["s0:water-j", "s0:water-a", "s0:water-k", "s0:water-q", "s0:water-7", "s0:water-8"],
    [
        ["s1:scissors-3", "s1:rock-4", "s1:rock-6"],
        ["s2:scissors-6", "s2:scissors-2", "s2:scissors-10"],
        ["s3:rock-6", "s3:scissors-3", "s3:rock-7"],
    ],
)


def test_the_largest_action_spaces_stay_small() -> None:
    """Sizes are asserted; times are measured by bench/front_line_bots.py, never asserted in a test."""
    for mine, opponents in (LARGEST, MOST):
        state = per_player_state(mine, opponents)
        size = len(json.dumps(RULES.action_space(state, 0)))
        assert size < 8000  # the description and a few ready-made declarations: far below the API's 50 KB
        assert len(json.dumps(RULES.legal_actions(state, 0))) < 4000
    for mine, opponents in (LARGEST, MOST):
        count = space.count_declarations(space.from_state(per_player_state(mine, opponents), 0))
        assert count == counted(mine[:3], mine[3:], [t for line in opponents for t in line])
    assert space.count_declarations(space.from_state(per_player_state(*MOST), 0)) > 50_000


@settings(max_examples=200, deadline=None)
@given(hs.randoms(use_true_random=False))
def test_any_four_player_action_space_stays_under_10_kb(rnd: random.Random) -> None:
    """4 players, per-player decks (the longest ids), jokers: 9 targets at most, 11 ids each, 20 actions."""
    decks = [[f"s{seat}:{c}" for c in POOL_ALL] for seat in range(4)]
    mine = rnd.sample(decks[0], 6)
    state = per_player_state(mine, [rnd.sample(decks[s], 3) for s in (1, 2, 3)])
    space_ = RULES.action_space(state, 0)
    assert len(json.dumps(space_)) < 10_000
    assert len(space_["actions"]) <= 20
    for t in space_["attack"]["targets"]:
        assert len(t["normal"]) + len(t["reversed"]) + len(t["jokers"]) <= 11


def counted(front: Sequence[str], reserve: Sequence[str], targets: Sequence[str]) -> int:
    """The legal declarations (orders aside), counted with ``judge`` alone: too many to list one by one."""
    mine = [*front, *reserve]
    options = []  # per target: every legal group, once per possible initiator
    for target in targets:
        groups = [[c for i, c in enumerate(mine) if mask >> i & 1] for mask in range(1, 1 << len(mine))]
        options.append(
            [
                frozenset(g)
                for g in groups
                for first in g
                if judge(front, target, [first, *(c for c in g if c != first)])
            ]
        )
    memo: dict[tuple[int, frozenset[str]], int] = {}

    def count(i: int, used: frozenset[str]) -> int:
        if i == len(targets):
            return 1
        if (i, used) not in memo:
            memo[i, used] = count(i + 1, used) + sum(count(i + 1, used | g) for g in options[i] if not g & used)
        return memo[i, used]

    return count(0, frozenset()) - 1  # the empty declaration is a pass
