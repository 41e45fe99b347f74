"""Front Line's table in the browser (issue 21): a fixed-deal game played through the HTTP API, then opened
at known steps in Chromium; the cards drawn (``data-card``) must be exactly those the replay's view shows,
face-down ones counted, with the log's sentences and no console error.

The deal: the rulebook's sample game (docs/rules/front-line.md), with jokers, each pile topped up to 34
cards so that 2 are set aside. ann attacks twice, bob moves up two cards, bob answers with a joker attack
and a plain one, ann moves up two, then both pass: the game ends by passes.
"""

from __future__ import annotations

from typing import Any

import requests
from playwright.sync_api import Browser, Page

from domain.games.front_line.cards import deck
from tests.e2e.test_http import TIMEOUT, act
from tests.support.browser import SCREENSHOTS, wider_than_the_screen
from tests.support.http_games import replay_view as replay

WAIT_MS = 30_000  # turns a hang into a failure; nothing waits for it
ANN = ["lizard-q", "rock-2", "water-6", "scissors-8", "lizard-7", "water-3"]
BOB = ["paper-7", "lizard-5", "rock-9", "scissors-2", "paper-10", "lizard-k", "joker-water", "scissors-3"]
SIZE = 34  # 2 x 34 of the 70 cards: 2 set aside


def piles() -> list[list[str]]:
    spare = [c for c in deck("shared", True) if c not in ANN + BOB]
    ann = ANN + spare[: SIZE - len(ANN)]
    spare = spare[SIZE - len(ANN) :]
    return [ann, BOB + spare[: SIZE - len(BOB)]]


def attack(*attacks: tuple[str, list[str]]) -> dict[str, Any]:
    return {"type": "attack", "attacks": [{"target": target, "cards": cards} for target, cards in attacks]}


PLAY: list[tuple[int, dict[str, Any]]] = [
    (0, attack(("paper-7", ["lizard-q"]), ("lizard-5", ["rock-2", "scissors-8"]))),
    (1, {"type": "refill", "cards": ["scissors-2", "paper-10"]}),
    (1, attack(("rock-2", ["scissors-2", "joker-water", "lizard-k"]), ("water-6", ["paper-10"]))),
    (0, {"type": "refill", "cards": ["scissors-8", "lizard-7"]}),
    (0, {"type": "pass"}),
    (1, {"type": "pass"}),
]
JOKER_ATTACK = 8  # the step of bob's joker attack (``attacked``): ann's refill is due


class Watched:
    """A page with every console error and uncaught error kept."""

    def __init__(self, browser: Browser, width: int, height: int) -> None:
        self.page: Page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, url: str) -> Page:
        self.page.goto(url)
        self.page.wait_for_selector(".table[data-step] .fl-table", timeout=WAIT_MS)
        return self.page

    def drawn(self) -> tuple[set[str], int]:
        ids: list[str] = self.page.eval_on_selector_all(".table [data-card]", "els => els.map(e => e.dataset.card)")
        return {i for i in ids if i != "hidden"}, ids.count("hidden")


def visible(view: dict[str, Any]) -> tuple[set[str], int]:
    """The card ids a viewer of ``view`` sees face up, and how many cards lie face down."""
    state = view["state"]
    ids = {c for zone in ("front", "reinforcements", "captured") for pile in state[zone] for c in pile}
    for attack in (state["last_turn"] or {}).get("attacks", []):
        ids |= {attack["target"], *attack["cards"]}
    hidden = 0
    if "draw_piles" in state:
        ids |= {c for pile in state["draw_piles"] for c in pile}
    else:
        hidden += sum(state["draw_sizes"])
    if "set_aside_cards" in state:
        ids |= set(state["set_aside_cards"])
    else:
        hidden += state["set_aside"]
    return ids, hidden


def check_step(watched: Watched, base: str, game_id: str, step: int, as_seat: int | None = None) -> dict[str, Any]:
    """Open the step's page and check its cards against the replay's view; answer that view."""
    suffix = "" if as_seat is None else f"&as={as_seat}"
    page = watched.open(f"{base}/games/{game_id}?step={step}{suffix}")
    table = page.locator(".table[data-step]")
    assert table.get_attribute("data-step") == str(step)
    assert table.get_attribute("data-as") == ("spectator" if as_seat is None else str(as_seat))
    view = replay(base, game_id, step, as_seat)
    assert watched.drawn() == visible(view)
    return view


