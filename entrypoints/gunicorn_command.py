"""The gunicorn command line of ``kifu serve``, in a module of its own so that the benchmarks (``bench``, a
development tool outside the installed package) serve their baselines the same way without importing the CLI."""

from __future__ import annotations

import sys


def gunicorn_argv(app: str, host: str, port: int, workers: int) -> list[str]:
    """The gunicorn command line of ``kifu serve`` for the WSGI ``app`` (also the no-op baseline's in
    ``bench.compare``: served the same way)."""
    args = [sys.executable, "-m", "gunicorn", "-k", "gevent", "-w", str(workers), "-b", f"{host}:{port}"]
    args += ["--graceful-timeout", "5", "-c", "python:entrypoints.gunicorn_conf"]
    if workers > 1:
        # each worker listens on a socket of its own (SO_REUSEPORT) and the kernel spreads connections
        # over them: gevent workers racing to accept on one socket left most keep-alive connections to
        # one worker (figures: docs/performance.md, section "Measuring", under ``kifu run``)
        args.append("--reuse-port")
    if _gunicorn_has_setting("control_socket_disable"):  # newer gunicorn: no control socket shared in $HOME
        args.append("--no-control-socket")
    return [*args, app]


def _gunicorn_has_setting(name: str) -> bool:
    from gunicorn.config import KNOWN_SETTINGS

    return any(setting.name == name for setting in KNOWN_SETTINGS)
