"""Uploaded audits against everybody else: the latency of ``GET /v1/catalog`` while clients loop
``POST /v1/audits`` with the largest real record.

The record is a Kiri-ai game played by two greedy bots to its 1,000-round limit
(11,006 events, 5.4 MB of compact JSON: the largest record ``bench.record_sizes``
found), built here with the engine in a few seconds. Verifying it takes about
a second of CPU. Before the audits ran in a pool of processes of their own
(``entrypoints/audit_pool.py``), that second was spent inside the gevent worker
that served the upload, and nothing else that worker held was served meanwhile.

For each number of uploaders (``--uploaders 0,2,6``) the uploaders (one process
each, all from this machine's address) send the record again as soon as the
last one is answered, whatever the answer (200, or 503 when the pool is full);
after ``--warmup`` seconds another client sends ``GET /v1/catalog``, each on a
new connection, ``--rate`` a second (the next one at once when an answer took
longer), for ``--seconds``. It prints the catalog's median, p99 and longest
latency, and what the uploads were answered.

Without ``--url`` it starts a Redis (embedded, in a temporary directory) and
``kifu serve``'s own command line (gunicorn, ``--workers`` gevent workers),
with the audit rate limit lifted to ``--audit-limit`` (``KIFU_RATE_LIMIT_AUDITS``,
20 a minute by default, which alone would hold six looping uploaders from one
address to a third of an audit a second): the figures are those of the pool.
With ``--url`` it measures that server as it runs; with ``--tree DIR`` it serves
the code of another checkout (``git archive <commit> | tar -x -C DIR``) with
this one's interpreter: the figures before and after a change.

    python -m bench.audit_stall --uploaders 0,2,6 --seconds 10

It prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import itertools
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from multiprocessing.synchronize import Event as EventType
from pathlib import Path

from domain.bots import choose_action
from domain.canonical import sha256_hex
from domain.engine import Seat, seal, start, step
from domain.record import GENESIS, build_record, envelopes

AT = "2026-01-01T00:00:00.000Z"
LONG_SEED = b"s2"  # with these bots and this seed nobody is defeated: the game plays all its rounds
ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=4)
def long_record(rounds: int = 1000) -> bytes:
    """The sealed record (compact JSON) of a Kiri-ai game of greedy bots played to ``rounds`` rounds:
    at 1,000 (the game's limit) 11,006 events, 5.4 MB, about a second to verify."""
    seats = [Seat(0, "red", "greedy"), Seat(1, "blue", "greedy")]
    events, table = start("kiri-ai", "long-game", seats, LONG_SEED, {"max_rounds": rounds})
    events = list(events)
    counter = itertools.count()

    def salts() -> str:
        return sha256_hex(f"long-game:{next(counter)}".encode())[:32]

    rnd = random.Random(2)
    while not table.finished:
        seat = table.to_act[0]
        new, table = step(table, seat, choose_action(table, seat, "greedy", rnd), salts=salts)
        events += new
    envs = envelopes(events, 1, GENESIS, AT, salts)
    envs += envelopes([seal(LONG_SEED, envs[-1]["hash"])], len(envs) + 1, envs[-1]["hash"], AT, salts)
    return json.dumps(build_record(envs), separators=(",", ":")).encode()


def _connection(url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)


def upload_loop(url: str, body: bytes, stop: EventType, counts: dict[str, int]) -> None:
    """One uploader: POST the record again and again (a kept-alive connection) until ``stop``."""
    seen: Counter[str] = Counter()
    conn = _connection(url, timeout=120)
    headers = {"Content-Type": "application/json"}
    while not stop.is_set():
        try:
            conn.request("POST", "/v1/audits", body=body, headers=headers)
            answer = conn.getresponse()
            answer.read()
            seen[str(answer.status)] += 1
            if answer.getheader("Connection", "").lower() == "close":
                conn.close()
        except (OSError, http.client.HTTPException) as exc:
            seen[type(exc).__name__] += 1
            conn.close()
    conn.close()
    for key, n in seen.items():
        counts[key] = counts.get(key, 0) + n


def probe(url: str, seconds: float, rate: float) -> list[float]:
    """``GET /v1/catalog`` on a new connection ``rate`` times a second for ``seconds``; the latencies (s)."""
    latencies: list[float] = []
    interval = 1.0 / rate
    end = time.monotonic() + seconds
    due = time.monotonic()
    while due < end:
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        began = time.monotonic()
        conn = _connection(url, timeout=60)
        try:
            conn.request("GET", "/v1/catalog")
            answer = conn.getresponse()
            answer.read()
            if answer.status == 200:
                latencies.append(time.monotonic() - began)
        finally:
            conn.close()
        due = max(due + interval, time.monotonic())
    return latencies


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def run_level(url: str, body: bytes, uploaders: int, warmup: float, seconds: float, rate: float) -> str:
    manager = multiprocessing.Manager()
    counts = manager.dict()
    stop = multiprocessing.Event()
    procs = [
        multiprocessing.Process(target=upload_loop, args=(url, body, stop, counts), daemon=True)
        for _ in range(uploaders)
    ]
    for proc in procs:
        proc.start()
    time.sleep(warmup)
    began = time.monotonic()
    latencies = probe(url, seconds, rate)
    took = time.monotonic() - began
    stop.set()
    for proc in procs:
        proc.join(timeout=120)
    answered = dict(sorted(counts.items()))
    manager.shutdown()
    ms = [v * 1000 for v in latencies]
    audits = ", ".join(f"{status}: {n}" for status, n in answered.items()) or "none"
    return (
        f"{uploaders} uploaders: catalog answered {len(ms)} in {took:.1f} s; median {statistics.median(ms):.1f} ms, "
        f"p99 {p99(ms):.1f} ms, max {max(ms):.1f} ms; uploads answered (warm-up included) {audits}"
    )


@contextmanager
def local_server(workers: int, audit_limit: str, tree: Path = ROOT) -> Iterator[str]:
    """An embedded Redis and ``kifu serve``'s command line on free ports, serving the code in ``tree``
    (this repository's by default); the API's base URL."""
    from adapters.embedded_redis import EmbeddedRedis, free_port
    from entrypoints.gunicorn_command import gunicorn_argv

    with tempfile.TemporaryDirectory() as tmp:
        redis_server = EmbeddedRedis(Path(tmp) / "redis", fsync="everysec").start()
        port = free_port()
        env = {**os.environ, "REDIS_URL": redis_server.url, "KIFU_RATE_LIMIT_AUDITS": audit_limit}
        log = (Path(tmp) / "serve.log").open("w")
        server = subprocess.Popen(
            gunicorn_argv("entrypoints.api:create_app()", "127.0.0.1", port, workers),
            cwd=tree,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url, server)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
            redis_server.stop()


def _wait_ready(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        try:
            conn = _connection(url, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=None, help="a running server (default: start Redis and kifu serve here)")
    p.add_argument("--workers", type=int, default=2, help="gunicorn workers of the server started here")
    p.add_argument("--uploaders", default="0,2,6", help="comma-separated numbers of looping uploaders")
    p.add_argument("--seconds", type=float, default=10.0, help="catalog probing per level")
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of uploads before probing")
    p.add_argument("--rate", type=float, default=20.0, help="catalog requests a second")
    p.add_argument("--audit-limit", default="1000000/minute", help="KIFU_RATE_LIMIT_AUDITS of the server started here")
    p.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="serve the code of this directory (another checkout, e.g. `git archive` of an older commit): before/after",
    )
    args = p.parse_args(argv)
    began = time.monotonic()
    body = long_record()
    print(f"record: {len(body):,} bytes, built in {time.monotonic() - began:.1f} s", flush=True)
    levels = [int(n) for n in args.uploaders.split(",")]
    server = nullcontext(args.url) if args.url else local_server(args.workers, args.audit_limit, args.tree)
    with server as url:
        print(f"server: {url}" + ("" if args.url else f" (kifu serve of {args.tree}, {args.workers} gevent workers)"))
        probe(url, seconds=1.0, rate=args.rate)  # every worker has served the catalog once: not measured
        for uploaders in levels:
            warmup = args.warmup if uploaders else 0.0
            print(run_level(url, body, uploaders, warmup, args.seconds, args.rate), flush=True)


if __name__ == "__main__":
    main()
