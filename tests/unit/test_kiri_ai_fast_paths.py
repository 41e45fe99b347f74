"""Kiri-ai's fast paths equal the plain definitions they replace.

The legal programs are listed from a cache keyed by the hand, and random play
draws from that listing (``sample_action``). These tests hold both against the
rules written out the obvious way: every hand a seat can hold, exhaustively,
and every decision of random games (Hypothesis).
"""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import product
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain.engine import Seat, create, replay, step
from domain.errors import IllegalAction
from domain.games.kiri_ai import FACES, PROGRAM, RULES, SETUP, State
from tests.support.records import SALTS

GAME = "kiri-ai"
SPECIALS = ("kesa", "zan-tetsu", "counterattack")
# Written out from docs/rules/kiri-ai.md, independent of the module.
FACES_OF_CARD = {
    "approach-retreat": ("approach", "retreat"),
    "charge-change-stance": ("charge", "change-stance"),
    "high-strike": ("high-strike",),
    "low-strike": ("low-strike",),
    "balanced-strike": ("balanced-strike",),
}
REGULAR = tuple(FACES_OF_CARD)
SETUP_SPACES = {0: (4, 5, 6), 1: (1, 2, 3)}


def expected_hand(state: State, seat: int) -> tuple[str, ...]:
    """The five regular cards and the unplayed special, minus the card set aside."""
    special = state.specials[seat] if state.specials_used[seat] is None else None
    cards = (*REGULAR, special) if special else REGULAR
    return tuple(c for c in cards if c != state.set_aside[seat])


def expected_programs(state: State, seat: int) -> list[dict[str, Any]]:
    """Every (first, second) pair of faces on two different cards of the hand, hand order."""
    faces = [(face, card) for card in expected_hand(state, seat) for face in FACES_OF_CARD.get(card, ("special",))]
    return [
        {"type": "program", "first": first, "second": second}
        for first, first_card in faces
        for second, second_card in faces
        if first_card != second_card
    ]


def expected_actions(state: State, seat: int) -> list[dict[str, Any]]:
    if state.phase == SETUP:
        return [{"type": "setup", "space": sp, "stance": st} for sp in SETUP_SPACES[seat] for st in ("heaven", "earth")]
    return expected_programs(state, seat)


def every_hand_state() -> list[tuple[State, int]]:
    """A program-phase state for every (seat, special dealt, special played or not, card set aside)."""
    out = []
    base = State(battlefield="standard", n_spaces=6, max_rounds=50, phase=PROGRAM, round=2)
    for seat, special, played, aside in product((0, 1), SPECIALS, (False, True), (None, *REGULAR)):
        other_special = next(s for s in SPECIALS if s != special)
        specials = (special, other_special) if seat == 0 else (other_special, special)
        used = (special if played else None, None) if seat == 0 else (None, special if played else None)
        set_aside = (aside, None) if seat == 0 else (None, aside)
        out.append((replace(base, specials=specials, specials_used=used, set_aside=set_aside), seat))
    return out


def accepted(state: State, seat: int, action: dict[str, Any]) -> bool:
    try:
        RULES.validate_choice(state, seat, action)
    except IllegalAction:
        return False
    return True


def test_every_hand_lists_exactly_the_programs_the_rules_allow() -> None:
    for state, seat in every_hand_state():
        assert state.hand(seat) == expected_hand(state, seat)
        listed = RULES.legal_actions(state, seat)
        assert listed == expected_programs(state, seat)
        universe = [{"type": "program", "first": a, "second": b} for a, b in product(FACES, FACES)]
        assert [a for a in universe if accepted(state, seat, a)] == sorted(listed, key=universe.index)


def test_sampling_reaches_every_listed_program_and_nothing_else() -> None:
    for state, seat in every_hand_state()[::7]:
        rnd = random.Random(seat)
        drawn = {tuple(RULES.sample_action(state, seat, rnd).items()) for _ in range(600)}
        assert drawn == {tuple(a.items()) for a in RULES.legal_actions(state, seat)}


def test_handed_out_actions_are_copies_of_the_cached_listing() -> None:
    state, seat = every_hand_state()[0]
    before = RULES.legal_actions(state, seat)
    RULES.legal_actions(state, seat)[0]["first"] = "changed"
    RULES.sample_action(state, seat, random.Random(1))["second"] = "changed"
    setup_state = replace(state, phase=SETUP)
    RULES.sample_action(setup_state, seat, random.Random(1))["space"] = 99
    assert RULES.legal_actions(state, seat) == before
    assert RULES.legal_actions(setup_state, seat) == expected_actions(setup_state, seat)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), battlefield=st.sampled_from(["standard", "advanced"]), max_rounds=st.integers(1, 30))
def test_random_play_draws_as_a_uniform_choice_of_the_legal_actions(
    seed: int, battlefield: str, max_rounds: int
) -> None:
    """Along a random game: the listing is the plain one, and the sampler makes the very draw
    ``rnd.choice(legal_actions)`` would, leaving the generator in the same state."""
    seats = [Seat(0, "red"), Seat(1, "blue")]
    options = {"battlefield": battlefield, "max_rounds": max_rounds}
    table = replay(create(GAME, "fast", seats, seed=seed.to_bytes(8, "big"), options=options))
    rnd = random.Random(seed)
    while not table.finished:
        seat = table.to_act[0]
        assert RULES.legal_actions(table.state, seat) == expected_actions(table.state, seat)
        sampler, chooser = random.Random(rnd.random()), random.Random()
        chooser.setstate(sampler.getstate())
        drawn = engine.sample_action(table, seat, sampler)
        assert drawn == chooser.choice(RULES.legal_actions(table.state, seat))
        assert sampler.getstate() == chooser.getstate()
        _events, table = step(table, seat, drawn, salts=SALTS)
