"""Front Line benchmark: greedy's win rate against random, random-game speed, the largest action spaces.

    python -m bench.front_line_bots --games 1000

Games are driven through ``domain.engine`` (``bench.common.play``); the random
bot is the engine's, which uses the game's ``sample_action``. Greedy alternates
seats; every other pair of games adds the jokers. A shared first place is not a win.
The largest action spaces are found by hill climbing over 4-player, per-player,
joker positions (the longest ids), maximising the JSON size or the number of
legal declarations.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.common import play
from domain.games.front_line import RULES, space
from domain.games.front_line import state as st
from domain.games.front_line.cards import deck

GAME = "front-line"


def win_rate(games: int) -> dict[str, float]:
    """Greedy vs random, greedy's seat alternating; shares of wins, losses and shared first places."""
    wins = losses = shared = 0
    for g in range(games):
        seat = g % 2
        levels = ["random", "random"]
        levels[seat] = "greedy"
        result = play(GAME, levels, seed=g, options={"jokers": g % 4 >= 2}).result
        assert result is not None
        if len(result["winners"]) == 2:
            shared += 1
        elif seat in result["winners"]:
            wins += 1
        else:
            losses += 1
    return {"wins": wins / games, "losses": losses / games, "shared": shared / games}


def random_games_per_second(players: int, games: int, options: Mapping[str, Any] | None = None) -> float:
    start = time.perf_counter()
    for g in range(games):
        play(GAME, ["random"] * players, seed=10**6 + g, options=options)
    return games / (time.perf_counter() - start)


# ---------------------------------------------------------------- the largest action spaces

Position = tuple[list[str], list[list[str]]]


def position_state(pos: Position) -> st.State:
    """Seat 0 to attack with 3 front cards and 3 reinforcements against three full front lines."""
    mine, opponents = pos
    return st.State(
        n_seats=4,
        deck="per-player",
        jokers=True,
        dealt=True,
        front=(tuple(mine[:3]), *map(tuple, opponents)),
        reserve=(tuple(mine[3:]), (), (), ()),
        draw=((),) * 4,
        captured=((),) * 4,
    )


def space_size(pos: Position) -> int:
    return len(json.dumps(RULES.action_space(position_state(pos), 0)))


def declarations(pos: Position) -> int:
    return space.count_declarations(space.from_state(position_state(pos), 0))


def _mutate(pos: Position, rnd: random.Random) -> Position:
    mine, opponents = list(pos[0]), [list(o) for o in pos[1]]
    owner = rnd.randrange(4)
    cards = mine if owner == 0 else opponents[owner - 1]
    i = rnd.randrange(len(cards))
    cards[i] = rnd.choice([c for c in deck("per-player", True, owner) if c not in cards])
    return mine, opponents


def hill_climb(score: Callable[[Position], int], seed: int, steps: int) -> tuple[int, Position]:
    rnd = random.Random(seed)
    best: Position = (
        rnd.sample(deck("per-player", True, 0), 6),
        [rnd.sample(deck("per-player", True, s), 3) for s in (1, 2, 3)],
    )
    best_score = score(best)
    for _ in range(steps):
        candidate = _mutate(best, rnd)
        value = score(candidate)
        if value >= best_score:
            best, best_score = candidate, value
    return best_score, best


def timed(fn: Callable[..., Any], *args: Any, repeat: int = 200) -> float:
    """Mean seconds per call of ``fn(*args)``."""
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - start) / repeat


def report_largest(steps: int) -> None:
    for name, score in (("JSON size", space_size), ("legal declarations", declarations)):
        value, pos = max(hill_climb(score, seed, steps) for seed in range(4))
        state = position_state(pos)
        size = space_size(pos)
        seconds = timed(lambda s: json.dumps(RULES.action_space(s, 0)), state)
        listed = len(json.dumps(RULES.legal_actions(state, 0)))
        print(
            f"largest by {name}: {value:,}; action_space {size:,} bytes in {seconds * 1e6:.0f} µs "
            f"(json.dumps included); {declarations(pos):,} legal declarations; legal_actions {listed:,} bytes"
        )
        print(f"  attacker {pos[0]}; front lines {pos[1]}")


def main(argv: Sequence[str] | None = None) -> None:
    """Print greedy's win rate, the random-game speed and the largest action spaces."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games for the win rate (default 1000)")
    parser.add_argument("--speed-games", type=int, default=300, help="random-vs-random games timed")
    parser.add_argument("--climb-steps", type=int, default=3000, help="hill-climbing steps per search")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rates = win_rate(args.games)
    elapsed = time.perf_counter() - start
    print(f"greedy vs random, {args.games} two-player games ({elapsed:.1f} s; half with jokers):")
    print(f"  greedy wins:   {rates['wins']:.1%}")
    print(f"  greedy loses:  {rates['losses']:.1%}")
    print(f"  shared first:  {rates['shared']:.1%}")
    for players in (2, 4):
        for options in ({}, {"jokers": True, "deck": "per-player"}):
            speed = random_games_per_second(players, args.speed_games, options)
            print(f"random games per second, {players} players, {options or 'default options'}: {speed:.1f}")
    report_largest(args.climb_steps)


if __name__ == "__main__":
    main()
