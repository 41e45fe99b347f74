"""Benchmarks: they print figures and assert nothing. ``kifu bench [which...]``.

* ``domain`` - random games per second in the pure domain, per game, one core;
* ``store`` - events per second reading a long game's log through the store;
* ``load`` - time to load a 1,000-event game with and without its snapshot;
* ``api`` - actions per second and p50/p99 latency, 16 concurrent clients,
  against a running server (``--url``; started by ``make run``), driven by wrk;
* ``compare`` - only when named (it takes a few minutes): starts its own Redis
  and servers and measures, in one run, a no-op Flask POST, Kifu's API in two
  connection shapes and the store against raw redis-py, each figure with its
  ratio to its baseline and its target (``bench.compare``);
* ``peer`` - only when named (some two minutes a run): the peer, San Ban on
  boardgame.io (in memory), and Kifu under ``kifu run`` (durable), back to back,
  three runs, and the ratio (``bench.peer``; needs Node and npm);
* ``scale`` - only when named (about 15 s a row): ``kifu run`` with 1, 2 and 4
  API workers under load, each part's CPU, and where one Redis would saturate
  (``bench.scale``; more rows on a larger machine: ``python -m bench.scale --workers
  1,4,8,12``).
"""

from __future__ import annotations

from collections.abc import Sequence

ALL = ("domain", "store", "load", "api")  # the default run: ``kifu bench`` (``make bench``)
NAMED = (*ALL, "compare", "peer", "scale")  # also runnable by name


def run_all(
    which: Sequence[str],
    url: str | None,
    seconds: float | None = None,
    clients: int = 16,
    wrk: bool = False,
) -> None:
    """Run the named benchmarks (all but ``compare`` when none are named).

    ``seconds`` and ``clients`` are for ``api`` and ``compare`` (each has its
    own default duration); for ``compare``, ``url`` is a running API to measure
    instead of starting two, and ``wrk`` adds wrk's cross-check.
    """
    chosen = list(which) or [w for w in ALL if w != "api" or url]
    unknown = set(chosen) - set(NAMED)
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}; choose from {', '.join(NAMED)}")
    if "domain" in chosen:
        from bench import domain_speed

        domain_speed.main()
    if "store" in chosen or "load" in chosen:
        from bench import store_speed

        store_speed.main(read="store" in chosen, load="load" in chosen)
    if "api" in chosen:
        from bench import api_load

        api_load.main(url or "http://127.0.0.1:8000", int(seconds or 20), clients)
    if "compare" in chosen:
        from bench import compare

        options = compare.Options(clients=clients, url_a=url, wrk=wrk)
        if seconds is not None:
            options.seconds = seconds
        compare.main(options=options)
    if "peer" in chosen:
        from bench import peer

        peer.main(["--clients", str(clients), *(["--seconds", str(seconds)] if seconds is not None else [])])
    if "scale" in chosen:
        from bench import scale

        scale.main([*(["--seconds", str(seconds)] if seconds is not None else [])])
