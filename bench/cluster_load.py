"""Actions/s through the API with the game logs on one Redis and on a Redis Cluster, in one run.

``python -m bench.cluster_load [--seconds 15] [--clients 16] [--workers 1]``: a plain embedded Redis
and an embedded cluster (3 masters, 3 replicas, ``adapters.embedded_cluster``; every node with AOF at
``appendfsync always``, as the embedded Redis), then the same API command (``kifu serve`` with
``--workers`` gevent workers, two servers on two ports, and the projector) three times:

1. one Redis (``REDIS_URL`` alone);
2. the game logs on the cluster (``KIFU_EVENTS_URL``), ``KIFU_EVENTS_WAIT_REPLICAS=0``;
3. the same with ``WAIT 1`` (the default on a cluster: an acknowledged action is on a replica).

Each is ``bench.loadgen`` in ``game`` mode (San Ban games back to back, one connection a game) for
``--seconds`` after a warm-up; the table gives actions/s and the p50 and p99 of an action. All of it
shares this machine's cores (six cluster nodes included): on 2 cores the API workers are the
bottleneck, so the cluster's figures say what it costs, not what it can carry.

Then WAIT's own cost: ``--ops`` sequential appends of a San Ban action (``EventStore.append``, as in
``bench.compare``) on the cluster without and with ``WAIT 1``, one of each in turn, each timed; the
medians and their difference.
"""

from __future__ import annotations

import argparse
import functools
import os
import secrets
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import redis

from adapters.embedded_cluster import EmbeddedCluster
from adapters.embedded_redis import EmbeddedRedis, free_port
from adapters.redis_store import EventStore
from bench.compare import CREATE_LIMIT, Options, Processes, Timings, action_envelopes, answers, interleaved, measure
from bench.loadgen import Result
from domain.record import GENESIS
from service.ports import Append, Head

SETUPS: tuple[tuple[str, dict[str, str]], ...] = (
    ("one Redis", {}),
    ("cluster, WAIT 0", {"KIFU_EVENTS_WAIT_REPLICAS": "0"}),
    ("cluster, WAIT 1", {"KIFU_EVENTS_WAIT_REPLICAS": "1"}),
)


def run_setup(
    procs: Processes, env: dict[str, str], workers: int, options: Options, label: str, groups: dict[str, list[int]]
) -> Result:
    kifu = [sys.executable, "-m", "entrypoints.cli"]
    procs.start("projector", [*kifu, "projector"], env)
    ports = (free_port(), free_port())
    for i, port in enumerate(ports):
        procs.start(f"api-{i}", [*kifu, "serve", "--workers", str(workers), "--port", str(port)], env)
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    for i, url in enumerate(urls):
        procs.wait_until_answers(f"api-{i}", functools.partial(answers, url, "/readyz"))
    try:
        pids = {"API servers": procs.pids("api-0", "api-1"), "projector": procs.pids("projector"), **groups}
        return measure("game", (urls[0], urls[1]), options, pids, label, options.clients)
    finally:
        procs.stop("api-0", "api-1", "projector")


def wait_costs(cluster: EmbeddedCluster, ops: int) -> tuple[Timings, Timings]:
    """Sequential appends of one San Ban action on the cluster without and with ``WAIT 1``, interleaved."""
    client = redis.RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)
    try:
        stores = [EventStore(client, prefix="bench", wait_replicas=n) for n in (0, 1)]
        action = action_envelopes()
        k, head = len(action), action[-1]["hash"]  # every batch ends with the same hash (bench.compare)
        games = ["g-wait0-" + secrets.token_hex(4), "g-wait1-" + secrets.token_hex(4)]

        def appender(side: int) -> Callable[[int], object]:
            def append(i: int) -> None:
                batch = [{**env, "seq": i * k + j + 1} for j, env in enumerate(action)]
                stores[side].append(games[side], Append(batch, Head(i * k, head if i else GENESIS), due=None))

            return append

        return interleaved(ops, appender(0), appender(1))
    finally:
        client.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1, help="gevent workers per API server (two servers)")
    parser.add_argument("--ops", type=int, default=2000, help="appends for WAIT's own cost, each way")
    args = parser.parse_args(argv)
    options = Options(seconds=args.seconds, warmup=args.warmup, clients=args.clients)
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="kifu-cluster-load-") as tmp_name:
        tmp = Path(tmp_name)
        procs = Processes(tmp)
        plain, cluster = EmbeddedRedis(tmp / "plain"), EmbeddedCluster(tmp / "cluster")
        try:
            plain.start()
            cluster.start()
            redis_pids = [p.process.pid for p in (plain, *cluster.nodes) if p.process is not None]
            base = {**os.environ, "REDIS_URL": plain.url, "KIFU_RATE_LIMIT_CREATE": CREATE_LIMIT}
            for label, extra in SETUPS:
                env = {**base, **extra} if not extra else {**base, "KIFU_EVENTS_URL": cluster.url, **extra}
                results[label] = run_setup(procs, env, args.workers, options, label, {"Redis": redis_pids})
            waits = wait_costs(cluster, args.ops)
        finally:
            procs.stop_all()
            cluster.stop()
            plain.stop()
    print(f"\n== summary ({os.cpu_count()} cores, {args.workers} gevent worker(s) per API server, two servers)")
    print(f"{'setup':<18} {'actions/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'failures':>9}")
    for label, r in results.items():
        print(f"{label:<18} {r.rate:>10,.0f} {r.p50:>8.1f} {r.p99:>8.1f} {sum(r.total_failures.values()):>9}")
    print(f"\n== WAIT's cost: {args.ops:,} sequential appends each on the cluster, interleaved")
    no_wait, with_wait = waits
    print(f"  WAIT 0: {no_wait.summary()}")
    print(f"  WAIT 1: {with_wait.summary()}")
    print(f"  WAIT 1 costs {(with_wait.median - no_wait.median) * 1e6:,.0f} us per append (medians)")


if __name__ == "__main__":
    main()
