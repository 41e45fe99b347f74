"""San Ban's search bot: the information boundary, legal and reproducible decisions (``domain.search.san_ban``)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from domain import search
from domain.engine import Seat, Table, admits, start, step
from domain.games.san_ban import RULES
from domain.games.san_ban import state as st
from domain.games.san_ban.cards import CATALOGUE, TIERS
from domain.games.san_ban.state import ADVANCED, GAMER, HAND_SIZE, OPEN_MODES, State
from domain.search import san_ban, san_ban_expectimax
from domain.search.ismcts import Budget, Simulator
from domain.search.ismcts import search as ismcts_search

SALTS = ("00", "00")
SMALL = Budget(iterations=12, **san_ban.SETTINGS)  # type: ignore[arg-type]
ALL_IDS = sorted(CATALOGUE)

# (options, whether the decks are public through the options); random decks come from tier 2 unless set.
SPECS: tuple[tuple[dict[str, Any], bool], ...] = (
    ({}, False),
    ({"mode": "gamer"}, False),
    ({"mode": "gamer", "first": 1, "tier": 4}, False),
    ({"mode": "advanced"}, False),
    ({"mode": "advanced", "first": 0, "tier": 5}, False),
    ({"mode": "hardcore"}, False),
    ({"mode": "standard", "decks": "sizes 7 6"}, True),
    ({"mode": "gamer", "decks": "sizes 6 7"}, True),
    ({"mode": "advanced", "decks": "sizes 7 7"}, True),
    ({"mode": "advanced", "decks": "sizes 5 6", "first": 1}, True),
    ({"mode": "hardcore", "deck": "size 6"}, True),
)


def _options(spec: Mapping[str, Any], rnd: random.Random) -> dict[str, Any]:
    options = dict(spec)
    if "decks" in options:
        sizes = [int(n) for n in options["decks"].split()[1:]]
        options["decks"] = [rnd.sample(ALL_IDS, n) for n in sizes]
    if "deck" in options:
        options["deck"] = rnd.sample(ALL_IDS, int(options["deck"].split()[1]))
    return options


def positions(games_per_spec: int = 2) -> Iterator[tuple[Table, int, dict[str, Any]]]:
    """(table, seat to act, options) at every decision of random games, both seats of a secret choice."""
    for n, (spec, _public) in enumerate(SPECS):
        for g in range(games_per_spec):
            rnd = random.Random(1000 * n + g)
            options = _options(spec, rnd)
            seats = [Seat(0, "a", "greedy"), Seat(1, "b", "greedy")]
            _events, table = start("san-ban", f"t{n}-{g}", seats, seed=bytes([n, g, 7]), options=options)
            while not table.finished:
                for seat in table.to_act:
                    yield table, seat, options
                seat = table.to_act[0]
                _events, table = step(table, seat, rnd.choice(RULES.legal_actions(table.state, seat)), salts=SALTS)


def _view(state: State, seat: int) -> dict[str, Any]:
    return RULES.view(state, seat, False)


def other_world(state: State, seat: int, options: Mapping[str, Any], rnd: random.Random) -> State:
    """Another full state in ``seat``'s information set, written independently of ``san_ban.determinize``:
    the opponent's unseen deck cards (random decks only: given decks are public), its hidden five and
    order, the seat's own hidden order (advanced), the generator's shuffles and the unshown coin."""
    opp = 1 - seat
    given = "deck" in options or "decks" in options
    changes: dict[str, Any] = {}
    if state.first is None and not state.coin_shown:
        changes["coin_winner"] = rnd.randrange(2)
    if state.mode == ADVANCED and state.shuffles:
        changes["shuffles"] = tuple(tuple(rnd.sample(range(HAND_SIZE), HAND_SIZE)) for _ in range(2))
    if state.hands is None:
        visible: tuple[str, ...] = ()
    elif state.mode in OPEN_MODES:
        visible = state.hands[opp]
    else:
        visible = state.played[opp]
    deck = list(state.decks[opp])
    if not given and not (state.mode in OPEN_MODES and state.hands is not None):
        tier = options.get("tier", 2)
        pool = [c for c in TIERS[tier] if c not in state.decks[seat] and c not in visible]
        deck = list(visible) + rnd.sample(pool, len(deck) - len(visible))
        rnd.shuffle(deck)
        decks = list(state.decks)
        decks[opp] = tuple(deck)
        defs = {c: state.by_id[c] for c in state.decks[seat]} | {c: CATALOGUE[c] for c in deck}
        changes.update(decks=tuple(decks), cards=tuple(defs.values()), by_id=defs)
    if state.hands is not None and state.mode not in OPEN_MODES:
        assert state.orders is not None
        hands, orders = list(state.hands), list(state.orders)
        played = state.played[opp]
        rest = [c for c in deck if c not in played]
        order = tuple(played) + tuple(rnd.sample(rest, HAND_SIZE - len(played)))
        orders[opp] = order
        hands[opp] = order if state.mode == GAMER else tuple(c for c in deck if c in order)
        if state.mode == ADVANCED and state.shuffles:
            mine = list(st.remaining(state, seat))
            orders[seat] = tuple(state.played[seat]) + tuple(rnd.sample(mine, len(mine)))
        changes.update(hands=tuple(hands), orders=tuple(orders))
    return dataclasses.replace(state, **changes)


def changeable(state: State, seat: int, options: Mapping[str, Any]) -> bool:
    """Whether ``seat``'s information set holds more than one state in the parts ``other_world`` draws."""
    opp = 1 - seat
    if state.first is None and not state.coin_shown:
        return True
    if st.phase(state) == st.CHOOSE:
        return (state.mode == ADVANCED and bool(state.shuffles)) or not ("deck" in options or "decks" in options)
    if state.mode in OPEN_MODES:
        return False
    unplayed_opp = len(state.decks[opp]) - len(state.played[opp])
    own_left = len(st.remaining(state, seat))
    return unplayed_opp >= 2 or (state.mode == ADVANCED and bool(state.shuffles) and own_left >= 2)


