"""Streams in a real browser (issue 20): a page that does nothing but ``new EventSource(url with a ticket)``
follows its seat to the end of the game, however often the server closes the stream and however long
ago its ticket stopped opening new ones; a player stream runs to its end and stops.

Debian's Chromium, headless, through Playwright (tests/support/browser.py). The server closes every stream
after 1 s (``SSE_MAX_SECONDS``) and tickets open streams for 1 s (``STREAM_TICKET_SECONDS``): the page
waits for what those settings cause (the browser reconnecting again and again, the ticket refused to a
fresh request), never for a time. The page is one the app serves (``/problems``, HTML of its own origin):
the script runs there as any page of the app would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, Page

from tests.e2e.test_http import TIMEOUT, act, create_toy
from tests.support.browser import chromium
from tests.support.kifu_run import wait_until

WAIT_MS = 30_000  # a deadline that turns a hang into a failure; nothing waits for it
TOY_EVENTS = [
    "game_created",
    "toy_dealt",
    "choice_committed",
    "choices_revealed",
    "action_taken",
    "round_scored",
    "acked",
    "game_ended",
    "game_sealed",
]
PLAYER_EVENTS = ["status", "your_turn", "game_over", "seat_taken"]

# The whole client: an EventSource on the URL, every event kept, every (re)connection counted.
FOLLOW = """([url, names]) => {
  window.seen = []; window.opens = 0; window.errors = 0;
  const source = new EventSource(url);
  window.source = source;
  source.onopen = () => { window.opens += 1; };
  source.onerror = () => { window.errors += 1; };
  for (const name of names) {
    source.addEventListener(name, e => window.seen.push({event: name, id: e.lastEventId, data: JSON.parse(e.data)}));
  }
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def api(short_streams_url: str) -> str:
    return short_streams_url


@pytest.fixture
def page(browser: Browser, api: str) -> Iterator[Page]:
    opened = browser.new_page()
    opened.goto(f"{api}/problems")
    yield opened
    opened.close()


def seen(page: Page) -> list[dict[str, Any]]:
    return list(page.evaluate("window.seen"))


def refused_without_last_event_id(url: str) -> bool:
    return requests.get(url, timeout=TIMEOUT).status_code == 401


def test_a_page_with_only_an_event_source_follows_its_seat_long_after_the_ticket_expired(api: str, page: Page) -> None:
    game_id, (ann, bob) = create_toy(api)
    ticket = requests.post(f"{api}/v1/games/{game_id}/stream-tickets", headers=ann, timeout=TIMEOUT).json()
    page.evaluate(FOLLOW, [ticket["stream"], TOY_EVENTS])
    page.wait_for_function("window.seen.length >= 2", timeout=WAIT_MS)
    page.wait_for_function("window.opens >= 5", timeout=WAIT_MS)  # the server closed the stream 4 times
    wait_until(lambda: refused_without_last_event_id(api + ticket["stream"]), "the ticket to open no new stream")
    assert act(api, game_id, ann, {"type": "pick", "n": 3}).status_code == 201
    page.wait_for_function("window.seen.some(e => e.event === 'choice_committed')", timeout=WAIT_MS)
    committed = next(e for e in seen(page) if e["event"] == "choice_committed")
    assert committed["id"] == "3" and committed["data"]["data"]["private"]["0"]["action"] == {"type": "pick", "n": 3}
    opens = page.evaluate("window.opens")
    assert act(api, game_id, bob, {"type": "resign"}).status_code == 201
    page.wait_for_function("window.source.readyState === EventSource.CLOSED", timeout=WAIT_MS)  # the 204
    events = seen(page)
    assert [e["id"] for e in events] == [str(n) for n in range(1, len(events) + 1)]  # each once, in order
    assert events[-1]["event"] == "game_sealed"
    assert page.evaluate("window.opens") >= opens >= 5


def test_a_player_stream_runs_to_its_end_in_the_browser_and_stops(api: str, page: Page) -> None:
    games = [create_toy(api) for _ in range(2)]
    seats = [{"game": g, "token": bob["Authorization"].split()[1]} for g, (_ann, bob) in games]
    ticket = requests.post(f"{api}/v1/stream-tickets", json={"seats": seats}, timeout=TIMEOUT).json()
    page.evaluate(FOLLOW, [ticket["stream"], PLAYER_EVENTS])
    page.wait_for_function("window.opens >= 3", timeout=WAIT_MS)
    wait_until(lambda: refused_without_last_event_id(api + ticket["stream"]), "the ticket to open no new stream")
    for game_id, (ann, _bob) in games:
        assert act(api, game_id, ann, {"type": "resign"}).status_code == 201
    page.wait_for_function("window.source.readyState === EventSource.CLOSED", timeout=WAIT_MS)  # the 204
    events = seen(page)
    over = sorted(e["data"]["game"] for e in events if e["event"] == "game_over")
    assert over == sorted(g for g, _ in games)  # each game's end told once, however many reconnects
    for game_id, _ in games:  # nothing repeated: each game's status only when it moved
        versions = [e["data"]["version"] for e in events if e["event"] == "status" and e["data"]["game"] == game_id]
        assert versions == sorted(set(versions)) and len(versions) == 2
