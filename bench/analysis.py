"""How long the analysis of a finished game takes (``domain.analysis``), per game, on one core.

    python -m bench.analysis --games 3

Plays ``--games`` games of greedy bots per game (the ladder's way: ``bench.ladder``), seals each
into a record and times ``analyse`` on it at the default level: decisions judged, seconds, and the
labels given. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence

from domain import engine
from domain.analysis import analyse
from domain.bots import choose_action, turn_stream
from domain.engine import Seat
from domain.record import GENESIS, build_record, envelopes

GAMES = (("san-ban", 2), ("kiri-ai", 2), ("nin-nal", 2), ("nin-nal", 4), ("san-ni-ichi", 4), ("front-line", 2))


def record_of(game: str, players: int, seed: int) -> dict[str, object]:
    """A sealed record of greedy bots."""
    secret = seed.to_bytes(8, "big")
    seats = [Seat(i, f"bot{i}", "greedy") for i in range(players)]
    events, table = engine.start(game, f"bench-analysis-{seed}", seats, secret)
    counter = iter(range(10**9))
    salts = lambda: f"{next(counter):032x}"  # noqa: E731  (a bench's salts need not be secret)
    while not table.finished:
        seat = table.to_act[0]
        rnd = turn_stream("greedy", secret, table.game_id, seat, table.turn_version)
        more, table = engine.step(table, seat, choose_action(table, seat, "greedy", rnd), salts=salts)
        events += more
    at = "2026-01-01T00:00:00.000Z"
    envs = envelopes(events, 1, GENESIS, at, salts)
    envs += envelopes([engine.seal(secret, envs[-1]["hash"])], len(envs) + 1, envs[-1]["hash"], at, salts)
    return build_record(envs)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games per game kind")
    args = parser.parse_args(argv)
    print("| game | players | events | decisions judged | seconds | per decision | labels |")
    print("|---|---|---|---|---|---|---|")
    for game, players in GAMES:
        for g in range(args.games):
            record = record_of(game, players, 100 + g)
            began = time.process_time()
            verdicts = analyse(record)
            spent = time.process_time() - began
            labels = Counter(v["label"] for v in verdicts)
            shown = ", ".join(f"{k} {n}" for k, n in sorted(labels.items()))
            events = len(record["events"])  # type: ignore[arg-type]
            per = 1000 * spent / max(1, len(verdicts))
            print(
                f"| {game} | {players} | {events} | {len(verdicts)} | {spent:.1f} | {per:.0f} ms | {shown} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
