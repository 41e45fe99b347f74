"""San, Ni, Ichi!'s table in a real browser (issue 21, item 3): a fixed-deal game played through the HTTP API,
then opened at known steps (as a spectator while it runs, as each seat once it is sealed); the cards drawn
(``data-card``) are exactly those the API's replay view says the viewer may see, face-down ones counted.

The game is the rules' example deal for three seats, played by always sending the first legal action (and
using a smoke bomb whenever one may be used), so every step is known: round 1 has a smoke phase, round 3 a
Block, round 4 a Tonfa, round 5 a Sai with nothing to swap, round 6 a Yoso Kogeki, round 7 a Shuriken.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests
from playwright.sync_api import Browser, Page

from adapters.embedded_redis import EmbeddedRedis
from entrypoints.api import create_app
from service.ports import NoScheduler
from tests.support.browser import SCREENSHOTS
from tests.support.http import serving
from tests.support.http_games import replay_view

TIMEOUT = 10
WAIT_MS = 15_000  # turns a hang into a failure; nothing waits for it
NAMES = ["ann", "bob", "cat"]
DEAL: dict[str, Any] = {
    "weapons": ["block-11", "tonfa-13", "sai-15", "yoso-kogeki-17", "torinoko-19", "shuriken-21"],
    "hands": [
        ["fire-1", "fire-2", "fire-3", "fire-4", "fire-5", "water-1", "water-2"],
        ["water-3", "water-4", "water-5", "wood-1", "wood-2", "wood-3", "wood-4"],
        ["wood-5", "block-11", "tonfa-13", "sai-15", "yoso-kogeki-17", "torinoko-19", "shuriken-21"],
    ],
}
RESOLVING_WOOD_5 = 12  # round 1, attack: ann's Fire 1 and bob's Wood 1 have started piles; cat's Wood 5 resolves
SMOKE_ASKED = 16  # round 1, smoke: ann has decided in secret, bob and cat are deciding
TONFA_RESOLVING = 61  # round 4: ann's pile is Water 1, Wood 2, Fire 2, Water 3; cat's Tonfa resolves
TONFA_USED = 63
BLOCKED = 49  # round 3: cat's Block protects cat


@pytest.fixture
def base(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler()})
    with serving(app) as url:
        yield url


class Game:
    """The fixed-deal game over HTTP, advanced one action at a time by a fixed policy."""

    def __init__(self, base: str) -> None:
        self.base = base
        body: dict[str, Any] = {"game": "san-ni-ichi", "players": [{"name": n} for n in NAMES], "deal": DEAL}
        created = requests.post(f"{base}/v1/games", json=body, timeout=TIMEOUT)
        assert created.status_code == 201, created.text
        self.id: str = created.json()["id"]
        self.tokens: list[str] = [seat["token"] for seat in created.json()["seats"]]

    def view(self) -> dict[str, Any]:
        answer: dict[str, Any] = requests.get(f"{self.base}/v1/games/{self.id}", timeout=TIMEOUT).json()
        return answer

    def play_until(self, version: int | None = None) -> None:
        """Send one action at a time until the game reaches ``version`` (or its end)."""
        view = self.view()
        while view["status"] == "active" and (version is None or view["version"] < version):
            seat = view["to_act"][0]
            headers = {"Authorization": f"Bearer {self.tokens[seat]}"}
            legal = requests.get(f"{self.base}/v1/games/{self.id}/actions", headers=headers, timeout=TIMEOUT).json()
            action = next((a for a in legal["actions"] if a.get("use") is True), legal["actions"][0])
            sent = requests.post(
                f"{self.base}/v1/games/{self.id}/actions", json={"action": action}, headers=headers, timeout=TIMEOUT
            )
            assert sent.status_code == 201, sent.text
            view = self.view()

    def replay(self, step: int, seat: int | None = None) -> dict[str, Any]:
        return replay_view(self.base, self.id, step, seat)


def expected(view: dict[str, Any]) -> tuple[set[str], int]:
    """The card ids a viewer of ``view`` may see, and how many cards it holds face down (hands it cannot see)."""
    state = view["state"]
    ids = {card for pile in state["combat"] + state["damage"] for card in pile}
    ids |= set(state["discards"]) | {entry["card"] for entry in state["selections"]}
    sizes = state["hand_sizes"]
    if "hands" in state:
        return ids | {card for hand in state["hands"] for card in hand}, 0
    if state["hand"] is not None:
        return ids | set(state["hand"]), sum(sizes) - sizes[view["you"]]
    return ids, sum(sizes)


class Watcher:
    """A browser page that records every console error and uncaught exception."""

    def __init__(self, browser: Browser, width: int = 1280, height: int = 900) -> None:
        self.page: Page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self, url: str, step: int) -> Page:
        self.page.goto(url)
        self.page.wait_for_selector(f'section.table[data-step="{step}"] .sni', timeout=WAIT_MS)
        return self.page

    def drawn(self) -> tuple[set[str], int]:
        cards = Counter(
            str(c) for c in self.page.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)")
        )
        hidden = cards.pop("hidden", 0)
        return set(cards), hidden


def test_the_table_shows_exactly_the_cards_each_viewer_may_see(base: str, browser: Browser) -> None:
    game = Game(base)
    watcher = Watcher(browser)

    game.play_until(SMOKE_ASKED)  # the game runs: a spectator sees the public view only
    for step in (2, RESOLVING_WOOD_5, SMOKE_ASKED):
        page = watcher.open(f"{base}/games/{game.id}?step={step}", step)
        assert page.locator("[data-as]").first.get_attribute("data-as") == "spectator"
        assert watcher.drawn() == expected(game.replay(step))
    ids, hidden = watcher.drawn()  # round 1's smoke phase, as the deal and the policy make it
    assert ids == {"fire-1", "wood-1", "wood-5"} and hidden == 18
    assert "deciding on smoke" in page.locator('.sni-mat[data-seat="1"]').inner_text()

    page = watcher.open(f"{base}/games/{game.id}?step={RESOLVING_WOOD_5}", RESOLVING_WOOD_5)
    assert watcher.drawn() == ({"fire-1", "wood-1", "wood-5"}, 18)
    assert page.locator(".sni-resolving").inner_text() == "▶ Now: cat's Wood 5"
    assert page.locator(".sni-step.sni-now [data-card]").get_attribute("data-card") == "wood-5"

    game.play_until()  # to the end and the seal: now every seat's view of every step may be shown
    last = game.view()["version"]
    assert game.view()["result"]["winners"] == [2]
    for step in (2, 3, RESOLVING_WOOD_5, BLOCKED, TONFA_RESOLVING, TONFA_USED, last):
        for seat in (None, 0, 1, 2):
            suffix = "" if seat is None else f"&as={seat}"
            page = watcher.open(f"{base}/games/{game.id}?step={step}{suffix}", step)
            assert page.locator("[data-as]").first.get_attribute("data-as") == (
                "spectator" if seat is None else str(seat)
            )
            assert watcher.drawn() == expected(game.replay(step, seat)), (step, seat)

    watcher.open(f"{base}/games/{game.id}?step=3&as=0", 3)  # round 1 begins: ann's own hand, the others face down
    assert watcher.drawn() == (set(DEAL["hands"][0]), 14)
    page = watcher.open(f"{base}/games/{game.id}?step={TONFA_RESOLVING}&as=0", TONFA_RESOLVING)
    ann_pile = page.locator('.sni-mat[data-seat="0"] .sni-combat [data-card]')
    assert ann_pile.evaluate_all("els => els.map(e => e.dataset.card)") == ["water-1", "wood-2", "fire-2", "water-3"]
    assert page.locator('.sni-mat[data-seat="2"] .sni-hand [data-card="hidden"]').count() == 3
    assert "▶ resolving" in page.locator('.sni-mat[data-seat="2"]').inner_text()
    assert "Tonfa 13" in page.locator(".sni-resolving").inner_text()
    blocked = watcher.open(f"{base}/games/{game.id}?step={BLOCKED}", BLOCKED)
    assert "Protected by a Block" in blocked.locator('.sni-mat[data-seat="2"]').inner_text()
    log = blocked.locator(f'.log li[data-seq="{TONFA_USED}"]').inner_text()
    assert "cat's Tonfa 13 took Water 3 from ann's pile and dropped it." in log
    assert watcher.errors == []


def test_screenshots_of_a_table_in_play_on_a_desktop_and_a_phone(base: str, browser: Browser) -> None:
    game = Game(base)
    game.play_until()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, height, name in ((1280, 900, "san-ni-ichi.png"), (375, 812, "san-ni-ichi-phone.png")):
        watcher = Watcher(browser, width, height)
        page = watcher.open(f"{base}/games/{game.id}?step={TONFA_RESOLVING}&as=0", TONFA_RESOLVING)
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off a phone's screen
        page.screenshot(path=str(SCREENSHOTS / name), full_page=width < 1280)
        assert watcher.errors == []
        watcher.page.close()


# cat's cards in the order she picks them: her Sai comes when ann's and bob's piles both stand, so it swaps them.
CAT_PICKS = ["wood-5", "sai-15", "block-11", "tonfa-13", "yoso-kogeki-17", "shuriken-21"]


def others_choose(legal: list[dict[str, Any]], seat: int) -> dict[str, Any]:
    """ann's and bob's policy: a smoke bomb when they may, a card on their own pile when they may, else the first."""
    return next((a for a in legal if a.get("use") is True), None) or next(
        (a for a in legal if a.get("target") == seat and "counter_to" not in a), legal[0]
    )


def cat_chooses(legal: list[dict[str, Any]], view: dict[str, Any], picked: int) -> dict[str, Any]:
    """cat's policy: her cards in CAT_PICKS' order, a smoke bomb when she may, her Yoso Kogeki discarded."""
    if legal[0]["type"] == "select" and picked < len(CAT_PICKS):
        return {"type": "select", "card": CAT_PICKS[picked]}
    resolving = (view["state"]["resolving"] or {}).get("card", "")
    if resolving.startswith("yoso-kogeki") and {"type": "discard"} in legal:
        return {"type": "discard"}
    return next((a for a in legal if a.get("use") is True), legal[0])


def clicks(action: dict[str, Any]) -> list[str]:
    """The table's data-pick tokens that make ``action``, in order; a button's selector when it has none."""
    kind = action["type"]
    if kind == "select":
        return [f"card:{action['card']}"]
    if kind == "play":
        return [f"pile:{action['target']}"] + ([f"pile:{action['counter_to']}"] if "counter_to" in action else [])
    if kind == "sai":
        return [f"pile:{p}" for p in action["piles"]]
    if kind == "shuriken":
        return [f"damage:{action['target']}"]
    if kind == "tonfa":
        return [f"pile:{action['pile']}", f"card:{action['discard']}"]
    shown = json.dumps(action, separators=(",", ":"))
    return [f".play .actions:not(.confirm) button[data-action='{shown}'] >> nth=0"]


def test_cat_plays_every_kind_of_move_by_clicking_the_table(base: str, browser: Browser) -> None:
    """cat's tab (her token in sessionStorage) makes every one of her moves by clicks: a card of her hand (secret:
    then "committed"), her card played on a combat pile, a Sai's two piles, a Tonfa's pile then the card to drop,
    a Shuriken's damage pile; a smoke bomb and a discard by their buttons. ann and bob play through the API."""
    game = Game(base)
    watcher = Watcher(browser)
    page = watcher.page
    page.goto(f"{base}/")
    page.evaluate(
        "([id, token]) => sessionStorage.setItem(`kifu:tokens:${id}`, JSON.stringify({2: token}))",
        [game.id, game.tokens[2]],
    )
    page.goto(f"{base}/games/{game.id}")
    page.wait_for_selector("[data-as='2'] .sni", timeout=WAIT_MS)
    made: list[dict[str, Any]] = []
    picked = 0
    view = game.view()
    while view["status"] == "active":
        seat = 2 if 2 in view["to_act"] else view["to_act"][0]
        headers = {"Authorization": f"Bearer {game.tokens[seat]}"}
        legal = requests.get(f"{base}/v1/games/{game.id}/actions", headers=headers, timeout=TIMEOUT).json()["actions"]
        if seat != 2:
            sent = requests.post(
                f"{base}/v1/games/{game.id}/actions",
                json={"action": others_choose(legal, seat)},
                headers=headers,
                timeout=TIMEOUT,
            )
            assert sent.status_code == 201, sent.text
            view = game.view()
            continue
        action = cat_chooses(legal, view, picked)
        picked += action["type"] == "select"
        page.wait_for_selector(f"[data-step='{view['version']}'] .sni", timeout=WAIT_MS)
        steps = clicks(action)
        for token in steps[:-1]:
            page.click(f".table [data-pick='{token}'].pickable", timeout=WAIT_MS)
            page.wait_for_selector(f".table [data-pick='{token}'].picked", timeout=WAIT_MS)
            if action["type"] == "tonfa":  # her Tonfa on ann's pile: the cards she may drop, highlighted
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / "san-ni-ichi-play.png"), full_page=True)
        last = steps[-1]
        page.click(last if last.startswith(".play") else f".table [data-pick='{last}'].pickable", timeout=WAIT_MS)
        made.append(action)
        page.wait_for_function(
            "v => Number(document.querySelector('[data-step]').dataset.step) > v", arg=view["version"], timeout=WAIT_MS
        )
        if len(made) == 1:  # her first card, picked in secret
            page.wait_for_selector(".play:has-text('Your choice is committed')", timeout=WAIT_MS)
        view = game.view()

    kinds = {a["type"] for a in made}
    assert kinds == {"select", "play", "smoke", "sai", "tonfa", "discard", "shuriken"}, kinds
    assert {"type": "sai", "piles": [0, 1]} in made
    events = requests.get(f"{base}/v1/games/{game.id}/events?limit=1000", timeout=TIMEOUT).json()["items"]
    cats = [e for e in events if e["type"] in ("action_taken", "choice_committed") and e["data"]["seat"] == 2]
    assert len(cats) == len(made)  # each move acted exactly once
    public = [a for a in made if a["type"] not in ("select", "smoke")]
    assert [e["data"]["action"] for e in cats if e["type"] == "action_taken"] == public
    assert watcher.errors == []