def test_other_world_is_another_state_of_the_same_information_set() -> None:
    differed = 0
    for n, (table, seat, options) in enumerate(positions()):
        state = table.state
        if st.phase(state) == st.OVER:
            continue
        rnd = random.Random(n)
        worlds = [other_world(state, seat, options, rnd) for _ in range(20)]
        for world in worlds:
            assert _view(world, seat) == _view(state, seat)
        if changeable(state, seat, options):
            assert any(world != state for world in worlds), (state.mode, st.phase(state))
            differed += 1
    assert differed > 100


def _search(state: State, seat: int, k: int) -> dict[str, Any]:
    return ismcts_search(RULES, san_ban.KNOWLEDGE, state, seat, 2, random.Random(k), SMALL).best


def test_the_decision_depends_on_the_information_set_only() -> None:
    phases: set[tuple[str, str]] = set()
    for n, (table, seat, options) in enumerate(positions()):
        state = table.state
        rnd = random.Random(n)
        for _ in range(20):
            world = other_world(state, seat, options, rnd)
            if world != state or not changeable(state, seat, options):
                break
        assert _view(world, seat) == _view(state, seat)
        assert _search(world, seat, n) == _search(state, seat, n), (state.mode, st.phase(state))
        phases.add((state.mode, st.phase(state)))
    for mode in ("standard", "gamer", "advanced", "hardcore"):
        assert (mode, st.PLAY) in phases
    assert {("gamer", st.CHOOSE), ("advanced", st.CHOOSE), ("standard", st.CHOOSE), ("hardcore", st.CLAIM)} <= phases
    assert {(m, st.COIN_PHASE) for m in ("standard", "gamer", "advanced")} <= phases


def test_the_search_level_depends_on_the_information_set_only() -> None:
    every = list(positions(1))
    picked = [p for mode in (GAMER, ADVANCED) for p in [q for q in every if q[0].state.mode == mode][3::7][:2]]
    assert {table.state.mode for table, _seat, _options in picked} >= {"gamer", "advanced"}
    for n, (table, seat, options) in enumerate(picked):
        state = table.state
        world = other_world(state, seat, options, random.Random(n))
        a = search.choose(RULES, state, seat, 2, "search", random.Random(n))
        b = search.choose(RULES, world, seat, 2, "search", random.Random(n))
        assert a == b


def test_every_determinization_keeps_the_view_and_plays_on_to_the_end() -> None:
    sim = Simulator(RULES, 2)
    for n, (table, seat, _options) in enumerate(positions(1)):
        rnd = random.Random(n)
        state = table.state
        for _ in range(3):
            world = san_ban.KNOWLEDGE.determinize(state, seat, rnd)
            assert _view(world, seat) == _view(state, seat)
            assert RULES.pending(world) == RULES.pending(state)
            while sim.result(world) is None:
                pending = RULES.pending(world)
                joint = {s: RULES.sample_action(world, s, rnd) for s in pending.seats}
                world = sim.after(world, pending, joint)
            assert sorted(st.scores(world)) in ([5, 5], [4, 6], [3, 7], [2, 8], [1, 9], [0, 10])


