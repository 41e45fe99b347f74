"""Who plays whom: the three formats' pairings, pure and deterministic.

A *table* is a tuple of entrant numbers in seat order (seat 0 first). Pairing
never draws at random: the same history always gives the same round, so an
auditor re-derives every round of a tournament from its log.

* ``round_robin``: every pairing (or, for tables of three or more, every table)
  exactly once. Tables of two follow the circle method (one fixed entrant, the
  others rotating; with an odd count a phantom entrant gives the bye); larger
  tables take every k-subset of the entrants in lexicographic order, packed
  first-fit into rounds of disjoint tables.
* ``swiss``: entrants ordered by standing (points, then tie-breaks, then entrant
  number); the bye (when the count does not divide into tables) goes to the
  lowest-placed entrants who have had the fewest byes; then tables of two are
  formed top-down by a backtracking search that avoids every rematch when any
  rematch-free pairing exists (``SEARCH_BUDGET`` steps; past it, rematches are
  kept to those the greedy order cannot avoid). Tables of three or more are
  filled greedily: the highest-placed free entrant, then, in standing order,
  those who have met the table's members least.
* ``duplicate``: the tables are formed as in ``swiss``, and table ``j`` of the
  round turns its seats ``j`` places (so every seat of the round's one deal is
  held by entrants from across the field; see ``standings`` for how results
  are compared seat by seat).

Seat order within a table of ``swiss`` and ``round_robin`` rotates with the
round number, so that over the event nobody keeps the first seat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import combinations
from math import comb

Table = tuple[int, ...]
Meetings = Mapping[int, Mapping[int, int]]  # entrant -> other entrant -> games together so far
SEARCH_BUDGET = 200_000
MAX_SCHEDULE_TABLES = 5_000  # a round-robin playing more tables than this is refused at creation


def circle_rounds(entrants: Sequence[int]) -> list[list[Table]]:
    """Every pairing of ``entrants`` once, in ``n - 1`` rounds (``n`` rounds with byes for an odd count)."""
    ring: list[int | None] = [*entrants, None] if len(entrants) % 2 else list(entrants)
    n = len(ring)
    rounds: list[list[Table]] = []
    for r in range(n - 1):
        order = [ring[0], *(ring[1:][-r:] + ring[1:][:-r] if r else ring[1:])]
        pairs = [(order[i], order[n - 1 - i]) for i in range(n // 2)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
    return rounds


def tables_to_play(n: int, size: int) -> int:
    """How many tables a round-robin of ``n`` entrants at tables of ``size`` plays (without building it)."""
    return comb(n, size)


def subset_rounds(entrants: Sequence[int], size: int) -> list[list[Table]]:
    """Every ``size``-subset of ``entrants`` once, packed first-fit into rounds of disjoint tables."""
    left = list(combinations(sorted(entrants), size))
    rounds: list[list[Table]] = []
    while left:
        used: set[int] = set()
        this_round = []
        for table in left:
            if used.isdisjoint(table):
                this_round.append(table)
                used.update(table)
        left = [t for t in left if t not in this_round]
        rounds.append(this_round)
    return rounds


@lru_cache(maxsize=64)
def round_robin(entrants: tuple[int, ...], size: int) -> list[list[Table]]:
    """The whole round-robin schedule: a list of rounds, each a list of tables (cached: each round asks)."""
    return circle_rounds(entrants) if size == 2 else subset_rounds(entrants, size)


def byes_for(ranked: Sequence[int], size: int, byes_had: Mapping[int, int]) -> list[int]:
    """The entrants who sit out: as many as do not fill a table, the lowest-placed among the fewest byes."""
    count = len(ranked) % size
    if not count:
        return []
    by_need = sorted(range(len(ranked)), key=lambda i: (byes_had.get(ranked[i], 0), -i))
    return sorted((ranked[i] for i in by_need[:count]), key=ranked.index)


def swiss_tables(ranked: Sequence[int], size: int, met: Meetings) -> list[Table]:
    """Tables for the entrants ``ranked`` (best first, byes already removed), avoiding repeat meetings."""
    if size == 2:
        pairs = _pairs_without_rematch(ranked, met)
        return pairs if pairs is not None else _greedy_tables(ranked, 2, met)
    return _greedy_tables(ranked, size, met)


def _pairs_without_rematch(ranked: Sequence[int], met: Meetings) -> list[Table] | None:
    """Top-down pairs with no rematch (the best such pairing in standing order), or None if there is none
    (or the search ran out of budget)."""
    budget = [SEARCH_BUDGET]

    def search(free: list[int]) -> list[Table] | None:
        if not free:
            return []
        first, rest = free[0], free[1:]
        for i, other in enumerate(rest):
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if met.get(first, {}).get(other, 0):
                continue
            found = search(rest[:i] + rest[i + 1 :])
            if found is not None:
                return [(first, other), *found]
        return None

    return search(list(ranked))


def _greedy_tables(ranked: Sequence[int], size: int, met: Meetings) -> list[Table]:
    """Fill each table with the best-placed free entrant, then those who met its members least."""
    free = list(ranked)
    tables = []
    while free:
        table = [free.pop(0)]
        while len(table) < size:
            pick = min(free, key=lambda e: (sum(met.get(e, {}).get(m, 0) for m in table), free.index(e)))
            free.remove(pick)
            table.append(pick)
        tables.append(tuple(table))
    return tables


def rotate(table: Table, places: int) -> Table:
    """``table`` with its seats turned ``places`` places (seat ``i`` goes to entrant ``i + places``)."""
    k = places % len(table)
    return (*table[k:], *table[:k])


def meetings(tables: Iterable[Table]) -> dict[int, dict[int, int]]:
    """How many times each pair of entrants has sat at one table."""
    met: dict[int, dict[int, int]] = {}
    for table in tables:
        for a in table:
            for b in table:
                if a != b:
                    met.setdefault(a, {})[b] = met.setdefault(a, {}).get(b, 0) + 1
    return met


def pair_round(
    fmt: str,
    round_no: int,
    active: Sequence[int],
    size: int,
    ranking: Callable[[Sequence[int]], list[int]],
    history: Sequence[Table],
    byes_had: Mapping[int, int],
    all_entrants: Sequence[int],
) -> tuple[list[Table], list[int]]:
    """The tables (seat order) and byes of round ``round_no`` (from 1) for ``fmt``.

    ``active``: entrants still in; ``ranking`` orders entrants best first;
    ``history``: every table played so far; ``all_entrants``: the entrants at
    creation (the round-robin schedule is fixed by them, so withdrawals do not
    reshuffle it: a table with a withdrawn entrant is not played, and its other
    entrants have a bye).
    """
    if fmt == "round-robin":
        planned = round_robin(tuple(all_entrants), size)[round_no - 1]
        tables = [t for t in planned if set(t) <= set(active)]
        seated = {e for t in tables for e in t}
        return [rotate(t, round_no - 1) for t in tables], [e for e in active if e not in seated]
    ranked = ranking(active)
    byes = byes_for(ranked, size, byes_had)
    playing = [e for e in ranked if e not in byes]
    place = {e: i for i, e in enumerate(ranked)}
    tables = [tuple(sorted(t, key=place.__getitem__)) for t in swiss_tables(playing, size, meetings(history))]
    turn = (lambda j: j) if fmt == "duplicate" else (lambda j: round_no - 1)
    return [rotate(t, turn(j)) for j, t in enumerate(tables)], byes
