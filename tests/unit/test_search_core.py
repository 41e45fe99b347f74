"""The search's core (``domain.search.ismcts``): action keys, the others' untried arms, modelled bots, observations."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from domain import search
from domain.engine import Seat, start
from domain.games.nin_nal import RULES as NIN_NAL
from domain.games.nin_nal import State as NinNalState
from domain.games.san_ban import RULES as SAN_BAN
from domain.games.san_ni_ichi.bots import greedy as sni_greedy
from domain.games.san_ni_ichi.cards import TORINOKO, kind, strength
from domain.games.san_ni_ichi.state import State as SanNiIchiState
from domain.search import nin_nal, san_ban
from domain.search import san_ni_ichi as sni
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


def _san_ni_ichi_select(bots: list[str | None]) -> Any:
    seats = [Seat(i, f"p{i}", bot) for i, bot in enumerate(bots)]
    _events, table = start("san-ni-ichi", "g-core-bots", seats, seed=b"core-bot")
    assert table.state.phase == "select"
    return table


@pytest.mark.parametrize("opponents", ["bots", "untried"])
def test_under_bots_the_tree_plays_a_declared_bot_seat_by_its_rule_on_each_determinization(
    opponents: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 0 searches (declared ``greedy`` too), seat 1 is a ``greedy`` bot, seat 2 a person: only seat 1
    is modelled, only under ``"bots"``, on hands drawn from seat 0's view; seat 0 never is."""
    table = _san_ni_ichi_select(["greedy", "greedy", None])
    game, state = table.game, table.state
    asked: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []  # the root's: (seat, seat 0's hand, its own)
    modelled: set[int] = set()

    def lowest(world: SanNiIchiState, seat: int, rnd: random.Random) -> dict[str, Any]:
        modelled.add(seat)
        if world.round == state.round and world.phase == "select":
            asked.append((seat, tuple(world.hands[0]), tuple(world.hands[seat])))
        if world.phase != "select":  # the attack phase's steps as the real bot plays them
            return dict(sni_greedy(world, seat, rnd))
        return {"type": "select", "card": min((c for c in world.hands[seat] if kind(c) != TORINOKO), key=strength)}

    monkeypatch.setitem(game.bots, "greedy", lowest)
    monkeypatch.setattr(search, "MODELS", {})  # the bot itself, not the game's cheaper model of it
    monkeypatch.setattr(search, "_SETTINGS", {**search._SETTINGS, "san-ni-ichi": {"opponents": opponents}})
    levels = {s.seat: s.bot for s in table.seats}
    estimate = search.estimate(game, state, 0, 3, "search", random.Random(4), bots=levels)
    assert estimate.arms and all(arm.action["type"] == "select" for arm in estimate.arms)
    if opponents == "untried":
        assert modelled == set()
        return
    assert modelled == {1}  # the bot seat; not the person, not seat 0
    assert {mine for _seat, mine, _theirs in asked} == {tuple(state.hands[0])}
    drawn = {theirs for _seat, _mine, theirs in asked}
    assert (len(drawn) > 10 and tuple(state.hands[1]) not in drawn) or len(drawn) > 10  # hands drawn anew


def test_a_modelled_seat_plays_its_bots_action_at_every_visit() -> None:
    """The arm a modelled seat plays at a node is the model's action in that determinization."""
    table = _san_ni_ichi_select(["search", "greedy", "greedy"])
    game, state = table.game, table.state
    played: dict[int, set[str]] = {1: set(), 2: set()}

    def model(world: SanNiIchiState, seat: int, rnd: random.Random) -> dict[str, Any]:
        action = dict(sni_greedy(world, seat, rnd))
        if world.phase == "select":
            played[seat].add(key(action))
        return action

    rnd, root, sim = random.Random(6), Node(), Simulator(game, 3)
    budget = Budget(40, opponents="bots")
    for _ in range(40):
        world = sni.KNOWLEDGE.determinize(state, 0, rnd)
        _iterate(sim, sni.KNOWLEDGE, root, world, rnd, budget, 0, None, {1: model, 2: model})
    for seat in (1, 2):
        assert set(root.arms[seat]) <= played[seat] and len(root.arms[seat]) > 1
    assert len(root.arms[0]) > 1  # the searching seat still searches its own cards


def test_san_ni_ichis_search_models_a_greedy_seat_by_the_bots_rule_guessing_once() -> None:
    table = _san_ni_ichi_select(["search", "greedy", "greedy"])
    assert search.MODELS["san-ni-ichi"]["greedy"] is sni.greedy_model
    for k in range(5):
        world = sni.KNOWLEDGE.determinize(table.state, 0, random.Random(k))
        modelled = sni.greedy_model(world, 1, random.Random(k))
        assert modelled == sni_greedy(world, 1, random.Random(k), samples=sni.MODEL_SAMPLES)
        assert sni.MODEL_SAMPLES == 1 and modelled["type"] == "select"
