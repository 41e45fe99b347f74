"""What loading a whole replay costs: ``GET .../steps`` (every step in pages) against ``replay?step=K`` per step.

Plays a Kiri-ai game of greedy bots through the real service on a Redis (``--redis-url``, or an
embedded ``redis-server`` in a temporary directory) until one has at least ``--events`` events
(``--rounds`` rounds at most; about 11 events a round), then asks the real app (Flask's test
client: the whole WSGI stack, no network) for:

* every step, in pages of ``--page`` (at most 1000), as the spectator of the sealed game (every
  part shown) and as seat 0: the wall time of all the pages (best of ``--repeat``), the bytes
  plain and as the app gzips them (``Accept-Encoding: gzip``), and the time to parse the plain
  pages (``json.loads``, what a client does before stepping);
* the old way, ``replay?step=K`` for a sample of ``--sample`` steps spread over the game
  (each replay folds the log from its start, so a step costs in proportion to K and the
  sample's mean times the number of steps is the whole walk's cost), and the measured
  total when the sample is every step.

    python -m bench.steps
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from flask.testing import FlaskClient

from bench.record_sizes import play, redis_client
from bootstrap import build
from entrypoints.api import create_app
from service.games import GameService
from service.ports import NoScheduler


def long_kiri_ai(games: GameService, events: int, rounds: int, tries: int = 20) -> tuple[str, int]:
    """A Kiri-ai game of greedy bots with at least ``events`` events (or the longest of ``tries``)."""
    best, most = "", 0
    for seed in range(tries):
        game_id = play(games, "kiri-ai", ("greedy", "greedy"), {"max_rounds": rounds}, seed)
        version = games.reader.load(game_id)[0].version
        if version > most:
            best, most = game_id, version
        if most >= events:
            break
    return best, most


def all_steps(client: FlaskClient, game_id: str, page: int, query: Mapping[str, int], zipped: bool) -> list[bytes]:
    """Every page of ``steps`` from step 1, as the app sent them (gzipped when ``zipped``)."""
    headers = {"Accept-Encoding": "gzip"} if zipped else {}
    bodies, first = [], 1
    while True:
        answer = client.get(
            f"/v1/games/{game_id}/steps", query_string={**query, "from": first, "limit": page}, headers=headers
        )
        assert answer.status_code == 200, answer.data[:200]
        assert (answer.headers.get("Content-Encoding") == "gzip") == zipped
        bodies.append(answer.data)
        following = json.loads(gzip.decompress(answer.data) if zipped else answer.data)["next"]
        if following is None:
            return bodies
        first = following


@dataclass(frozen=True)
class Took:
    """Seconds of a run: wall clock (with Redis and a busy machine's waits) and this process's CPU."""

    wall: float
    cpu: float

    def __str__(self) -> str:
        return f"{self.wall * 1000:,.0f} ms ({self.cpu * 1000:,.0f} ms CPU)"


def best_of(repeat: int, run: Callable[[], object]) -> Took:
    """The best wall and CPU times of ``repeat`` calls of ``run`` (each the best of its own)."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall, cpu = min(wall, time.perf_counter() - start), min(cpu, time.process_time() - start_cpu)
    return Took(wall, cpu)


def parsed(bodies: Sequence[bytes]) -> list[object]:
    """The pages as a client reads them before stepping through them."""
    return [json.loads(body) for body in bodies]


def replays(http: FlaskClient, game_id: str, sample: Sequence[int]) -> None:
    """The old way: ``replay?step=K`` for each K of ``sample``, as the spectator."""
    for step in sample:
        answer = http.get(f"/v1/games/{game_id}/replay", query_string={"step": step})
        assert answer.status_code == 200, answer.data[:200]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=1000, help="the game's least number of events")
    p.add_argument("--rounds", type=int, default=120, help="Kiri-ai's max_rounds")
    p.add_argument("--page", type=int, default=1000, help="steps per page (the API's maximum: 1000)")
    p.add_argument("--sample", type=int, default=50, help="steps the old way times (0: every step)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per figure (the best is kept)")
    p.add_argument("--redis-url", default=None, help="a Redis to use (default: an embedded one)")
    args = p.parse_args(argv)
    with redis_client(args.redis_url) as client:
        games = build(client, scheduler=NoScheduler()).games
        app = create_app({"REDIS_CLIENT": client, "SCHEDULER": NoScheduler(), "TESTING": True})
        game_id, last = long_kiri_ai(games, args.events, args.rounds)
        http = app.test_client()
        print(f"Kiri-ai, greedy vs greedy, max_rounds {args.rounds}: {last:,} events (sealed); pages of {args.page}")
        for label, query in (("spectator (everything)", {}), ("as seat 0", {"as": 0})):
            plain = all_steps(http, game_id, args.page, query, zipped=False)
            zipped = all_steps(http, game_id, args.page, query, zipped=True)
            took = best_of(args.repeat, partial(all_steps, http, game_id, args.page, query, zipped=False))
            took_gz = best_of(args.repeat, partial(all_steps, http, game_id, args.page, query, zipped=True))
            parse = best_of(args.repeat, partial(parsed, plain))
            size, size_gz = sum(map(len, plain)), sum(map(len, zipped))
            print(f"  steps, {label}: {len(plain)} request(s): {took} plain, {took_gz} gzip")
            print(f"    {size:,} bytes plain, {size_gz:,} gzipped ({size_gz / size:.1%}); json.loads {parse}")
            print(f"    per step: {size / last:,.0f} bytes plain, {size_gz / last:,.0f} gzipped")
        every = args.sample <= 0 or args.sample >= last
        sample = range(1, last + 1) if every else [1 + (last - 1) * i // (args.sample - 1) for i in range(args.sample)]
        old = best_of(1, lambda: replays(http, game_id, sample))
        scale = 1 if every else last / len(sample)
        how = "every step" if every else f"{len(sample)} steps spread over the game, times {scale:.1f}"
        whole = Took(old.wall * scale, old.cpu * scale)
        print(f"  old way, replay?step=K for each K ({how}): {whole} for {last:,} steps")


if __name__ == "__main__":
    main()
