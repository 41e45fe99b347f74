"""Sizes of real game records, to size the API's request body limit (``KIFU_MAX_BODY_BYTES``).

``POST /v1/audits`` takes a whole record, the largest body any client sends.
This plays games through the real service on a Redis (``--redis-url``, or an
embedded ``redis-server`` in a temporary directory) with bots at every seat,
in the settings that make the longest logs (Kiri-ai up to its ``max_rounds``
limit, Nin Nal with five players and many tie-break throws, Front Line with
four players and a deck each, San, Ni, Ichi! with six), and prints the size of
each record as ``GET /v1/games/{id}/record`` serves it (compact JSON, as a
client would upload it) and as ``json.dumps`` indents it (a client that pretty-
prints it before uploading).

    python -m bench.record_sizes --games 5
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from adapters.embedded_redis import EmbeddedRedis
from bootstrap import build
from domain.bots import choose_action
from service.games import GameService
from service.ports import NoScheduler

MAX_ACTIONS = 100_000

# (label, game, seats' bot levels, options)
SETUPS: tuple[tuple[str, str, tuple[str, ...], Mapping[str, Any]], ...] = (
    ("kiri-ai, 50 rounds (default), greedy vs random", "kiri-ai", ("greedy", "random"), {}),
    ("kiri-ai, 50 rounds, random vs random", "kiri-ai", ("random", "random"), {}),
    (
        "kiri-ai advanced, 1000 rounds (max), random vs random",
        "kiri-ai",
        ("random", "random"),
        {"max_rounds": 1000, "battlefield": "advanced"},
    ),
    ("kiri-ai, 1000 rounds (max), greedy vs greedy", "kiri-ai", ("greedy", "greedy"), {"max_rounds": 1000}),
    ("nin-nal, 5 players, random", "nin-nal", ("random",) * 5, {}),
    ("nin-nal, 5 players, 1000 tie-break throws (max)", "nin-nal", ("random",) * 5, {"tie_break_throws": 1000}),
    (
        "front-line, 4 players, per-player decks, jokers, random",
        "front-line",
        ("random",) * 4,
        {"deck": "per-player", "jokers": True},
    ),
    ("front-line, 4 players, per-player decks, greedy", "front-line", ("greedy",) * 4, {"deck": "per-player"}),
    ("san-ni-ichi, 6 players, teams, random", "san-ni-ichi", ("random",) * 6, {"teams": True}),
    ("san-ban hardcore, random", "san-ban", ("random", "random"), {"mode": "hardcore"}),
)


def play(games: GameService, game: str, levels: tuple[str, ...], options: Mapping[str, Any], seed: int) -> str:
    """One game through the service, every seat played by its bot level; the game's id."""
    players = [{"name": f"p{i}"} for i in range(len(levels))]
    created = games.create_game(game, players, dict(options), None).body
    game_id: str = created["id"]
    rnd = random.Random(seed)
    for _ in range(MAX_ACTIONS):
        table, _head = games.reader.load(game_id)
        if table.finished:
            return game_id
        seat = table.to_act[0]
        games.act(game_id, seat, choose_action(table, seat, levels[seat], rnd))
    raise RuntimeError(f"{game} did not end in {MAX_ACTIONS} actions")


@contextmanager
def redis_client(url: str | None) -> Iterator[redis.Redis]:
    if url:
        yield redis.Redis.from_url(url)
        return
    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedRedis(Path(tmp), fsync="no").start()
        try:
            yield redis.Redis(port=server.port)
        finally:
            server.stop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=3, help="games per setting")
    p.add_argument("--redis-url", default=None, help="a Redis to use (default: an embedded one)")
    args = p.parse_args(argv)
    largest = 0
    with redis_client(args.redis_url) as client:
        games = build(client, scheduler=NoScheduler()).games
        for label, game, levels, options in SETUPS:
            sizes, pretty, events = [], [], []
            for seed in range(args.games):
                record = games.record(play(games, game, levels, options, seed))
                sizes.append(len(json.dumps(record, separators=(",", ":")).encode()))
                pretty.append(len(json.dumps(record, indent=2).encode()))
                events.append(len(record["events"]))
            largest = max(largest, *pretty)
            print(
                f"{label}: events {min(events)}-{max(events)}, compact {min(sizes):,}-{max(sizes):,} bytes, "
                f"indented {min(pretty):,}-{max(pretty):,} bytes",
                flush=True,
            )
    print(f"largest record: {largest:,} bytes")


if __name__ == "__main__":
    main()
