"""The pool's connection check under gevent: redis-py's own against ``QuickCheckConnection``.

Run as ``python -m bench.pool_check``: an embedded Redis, a monkey-patched process (as a gunicorn
gevent worker is), 8 greenlets each making GETs back to back through one client; CPU and wall time
per call, for each connection class, twice, alternating. Prints figures; asserts nothing.
"""

from __future__ import annotations

from gevent import monkey  # type: ignore[import-untyped]

monkey.patch_all()

import tempfile  # noqa: E402  (after monkey-patching, as in a gevent worker)
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import redis  # noqa: E402

from adapters.embedded_redis import EmbeddedRedis  # noqa: E402
from adapters.redis_client import QuickCheckConnection  # noqa: E402

GREENLETS, CALLS = 8, 2_500


def measure(port: int, cls: type[redis.Connection]) -> tuple[float, float]:
    """Microseconds of wall time and of this process's CPU per call."""
    client = redis.Redis(connection_pool=redis.ConnectionPool(port=port, connection_class=cls))
    client.ping()

    def calls() -> None:
        for _ in range(CALLS):
            client.get("k")

    cpu, wall = time.process_time(), time.perf_counter()
    gevent.joinall([gevent.spawn(calls) for _ in range(GREENLETS)])
    n = GREENLETS * CALLS
    result = (time.perf_counter() - wall) / n * 1e6, (time.process_time() - cpu) / n * 1e6
    client.close()
    return result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp)) as server:
        print(f"GET through one client under gevent, {GREENLETS} greenlets x {CALLS:,} calls")
        for cls in [redis.Connection, QuickCheckConnection] * 2:
            wall, cpu = measure(server.port, cls)
            print(f"  {cls.__name__:<22} {wall:6.1f} us wall, {cpu:6.1f} us CPU per call")


if __name__ == "__main__":
    main()
