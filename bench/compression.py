"""What gzip costs and saves per answer (``entrypoints/api/compression.py``), to choose its level and threshold.

Plays games through the real service on a Redis (``--redis-url``, or an embedded
``redis-server`` in a temporary directory) and asks the real app (Flask's test client:
the whole WSGI stack, no network) for:

* the largest record: Kiri-ai played to ``--rounds`` (default 1,000, its maximum) by
  greedy bots, ``GET /v1/games/{id}/record``;
* an event page of it: ``GET .../events?limit=1000`` (the largest page);
* an actions answer: San Ban gamer mode, a 12-card deck, ``GET .../actions`` (the pick);
* a small answer: the same game's ``GET /v1/games/{id}`` (a view, ~1.5 KB).

For each it prints the bytes plain and gzipped at levels 1, 6 and 9 (the threshold lifted,
to show what compressing even the smaller ones would do), and the CPU time of this process
per request (``time.process_time``, best of ``--repeat`` runs of ``--requests``
requests) without ``Accept-Encoding`` and with gzip at each level; the difference is
what compressing costs.

    python -m bench.compression
"""

from __future__ import annotations

import argparse
import gzip
import time
from collections.abc import Mapping

from flask import Flask
from flask.testing import FlaskClient

from bench.record_sizes import play, redis_client
from bootstrap import build
from entrypoints.api import create_app
from entrypoints.api.compression import GZIP_MIN_BYTES as DEFAULT_MIN_BYTES
from service.games import GameService
from service.ports import NoScheduler

LEVELS = (1, 6, 9)
SAN_BAN_DECK = [f"sb-{i:03d}" for i in range(1, 13)]


def cpu_us_per_request(client: FlaskClient, path: str, headers: Mapping[str, str], requests: int, repeat: int) -> float:
    """This process's CPU microseconds per ``GET path``, the best of ``repeat`` runs of ``requests``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(requests):
            answer = client.get(path, headers=dict(headers))
            assert answer.status_code == 200, answer.data[:200]
        best = min(best, (time.process_time() - start) / requests)
    return best * 1e6


def longest_kiri_ai(games: GameService, rounds: int, tries: int = 20) -> str:
    """A Kiri-ai game of greedy bots played to ``rounds`` (its deal is random: some end early); its id."""
    best, most = "", 0
    for seed in range(tries):
        game_id = play(games, "kiri-ai", ("greedy", "greedy"), {"max_rounds": rounds}, seed)
        version = games.reader.load(game_id)[0].version
        if version > most:
            best, most = game_id, version
        if most > 10 * rounds:  # every round played (about 11 events a round)
            break
    return best


def gzip_us(body: bytes, level: int, repeat: int) -> float:
    """Microseconds ``gzip.compress`` alone takes for ``body`` at ``level`` (best of enough runs)."""
    runs = max(repeat, 2_000_000 // max(len(body), 1))
    best = float("inf")
    for _ in range(min(runs, 500)):
        start = time.process_time()
        gzip.compress(body, compresslevel=level, mtime=0)
        best = min(best, time.process_time() - start)
    return best * 1e6


def measure(app: Flask, label: str, path: str, headers: Mapping[str, str], requests: int, repeat: int) -> None:
    """Print one answer's sizes and CPU per request, plain and at each gzip level."""
    client = app.test_client()
    plain = client.get(path, headers=dict(headers)).data
    sizes = {level: len(gzip.compress(plain, compresslevel=level, mtime=0)) for level in LEVELS}
    base = cpu_us_per_request(client, path, headers, requests, repeat)
    threshold = DEFAULT_MIN_BYTES
    compressed = "compressed" if len(plain) >= threshold else f"under {threshold:,}: not compressed by the service"
    print(f"{label}: {len(plain):,} bytes ({compressed})")
    print(f"  no gzip: {base:,.0f} us CPU per request")
    for level in LEVELS:
        app.config["GZIP_LEVEL"] = level
        zipped = cpu_us_per_request(client, path, {**headers, "Accept-Encoding": "gzip"}, requests, repeat)
        print(
            f"  gzip level {level}: {sizes[level]:,} bytes ({sizes[level] / len(plain):.1%}), "
            f"{zipped:,.0f} us CPU per request (+{zipped - base:,.0f} us; gzip alone "
            f"{gzip_us(plain, level, repeat):,.0f} us)"
        )
    app.config["GZIP_LEVEL"] = 1


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=1000, help="Kiri-ai's max_rounds for the large record")
    p.add_argument("--requests", type=int, default=5, help="requests per timed run (small answers: 100 times more)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per figure (the best is kept)")
    p.add_argument("--redis-url", default=None, help="a Redis to use (default: an embedded one)")
    args = p.parse_args(argv)
    with redis_client(args.redis_url) as client:
        games = build(client, scheduler=NoScheduler()).games
        app = create_app({"REDIS_CLIENT": client, "SCHEDULER": NoScheduler(), "TESTING": True})
        kiri = longest_kiri_ai(games, args.rounds)
        game = {"game": "san-ban", "players": [{"name": "ann"}, {"name": "bob"}], "options": {"mode": "gamer"}}
        created = app.test_client().post("/v1/games", json={**game, "deal": {"decks": [SAN_BAN_DECK] * 2}}).json
        assert created is not None, "the San Ban game was not created"
        ann = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
        san_ban = f"/v1/games/{created['id']}"
        n, small = args.requests, args.requests * 100
        threshold = app.config["GZIP_MIN_BYTES"]
        print(f"the service compresses answers of {threshold:,} bytes and more at level {app.config['GZIP_LEVEL']}")
        app.config["GZIP_MIN_BYTES"] = 0  # lifted here, to show what compressing the smaller answers would do
        measure(app, f"Kiri-ai record, {args.rounds} rounds", f"/v1/games/{kiri}/record", {}, n, args.repeat)
        measure(app, "Kiri-ai event page, 1,000 events", f"/v1/games/{kiri}/events?limit=1000", {}, n, args.repeat)
        measure(app, "San Ban gamer pick, 12 cards", f"{san_ban}/actions", ann, small, args.repeat)
        measure(app, "San Ban view", san_ban, ann, small, args.repeat)


if __name__ == "__main__":
    main()
