"""Nin Nal's table in Debian's Chromium (issue 21): a fixed-deal game played through the HTTP API to a tie
for first and its tie-break, its table opened at known steps as a spectator (while it runs) and as a seat
(once sealed); the cards drawn (``data-card``) are exactly those the replay's view lets that viewer see,
every other card face down; the log says the events in sentences; screenshots go to SCREENSHOTS
(tests/support/browser.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests
from playwright.sync_api import Page

from tests.support.browser import SCREENSHOTS, Console
from tests.support.http_games import replay_view

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 15_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10
NAMES = ["ann", "bob", "cid"]
# Played with every seat's first legal action, this deal ends with ann and cid tied on 38 (bob -2).
DEAL: dict[str, Any] = {
    "piles": ["paper-2", "paper--6", "scissors--1"],
    "hands": [
        ["scissors-8", "paper--2", "rock-5", "scissors-10", "scissors--3", "rock-10", "paper-8", "paper--3", "rock-6"],
        ["rock--2", "scissors-6", "paper-1", "rock-9", "scissors-5", "paper-6", "rock-1", "scissors-7", "scissors-9"],
        ["rock-3", "paper-3", "scissors--6", "paper--4", "rock--3", "paper-10", "rock--4", "rock--6", "paper--1"],
    ],
}
THROWS = [{0: "rock", 2: "rock"}, {0: "paper", 2: "rock"}]  # a tied throw, then ann's paper beats cid's rock
UNUSED = 48 - 3 - 9 * len(NAMES)


class Game:
    """A Nin Nal game over HTTP, its seats' tokens, and the steps worth looking at as it went."""

    def __init__(self, base: str) -> None:
        players = [{"name": n} for n in NAMES]
        body: dict[str, Any] = {"game": "nin-nal", "players": players, "deal": DEAL}
        r = requests.post(f"{base}/v1/games", json=body, timeout=TIMEOUT)
        assert r.status_code == 201, r.text
        self.base, self.id = base, r.json()["id"]
        self.auth = [{"Authorization": f"Bearer {s['token']}"} for s in r.json()["seats"]]
        self.throws = iter(THROWS)

    def view(self) -> dict[str, Any]:
        return dict(requests.get(f"{self.base}/v1/games/{self.id}", timeout=TIMEOUT).json())

    def act(self, seat: int, action: dict[str, Any]) -> None:
        url = f"{self.base}/v1/games/{self.id}/actions"
        r = requests.post(url, json={"action": action}, headers=self.auth[seat], timeout=TIMEOUT)
        assert r.status_code == 201, r.text

    def first_legal(self, seat: int) -> dict[str, Any]:
        url = f"{self.base}/v1/games/{self.id}/actions"
        return dict(requests.get(url, headers=self.auth[seat], timeout=TIMEOUT).json()["actions"][0])

    def play_until(self, done: Any) -> dict[str, Any]:
        """Each seat due acts (its first legal action; the scripted throws in the tie-break) until ``done``."""
        view = self.view()
        while view["status"] == "active" and not done(view):
            seat = view["to_act"][0]
            if view["phase"] == "tie_break":
                throws = next(self.throws)
                for s in view["to_act"]:
                    self.act(s, {"type": "throw", "sign": throws[s]})
            else:
                self.act(seat, self.first_legal(seat))
            view = self.view()
        return view

    def replay(self, step: int, seat: int | None = None) -> dict[str, Any]:
        return replay_view(self.base, self.id, step, seat)

    def events(self) -> list[dict[str, Any]]:
        r = requests.get(f"{self.base}/v1/games/{self.id}/events?limit=1000", timeout=TIMEOUT)
        return list(r.json()["items"])


def visible(view: dict[str, Any]) -> tuple[set[str], int]:
    """The card ids a view lets its reader see, and how many cards it holds face down (hands, unused)."""
    state = view["state"]
    ids = {c for pile in state["piles"] for c in pile} | {c for won in state["won"] for c in won}
    ids |= {e["card"] for e in state["revealed"] + state["previous_round"]}
    ids |= set(state["hand"] or []) | {c for hand in state.get("hands") or [] for c in hand}
    ids |= set(state.get("unused") or [])
    if not state["piles"]:  # before the deal: the whole deck
        return ids, 48
    face_down = 0
    if "hands" not in state:
        face_down += sum(size for seat, size in enumerate(state["hand_sizes"]) if seat != view["you"])
    if "unused" not in state:
        face_down += UNUSED
    return ids, face_down


def may_take(view: dict[str, Any]) -> bool:
    """A card resolves now and beats at least one pile's top."""
    return bool((view["state"]["resolving"] or {}).get("can_take"))


