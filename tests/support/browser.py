"""Debian's Chromium, headless, driven by Playwright (no browser download: ``executable_path``).

``make test`` installs the ``chromium`` package when it is missing (Makefile, ``browser``); a machine
without it fails here with the one line that fixes it, never a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from bench.browser import CHROMIUM_ARGS, chromium_path

# Where the tests write their screenshots: .run/screenshots (ignored by git), or KIFU_SCREENSHOTS; the set
# kept in the repository is refreshed with `KIFU_SCREENSHOTS=docs/screenshots make test` (README).
SCREENSHOTS = Path(os.environ.get("KIFU_SCREENSHOTS") or Path(__file__).resolve().parents[2] / ".run" / "screenshots")


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for one test module."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


class Console:
    """Every console error (with the URL it names) and uncaught error or rejection of a page."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} ({message.location.get('url')})")


OVERFLOWING = """() => [...document.querySelectorAll('body *')]
  .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5
    && !el.closest('.scroll-x'))
  .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`)"""


def wider_than_the_screen(page: Page) -> list[str]:
    """The elements that stick out past the page's right edge (a ``.scroll-x`` box's insides excepted: they
    scroll within their box), as ``tag.class``: empty when the page fits its screen."""
    return list(page.evaluate(OVERFLOWING))
