"""Tournament pairing and standings in the domain: examples and Hypothesis properties.

A whole tournament is driven through ``domain.tournament.commands`` with random
game results (no games, no server): every round is a partition of the active
entrants into tables and byes, swiss avoids every avoidable rematch (checked by
brute force on small fields), byes go round fairly, a round-robin meets
everyone once, and every tournament ends.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import InvalidOptions
from domain.tournament import commands, pairing
from domain.tournament.model import Tournament, replay
from domain.tournament.standings import Played, place_points, standings

GAMES_BY_SIZE = {2: "san-ban", 3: "nin-nal", 4: "nin-nal"}


def new_tournament(fmt: str, n: int, size: int, rounds: int | None = None) -> Tournament:
    entrants = [{"name": f"e{i}", "bot": "random"} for i in range(n)]
    events = commands.create("t1", GAMES_BY_SIZE[size], None, entrants, fmt, rounds, size)
    return replay(commands.start(replay(events)), replay(events))


def random_ranks(size: int, rnd: random.Random) -> list[int]:
    """Ranks as a game reports them: 1 = first, equal ranks for ties."""
    scores = [rnd.randint(0, 3) for _ in range(size)]
    return [1 + sum(1 for o in scores if o > s) for s in scores]


def play_out(t: Tournament, rnd: random.Random, check: Any = None) -> Tournament:
    """Run ``t`` to its end with random results; ``check(t, tables, byes)`` sees every round."""
    for _ in range(10_000):
        step = commands.next_step(t)
        if step is None:
            return t
        if step.kind == "pair":
            events = commands.pair(t, {"seed_hash": "0" * 64})
            if check is not None:
                check(t, [tuple(x["entrants"]) for x in events[0].data["tables"]], events[0].data["byes"])
        elif step.kind == "start_game":
            assert step.table is not None
            events = commands.game_started(t, step.table, f"g{step.table.round}-{step.table.table}")
        elif step.kind == "close":
            events = commands.close_round(t, {"seed": "00"})
        else:
            events = commands.finish(t)
        t = replay(events, t)
        for table in t.round_tables(t.round):
            if table.game is not None and not table.finished:
                ranks = random_ranks(len(table.entrants), rnd)
                t = replay(commands.game_finished(t, table.game, {"ranks": ranks, "scores": ranks}, "h"), t)
    raise AssertionError("the tournament did not end")


def check_partition(t: Tournament, tables: Sequence[tuple[int, ...]], byes: Sequence[int]) -> None:
    seated = [e for table in tables for e in table]
    assert len(seated) == len(set(seated)), "an entrant at two tables of one round"
    assert sorted(seated + list(byes)) == sorted(t.active)
    assert all(len(table) == t.settings.table_size for table in tables)


def rematch_free_pairing_exists(players: Sequence[int], met: dict[int, dict[int, int]]) -> bool:
    if not players:
        return True
    first, rest = players[0], players[1:]
    return any(
        rematch_free_pairing_exists(rest[:i] + rest[i + 1 :], met)
        for i, other in enumerate(rest)
        if not met.get(first, {}).get(other)
    )


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(["swiss", "round-robin", "duplicate"]), n=st.integers(2, 13), seed=st.integers(0, 10**6))
def test_every_round_partitions_the_field_and_every_tournament_ends(fmt: str, n: int, seed: int) -> None:
    size = 2
    if fmt == "duplicate" and n < 4:
        n = 4
    t = play_out(new_tournament(fmt, n, size), random.Random(seed), check_partition)
    assert t.status == "finished" and t.closed == t.settings.rounds
    assert [row["entrant"] for row in t.standings or []] == sorted(range(n), key=lambda e: _order(t, e))


def _order(t: Tournament, entrant: int) -> tuple[Any, ...]:
    row = next(r for r in t.standings or [] if r["entrant"] == entrant)  # exact, as the log keeps it: "5/2"
    mean_rank = Fraction(row["mean_rank"]) if row["mean_rank"] is not None else Fraction(10**9)
    return (-Fraction(row["points"]), -Fraction(row["buchholz"]), mean_rank, entrant)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(4, 11), rounds=st.integers(1, 7), seed=st.integers(0, 10**6))
def test_swiss_avoids_every_avoidable_rematch_and_byes_go_round(n: int, rounds: int, seed: int) -> None:
    def check(t: Tournament, tables: Sequence[tuple[int, ...]], byes: Sequence[int]) -> None:
        check_partition(t, tables, byes)
        met = pairing.meetings(tb.entrants for tb in t.tables)
        playing = [e for tb in tables for e in tb]
        rematches = [tb for tb in tables if met.get(tb[0], {}).get(tb[1])]
        if rematches:
            assert not rematch_free_pairing_exists(sorted(playing), met), (tables, met)
        byes_had = Counter(e for b in t.byes.values() for e in b)
        fewest = min(byes_had[e] for e in t.active)
        assert all(byes_had[e] == fewest for e in byes), "a second bye before everyone had one"

    play_out(new_tournament("swiss", n, 2, min(rounds, n - 1)), random.Random(seed), check)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9])
def test_a_round_robin_of_two_seats_meets_everyone_once(n: int) -> None:
    met: Counter[frozenset[int]] = Counter()
    byes: Counter[int] = Counter()

    def check(t: Tournament, tables: Sequence[tuple[int, ...]], bye: Sequence[int]) -> None:
        check_partition(t, tables, bye)
        met.update(frozenset(tb) for tb in tables)
        byes.update(bye)

    t = play_out(new_tournament("round-robin", n, 2), random.Random(n), check)
    assert set(met) == {frozenset(p) for p in combinations(range(n), 2)} and set(met.values()) == {1}
    assert t.settings.rounds == (n if n % 2 else n - 1)
    assert all(v == 1 for v in byes.values()) and len(byes) == (n if n % 2 else 0)


@pytest.mark.parametrize(("n", "size"), [(5, 3), (6, 3), (6, 4)])
def test_a_round_robin_of_bigger_tables_plays_every_table_once(n: int, size: int) -> None:
    tables: Counter[frozenset[int]] = Counter()
    play_out(
        new_tournament("round-robin", n, size),
        random.Random(1),
        lambda t, tbs, byes: (check_partition(t, tbs, byes), tables.update(frozenset(x) for x in tbs)),
    )
    assert set(tables) == {frozenset(c) for c in combinations(range(n), size)} and set(tables.values()) == {1}


def test_duplicate_turns_the_seats_of_each_table_one_place_further() -> None:
    t = new_tournament("duplicate", 8, 2, 1)
    tables = commands.pair(t, {"seed_hash": "0" * 64})[0].data["tables"]
    assert [tb["entrants"] for tb in tables] == [[0, 1], [3, 2], [4, 5], [7, 6]]


def test_a_withdrawn_entrant_is_not_paired_and_its_round_robin_opponent_has_a_bye() -> None:
    t = new_tournament("round-robin", 4, 2)
    t = replay(commands.withdraw(t, 2, "ill"), t)
    tables, byes = commands.pairing_of(t)
    assert all(2 not in tb for tb in tables) and len(byes) == 1 and 2 not in byes


def test_ties_share_the_places_they_cover() -> None:
    assert place_points([1, 1], [1, 0]) == [0.5, 0.5]
    assert place_points([1, 1, 3], [2, 1, 0]) == [1.5, 1.5, 0]
    assert place_points([2, 1, 2], [3, 1, 0]) == [0.5, 3, 0.5]


def test_duplicate_compares_only_those_who_held_the_same_seat() -> None:
    """Seat 0 of the deal wins at both tables: each seat-0 holder beat nobody who held seat 0."""
    entrants = [{"entrant": i, "name": f"e{i}"} for i in range(4)]
    games = [Played(1, 0, (0, 1), (1, 2)), Played(1, 1, (3, 2), (1, 2))]
    rows = {r["entrant"]: r for r in standings("duplicate", entrants, games, {}, [1, 0])}
    assert {e: rows[e]["points"] for e in rows} == {0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5}
    games = [Played(1, 0, (0, 1), (1, 2)), Played(1, 1, (3, 2), (2, 1))]  # entrant 2 beat the strong seat
    rows = {r["entrant"]: r for r in standings("duplicate", entrants, games, {}, [1, 0])}
    assert {e: rows[e]["points"] for e in rows} == {0: 1, 1: 0, 2: 1, 3: 0}


def test_a_bye_neither_helps_nor_hurts_the_mean_rank_tie_break() -> None:
    """Entrant 2 sat out (a bye: 1 point, no game), entrant 0 won its game (1 point, rank 1). Points and
    Buchholz tie; the mean rank counts games only, so the bye no longer beats the win (a rank sum did)."""
    entrants = [{"entrant": i, "name": f"e{i}"} for i in range(3)]
    rows = standings("swiss", entrants, [Played(1, 0, (0, 1), (1, 2))], {1: (2,)}, [1, 0])
    assert [(r["entrant"], r["points"], r["mean_rank"]) for r in rows] == [(0, 1, 1), (2, 1, None), (1, 0, 2)]


def test_standings_order_by_points_then_buchholz_then_mean_rank() -> None:
    entrants = [{"entrant": i, "name": f"e{i}"} for i in range(4)]
    games = [Played(1, 0, (0, 1), (1, 2)), Played(1, 1, (2, 3), (1, 2)), Played(2, 0, (0, 2), (2, 1))]
    games.append(Played(2, 1, (1, 3), (1, 2)))
    rows = standings("swiss", entrants, games, {}, [1, 0])
    assert [(r["entrant"], r["points"], r["buchholz"]) for r in rows] == [(2, 2, 1), (0, 1, 3), (1, 1, 1), (3, 0, 3)]
    assert [r["place"] for r in rows] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"fmt": "knockout"}, "format"),
        ({"table_size": 3}, "table_size"),
        ({"entrants": [{"name": "solo"}]}, "entrants"),
        ({"entrants": [{"name": "a"}, {"name": "b", "bot": "genius"}]}, "entrants"),
        ({"scoring": [0, 1]}, "scoring"),
        ({"scoring": [1]}, "scoring"),
        ({"scoring": [1.5, 0]}, "scoring"),  # whole numbers only: the log holds no floats
        ({"fmt": "round-robin", "rounds": None, "entrants": [{"name": f"e{i}"} for i in range(120)]}, "entrants"),
        ({"fmt": "round-robin", "rounds": 9}, "rounds"),
        ({"fmt": "duplicate"}, "entrants"),
        ({"deals": [{}]}, "deals"),
    ],
)
def test_creation_refuses_bad_settings_naming_the_field(changes: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"entrants": [{"name": "a"}, {"name": "b"}], "fmt": "swiss"} | changes
    with pytest.raises(InvalidOptions) as refused:
        commands.create("t1", "san-ban", None, **args)
    assert refused.value.field is not None and refused.value.field[0] == field, refused.value
