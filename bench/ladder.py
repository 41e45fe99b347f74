"""The strength ladder: one bot level against a field of another, every game, with confidence intervals.

    python -m bench.ladder --games 1000 --jobs 2                 # every row of the README's table
    python -m bench.ladder --game nin-nal --players 3 --a search --b greedy --games 200

A row plays ``--games`` games of one game with ``players`` seats: one seat of level A (rotating over
the seats, game by game) against ``players - 1`` seats of level B, through ``domain.engine`` and
``domain.bots.choose_action`` as the service's bot workers play them (a search level's random stream
drawn from the game's seed, ``domain.bots.bot_stream``). A's **share** is the points it takes: 1 for a
win, 1/k for a first place shared by k seats (a two-player draw is half a point), so a level no
better than the field takes 1/players. The 95% interval is the normal one over the games' points.
A's time per decision is its mean (and 95th percentile) over every decision it took, on one core.

``oracle`` (bench only, never a service level) is ``search`` that sees every hidden part: each
iteration searches the true state (other hands, draw piles in their order) instead of a draw from
the seat's view, the field modelled as ``search`` models it (``"opponents": "bots"``). It cheats,
so it shows what the hidden parts are worth to this search at this budget: where the oracle does
much better than ``search``, what the seat cannot see holds the search back (luck, to a fair
player); where it does no better, the search itself must improve.

    python -m bench.ladder --game san-ban --options '{"mode": "advanced"}' --a oracle --b greedy --games 300

``foresight`` (bench only, and it cheats further) knows the game's future: it plays each of the
candidates ``search`` would search, on the true state, to the end as the game would go on (every
other seat by its own level and its own random stream, itself by ``greedy``) and takes the one that
ends with the most points for it (then the best place). It tells how much of a row is decided by
what nobody can know: the deal's order and the other seats' draws of luck.

    python -m bench.ladder --game front-line --players 3 --a foresight --b greedy --games 1000

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from domain import search
from domain.bots import choose_action, turn_stream
from domain.engine import Seat, Table, start, step
from domain.search.ismcts import Knowledge, rewards
from domain.search.ismcts import search as search_tree

SALTS = ("00",) * 2

# The README's table: (game, players, options) x (A, B).
ROWS: tuple[tuple[str, int, Mapping[str, Any] | None], ...] = (
    ("san-ban", 2, None),
    ("san-ban", 2, {"mode": "gamer"}),
    ("san-ban", 2, {"mode": "advanced"}),
    ("kiri-ai", 2, None),
    ("kiri-ai", 2, {"battlefield": "advanced"}),
    ("nin-nal", 2, None),
    ("nin-nal", 4, None),
    ("san-ni-ichi", 3, None),
    ("san-ni-ichi", 4, None),
    ("front-line", 2, None),
    ("front-line", 3, None),
)
PAIRS = (("search", "greedy"), ("greedy", "random"))
ORACLE = "oracle"
FORESIGHT = "foresight"
CHEATS = (ORACLE, FORESIGHT)  # bench levels that see what no seat may: played as ``search`` seats


class Clairvoyant:
    """A game's ``Knowledge`` whose determinization is the true state: the oracle's (it cheats)."""

    def __init__(self, inner: Knowledge) -> None:
        self.candidates, self.rollout = inner.candidates, inner.rollout
        self.evaluate, self.observe = inner.evaluate, inner.observe

    def determinize(self, state: Any, seat: int, rnd: Any) -> Any:
        return state


def decide(table: Table, seat: int, level: str, rnd: Any) -> dict[str, Any]:
    """``level``'s action, the oracle's included (``search``'s budget on the true state)."""
    if level != ORACLE:
        return choose_action(table, seat, level, rnd)
    game = table.game
    knowledge = Clairvoyant(search.KNOWLEDGE[game.id])
    budget = search.budget(game, "search")
    models = search.models_of(game, seat, {s.seat: s.bot for s in table.seats})
    return search_tree(game, knowledge, table.state, seat, len(table.seats), rnd, budget, models=models).best


def foresee(table: Table, seat: int, levels: Sequence[str], secret: bytes) -> dict[str, Any]:
    """``foresight``'s action (the module docstring): every candidate played out as the game would go on."""
    rnd = turn_stream("search", secret, table.game_id, seat, table.turn_version)
    best: tuple[tuple[float, float], dict[str, Any]] | None = None
    for action in search.KNOWLEDGE[table.game.id].candidates(table.state, seat, rnd):
        _events, after = step(table, seat, action, salts=SALTS)
        ahead = [("greedy" if s == seat else level) for s, level in enumerate(levels)]
        after = _play_out(after, ahead, secret)
        assert after.result is not None
        winners = after.result["winners"]
        worth = (1 / len(winners) if seat in winners else 0.0, rewards(after.result, len(levels))[seat])
        if best is None or worth > best[0]:
            best = (worth, action)
    assert best is not None
    return best[1]


def _play_out(table: Table, levels: Sequence[str], secret: bytes) -> Table:
    while not table.finished:
        seat = table.to_act[0]
        rnd = turn_stream(levels[seat], secret, table.game_id, seat, table.turn_version)
        _events, table = step(table, seat, choose_action(table, seat, levels[seat], rnd), salts=SALTS)
    return table


@dataclass(frozen=True)
class GameOutcome:
    points: float  # A's points in this game
    times: tuple[float, ...]  # seconds per decision of A


def play_one(game: str, levels: Sequence[str], seed: int, options: Mapping[str, Any] | None, timed: int) -> GameOutcome:
    """One game, ``levels[s]`` at seat ``s``; the points of seat ``timed`` and its decision times."""
    seats = [Seat(i, f"bot{i}", "search" if level in CHEATS else level) for i, level in enumerate(levels)]
    secret = seed.to_bytes(8, "big")
    _events, table = start(game, f"ladder-{seed}", seats, seed=secret, options=options)
    times: list[float] = []
    while not table.finished:
        seat = table.to_act[0]
        level = levels[seat]
        rnd = turn_stream("search" if level in CHEATS else level, secret, table.game_id, seat, table.turn_version)
        began = time.perf_counter()
        action = foresee(table, seat, levels, secret) if level == FORESIGHT else decide(table, seat, level, rnd)
        if seat == timed:
            times.append(time.perf_counter() - began)
        _events, table = step(table, seat, action, salts=SALTS)
    assert table.result is not None
    winners = table.result["winners"]
    return GameOutcome(1 / len(winners) if timed in winners else 0.0, tuple(times))


def _game(args: tuple[str, int, Mapping[str, Any] | None, str, str, int]) -> GameOutcome:
    game, players, options, a, b, g = args
    seat = g % players
    levels = [b] * players
    levels[seat] = a
    return play_one(game, levels, 7_000_000 + g, options, seat)


def row(
    game: str,
    players: int,
    a: str,
    b: str,
    games: int,
    options: Mapping[str, Any] | None = None,
    jobs: int = 1,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> dict[str, Any]:
    """One row of the ladder (see the module docstring); ``initializer(*initargs)`` runs in each process
    of ``jobs`` before its first game (``bench.ladder_variants`` changes the search there)."""
    tasks = [(game, players, options, a, b, g) for g in range(games)]
    began = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs, initializer=initializer, initargs=initargs) as pool:
            outcomes = list(pool.map(_game, tasks, chunksize=4))
    else:
        outcomes = [_game(t) for t in tasks]
    points = [o.points for o in outcomes]
    share = sum(points) / games
    spread = math.sqrt(sum((p - share) ** 2 for p in points) / max(1, games - 1))
    half = 1.96 * spread / math.sqrt(games)
    times = sorted(t for o in outcomes for t in o.times)
    return {
        "game": game,
        "players": players,
        "options": dict(options or {}),
        "a": a,
        "b": b,
        "games": games,
        "share": share,
        "low": max(0.0, share - half),
        "high": min(1.0, share + half),
        "fair": 1 / players,
        "ms_mean": 1000 * sum(times) / len(times) if times else 0.0,
        "ms_p95": 1000 * times[int(0.95 * (len(times) - 1))] if times else 0.0,
        "decisions": len(times),
        "seconds": time.perf_counter() - began,
    }


def markdown(r: Mapping[str, Any]) -> str:
    ratio = r["share"] / r["fair"]
    return (
        f"| {r['game']} | {r['players']} | {r['a']} vs {r['b']} | {r['games']:,} | {r['share']:.1%} "
        f"({r['low']:.1%}-{r['high']:.1%}) | {ratio:.2f}x | {r['ms_mean']:.0f} ms (p95 {r['ms_p95']:.0f}) |"
    )


HEADER = (
    "| game | players | A vs field of B | games | A's share (95% CI) | share / fair share | A's time per decision |\n"
    "|---|---|---|---|---|---|---|"
)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", help="one game (default: every row of the table)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--options", type=json.loads, default=None, help="the game's options, as JSON")
    parser.add_argument("--a", default=None, help="level A (default: each pair of the table)")
    parser.add_argument("--b", default=None, help="level B")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1, help="processes (each decision is still timed on one core)")
    parser.add_argument("--json", help="append each row as a JSON line to this file")
    args = parser.parse_args(argv)
    rows = [(args.game, args.players, args.options)] if args.game else list(ROWS)
    pairs = [(args.a, args.b)] if args.a and args.b else list(PAIRS)
    print(HEADER, flush=True)
    for game, players, options in rows:
        for a, b in pairs:
            r = row(game, players, a, b, args.games, options, args.jobs)
            print(markdown(r), f"<!-- {r['seconds']:.0f} s -->", flush=True)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as out:
                    out.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
