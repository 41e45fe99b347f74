"""Random games per core-second in the pure domain (one process, one thread).

Timed in CPU seconds of this process (``time.process_time``), not wall time: on a machine where
other processes also run, a wall clock counts the time this one waited for a core.
"""

from __future__ import annotations

import time

from bench.common import play
from domain.registry import all_games

SECONDS_PER_GAME_KIND = 3.0


def games_per_second(game: str, players: int, seconds: float = SECONDS_PER_GAME_KIND) -> tuple[float, int]:
    """Play random games for about ``seconds`` of CPU; return (games per CPU second, games played)."""
    start = time.process_time()
    played = 0
    while time.process_time() - start < seconds:
        play(game, ["random"] * players, played)
        played += 1
    return played / (time.process_time() - start), played


def main() -> None:
    print("domain: random games per core-second (CPU time of this process), pure Python")
    for game in all_games():
        rate, played = games_per_second(game.id, game.max_players)
        print(f"  {game.id:<12} {game.max_players} players  {rate:8.0f} games/s  ({played} games)")


if __name__ == "__main__":
    main()
