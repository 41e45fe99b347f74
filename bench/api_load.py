"""API load: 16 concurrent clients playing San Ban through the REST API, driven by wrk.

wrk (C, with a Lua script: bench/wrk_san_ban.lua) generates the load so the
server keeps most of the two cores; each of its 16 threads owns one connection
and plays whole games (one create, then nine place actions). Start the server
first (``make run``), then ``kifu bench api --url http://127.0.0.1:8000``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).with_name("wrk_san_ban.lua")


def main(url: str, seconds: int = 20, clients: int = 16) -> None:
    wrk = shutil.which("wrk")
    if wrk is None:
        print("api: wrk is not installed (Debian: apt-get install wrk); skipped")
        return
    print(f"api: {clients} clients for {seconds} s against {url} (wrk, one connection per thread)")
    args = [wrk, f"-t{clients}", f"-c{clients}", f"-d{seconds}s", "--latency", "-s", str(SCRIPT), url]
    subprocess.run(args, check=False)
