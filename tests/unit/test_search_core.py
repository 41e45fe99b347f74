"""The search's core (``domain.search.ismcts``): action keys, the others' untried arms, observations."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from domain.engine import Seat, start
from domain.games.nin_nal import RULES as NIN_NAL
from domain.games.nin_nal import State as NinNalState
from domain.games.san_ban import RULES as SAN_BAN
from domain.search import nin_nal, san_ban
from domain.search.ismcts import Budget, Node, Simulator, _iterate, key


@pytest.mark.parametrize(
    "action",
    [
        {"type": "select", "card": "rock-7"},
        {"card": "rock-7", "type": "select"},
        {"type": "refill", "cards": ["paper-10", "rock-3"]},
        {"type": "smoke", "use": True},
        {"type": "smoke", "use": 1},
        {"type": "x", "value": 1.0},
        {"type": "attack", "attacks": [{"target": "s1:paper-7", "cards": ["s0:rock-9"]}]},
        {"type": "throw", "sign": None},
    ],
)
def test_an_actions_key_is_its_canonical_json_however_often_it_is_asked(action: dict[str, Any]) -> None:
    canonical = json.dumps(action, sort_keys=True, separators=(",", ":"))
    assert [key(action) for _ in range(3)] == [canonical] * 3


def test_equal_memo_keys_of_different_json_stay_apart() -> None:
    """``True == 1 == 1.0`` in Python: a memo keyed by the values alone would give them one key."""
    keys = [key({"use": True}), key({"use": 1}), key({"use": 1.0}), key({"use": [1]}), key({"use": "1"})]
    assert len(set(keys)) == 5
    assert key({"cards": ["a", "b"]}) == key({"cards": ("a", "b")})  # the same JSON


def _nin_nal_select(seed: int) -> NinNalState:
    seats = [Seat(0, "a", None), Seat(1, "b", None)]
    _events, table = start("nin-nal", f"g-core-{seed}", seats, seed=seed.to_bytes(8, "big"))
    assert table.state.phase == "select"
    return table.state  # type: ignore[no-any-return]


class LowestCard(nin_nal.NinNalKnowledge):
    """Nin Nal's knowledge with a play-out that always selects the lowest card of the hand."""

    def rollout(self, state: NinNalState, seat: int, rnd: random.Random) -> dict[str, Any]:
        if state.phase == "select":
            return {"type": "select", "card": min(state.hands[seat], key=nin_nal.VALUES.__getitem__)}
        return super().rollout(state, seat, rnd)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_others_untried_arms_follow_the_policy_when_asked(seed: int) -> None:
    state, knowledge = _nin_nal_select(seed), LowestCard()
    tried: dict[str, set[str]] = {}
    lowest: set[str] = set()
    for opponents in ("policy", "untried"):
        rnd, root, sim = random.Random(seed), Node(), Simulator(NIN_NAL, 2)
        for _ in range(60):
            world = knowledge.determinize(state, 0, rnd)
            lowest.add(key(knowledge.rollout(world, 1, rnd)))
            _iterate(sim, knowledge, root, world, rnd, Budget(60, opponents=opponents), 0, None)
        tried[opponents] = {k for k, arm in root.arms[1].items() if arm.visits}
    assert tried["policy"] <= lowest  # the other seat played the policy's card only
    assert tried["untried"] - lowest  # and, by default, others too
    assert len(root.arms[0]) == 9  # the searching seat still tries each of its cards


def test_a_childs_key_holds_what_the_step_turned_up() -> None:
    """San Ban ``advanced``: a placement names a cell, the card is the hidden next one of the
    seat's own shuffled five; the tree keeps one child per card turned up, not one per cell."""
    seats = [Seat(0, "a", None), Seat(1, "b", None)]
    _events, table = start("san-ban", "g-core-sb", seats, seed=b"core", options={"mode": "advanced", "first": 0})
    assert list(table.to_act) == [0] and SAN_BAN.legal_actions(table.state, 0)[0] == {"type": "place", "cell": 0}
    rnd, root, sim = random.Random(5), Node(), Simulator(SAN_BAN, 2)
    for _ in range(80):
        world = san_ban.KNOWLEDGE.determinize(table.state, 0, rnd)
        _iterate(sim, san_ban.KNOWLEDGE, root, world, rnd, Budget(80, **san_ban.SETTINGS), 0, None)  # type: ignore[arg-type]
    by_cell: dict[Any, set[str]] = {}
    for joint, seen in root.children:
        by_cell.setdefault(joint, set()).add(seen)
    turned_up = max(by_cell.values(), key=len)
    assert len(turned_up) > 1  # one cell, several cards that may turn up there
    assert turned_up <= set(table.state.hands[0])
