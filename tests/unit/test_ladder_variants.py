"""``bench.ladder_variants`` changes the search of its own run only, and undoes it (it runs in the test process)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from bench import ladder
from bench import ladder_variants as lv
from domain import search
from domain.bots import choose_action, turn_stream
from domain.contract import changed
from domain.engine import Seat, Table, start, step
from domain.games.front_line.bots import greedy as front_line_greedy
from domain.games.front_line.state import REFILL, has_choice
from domain.games.front_line.state import phase as front_line_phase
from domain.games.san_ni_ichi.bots import STRENGTH
from domain.search import front_line, ismcts, san_ban_expectimax, san_ni_ichi


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
    assert san_ni_ichi.SanNiIchiKnowledge.rollout is lv.SWAPPED[(san_ni_ichi.SanNiIchiKnowledge, "rollout")]


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


def test_rollout_depth_sets_the_cut_and_model_playouts_play_the_modelled_seats_by_their_bot() -> None:
    seats = [Seat(0, "me"), Seat(1, "g1", "greedy"), Seat(2, "g2", "greedy")]
    table = start("front-line", "v", seats, seed=b"12345678")[1]
    lv.apply("front-line", ["rollout-depth=5", "model-playouts"])
    budget = search.budget(table.game, "search")
    assert budget.rollout_depth == 5 and vars(search)["search"] is lv._search_modelling_playouts
    played: list[int] = []

    def greedy_noting(state: Any, seat: int, rnd: random.Random) -> dict[str, Any]:
        played.append(seat)
        return front_line_greedy(state, seat, rnd)

    models = {0: greedy_noting, 1: greedy_noting, 2: greedy_noting}
    args = (table.game, front_line.KNOWLEDGE, table.state, 0, 3, random.Random(1), budget, None, models)
    lv._search_modelling_playouts(*args)
    in_playouts_too = len(played)
    assert set(played) == {1, 2}  # never the searching seat
    played.clear()
    ismcts.search(*args)
    assert 0 < len(played) < in_playouts_too  # without the variant, the tree alone asks the model
    lv.apply("front-line", [])
    assert search.budget(table.game, "search").rollout_depth == 12 and vars(search)["search"] is ismcts.search


def test_paired_and_planner_play_every_candidate_in_the_same_draws_and_take_the_best_mean() -> None:
    seats = [Seat(0, "me"), Seat(1, "g1", "greedy"), Seat(2, "g2", "greedy")]
    table = start("front-line", "v", seats, seed=b"12345678")[1]
    models = search.models_of(table.game, 0, {s.seat: s.bot for s in table.seats})
    for variant, replacement in (("paired", lv._paired), ("planner", lv._planner)):
        lv.apply("front-line", [variant, "iterations=40"])
        assert vars(search)["search"] is replacement
        budget = search.budget(table.game, "search")
        found = replacement(table.game, front_line.KNOWLEDGE, table.state, 0, 3, random.Random(2), budget, None, models)
        candidates = front_line.KNOWLEDGE.candidates(table.state, 0, random.Random(0))
        assert sorted(ismcts.key(a.action) for a in found.arms) == sorted({ismcts.key(a) for a in candidates})
        assert len({a.visits for a in found.arms}) == 1 and found.arms[0].visits >= 1  # the same draws for each
        assert found.best == found.arms[0].action and found.arms[0].value == max(a.value for a in found.arms)
    lv.apply("front-line", [])
    assert vars(search)["search"] is ismcts.search


def _front_line_turns(wanted: int) -> Iterator[Table]:
    """Positions of a three-player Front Line game of greedy bots (seat 0 declared ``search``), where
    seat 0 is to act with a choice: ``wanted`` refills and ``wanted`` attack turns."""
    secret = (7_000_004).to_bytes(8, "big")
    seats = [Seat(i, f"bot{i}", level) for i, level in enumerate(("search", "greedy", "greedy"))]
    _events, table = start("front-line", "ladder-phases", seats, seed=secret)
    found = {True: 0, False: 0}
    while not table.finished and min(found.values()) < wanted:
        seat = table.to_act[0]
        refill = front_line_phase(table.state) == REFILL
        if seat == 0 and found[refill] < wanted and (not refill or has_choice(table.state, 0)):
            found[refill] += 1
            yield table
        rnd = turn_stream("greedy", secret, table.game_id, seat, table.turn_version)
        _events, table = step(table, seat, choose_action(table, seat, "greedy", rnd), salts=ladder.SALTS)
    assert min(found.values()) == wanted


def test_one_phase_variants_let_the_level_decide_one_of_front_lines_phases_and_greedy_the_other() -> None:
    secret = (7_000_004).to_bytes(8, "big")
    levels = ("foresight", "greedy", "greedy")
    original_decide, original_foresee = ladder.decide, ladder.foresee
    for table in _front_line_turns(2):
        refill = front_line_phase(table.state) == REFILL
        greedy_rnd = turn_stream("search", secret, table.game_id, 0, table.turn_version)
        greedy_action = choose_action(table, 0, "greedy", greedy_rnd)
        for variant, own in (("refills-only", refill), ("attacks-only", not refill)):
            lv.apply("front-line", [variant])
            foreseen = ladder.foresee(table, 0, levels, secret)
            searched = ladder.decide(table, 0, "search", random.Random(5))
            assert foreseen == (original_foresee(table, 0, levels, secret) if own else greedy_action)
            expected = original_decide(table, 0, "search", random.Random(5))
            if not own:
                expected = choose_action(table, 0, "greedy", random.Random(5))
            assert searched == expected
            field = ladder.decide(table, 0, "greedy", random.Random(5))
            assert field == original_decide(table, 0, "greedy", random.Random(5))  # a greedy seat plays as before
    lv.apply("front-line", [])
    assert (ladder.decide, ladder.foresee) == (original_decide, original_foresee)


def test_one_phase_variants_are_refused_for_another_game() -> None:
    with pytest.raises(SystemExit, match="Front Line only"):
        lv.main(["--game", "san-ban", "--players", "2", "--variant", "refills-only", "--games", "1"])
