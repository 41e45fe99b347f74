"""Benchmarks: they print figures and assert nothing. ``kifu bench [which...]``.

* ``domain`` - random games per second in the pure domain, per game, one core;
* ``store`` - events per second reading a long game's log through the store;
* ``load`` - time to load a 1,000-event game with and without its snapshot;
* ``api`` - actions per second and p50/p99 latency, 16 concurrent clients,
  against a running server (``--url``; started by ``make run``), driven by wrk.
"""

from __future__ import annotations

from collections.abc import Sequence

ALL = ("domain", "store", "load", "api")


def run_all(which: Sequence[str], url: str | None) -> None:
    """Run the named benchmarks (all of them when none are named)."""
    chosen = list(which) or [w for w in ALL if w != "api" or url]
    unknown = set(chosen) - set(ALL)
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}; choose from {', '.join(ALL)}")
    if "domain" in chosen:
        from bench import domain_speed

        domain_speed.main()
    if "store" in chosen or "load" in chosen:
        from bench import store_speed

        store_speed.main(read="store" in chosen, load="load" in chosen)
    if "api" in chosen:
        from bench import api_load

        api_load.main(url or "http://127.0.0.1:8000")
