"""Kiri-ai bot benchmark: greedy's win rate against the random bot, and raw game speed.

    python -m bench.kiri_ai_bots --games 1000

Games are driven through ``domain.engine`` (create / decide / replay) and
``domain.bots.choose_action``, exactly as the service's bot workers drive them.
Greedy alternates between red and blue; every fourth pair of games uses the
advanced battlefield. A draw (``max_rounds`` reached) is not a win.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from bench.common import play, random_games_per_second

GAME = "kiri-ai"


def win_rate(games: int) -> dict[str, float]:
    """Greedy vs random, greedy's seat alternating; shares of wins, losses and draws."""
    wins = losses = draws = 0
    for g in range(games):
        seat = g % 2
        levels = ["random", "random"]
        levels[seat] = "greedy"
        options = {"battlefield": "advanced"} if g % 8 >= 6 else None
        result = play(GAME, levels, seed=g, options=options).result
        assert result is not None
        if len(result["winners"]) == 2:
            draws += 1
        elif seat in result["winners"]:
            wins += 1
        else:
            losses += 1
    return {"wins": wins / games, "losses": losses / games, "draws": draws / games}


def main(argv: Sequence[str] | None = None) -> None:
    """Print greedy's win rate and the random-game speed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games for the win rate (default 1000)")
    parser.add_argument("--speed-games", type=int, default=300, help="random-vs-random games timed")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rates = win_rate(args.games)
    elapsed = time.perf_counter() - start
    print(f"greedy vs random, {args.games} games ({elapsed:.1f} s; 1 in 4 on the advanced battlefield):")
    print(f"  greedy wins:   {rates['wins']:.1%}")
    print(f"  greedy loses:  {rates['losses']:.1%}")
    print(f"  draws:         {rates['draws']:.1%}")
    speed = random_games_per_second(GAME, 2, args.speed_games)
    print(f"random-vs-random games per second (engine, pure domain): {speed:.1f}")


if __name__ == "__main__":
    main()
