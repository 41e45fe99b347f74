"""The README's walkthrough, run exactly as written against a live server; every ``# ->`` line is checked.

The block between ``<!-- walkthrough: begin -->`` and ``<!-- walkthrough: end -->``
is run by bash (with ``set -e``: any failing command fails the test). The
lines it prints must be, in order, the ``# ->`` lines that follow the
commands that print them. The Python example (``<!-- python: begin -->``) is
run the same way, by the Python running the tests, with ``kifu.client``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app
from service.ports import NoScheduler
from tests.support.http import serving

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- walkthrough: begin -->\n```sh\n(.*?)```\n<!-- walkthrough: end -->", re.S)
PYTHON_BLOCK = re.compile(r"<!-- python: begin -->\n```python\n(.*?)```\n<!-- python: end -->", re.S)


def walkthrough(block: re.Pattern[str] = BLOCK) -> str:
    found = block.search((ROOT / "README.md").read_text())
    assert found, f"README.md has no block {block.pattern[:30]}"
    return found.group(1)


@pytest.fixture
def live(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    app = create_app(
        {
            "REDIS_URL": redis_server.url,
            "REDIS_CLIENT": redis_client,
            "SCHEDULER": NoScheduler(),
            "SSE_HEARTBEAT_SECONDS": 0.2,
        }
    )
    with serving(app) as url:
        yield url


def test_the_readme_walkthrough_runs_as_written(live: str, tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")  # the walkthrough runs .venv/bin/kifu, as from the repo
    runs_as_written(["bash", "-e", "-o", "pipefail", "-c"], walkthrough(), live, tmp_path)


def test_the_readme_python_example_runs_as_written(live: str, tmp_path: Path) -> None:
    """The "From Python" block: kifu.client as installed (the run starts outside the repository)."""
    runs_as_written([sys.executable, "-c"], walkthrough(PYTHON_BLOCK), live, tmp_path)


def runs_as_written(command: list[str], script: str, live: str, cwd: Path) -> None:
    """Run ``script`` with ``command`` against the server at ``live``: it prints exactly its ``# ->`` lines."""
    expected = [line.removeprefix("# -> ") for line in script.splitlines() if line.startswith("# -> ")]
    done = subprocess.run(
        [*command, script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KIFU": live},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert expected and done.stdout.splitlines() == expected, done.stderr
