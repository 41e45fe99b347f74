"""``bench.ladder_variants`` changes the search of its own run only, and undoes it (it runs in the test process)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from bench import ladder_variants as lv
from domain import search
from domain.contract import changed
from domain.engine import Seat, start
from domain.games.san_ni_ichi.bots import STRENGTH
from domain.search import ismcts, san_ban_expectimax, san_ni_ichi


@pytest.fixture(autouse=True)
def restored() -> Iterator[None]:
    yield
    lv.apply("san-ni-ichi", [])


def test_variants_change_the_budget_and_the_rewards_and_apply_restores_them() -> None:
    game = start("san-ni-ichi", "v", [Seat(i, f"b{i}", "random") for i in range(3)], seed=b"12345678")[1].game
    before = search.budget(game, "search")
    lv.apply("san-ni-ichi", ["iterations=7", "exploration=0.3", "policy", "win", "low-select"])
    lv.apply("san-ni-ichi", ["iterations=7", "exploration=0.3", "policy", "win", "low-select"])  # twice is once
    changed = search.budget(game, "search")
    assert (changed.iterations, changed.exploration, changed.opponents) == (7, 0.3, "policy")
    assert ismcts.rewards({"ranks": [2, 1, 3]}, 3) == [0.0, 1.0, 0.0]
    lv.apply("san-ni-ichi", [])
    assert search.budget(game, "search") == before
    assert ismcts.rewards({"ranks": [2, 1, 3]}, 3) == [0.5, 1.0, 0.0]
    assert san_ni_ichi.SanNiIchiKnowledge.rollout is lv.ORIGINAL["sni_rollout"]


def test_low_select_plays_out_the_lowest_card_and_the_rest_as_before() -> None:
    _events, table = start("san-ni-ichi", "v", [Seat(i, f"b{i}", "random") for i in range(3)], seed=b"12345678")
    lv.apply("san-ni-ichi", ["low-select"])
    action = san_ni_ichi.KNOWLEDGE.rollout(table.state, 0, random.Random(1))
    selectable = [c for c in table.state.hands[0] if san_ni_ichi.KIND[c] != "torinoko"]
    assert STRENGTH[action["card"]] == min(STRENGTH[c] for c in selectable)


def test_the_learned_evaluation_is_a_distribution_that_prefers_less_damage() -> None:
    _events, table = start("san-ni-ichi", "v", [Seat(i, f"b{i}", "random") for i in range(3)], seed=b"12345678")
    chances = lv.learned_chances(table.state)
    assert sum(chances) == pytest.approx(1.0) and all(0 < c < 1 for c in chances)
    damage_only = (-1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    state = table.state
    hit = changed(state, damage=((*state.damage[0], "fire-5"), *state.damage[1:]))  # seat 0 took 5 more
    assert lv.learned_chances(hit, damage_only)[0] < lv.learned_chances(state, damage_only)[0]


def test_opponents_sets_how_the_tree_plays_the_other_seats() -> None:
    game = start("san-ni-ichi", "v", [Seat(i, f"b{i}", "random") for i in range(3)], seed=b"12345678")[1].game
    for opponents in ("untried", "bots", "policy"):
        lv.apply("san-ni-ichi", [f"opponents={opponents}"])
        assert search.budget(game, "search").opponents == opponents


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(SystemExit, match="unknown variant"):
        lv.apply("san-ni-ichi", ["faster"])


def test_tree_puts_advanced_san_ban_back_on_the_tree_search_and_depth_changes_the_expectimax() -> None:
    options = {"mode": "advanced", "first": 0}
    _events, table = start("san-ban", "v", [Seat(0, "a"), Seat(1, "b")], seed=b"12345678", options=options)

    def searched() -> search.Estimate:
        return search.estimate(table.game, table.state, 0, 2, "search", random.Random(2))

    expectimax = searched()
    assert all(a.visits == 1 for a in expectimax.arms)
    lv.apply("san-ban", ["tree", "iterations=30"])
    assert sum(a.visits for a in searched().arms) == 30
    lv.apply("san-ban", ["depth=1"])
    assert search.EXPECTIMAX["search"].depth == 1 and searched() != expectimax
    lv.apply("san-ban", [])
    assert searched() == expectimax


def test_softmin_lets_the_expectimaxs_other_seat_play_below_its_best_and_apply_restores_it() -> None:
    values = [0.2, 0.5, 0.9]
    assert san_ban_expectimax._theirs(values) == 0.2
    lv.apply("san-ban", ["softmin=0.1"])
    soft = san_ban_expectimax._theirs(values)
    assert 0.2 < soft < sum(values) / 3
    lv.apply("san-ban", ["softmin=0.001"])
    assert san_ban_expectimax._theirs(values) == pytest.approx(0.2)
    lv.apply("san-ban", [])
    assert san_ban_expectimax._theirs is lv.ORIGINAL["theirs"]