def test_the_decision_is_legal() -> None:
    for n, (table, seat, _options) in enumerate(positions(1)):
        action = _search(table.state, seat, n)
        space = RULES.action_space(table.state, seat)
        assert action in RULES.legal_actions(table.state, seat) or admits("san-ban", space, action)


def test_same_seed_same_decision() -> None:
    for n, (table, seat, _options) in enumerate(positions(1)):
        if n % 5 == 0:
            assert _search(table.state, seat, n) == _search(table.state, seat, n)


@pytest.mark.parametrize("mode", ["gamer", "advanced"])
def test_same_seed_same_decision_in_another_process(mode: str) -> None:
    code = (
        "import json, random, sys\n"
        "from domain import search\n"
        "from domain.engine import Seat, start\n"
        "from domain.games.san_ban import RULES\n"
        "seats = [Seat(0, 'a', 'search'), Seat(1, 'b', 'greedy')]\n"
        f"_e, t = start('san-ban', 'p', seats, seed=b'proc', options={{'mode': {mode!r}}})\n"
        "print(json.dumps(search.choose(RULES, t.state, t.to_act[0], 2, 'search', random.Random(5))))\n"
    )
    answers = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        answers.add(out.stdout.strip())
    seats = [Seat(0, "a", "search"), Seat(1, "b", "greedy")]
    _events, table = start("san-ban", "p", seats, seed=b"proc", options={"mode": mode})
    here = search.choose(RULES, table.state, table.to_act[0], 2, "search", random.Random(5))
    assert answers == {json.dumps(here)}


# -- advanced mode: the expectimax (``domain.search.san_ban_expectimax``) -----------------------------

SMALL_PLAN = san_ban_expectimax.Plan(depth=2, exact=4, samples=3)


def _valued(state: State, seat: int, k: int, plan: san_ban_expectimax.Plan = SMALL_PLAN) -> list[tuple[str, float]]:
    estimate = san_ban_expectimax.search(state, seat, random.Random(k), plan)
    return [(json.dumps(a.action, sort_keys=True), a.value) for a in estimate.arms]


def test_the_expectimax_depends_on_the_information_set_only() -> None:
    """Every action's value, and the choice, are the same in other states of the seat's information set
    (the other seat's unseen cards, both hidden orders, the unshown coin), in every phase of the mode."""
    phases = set()
    for n, (table, seat, options) in enumerate(positions()):
        state = table.state
        if state.mode != ADVANCED or st.phase(state) == st.OVER:
            continue
        rnd = random.Random(n)
        here = _valued(state, seat, n)
        for _ in range(3):
            world = other_world(state, seat, options, rnd)
            assert _view(world, seat) == _view(state, seat)
            assert _valued(world, seat, n) == here, (st.phase(state), options)
        phases.add((st.phase(state), "decks" in options))
    assert {(st.PLAY, False), (st.PLAY, True), (st.COIN_PHASE, False), (st.CHOOSE, True)} <= phases


def _next_card(state: State, who: int, card: str, pool: list[str]) -> State:
    """``state`` with ``card`` as ``who``'s next card: one of its own unplayed cards, or (the other seat)
    any card of ``pool``, its other unplayed cards taken from the rest of the pool."""
    assert state.orders is not None and state.hands is not None
    orders, hands, decks = list(state.orders), list(state.hands), list(state.decks)
    left = len(st.remaining(state, who))
    rest = [c for c in (st.remaining(state, who) if card in st.remaining(state, who) else pool) if c != card]
    orders[who] = (*state.played[who], card, *rest[: left - 1])
    if card not in st.remaining(state, who):
        hands[who] = decks[who] = orders[who]
    defs = {c: state.by_id.get(c) or CATALOGUE[c] for d in decks for c in d}
    return dataclasses.replace(
        state, orders=tuple(orders), hands=tuple(hands), decks=tuple(decks), cards=tuple(defs.values()), by_id=defs
    )


