"""Shared helpers for the benchmarks: play a whole game with bots or at random."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from domain.bots import choose_action
from domain.engine import Seat, Table, start, step

SALTS = ("s0", "s1", "s2", "s3")  # the domain benchmark times the rules, not salt drawing


def play(game: str, levels: Sequence[str], seed: int, options: Mapping[str, Any] | None = None) -> Table:
    """One full game, a bot of ``levels[s]`` at each seat; the finished table."""
    seats = [Seat(i, f"bot{i}", level) for i, level in enumerate(levels)]
    _events, table = start(game, f"bench-{seed}", seats, seed=seed.to_bytes(8, "big"), options=options)
    rnd = random.Random(seed)
    while not table.finished:
        seat = table.to_act[0]
        action = choose_action(table, seat, levels[seat], rnd)
        _events, table = step(table, seat, action, salts=SALTS)
    return table


def random_games_per_second(game: str, players: int, games: int) -> float:
    """Play ``games`` random games through the engine; games per second."""
    start = time.perf_counter()
    for g in range(games):
        play(game, ["random"] * players, seed=10**6 + g)
    return games / (time.perf_counter() - start)


def greedy_win_rate(game: str, games: int, players: int, options: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Greedy vs ``players - 1`` random bots, greedy's seat rotating: how often it ranks first
    (``wins``), counting a shared first as 1/k (``fractional``), and how often that first was shared."""
    wins = fractional = shared = 0.0
    for g in range(games):
        seat = g % players
        levels = ["random"] * players
        levels[seat] = "greedy"
        result = play(game, levels, seed=g, options=options).result
        assert result is not None
        winners = result["winners"]
        if seat in winners:
            wins += 1
            fractional += 1 / len(winners)
            shared += len(winners) > 1
    return {"wins": wins / games, "fractional": fractional / games, "shared": shared / games}
