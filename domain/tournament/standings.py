"""Points and standings, from game results alone (the projection and the auditor both use this).

* A game's ranks become points by the tournament's ``scoring`` (points per
  place, first place first). Entrants sharing a rank share the places they
  cover: two tied for first in a game of two each get the mean of the first two
  places' points (``[1, 0]`` -> 0.5 each).
* ``duplicate``: every table of a round played the same deal, so an entrant is
  compared only with those who held the same seat of that deal (matchpoints, as
  in duplicate bridge): one point for each of them who scored fewer place
  points, half a point for each who scored as many. The luck of the cards
  cancels: a strong seat is strong for everyone it is compared with.
* A bye scores the points of first place (``swiss``, ``round-robin``), or in
  ``duplicate`` the mean matchpoints of those who played that round.
* Order: points, then Buchholz (the sum of the points of everyone met, once per
  game together), then the mean game rank (lower is better; byes do not count,
  so a bye neither helps nor hurts it), then entrant number. ``place`` is
  shared only when points, Buchholz and mean rank are all equal.

Numbers are exact fractions inside and in the log (``"5/2"``: the log holds no
floats); the API gives whole numbers as integers and others rounded to 6 decimals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class Played:
    """One finished game of the event: its round, seat order (entrants) and per-seat ranks."""

    round: int
    table: int
    entrants: tuple[int, ...]
    ranks: tuple[int, ...]


def place_points(ranks: Sequence[int], scoring: Sequence[int]) -> list[Fraction]:
    """Points per seat for ``ranks`` (1 = first; equal ranks share the places they cover)."""
    points = [Fraction(p) for p in scoring]
    out = []
    for rank in ranks:
        tied = sum(1 for r in ranks if r == rank)
        covered = points[rank - 1 : rank - 1 + tied]
        out.append(sum(covered, Fraction(0)) / tied)
    return out


def game_points(fmt: str, played: Sequence[Played], scoring: Sequence[int]) -> dict[tuple[int, int], Fraction]:
    """Points per (round, entrant) from the games (matchpoints in ``duplicate``)."""
    raw = {(g.round, e): p for g in played for e, p in zip(g.entrants, place_points(g.ranks, scoring))}
    if fmt != "duplicate":
        return raw
    groups: dict[tuple[int, int], list[int]] = {}  # (round, seat) -> entrants who held that seat
    for g in played:
        for seat, e in enumerate(g.entrants):
            groups.setdefault((g.round, seat), []).append(e)
    out = {}
    for (rnd, _seat), members in groups.items():
        for e in members:
            mine = raw[(rnd, e)]
            out[(rnd, e)] = sum(
                (Fraction(1) if mine > raw[(rnd, o)] else Fraction(1, 2) if mine == raw[(rnd, o)] else Fraction(0))
                for o in members
                if o != e
            ) or Fraction(0)
    return out


def bye_points(fmt: str, per_game: Mapping[tuple[int, int], Fraction], rnd: int, scoring: Sequence[int]) -> Fraction:
    """What a bye in round ``rnd`` is worth."""
    if fmt != "duplicate":
        return Fraction(scoring[0])
    earned = [p for (r, _e), p in per_game.items() if r == rnd]
    return sum(earned, Fraction(0)) / len(earned) if earned else Fraction(0)


def standings(
    fmt: str,
    entrants: Sequence[Mapping[str, Any]],
    played: Sequence[Played],
    byes: Mapping[int, Sequence[int]],
    scoring: Sequence[int],
    withdrawn: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """The standings table, best first (see the module docstring for the order), exact: points,
    Buchholz and mean rank as ``Fraction``; ``for_log`` and ``for_view`` turn a row into JSON."""
    per_game = game_points(fmt, played, scoring)
    points = {e["entrant"]: Fraction(0) for e in entrants}
    games = dict.fromkeys(points, 0)
    rank_sum = dict.fromkeys(points, 0)
    for (_rnd, e), p in per_game.items():
        points[e] += p
    for g in played:
        for e, r in zip(g.entrants, g.ranks):
            games[e] += 1
            rank_sum[e] += r
    bye_count = dict.fromkeys(points, 0)
    for rnd, sitting_out in byes.items():
        for e in sitting_out:
            points[e] += bye_points(fmt, per_game, rnd, scoring)
            bye_count[e] += 1
    buchholz = dict.fromkeys(points, Fraction(0))
    for g in played:
        for e in g.entrants:
            buchholz[e] += sum((points[o] for o in g.entrants if o != e), Fraction(0))
    mean_rank = {e: Fraction(rank_sum[e], games[e]) if games[e] else None for e in points}
    key = {e: (-points[e], -buchholz[e], mean_rank[e] if mean_rank[e] is not None else INFINITE_RANK) for e in points}
    order = sorted(points, key=lambda e: (*key[e], e))
    rows: list[dict[str, Any]] = []
    for i, e in enumerate(order):
        place = rows[-1]["place"] if rows and key[order[i - 1]] == key[e] else i + 1
        info = entrants[e]
        rows.append(
            {
                "place": place,
                "entrant": e,
                "name": info["name"],
                "bot": info.get("bot"),
                "points": points[e],
                "buchholz": buchholz[e],
                "mean_rank": mean_rank[e],
                "games": games[e],
                "byes": bye_count[e],
                "withdrawn": e in withdrawn,
            }
        )
    return rows


INFINITE_RANK = Fraction(10**9)  # an entrant with no game yet: after everyone who played
EXACT = ("points", "buchholz", "mean_rank")


def for_log(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as the log keeps it: every fraction exact, as a string (``"5/2"``, ``"3"``): the log holds no
    floats, so that any language's canonical JSON hashes it alike."""
    return {k: (str(v) if v is not None else None) if k in EXACT else v for k, v in row.items()}


def for_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row (exact, or as the log keeps it) for the API: numbers, whole ones as integers, others to 6 decimals."""
    return {k: (number(Fraction(v)) if v is not None else None) if k in EXACT else v for k, v in row.items()}


def number(value: Fraction) -> int | float:
    """A whole number as an int, anything else rounded to 6 decimals."""
    return int(value) if value.denominator == 1 else round(float(value), 6)


def ranking(rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Entrant numbers in standing order."""
    return [r["entrant"] for r in rows]
