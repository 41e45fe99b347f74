"""API load: 16 concurrent clients playing San Ban through the REST API, driven by wrk.

wrk (C, with a Lua script: bench/wrk_san_ban.lua) generates the load so the
server keeps most of the two cores; each of its 16 threads owns one connection
and plays whole games (one create, then nine place actions). Start the server
first (``make run``), then ``kifu bench api --url http://127.0.0.1:8000``.
``kifu bench compare`` (``bench.compare``) measures the API against its
baselines in one run, with its own load generator (``bench.loadgen``); its
``--wrk`` calls ``run_wrk`` here as a cross-check.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).with_name("wrk_san_ban.lua")


def wrk_command(url: str, seconds: int, clients: int, script: Path = SCRIPT) -> list[str] | None:
    """wrk's command line (one connection per thread), or None when wrk is not installed."""
    wrk = shutil.which("wrk")
    if wrk is None:
        return None
    return [wrk, f"-t{clients}", f"-c{clients}", f"-d{seconds}s", "--latency", "-s", str(script), url]


def run_wrk(url: str, seconds: int = 20, clients: int = 16, script: Path = SCRIPT) -> str | None:
    """Run wrk and return what it printed (None when wrk is not installed)."""
    args = wrk_command(url, seconds, clients, script)
    if args is None:
        return None
    done = subprocess.run(args, check=False, capture_output=True, text=True)
    return done.stdout + done.stderr


def main(url: str, seconds: int = 20, clients: int = 16) -> None:
    args = wrk_command(url, seconds, clients)
    if args is None:
        print("api: wrk is not installed (Debian: apt-get install wrk); skipped")
        return
    print(f"api: {clients} clients for {seconds} s against {url} (wrk, one connection per thread)")
    subprocess.run(args, check=False)
