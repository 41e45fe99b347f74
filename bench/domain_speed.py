"""Random games per second in the pure domain (one process, one core)."""

from __future__ import annotations

import time

from bench.common import play
from domain.registry import all_games

SECONDS_PER_GAME_KIND = 3.0


def games_per_second(game: str, players: int, seconds: float = SECONDS_PER_GAME_KIND) -> tuple[float, int]:
    """Play random games for about ``seconds``; return (games/s, games played)."""
    start = time.perf_counter()
    played = 0
    while time.perf_counter() - start < seconds:
        play(game, ["random"] * players, played)
        played += 1
    return played / (time.perf_counter() - start), played


def main() -> None:
    print("domain: random games per second, pure Python, one core")
    for game in all_games():
        rate, played = games_per_second(game.id, game.max_players)
        print(f"  {game.id:<12} {game.max_players} players  {rate:8.0f} games/s  ({played} games)")


if __name__ == "__main__":
    main()
