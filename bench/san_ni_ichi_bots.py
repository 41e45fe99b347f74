"""San, Ni, Ichi! bot benchmark: greedy's win rate against random bots, and raw game speed.

    python -m bench.san_ni_ichi_bots --games 1000

Games are driven through ``domain.engine`` (create / step) and
``domain.bots.choose_action``, exactly as the service's bot workers drive them.
Greedy takes each seat of a 4-player table in turn against three random bots; a
win is rank 1 (a shared first place counts as a win, and fractionally as 1/k).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bench.common import greedy_win_rate
from bench.domain_speed import games_per_second

GAME = "san-ni-ichi"


def win_rate(games: int, players: int = 4, options: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Greedy vs ``players - 1`` random bots, greedy's seat rotating."""
    return greedy_win_rate(GAME, games, players, options)


def main(argv: Sequence[str] | None = None) -> None:
    """Print greedy's win rate and the random-game speed for 3 and 6 players."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games for the win rate (default 1000)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    parser.add_argument(
        "--speed-seconds", type=float, default=3.0, help="seconds of random games timed per player count (default 3)"
    )
    parser.add_argument("--speed-only", action="store_true", help="skip the win rate")
    args = parser.parse_args(argv)
    if not args.speed_only:
        start = time.perf_counter()
        rates = win_rate(args.games, args.players)
        elapsed = time.perf_counter() - start
        others = args.players - 1
        print(f"greedy vs {others} random, {args.players} players, {args.games} games ({elapsed:.1f} s):")
        print(f"  win rate (rank 1, shared firsts count as wins): {rates['wins']:.1%}")
        print(f"  win rate (shared firsts count 1/k):             {rates['fractional']:.1%}")
        print(f"  games won with a shared first place:            {rates['shared']:.1%}")
        print(f"  (a random bot's share would be {1 / args.players:.1%})")
    print("random games per second (engine, pure domain, one core):")
    for players in (3, 6):
        rate, played = games_per_second(GAME, players, args.speed_seconds)
        print(f"  {players} players: {rate:8.1f} games/s  ({played} games)")


if __name__ == "__main__":
    main()