def create_sample_game(base_url: str) -> requests.Response:
    """The sample game: ann and bob, jokers in, the fixed deal of ``piles()``."""
    body = {"game": "front-line", "players": [{"name": "ann"}, {"name": "bob"}], "options": {"jokers": True}}
    created = requests.post(f"{base_url}/v1/games", json={**body, "deal": {"piles": piles()}}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    return created


def test_front_line_table_at_known_steps_shows_exactly_the_visible_cards(base_url: str, browser: Browser) -> None:
    created = create_sample_game(base_url)
    game_id = created.json()["id"]
    seats = [{"Authorization": f"Bearer {s['token']}"} for s in created.json()["seats"]]
    for seat, action in PLAY[:3]:
        assert act(base_url, game_id, seats[seat], action).status_code == 201

    desktop = Watched(browser, 1280, 900)
    phone = Watched(browser, 375, 812)
    # while the game runs: the spectator's view in the refill phase, ann's draw pile and the set-aside face down
    view = check_step(desktop, base_url, game_id, JOKER_ATTACK)
    assert view["phase"] == "refill" and view["state"]["refill"]["seat"] == 0
    ids, hidden = desktop.drawn()
    assert {"joker-water", "rock-2", "water-6", "paper-7", "lizard-5"} <= ids  # the joker attack, both captures
    assert hidden == 28 + 26 + 2  # ann's draw pile, bob's (he drew 2 when he moved 2 up), the set-aside cards
    assert desktop.page.locator(".fl-movable").count() == 3  # ann's reinforcements that may move up
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    desktop.page.screenshot(path=str(SCREENSHOTS / "front-line.png"))
    check_step(phone, base_url, game_id, JOKER_ATTACK)
    phone.page.screenshot(path=str(SCREENSHOTS / "front-line-phone.png"), full_page=True)
    assert wider_than_the_screen(phone.page) == []  # nothing runs off a phone's screen

    for seat, action in PLAY[3:]:
        assert act(base_url, game_id, seats[seat], action).status_code == 201
    last = requests.get(f"{base_url}/v1/games/{game_id}", timeout=TIMEOUT).json()
    assert last["status"] == "finished" and last["result"]["reason"] == "passes"

    view = check_step(desktop, base_url, game_id, 2)  # the deal, seen once the game is over: everything
    ids, hidden = desktop.drawn()
    assert hidden == 0 and ids == set(piles()[0]) | set(piles()[1]) | set(view["state"]["set_aside_cards"])
    check_step(desktop, base_url, game_id, 4, as_seat=1)  # bob's view of ann's first attack: piles face down
    ids, hidden = desktop.drawn()
    assert {"paper-7", "lizard-5", "lizard-q", "scissors-8"} <= ids and hidden == 28 + 28 + 2
    log = desktop.page.locator('.log li[data-seq="4"]').inner_text()
    assert "ann captured 2 cards: Lizard Queen (12) took bob's Paper 7 (7)" in log
    assert "Rock 2 and Scissors 8 (10) took bob's Lizard 5 (5)" in log
    refill = desktop.page.locator('.log li[data-seq="6"]').inner_text()
    assert "bob moved Scissors 2 and Paper 10 up to the front line (chosen)" in refill
    assert "and drew Water Joker and Scissors 3; 26 left in the draw pile." in refill
    final = check_step(desktop, base_url, game_id, last["version"], as_seat=0)
    assert final["phase"] == "over" and desktop.page.locator(".fl-tag-win").count() == 2  # 2 captures each: a tie
    assert desktop.errors == [] and phone.errors == []


def seat_page(browser: Browser, base: str, game_id: str, seat: int, token: str) -> Watched:
    """A tab holding ``seat``'s token in sessionStorage (as the lobby leaves it), on the game's live page."""
    watched = Watched(browser, 1280, 900)
    watched.page.goto(f"{base}/")
    watched.page.evaluate(
        "([id, seat, token]) => sessionStorage.setItem(`kifu:tokens:${id}`, JSON.stringify({[seat]: token}))",
        [game_id, seat, token],
    )
    watched.open(f"{base}/games/{game_id}")
    return watched


def click_picks(page: Page, base: str, game_id: str, tokens: list[str]) -> None:
    """Click the table's ``tokens`` in order (each highlighted first), the last of them making the move at once."""
    version = requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()["version"]
    page.wait_for_selector(f".table[data-step='{version}'] .fl-table", timeout=WAIT_MS)
    for token in tokens:
        page.click(f".table [data-pick='{token}'].pickable", timeout=WAIT_MS)
    page.wait_for_function(
        "v => Number(document.querySelector('[data-step]').dataset.step) > v", arg=version, timeout=WAIT_MS
    )


def test_front_line_is_played_by_clicking_attacks_refills_and_a_pass(base_url: str, browser: Browser) -> None:
    """The sample game of the test above, every move made in the seats' tabs: ann's two attacks declared by
    clicking each target then its cards, bob's refill (two reinforcements), bob's joker attack and plain one,
    ann's refill, then both pass by the button. The events hold exactly the moves the clicks made."""
    created = create_sample_game(base_url)
    game_id = created.json()["id"]
    ann, bob = (seat_page(browser, base_url, game_id, s["seat"], s["token"]) for s in created.json()["seats"])

    # ann: an attack on Paper 7 with her Lizard Queen is enough: offered to confirm, as more may be added
    page = ann.page
    page.click(".table [data-pick='target:paper-7'].pickable", timeout=WAIT_MS)
    assert page.locator(".table [data-pick^='card:'].pickable").evaluate_all("els => els.map(e => e.dataset.pick)") == [
        "card:lizard-q"  # the only initiator: from the front line, of a suit that beats paper
    ]
    page.click(".table [data-pick='card:lizard-q'].pickable", timeout=WAIT_MS)
    page.wait_for_selector(".play .confirm button[data-confirm]", timeout=WAIT_MS)
    assert page.locator(".table [data-pick='target:lizard-5'].pickable").count() == 1  # the next attack may start
    page.click(".table [data-pick='target:lizard-5'].pickable", timeout=WAIT_MS)
    page.click(".table [data-pick='card:rock-2'].pickable", timeout=WAIT_MS)
    page.wait_for_selector(".table [data-pick='card:rock-2'].picked[data-order='2']", timeout=WAIT_MS)  # attack 2
    assert page.locator(".table [data-pick='card:lizard-q'].picked").get_attribute("data-order") == "1"
    assert page.locator(".play .confirm button").count() == 0  # 2 does not beat Lizard 5's defence 5
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)  # two attacks being declared, the second not enough yet
    page.screenshot(path=str(SCREENSHOTS / "front-line-attack.png"), full_page=True)
    click_picks(page, base_url, game_id, ["card:scissors-8"])  # 10 beats 5; nothing more to add: sent at once

    # bob: his refill, two of his three reinforcements; then a joker attack on Rock 2 and a plain one on Water 6
    click_picks(bob.page, base_url, game_id, ["card:scissors-2", "card:paper-10"])
    click_picks(
        bob.page,
        base_url,
        game_id,
        ["target:rock-2", "card:scissors-2", "card:joker-water", "card:lizard-k", "target:water-6", "card:paper-10"],
    )

    # ann: her refill, then both pass by the button
    click_picks(page, base_url, game_id, ["card:scissors-8", "card:lizard-7"])
    for watched in (ann, bob):
        version = requests.get(f"{base_url}/v1/games/{game_id}", timeout=TIMEOUT).json()["version"]
        watched.page.wait_for_selector(f".table[data-step='{version}'] .fl-table", timeout=WAIT_MS)
        watched.page.click(
            '.play .actions:not(.confirm) button[data-action=\'{"type":"pass"}\'] >> nth=0', timeout=WAIT_MS
        )
        watched.page.wait_for_function(
            "v => Number(document.querySelector('[data-step]').dataset.step) > v", arg=version, timeout=WAIT_MS
        )

    last = requests.get(f"{base_url}/v1/games/{game_id}", timeout=TIMEOUT).json()
    assert last["status"] == "finished" and last["result"]["reason"] == "passes"
    events = requests.get(f"{base_url}/v1/games/{game_id}/events?limit=1000", timeout=TIMEOUT).json()["items"]
    taken = [(e["data"]["seat"], e["data"]["action"]) for e in events if e["type"] == "action_taken"]
    assert taken == PLAY  # each move exactly once, as the clicks declared it
    assert ann.errors == [] and bob.errors == []
