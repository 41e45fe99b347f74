"""How long the analysis of a finished game takes (``domain.analysis``), per game, on one core.

    python -m bench.analysis --games 3

Plays ``--games`` games of greedy bots per game (the ladder's way: ``bench.ladder``), seals each
into a record and times ``analyse`` on it at the default level: decisions judged, seconds, the
expected score the seats gave away by the engine's values (their decisions' losses, summed, per
seat) and the labels given. ``--game G --players N --options JSON`` measures one kind only and
prints the mean loss over its games. Prints figures; asserts nothing.

    python -m bench.analysis --game san-ban --options '{"mode": "advanced"}' --games 100
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.analysis import analyse
from domain.bots import choose_action, turn_stream
from domain.engine import Seat
from domain.record import GENESIS, build_record, envelopes

ADVANCED = {"mode": "advanced"}  # San Ban's mode judged by the expectimax (domain.search.san_ban_expectimax)
GAMES: tuple[tuple[str, int, Mapping[str, Any] | None], ...] = (
    ("san-ban", 2, None),
    ("san-ban", 2, ADVANCED),
    ("kiri-ai", 2, None),
    ("nin-nal", 2, None),
    ("nin-nal", 4, None),
    ("san-ni-ichi", 4, None),
    ("front-line", 2, None),
)


def record_of(game: str, players: int, seed: int, options: Mapping[str, Any] | None = None) -> dict[str, object]:
    """A sealed record of greedy bots."""
    secret = seed.to_bytes(8, "big")
    seats = [Seat(i, f"bot{i}", "greedy") for i in range(players)]
    events, table = engine.start(game, f"bench-analysis-{seed}", seats, secret, options=options)
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
    parser.add_argument("--game", help="only this game (with --players and --options)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--options", type=json.loads, default=None, help="the game's options, as JSON")
    args = parser.parse_args(argv)
    kinds = GAMES if args.game is None else ((args.game, args.players, args.options),)
    print("| game | players | options | events | decisions judged | seconds | per decision | loss a seat | labels |")
    print("|---|---|---|---|---|---|---|---|---|")
    losses: list[float] = []
    for game, players, options in kinds:
        shown_options = json.dumps(options) if options else ""
        for g in range(args.games):
            record = record_of(game, players, 100 + g, options)
            began = time.process_time()
            verdicts = analyse(record)
            spent = time.process_time() - began
            labels = Counter(v["label"] for v in verdicts)
            loss = sum(v["loss"] for v in verdicts) / players  # expected score given away, a seat's share
            losses.append(loss)
            shown = ", ".join(f"{k} {n}" for k, n in sorted(labels.items()))
            events = len(record["events"])  # type: ignore[arg-type]
            per = 1000 * spent / max(1, len(verdicts))
            print(
                f"| {game} | {players} | {shown_options} | {events} | {len(verdicts)} | {spent:.1f} | {per:.0f} ms "
                f"| {loss:.3f} | {shown} |",
                flush=True,
            )
    if args.game is not None:
        print(f"mean loss a seat and game over {len(losses)} games: {sum(losses) / len(losses):.3f}")


if __name__ == "__main__":
    main()
