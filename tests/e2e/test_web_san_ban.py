"""San Ban's table in the browser (issue 21, item 3): a fixed-deal hardcore game played through the HTTP
API, then its page opened at known steps in Chromium; the cards drawn (``data-card``) must be exactly
those the replay's view lets that viewer see, face-down ones counted, and the log must say the events
in sentences. Screenshots of a mid-game table go to ``SCREENSHOTS`` (tests/support/browser.py).
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, Page

from tests.e2e.test_http import TIMEOUT, act
from tests.support.browser import SCREENSHOTS
from tests.support.http_games import replay_view as replay

WAIT_MS = 30_000  # a deadline that turns a hang into a failure; nothing waits for it
ANN_DECK = ["sb-049", "sb-050", "sb-051", "sb-052", "sb-053", "sb-054"]  # tier 5: strong
BOB_DECK = ["sb-001", "sb-002", "sb-003", "sb-004", "sb-005", "sb-006"]  # tier 1: weak
CELLS = [4, 1, 0, 3, 2, 5, 6, 7, 8]  # the placements in turn; bob (seat 1) starts
PLAY_FROM = 10  # steps: 1 created, 2 dealt, 3-4 picks, 5 revealed, 6 hands, 7 coin, 8-9 first chosen


class Played:
    """The game and the step after each of its placements."""

    def __init__(self, game_id: str, placed_at: list[int], last: int) -> None:
        self.game_id = game_id
        self.placed_at = placed_at
        self.last = last


def play(base: str, until: int | None = None, mode: str = "hardcore") -> Played:
    """Create the fixed-deal game and play it: the picks, the coin, ``until`` placements (all), the claim."""
    deal = {"decks": [ANN_DECK, BOB_DECK], "first": "coin"}
    body: dict[str, Any] = {
        "game": "san-ban",
        "options": {"mode": mode},
        "deal": deal,
        "players": [{"name": "ann"}, {"name": "bob"}],
    }
    created = requests.post(f"{base}/v1/games", json=body, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    seats = [{"Authorization": f"Bearer {s['token']}"} for s in created.json()["seats"]]
    pick = "set_order" if mode == "gamer" else "choose_hand"
    assert act(base, game_id, seats[0], {"type": pick, "cards": ANN_DECK[:5]}).status_code == 201
    assert act(base, game_id, seats[1], {"type": pick, "cards": BOB_DECK[:5]}).status_code == 201
    winner = view(base, game_id)["state"]["coin_winner"]
    assert act(base, game_id, seats[winner], {"type": "choose_first", "first": winner == 1}).status_code == 201
    hands = [ANN_DECK[:5], BOB_DECK[:5]]
    placed_at = []
    for turn, cell in enumerate(CELLS[:until]):
        seat = 1 - turn % 2
        place: dict[str, Any] = {"type": "place", "cell": cell}
        if mode in ("standard", "hardcore"):
            place["card"] = hands[seat][turn // 2]
        answer = act(base, game_id, seats[seat], place)
        assert answer.status_code == 201, answer.text
        placed_at.append(view(base, game_id)["version"])
    if until is None and mode == "hardcore":
        assert view(base, game_id)["phase"] == "claim"  # ann's tier-5 cards beat bob's
        assert act(base, game_id, seats[0], {"type": "claim", "card": "sb-003"}).status_code == 201
    return Played(game_id, placed_at, view(base, game_id)["version"])


def view(base: str, game_id: str) -> dict[str, Any]:
    answer = requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT)
    assert answer.status_code == 200
    return dict(answer.json())


def visible(view: dict[str, Any]) -> tuple[set[str], int]:
    """The card ids the table must draw face up for this view, and how many it must draw face down.

    The board; each hand, or as many face-down cards as it holds; what each seat left out of its deck
    (face up where the viewer knows the deck, else face down), or the whole deck while the seat picks;
    the hardcore claim's card.
    """
    state = view["state"]
    ids = {cell["card"] for cell in state["board"] if cell}
    hidden = 0
    for seat in (0, 1):
        deck = state["decks"][seat] if state["decks"] else state["deck"] if view["you"] == seat else None
        hand, chosen, size = state["hands"][seat], state["chosen"][seat], state["deck_sizes"][seat]
        if view["phase"] == "choose" and not hand and not chosen:
            ids |= set(deck or [])
            hidden += 0 if deck else size
            continue
        ids |= set(hand or [])
        hidden += 0 if hand else state["hand_sizes"][seat]
        if deck and chosen:
            ids |= set(deck) - set(chosen)
        else:
            hidden += max(0, size - 5)
    claimed = (view["result"] or {}).get("claimed")
    if claimed:
        ids.add(claimed["card"])
    return ids, hidden


class Table:
    """A game page in Chromium, with every console error and page error it logged."""

    def __init__(self, browser: Browser, width: int = 1280, height: int = 900) -> None:
        self.page: Page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self, base: str, game_id: str, step: int, seat: int | None = None) -> Page:
        query = f"step={step}" + ("" if seat is None else f"&as={seat}")
        self.page.goto(f"{base}/games/{game_id}?{query}")
        self.page.wait_for_selector(f'[data-step="{step}"] .sb-table', timeout=WAIT_MS)
        return self.page

    def cards(self) -> tuple[set[str], int]:
        drawn = self.page.eval_on_selector_all("[data-card]", "cards => cards.map(c => c.dataset.card)")
        return {c for c in drawn if c != "hidden"}, drawn.count("hidden")

    def close(self) -> None:
        self.page.close()


def test_a_running_game_shows_the_spectator_what_the_replay_allows_and_screenshots_the_table(
    base_url: str, browser: Browser
) -> None:
    played = play(base_url, until=5)
    step = played.placed_at[-1]
    table = Table(browser)
    try:
        page = table.open(base_url, played.game_id, step)
        assert page.get_attribute("[data-step]", "data-step") == str(step)
        assert page.get_attribute("[data-as]", "data-as") == "spectator"
        expected = visible(replay(base_url, played.game_id, step))
        assert table.cards() == expected
        ids, hidden = expected
        assert {"sb-001", "sb-049", "sb-002", "sb-050", "sb-003"} <= ids  # the five placed so far
        assert hidden == 2  # only the decks' left-out cards are secret; the hands were shown
        assert not {"sb-054", "sb-006"} & ids
        assert page.get_attribute('[data-cell="4"] [data-card]', "data-card") == "sb-001"
        assert page.locator('[data-cell="4"]').get_attribute("data-owner") in {"0", "1"}
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "san-ban.png"))
        page.set_viewport_size({"width": 375, "height": 900})
        page.screenshot(path=str(SCREENSHOTS / "san-ban-phone.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the table is {width} px wide on a 375 px phone"
    finally:
        table.close()
    assert table.errors == []


def test_a_finished_game_at_known_steps_as_spectator_and_as_each_seat(base_url: str, browser: Browser) -> None:
    played = play(base_url)
    table = Table(browser)
    try:
        for step, seat in [(2, None), (2, 1), (4, 0), (7, None), (played.placed_at[3], 1), (played.last, None)]:
            page = table.open(base_url, played.game_id, step, seat)
            assert page.get_attribute("[data-as]", "data-as") == ("spectator" if seat is None else str(seat))
            assert page.get_attribute("[data-step]", "data-step") == str(step)
            assert table.cards() == visible(replay(base_url, played.game_id, step, seat)), (step, seat)
        # after the deal bob sees his own six face up and ann's deck as six face-down cards
        table.open(base_url, played.game_id, 2, 1)
        assert table.cards() == (set(BOB_DECK), 6)
        # at the end everything is public: both decks, with sb-054 and sb-006 left out, and the claim
        table.open(base_url, played.game_id, played.last)
        ids, hidden = table.cards()
        assert ids == set(ANN_DECK + BOB_DECK) and hidden == 0
        assert table.page.locator(".sb-claim [data-card]").get_attribute("data-card") == "sb-003"
        first = table.page.locator(f'.log li[data-seq="{PLAY_FROM + 1}"]').inner_text()
        assert "bob placed sb-001 (top" in first and "on the centre cell." in first
        assert (
            table.page.locator('.log li[data-seq="7"]')
            .inner_text()
            .endswith("won the coin toss and chooses who starts.")
        )
    finally:
        table.close()
    assert table.errors == []


@pytest.mark.parametrize("mode", ["gamer", "advanced", "standard"])
def test_secret_hands_are_face_down_while_the_game_runs_and_shown_to_their_owner(
    base_url: str, browser: Browser, mode: str
) -> None:
    running = play(base_url, until=3, mode=mode)
    finished = play(base_url, mode=mode)
    table = Table(browser)
    try:
        step = running.placed_at[-1]
        table.open(base_url, running.game_id, step)
        ids, hidden = table.cards()
        assert (ids, hidden) == visible(replay(base_url, running.game_id, step))
        secret = mode in ("gamer", "advanced")  # the hands are their owners' only: ann holds 4, bob 3
        assert hidden == (4 + 3 + 2 if secret else 2) and {"sb-001", "sb-049", "sb-002"} <= ids
        assert table.page.locator(".sb-mode-name").inner_text() == f"{mode.title()} mode"
        for seat in (0, 1):
            step = finished.placed_at[2]
            table.open(base_url, finished.game_id, step, seat)
            ids, hidden = table.cards()
            assert (ids, hidden) == visible(replay(base_url, finished.game_id, step, seat)), seat
            own = set(ANN_DECK[:5] if seat == 0 else BOB_DECK[:5])
            assert own <= ids  # one's own five, on the board or in hand
    finally:
        table.close()
    assert table.errors == []
