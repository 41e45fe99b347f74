"""The web app's modules that need no browser, tested in Node (``node --test tests/js/``): the rules of
playing on the table (``lib/picks.js``). Node.js 20+ is one of ``make test``'s requirements (README)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_modules_pass_their_node_tests() -> None:
    node = shutil.which("node")
    assert node is not None, "make test needs Node.js 20+ (README, Quick start)"
    run = subprocess.run(
        [node, "--test", "tests/js/"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# fail 0" in run.stdout and "# pass 0" not in run.stdout
