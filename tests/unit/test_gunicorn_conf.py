"""The gunicorn settings module of ``kifu serve`` (its behaviour under load: tests/e2e/test_slow_clients.py)."""

from __future__ import annotations

import os
import subprocess
import sys


def setting(name: str, **env: str) -> str:
    """``entrypoints.gunicorn_conf.<name>`` as a fresh interpreter reads it with ``env``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KIFU_")} | env
    code = f"import entrypoints.gunicorn_conf as c; print(c.{name})"
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True).stdout


def test_connections_per_client_are_capped_unless_behind_a_proxy() -> None:
    assert setting("MAX_CONNECTIONS_PER_CLIENT").strip() == "256"
    assert setting("MAX_CONNECTIONS_PER_CLIENT", KIFU_MAX_CONNECTIONS_PER_CLIENT="10").strip() == "10"
    # behind a proxy every connection is the proxy's: the cap would refuse everybody at once
    assert setting("MAX_CONNECTIONS_PER_CLIENT", KIFU_TRUSTED_PROXIES="1").strip() == "0"


def test_the_open_files_limit_fits_the_connections() -> None:
    code = (
        "import resource, entrypoints.gunicorn_conf as c;"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE);"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1024), hard));"
        "print(c.raise_open_files_limit(min(hard, 4096)), min(hard, 4096))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == out[1]