def open_table(page: Page, base: str, game: Game, step: int, seat: int | None = None) -> None:
    query = f"step={step}" + ("" if seat is None else f"&as={seat}")
    page.goto(f"{base}/games/{game.id}?{query}")
    page.wait_for_selector(f'[data-step="{step}"] .nin-nal', timeout=WAIT_MS)
    assert page.get_attribute("[data-step]", "data-as") == ("spectator" if seat is None else str(seat))


def drawn(page: Page) -> tuple[set[str], int]:
    cards = page.eval_on_selector_all(".table [data-card]", "els => els.map(e => e.dataset.card)")
    return {c for c in cards if c != "hidden"}, cards.count("hidden")


def test_nin_nal_table_shows_exactly_the_cards_each_viewer_may_see(web: str, page: tuple[Page, Console]) -> None:
    browser_page, _console = page
    game = Game(web)

    # While it runs: the deal as a spectator sees it, every hand and the unused cards face down.
    running = game.play_until(lambda v: v["state"]["round"] == 4 and v["phase"] == "resolve")
    open_table(browser_page, web, game, 1)
    assert drawn(browser_page) == visible(game.replay(1)) == (set(), 48)
    dealt = next(e["seq"] for e in game.events() if e["type"] == "cards_dealt")
    open_table(browser_page, web, game, dealt)
    ids, face_down = drawn(browser_page)
    assert ids == set(DEAL["piles"]) and face_down == 9 * 3 + UNUSED == 48 - 3
    log = browser_page.inner_text(f'.log li[data-seq="{dealt}"]')
    assert "The piles were laid out: Paper 2, Paper −6, Scissors −1; everyone got 9 cards." in log

    # Mid-game, still running: round 4 resolving, as the spectator sees it.
    now = running["version"]
    open_table(browser_page, web, game, now)
    expected, hidden = visible(game.replay(now))
    assert drawn(browser_page) == (expected, hidden) and hidden == sum(running["state"]["hand_sizes"]) + UNUSED
    assert len(expected) > 6 and browser_page.locator(".nn-revealed .nn-entry").count() == 3

    # Live, as the spectator, during the tie-break: ann has thrown, cid not yet; nobody's sign shows.
    game.play_until(lambda v: v["phase"] == "tie_break")
    game.act(0, {"type": "throw", "sign": "rock"})
    live = game.view()
    browser_page.goto(f"{web}/games/{game.id}")
    browser_page.wait_for_selector(f'[data-step="{live["version"]}"] .nn-tie', timeout=WAIT_MS)
    assert drawn(browser_page) == visible(live) and live["committed"] == [0]
    assert "Tie for first: ann, cid" in browser_page.inner_text(".nn-tie")
    assert browser_page.locator(".nn-tie [data-sign]").count() == 0
    game.act(2, {"type": "throw", "sign": "rock"})  # the scripted first throw, finished by hand
    game.throws = iter(THROWS[1:])

    # To the end, through the tie-break.
    final = game.play_until(lambda v: False)
    assert final["status"] == "finished" and final["result"]["scores"] == [38, -2, 38]
    assert final["result"]["winners"] == [0] and len(final["result"]["tie_break"]["throws"]) == 2
    events = game.events()

    # Once sealed, as bob where a card may take one of the fullest piles: his hand face up, the others' face down.
    as_bob = {e["seq"]: game.replay(e["seq"], 1) for e in events}
    resolving = [step for step, v in as_bob.items() if v["state"]["round"] < 8 and may_take(v)]
    mid = max(resolving, key=lambda step: sum(len(p) for p in as_bob[step]["state"]["piles"]))  # the fullest piles
    open_table(browser_page, web, game, mid, seat=1)
    expected, hidden = visible(as_bob[mid])
    assert drawn(browser_page) == (expected, hidden) and hidden > UNUSED
    bob_hand = set(as_bob[mid]["state"]["hand"])
    assert bob_hand and bob_hand <= drawn(browser_page)[0] and not bob_hand & set(DEAL["hands"][0] + DEAL["hands"][2])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser_page.screenshot(path=str(SCREENSHOTS / "nin-nal.png"), full_page=True)
    browser_page.set_viewport_size({"width": 375, "height": 800})
    browser_page.screenshot(path=str(SCREENSHOTS / "nin-nal-phone.png"), full_page=True)
    assert browser_page.evaluate("document.documentElement.scrollWidth") <= 375  # nothing runs off a phone
    browser_page.set_viewport_size({"width": 1280, "height": 900})

    # The tie-break as the spectator sees the sealed game: everything face up, the throws drawn.
    last_throw = max(e["seq"] for e in events if e["type"] == "signs_thrown")
    open_table(browser_page, web, game, last_throw)
    expected, hidden = visible(game.replay(last_throw))
    assert drawn(browser_page) == (expected, hidden) and hidden == 0
    assert set(DEAL["hands"][1]) <= expected  # bob's whole hand, all played by now, in piles or won
    signs = browser_page.eval_on_selector_all(".nn-tie [data-sign]", "els => els.map(e => e.dataset.sign)")
    assert signs == ["rock", "rock", "paper", "rock"]
    browser_page.screenshot(path=str(SCREENSHOTS / "nin-nal-tie-break.png"), full_page=True)
    sentence = browser_page.inner_text(f'.log li[data-seq="{last_throw}"]')
    assert "Tie-break throw 2: ann paper, cid rock; cid dropped out." in sentence
    taken = next(e for e in events if e["type"] == "pile_taken")
    said = browser_page.inner_text(f'.log li[data-seq="{taken["seq"]}"]')
    assert f"took pile {taken['data']['pile']}" in said and NAMES[taken["data"]["seat"]] in said

    # The end: every card of the game on the table, face up, the unused ones included.
    open_table(browser_page, web, game, events[-1]["seq"], seat=2)
    expected, hidden = visible(game.replay(events[-1]["seq"], 2))
    assert drawn(browser_page) == (expected, hidden) and hidden == 0 and len(expected) == 48
    assert browser_page.inner_text(".nn-seat.winner .nn-name").strip() == "★ ann"


