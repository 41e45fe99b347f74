"""Nin Nal's fast paths equal the plain definitions they replace.

Colours and values are read from tables parsed once, the pending seats are
shared objects, and random play draws one legal action without listing them all
(``sample_action``). These tests hold each against the rules written out the
obvious way: every card (pair), exhaustively, and every decision of random
games (Hypothesis), tie-breaks included.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain.contract import Pending
from domain.engine import Seat, Table, create, replay, step
from domain.errors import IllegalAction
from domain.games import nin_nal
from domain.games.nin_nal import CARDS, RULES, State
from tests.support.records import SALTS
from tests.unit.test_nin_nal import all_zero_deal

GAME = "nin-nal"
# Written out from docs/rules/nin-nal.md, independent of the module.
WINS_AGAINST = {("rock", "scissors"), ("scissors", "paper"), ("paper", "rock")}


def expected_current(state: State) -> nin_nal.Revealed | None:
    """The first revealed card not resolved yet, while resolving."""
    if state.phase != nin_nal.RESOLVE:
        return None
    return next((r for r in state.revealed if r.move is None), None)


def expected_takeable(state: State, card: str) -> list[int]:
    colour = card.split("-", 1)[0]
    return [i for i, pile in enumerate(state.piles) if (colour, pile[-1].split("-", 1)[0]) in WINS_AGAINST]


def expected_pending(state: State) -> Pending:
    if state.phase == nin_nal.SELECT:
        return Pending(tuple(range(state.n_seats)), simultaneous=True)
    if state.phase == nin_nal.TIE_BREAK:
        return Pending(state.tied, simultaneous=True)
    current = expected_current(state)
    return Pending((current.seat,) if current else ())


def expected_actions(state: State, seat: int) -> list[dict[str, Any]]:
    if state.phase == nin_nal.SELECT:
        return [{"type": "select", "card": c} for c in state.hands[seat]]
    if state.phase == nin_nal.TIE_BREAK:
        return [{"type": "throw", "sign": s} for s in ("rock", "paper", "scissors")]
    current = expected_current(state)
    assert current is not None
    takeable = expected_takeable(state, current.card)
    if takeable:
        return [{"type": "take", "pile": i} for i in takeable]
    return [{"type": "place", "pile": i} for i in range(3)]


def test_the_parsed_tables_hold_every_cards_colour_and_value() -> None:
    for card in CARDS:
        colour, value = card.split("-", 1)
        assert nin_nal.COLOUR_OF[card] == nin_nal.colour(card) == colour
        assert nin_nal.VALUE_OF[card] == nin_nal.value(card) == int(value)
    assert set(CARDS) == nin_nal.CARD_SET
    assert len(nin_nal.COLOUR_OF) == len(nin_nal.VALUE_OF) == 48


def test_beats_is_rock_paper_scissors_on_every_pair_of_cards() -> None:
    for card in CARDS:
        for other in CARDS:
            expected = (card.split("-", 1)[0], other.split("-", 1)[0]) in WINS_AGAINST
            assert nin_nal.beats(card, other) is expected


@pytest.mark.parametrize("card", [["rock-1"], {"c": 1}, 7, None, "rock-0", "rock"])
def test_a_card_that_is_no_card_is_refused_by_name(card: Any) -> None:
    table = replay(create(GAME, "g", [Seat(0, "a"), Seat(1, "b")], seed=b"seed"))
    with pytest.raises(IllegalAction, match=r"^there is no card .* in Nin Nal$") as refused:
        RULES.validate_choice(table.state, 0, {"type": "select", "card": card})
    assert str(refused.value) == f"there is no card {card!r} in Nin Nal"


def check_decision(table: Table, rnd: random.Random) -> dict[str, Any]:
    """The fast paths at this decision equal the plain definitions; the sampled action of the seat to act."""
    state = table.state
    assert state.current == expected_current(state)
    assert RULES.pending(state) == expected_pending(state)
    if state.current is not None:
        assert state.takeable(state.current.card) == expected_takeable(state, state.current.card)
    seat = table.to_act[0]
    assert RULES.legal_actions(state, seat) == expected_actions(state, seat)
    sampler, chooser = random.Random(rnd.random()), random.Random()
    chooser.setstate(sampler.getstate())
    drawn = engine.sample_action(table, seat, sampler)
    assert drawn == chooser.choice(RULES.legal_actions(state, seat))
    assert sampler.getstate() == chooser.getstate()
    return drawn


def play_out(table: Table, rnd: random.Random) -> Table:
    while not table.finished:
        _events, table = step(table, table.to_act[0], check_decision(table, rnd), salts=SALTS)
    assert RULES.pending(table.state) == expected_pending(table.state)
    return table


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 5), seed=st.integers(0, 2**32), throws=st.sampled_from([0, 1, 20]))
def test_random_play_draws_as_a_uniform_choice_of_the_legal_actions(n: int, seed: int, throws: int) -> None:
    """Along a random game: every fast path equals its definition, and the sampler makes the very
    draw ``rnd.choice(legal_actions)`` would, leaving the generator in the same state."""
    seats = [Seat(i, f"p{i}") for i in range(n)]
    options = {"tie_break_throws": throws}
    play_out(replay(create(GAME, "fast", seats, seed=seed.to_bytes(8, "big"), options=options)), random.Random(seed))


@settings(max_examples=10, deadline=None)
@given(n=st.sampled_from([2, 3]), seed=st.integers(0, 2**32))  # the all-zero deal is for 2 or 3
def test_tie_breaks_draw_as_a_uniform_choice_of_the_legal_throws(n: int, seed: int) -> None:
    seats = [Seat(i, f"p{i}") for i in range(n)]
    table = replay(create(GAME, "tied", seats, seed=b"seed", deal=all_zero_deal(n), options={"tie_break_throws": 50}))
    rnd = random.Random(seed)
    while table.state.phase != nin_nal.TIE_BREAK:  # the deal ties when everybody plays the first listed action
        check_decision(table, rnd)
        seat = table.to_act[0]
        _events, table = step(table, seat, RULES.legal_actions(table.state, seat)[0], salts=SALTS)
    table = play_out(table, rnd)
    assert table.result is not None and "tie_break" in table.result


def test_sampling_reaches_every_legal_action_and_nothing_else() -> None:
    table = replay(create(GAME, "g", [Seat(i, f"p{i}") for i in range(3)], seed=b"reach"))
    rnd = random.Random(3)
    states: list[State] = []
    while not table.finished:
        states.append(table.state)
        seat = table.to_act[0]
        _events, table = step(table, seat, RULES.sample_action(table.state, seat, rnd), salts=SALTS)
    states.append(replace(states[0], phase=nin_nal.TIE_BREAK, tied=(0, 2)))
    for state in states:
        seat = RULES.pending(state).seats[-1]
        drawn = {tuple(RULES.sample_action(state, seat, rnd).items()) for _ in range(200)}
        assert drawn == {tuple(a.items()) for a in RULES.legal_actions(state, seat)}
