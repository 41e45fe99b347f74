"""Nin Nal bot benchmark: greedy's win rate against random bots, and raw game speed.

    python -m bench.nin_nal_bots --games 1000

Games are driven through ``domain.engine`` (create / decide / replay) and
``domain.bots.choose_action``, exactly as the service's bot workers drive them.
Greedy takes each seat of a 3-player table in turn; a win is rank 1 (a first
place shared after the tie-break cap counts as a win and, fractionally, as
1/k of one).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from bench.common import greedy_win_rate, random_games_per_second

GAME = "nin-nal"


def win_rate(games: int, players: int = 3) -> dict[str, float]:
    """Greedy vs ``players - 1`` random bots, greedy's seat rotating."""
    return greedy_win_rate(GAME, games, players)


def main(argv: Sequence[str] | None = None) -> None:
    """Print greedy's win rate and the random-game speed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games for the win rate (default 1000)")
    parser.add_argument("--speed-games", type=int, default=200, help="5-player random games timed")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rates = win_rate(args.games)
    elapsed = time.perf_counter() - start
    print(f"greedy vs 2 random, 3 players, {args.games} games ({elapsed:.1f} s):")
    print(f"  win rate (rank 1, shared firsts count as wins): {rates['wins']:.1%}")
    print(f"  win rate (shared firsts count 1/k):             {rates['fractional']:.1%}")
    print(f"  games won with a shared first place:            {rates['shared']:.1%}")
    print("  (a random bot's share would be 33.3%)")
    speed = random_games_per_second(GAME, 5, args.speed_games)
    print(f"random 5-player games per second (engine, pure domain): {speed:.1f}")


if __name__ == "__main__":
    main()