def test_nin_nal_is_played_by_clicking_on_the_table(web: str, page: tuple[Page, Console]) -> None:
    """ann's tab (her token in sessionStorage, as the lobby leaves it) plays every one of her moves by clicking
    the table: a card of her hand (secret: then "committed"), a pile to take or to place the card on, and a sign in
    the tie-break; bob and cid play through the API. Each click acted exactly once (the events say so)."""
    tab, _console = page
    game = Game(web)
    tab.goto(f"{web}/")
    tab.evaluate(
        "([id, token]) => sessionStorage.setItem(`kifu:tokens:${id}`, JSON.stringify({0: token}))",
        [game.id, game.auth[0]["Authorization"].removeprefix("Bearer ")],
    )
    tab.goto(f"{web}/games/{game.id}")
    tab.wait_for_selector("[data-as='0'] .nin-nal", timeout=WAIT_MS)
    clicked: list[dict[str, Any]] = []
    shot = False
    view = game.view()
    while view["status"] == "active":
        if 0 not in view["to_act"]:
            seat = view["to_act"][0]
            throws = len((view["state"]["tie_break"] or {}).get("throws", []))
            action = (
                {"type": "throw", "sign": THROWS[throws][seat]}
                if view["phase"] == "tie_break"
                else game.first_legal(seat)
            )
            game.act(seat, action)
            view = game.view()
            continue
        if view["phase"] == "tie_break":
            action = {"type": "throw", "sign": THROWS[len(view["state"]["tie_break"]["throws"])][0]}
            token = f"sign:{action['sign']}"
        else:
            action = game.first_legal(0)
            token = f"card:{action['card']}" if action["type"] == "select" else f"pile:{action['pile']}"
        tab.wait_for_selector(f"[data-step='{view['version']}'] .nin-nal", timeout=WAIT_MS)
        target = tab.locator(f".table [data-pick='{token}'].pickable")
        target.wait_for(timeout=WAIT_MS)
        if action["type"] == "take" and not shot:  # the piles she may take, highlighted
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(SCREENSHOTS / "nin-nal-play.png"), full_page=True)
            shot = True
        target.click(timeout=WAIT_MS)
        clicked.append(action)
        tab.wait_for_function(
            "v => Number(document.querySelector('[data-step]').dataset.step) > v", arg=view["version"], timeout=WAIT_MS
        )
        if len(clicked) == 1:  # her first card, chosen in secret
            tab.wait_for_selector(".play:has-text('Your choice is committed')", timeout=WAIT_MS)
            assert tab.locator(".table [data-pick].pickable").count() == 0
        view = game.view()

    assert view["result"]["scores"] == [38, -2, 38] and view["result"]["winners"] == [0]  # as the API-only game
    assert {a["type"] for a in clicked} == {"select", "take", "place", "throw"}
    made = [e for e in game.events() if e["type"] in ("action_taken", "choice_committed") and e["data"]["seat"] == 0]
    assert len(made) == len(clicked)  # each click acted exactly once
    taken = [e["data"]["action"] for e in made if e["type"] == "action_taken"]
    assert taken == [a for a in clicked if a["type"] in ("take", "place")]
