"""San Ban's fast paths equal their obvious definitions, in every mode and phase (hypothesis).

* ``sample_action`` picks the very action ``rnd.choice(legal_actions)`` picks, with one
  draw over as many actions, so it reaches exactly the legal set and a random bot plays
  the same games as before it existed;
* ``holds`` is membership in ``remaining``; ``scores`` counts colours and hands.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings

from domain.engine import Table, create, legal_actions, replay, sample_action, step
from domain.games.san_ban import RULES
from domain.games.san_ban import state as sb
from tests.support.records import SALTS
from tests.unit.test_san_ban_properties import ALL_IDS, SEATS, games

MAX_INDICES = 80  # positions with more legal actions check a sample of indices (and both ends)


class Drawn(random.Random):
    """A generator whose one draw below ``n`` gives ``index``, and checks that ``n`` is ``expected_n``."""

    def __init__(self, index: int, expected_n: int) -> None:
        super().__init__(0)
        self.index, self.expected_n, self.draws = index, expected_n, 0

    def _randbelow(self, n: int) -> int:  # what choice() and randrange() draw with
        assert n == self.expected_n, f"a draw below {n}, but there are {self.expected_n} legal actions"
        self.draws += 1
        return self.index


def new_game(spec: dict[str, Any]) -> Table:
    options = {k: spec[k] for k in ("mode", "first", "tier")}
    if spec["deck_sizes"] is not None:
        rnd = random.Random(spec["seed"])
        options["decks"] = [rnd.sample(ALL_IDS, n) for n in spec["deck_sizes"]]
    return replay(create("san-ban", "g1", SEATS, spec["seed"], options))


def check_sampler(table: Table, seat: int, rnd: random.Random) -> None:
    legal = legal_actions(table, seat)
    n = len(legal)
    indices = range(n) if n <= MAX_INDICES else [0, n - 1, *random.Random(n).sample(range(n), MAX_INDICES)]
    for i in indices:
        drawn = Drawn(i, n)
        assert RULES.sample_action(table.state, seat, drawn) == legal[i]
        assert drawn.draws == 1
    seed = rnd.randrange(2**32)
    fast, slow = random.Random(seed), random.Random(seed)
    assert sample_action(table, seat, fast) == slow.choice(legal)
    assert fast.getstate() == slow.getstate()  # the bot's next draws are the same too


def check_queries(state: sb.State) -> None:
    for seat in sb.SEATS:
        unplayed = sb.remaining(state, seat)
        for card_id in {*state.decks[0], *state.decks[1], "nope"}:
            assert sb.holds(state, seat, card_id) == (card_id in unplayed)
    if state.hands is not None:
        expected = [
            sum(1 for slot in state.board if slot is not None and slot.owner == s) + len(sb.remaining(state, s))
            for s in sb.SEATS
        ]
        assert sb.scores(state) == expected


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(games)
def test_the_sampler_draws_exactly_what_a_choice_among_the_legal_actions_draws(spec: dict) -> None:
    table = new_game(spec)
    rnd = spec["moves"]
    while not table.finished:
        for seat in table.to_act:
            check_sampler(table, seat, rnd)
        check_queries(table.state)
        seat = rnd.choice(table.to_act)
        _events, table = step(table, seat, rnd.choice(legal_actions(table, seat)), salts=SALTS)
    check_queries(table.state)