def _brute(sim: Simulator, state: State, seat: int, pool: list[str]) -> float:
    """The expectimax value for ``seat`` played out by the engine itself: the mover's best cell (the other
    seat's worst for ``seat``), each the mean over the cards that may turn up (``seat``'s unplayed ones;
    for the other seat, any card of ``pool`` it has not placed)."""
    result = sim.result(state)
    if result is not None:
        return result[seat]
    mover = st.to_move(state)
    cards = list(st.remaining(state, seat)) if mover == seat else [c for c in pool if c not in state.played[mover]]
    values = []
    for cell in (c for c, slot in enumerate(state.board) if slot is None):
        outcomes = []
        for card in cards:
            world = _next_card(state, mover, card, [c for c in pool if c not in state.played[mover]])
            world = sim.after(world, RULES.pending(world), {mover: {"type": "place", "cell": cell}})
            outcomes.append(_brute(sim, world, seat, pool))
        values.append(sum(outcomes) / len(outcomes))
    return max(values) if mover == seat else min(values)


@pytest.mark.parametrize("empty", [2, 3])
def test_the_expectimax_values_the_last_placements_as_the_rules_play_them(empty: int) -> None:
    """With two or three cells left, each cell's value is what the engine's own placements, flips and
    score give, the mover choosing its best cell (the other seat its worst for the searching seat) and
    each placed card any of the placer's possible ones: the seat's own unplayed cards, or any of the
    tier's cards it has not seen for the other seat."""
    sim = Simulator(RULES, 2)
    checked = 0
    for g in range(8):
        seats = [Seat(0, "a", "greedy"), Seat(1, "b", "greedy")]
        _events, table = start("san-ban", f"x{g}", seats, seed=bytes([g, 9]), options={"mode": "advanced"})
        rnd = random.Random(g)
        while table.state.n_placed < 9 - empty or st.phase(table.state) != st.PLAY:
            seat = table.to_act[0]
            _events, table = step(table, seat, rnd.choice(RULES.legal_actions(table.state, seat)), salts=SALTS)
        state, seat = table.state, table.to_act[0]
        opp = 1 - seat
        pool = [c for c in TIERS[2] if c not in state.decks[seat] and c not in state.played[opp]]
        values = dict(_valued(state, seat, g, san_ban_expectimax.Plan(depth=1, exact=empty, samples=1)))
        for cell in (c for c, slot in enumerate(state.board) if slot is None):
            outcomes = []
            for mine in st.remaining(state, seat):
                world = _next_card(state, seat, mine, [])
                world = sim.after(world, RULES.pending(world), {seat: {"type": "place", "cell": cell}})
                outcomes.append(_brute(sim, world, seat, pool + list(state.played[opp])))
            action = json.dumps({"type": "place", "cell": cell}, sort_keys=True)
            assert values[action] == pytest.approx(sum(outcomes) / len(outcomes), abs=1e-12)
            checked += 1
    assert checked == 8 * empty


def test_the_expectimax_chooses_a_most_valuable_legal_action_reproducibly() -> None:
    for n, (table, seat, _options) in enumerate(positions(1)):
        state = table.state
        if state.mode != ADVANCED or st.phase(state) == st.OVER:
            continue
        estimate = san_ban_expectimax.search(state, seat, random.Random(n), SMALL_PLAN)
        assert estimate.best == estimate.arms[0].action
        assert estimate.arms[0].value == max(a.value for a in estimate.arms)
        assert all(0.0 <= a.value <= 1.0 for a in estimate.arms)
        legal = RULES.legal_actions(state, seat)
        assert estimate.best in legal or admits("san-ban", RULES.action_space(state, seat), estimate.best)
        if st.phase(state) == st.PLAY:
            assert sorted(a.action["cell"] for a in estimate.arms) == [a["cell"] for a in legal]
        assert san_ban_expectimax.search(state, seat, random.Random(n), SMALL_PLAN) == estimate


def test_a_search_level_plays_advanced_san_ban_by_expectimax() -> None:
    """``search.estimate`` without recorded settings takes the level's expectimax in the advanced mode (the
    state says which), the tree search in the others; recorded tree-search settings are kept."""
    options = {"mode": "advanced", "first": 0}
    _events, table = start("san-ban", "lvl", [Seat(0, "a"), Seat(1, "b")], seed=b"lvl", options=options)
    plan = search.EXPECTIMAX["search"]
    expected = san_ban_expectimax.search(table.state, 0, random.Random(3), plan)
    assert search.estimate(RULES, table.state, 0, 2, "search", random.Random(3)) == expected
    tree = search.settings(RULES, "search")
    kept = search.estimate(RULES, table.state, 0, 2, "search", random.Random(3), recorded={**tree, "iterations": 5})
    assert sum(a.visits for a in kept.arms) == 5
