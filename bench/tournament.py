"""A bot-only tournament through a running server, then its archive verified on one core.

    python -m bench.tournament --url http://127.0.0.1:8000 --entrants 64 --rounds 6
    python -m bench.tournament --archive archive.json

The first form creates a swiss of greedy and random San Ban bots, starts it,
follows the tournament's live log until the server's workers have played it out,
saves the archive (``--save``) and times ``verify_archive`` on it; the second
only verifies a saved archive. It drives the server through ``kifu.client``.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import requests

from domain.tournament.archive import verify_archive
from kifu.client import Client, bot


def run(url: str, entrants: int, rounds: int, game: str) -> tuple[dict[str, Any], float]:
    """Create, start and follow a bot swiss to its end; its archive and the seconds from start to finish."""
    kifu = Client(url, timeout=300)  # the archive of a large tournament takes a while to build
    people = [bot(f"bot{i}", "greedy" if i % 2 else "random") for i in range(entrants)]
    made = kifu.create_tournament(game, people, "swiss", rounds=rounds)
    tid, organiser = made["id"], made["organiser_token"]
    assert organiser is not None  # a first creation shows it
    began = time.perf_counter()
    kifu.start_tournament(tid, organiser)
    for _event in kifu.tournament_stream(tid):  # its log, live, until tournament_finished
        pass
    took = time.perf_counter() - began
    view = kifu.tournament(tid)
    print(f"tournament {tid}: {entrants} entrants x {view['round']} rounds of {game} in {took:.1f} s")
    archive = dict(kifu.tournament_record(tid))
    return archive, took


def verify(archive: dict[str, Any], keys: dict[str, Any] | None = None) -> None:
    """Time ``verify_archive``: without keys, and with them (every signature and inclusion proof checked)."""
    for given in (None, keys) if keys is not None else (None,):
        began_wall, began_cpu = time.perf_counter(), time.process_time()
        report = verify_archive(archive, keys=given)
        wall, cpu = time.perf_counter() - began_wall, time.process_time() - began_cpu
        games = len(archive["games"])
        events = sum(len(g["events"]) for g in archive["games"])
        how = "with keys (signatures, proofs)" if given is not None else "without keys"
        print(
            f"verify_archive {how}: {games} games ({events} game events): {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"({1000 * cpu / max(games, 1):.2f} ms per game); verified={report['verified']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server (make run)")
    parser.add_argument("--entrants", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--game", default="san-ban")
    parser.add_argument("--save", help="write the archive to this file")
    parser.add_argument("--archive", help="verify this saved archive instead of running a tournament")
    parser.add_argument("--keys", help="a JWK set file (with --archive; else the server's GET /v1/keys)")
    args = parser.parse_args()
    if args.archive:
        with open(args.archive) as f:
            archive = json.load(f)
        keys = None
        if args.keys:
            with open(args.keys) as f:
                keys = json.load(f)
        verify(archive, keys)
        return
    if not args.url:
        parser.error("give --url of a running server, or --archive")
    archive, _took = run(args.url, args.entrants, args.rounds, args.game)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(archive, f)
    verify(archive, dict(requests.get(f"{args.url.rstrip('/')}/v1/keys", timeout=30).json()))


if __name__ == "__main__":
    main()
