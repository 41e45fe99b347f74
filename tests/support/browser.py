"""Debian's Chromium, headless, driven by Playwright (no browser download: ``executable_path``).

``make test`` installs the ``chromium`` package when it is missing (Makefile, ``browser``); a machine
without it fails here with the one line that fixes it, never a skip.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

# A closed network: without these Chromium keeps trying to reach Google's services at every start.
CHROMIUM_ARGS = [
    "--no-sandbox",  # tests may run as root (CI)
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """Debian's Chromium, or an AssertionError saying how to install it."""
    found = shutil.which("chromium")
    assert found, "Chromium is missing: run `sudo apt-get install -y chromium` (or `make test` as root)"
    return found


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for one test module."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
