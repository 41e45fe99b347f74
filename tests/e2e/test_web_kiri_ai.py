"""Kiri-ai's table in Debian's Chromium (issue 21): a fixed-deal duel played through the HTTP API to its end, then
replayed at known steps; at each, the cards drawn (``data-card``) are exactly those the replay's view shows, face
down where the viewer may not see them. Screenshots of a mid-game table go to ``SCREENSHOTS``
(tests/support/browser.py).

The fixed duel (red ann holds Kesa, blue bob Counterattack, Zan-Tetsu is out of play):

- round 1: red charges (5 to 3) and high-strikes at distance 2, a hit; blue approaches (0 to 1) and feints.
- round 2: red approaches (3 to 2), blue changes to earth; red's Kesa and blue's low strike both land: cancelled.
- round 3: red's low strike lands and blue's Counterattack turns it: red injured; then blue approaches to red's
  space and red's balanced strike lands: blue, injured already, is defeated.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import requests
from playwright.sync_api import Page

from tests.support.browser import SCREENSHOTS, Console, wider_than_the_screen
from tests.support.http_games import replay_view as replay

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 15_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10
FACE_CARD = {
    "approach": "approach-retreat",
    "retreat": "approach-retreat",
    "charge": "charge-change-stance",
    "change-stance": "charge-change-stance",
    "high-strike": "high-strike",
    "low-strike": "low-strike",
    "balanced-strike": "balanced-strike",
}
PROGRAMS = [  # (red's, blue's) per round
    (("charge", "high-strike"), ("approach", "balanced-strike")),
    (("approach", "special"), ("change-stance", "low-strike")),
    (("low-strike", "balanced-strike"), ("special", "approach")),
]


def create_fixed_duel(base: str, **body: Any) -> dict[str, Any]:
    r = requests.post(
        f"{base}/v1/games",
        json={
            "game": "kiri-ai",
            "players": [{"name": "ann"}, {"name": "bob"}],
            "deal": {"specials": ["kesa", "counterattack"]},
            **body,
        },
        timeout=TIMEOUT,
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


def program(base: str, game: dict[str, Any], seat: int, first: str, second: str) -> None:
    answer = requests.post(
        f"{base}/v1/games/{game['id']}/actions",
        json={"action": {"type": "program", "first": first, "second": second}},
        headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 201, answer.text


def log_of(base: str, game_id: str) -> list[dict[str, Any]]:
    return list(requests.get(f"{base}/v1/games/{game_id}/events?limit=1000", timeout=TIMEOUT).json()["items"])


def expected_cards(view: dict[str, Any]) -> tuple[Counter[str], int]:
    """The card ids the view shows face up, and how many cards it holds face down (docs/rules/kiri-ai.md, "View").

    Each card where it lies: in a hand (the viewer's own or, once over, both; else face down, as many as
    ``hand_sizes``), played in a step of this round already resolved, set aside, a special spent in an earlier
    round, and the third special (face down until the end; not there before the deal).
    """
    state = view["state"]
    own = view["you"]
    shown: Counter[str] = Counter()
    hidden = 0
    played = [log for log in state["last_round"] if log["step"] <= state["step"]] if state["step"] else []
    for seat in (0, 1):
        known = state["hands"][seat] if "hands" in state else state["hand"] if seat == own else None
        if known is None:
            hidden += state["hand_sizes"][seat]
        else:
            shown.update(known)
        faces = [log["actions"][seat] for log in played]
        cards = [state["specials_used"][seat] if f == "special" else FACE_CARD[f] for f in faces]
        shown.update(cards)
        if state["set_aside"][seat]:
            shown[state["set_aside"][seat]] += 1
        spent = state["specials_used"][seat]
        if spent and spent not in cards:
            shown[spent] += 1
    if state.get("set_aside_special"):
        shown[state["set_aside_special"]] += 1
    elif state["round"] > 0:
        hidden += 1
    return shown, hidden


def drawn(page: Page) -> tuple[Counter[str], int]:
    ids = page.eval_on_selector_all(".table [data-card]", "els => els.map(e => e.dataset.card)")
    return Counter(i for i in ids if i != "hidden"), ids.count("hidden")


def seq_of(events: list[dict[str, Any]], kind: str, nth: int = 0, **data: Any) -> int:
    found = [e["seq"] for e in events if e["type"] == kind and all(e["data"].get(k) == v for k, v in data.items())]
    return int(found[nth])


def open_step(page: Page, base: str, game_id: str, step: int, seat: int | None) -> None:
    page.goto(f"{base}/games/{game_id}?step={step}" + ("" if seat is None else f"&as={seat}"))
    page.wait_for_selector(f"[data-step='{step}'][data-as='{'spectator' if seat is None else seat}']", timeout=WAIT_MS)
    page.wait_for_selector(".kiri", timeout=WAIT_MS)


def test_the_duel_is_drawn_at_each_step_with_exactly_the_cards_the_view_shows(
    web: str, tab: tuple[Page, Console]
) -> None:
    page, console = tab
    game = create_fixed_duel(web)
    game_id = game["id"]
    for red, blue in PROGRAMS[:2]:
        program(web, game, 0, *red)
        program(web, game, 1, *blue)
    program(web, game, 0, *PROGRAMS[2][0])  # round 3: red has programmed, blue has not
    events = log_of(web, game_id)
    r2_step1 = seq_of(events, "choices_revealed", 3) - 1  # round 2, step 1 resolved, step 2 still secret
    r2_step2 = seq_of(events, "round_ended", 1) - 1  # round 2, both steps resolved, before the round ends
    now = events[-1]["seq"]

    # While the duel runs, a spectator sees no hand and not the special out of play.
    page.goto(f"{web}/games/{game_id}")
    page.wait_for_selector(f"[data-step='{now}'][data-as='spectator'] .kiri", timeout=WAIT_MS)
    view = requests.get(f"{web}/v1/games/{game_id}", timeout=TIMEOUT).json()
    assert drawn(page) == expected_cards(view)
    assert drawn(page) == (Counter({"low-strike": 1, "kesa": 1}), 5 + 5 + 1)  # blue's set-aside, red's spent Kesa
    assert "programmed, secret" in page.inner_text(".kiri-side[data-seat='0'] .kiri-program")
    for step in (1, 2, r2_step1, r2_step2):
        open_step(page, web, game_id, step, None)
        assert drawn(page) == expected_cards(replay(web, game_id, step, None)), step
    open_step(page, web, game_id, r2_step1, None)
    assert drawn(page) == (
        Counter({"approach-retreat": 1, "charge-change-stance": 1, "high-strike": 1, "balanced-strike": 1}),
        4 + 4 + 1,  # both hands (a card each played, one set aside), the special out of play
    )
    assert "Red: ann" in page.inner_text(".kiri-side[data-seat='0'] h3")
    assert page.get_attribute(".kiri-space[data-space='2'] .kiri-samurai", "data-seat") == "0"
    open_step(page, web, game_id, r2_step2, None)
    assert drawn(page)[0]["kesa"] == 1  # revealed in red's second slot
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "kiri-ai.png"), full_page=True)
    page.set_viewport_size({"width": 375, "height": 900})
    open_step(page, web, game_id, r2_step2, None)
    page.screenshot(path=str(SCREENSHOTS / "kiri-ai-phone.png"), full_page=True)
    assert wider_than_the_screen(page) == []  # nothing runs off a phone's screen
    page.set_viewport_size({"width": 1280, "height": 900})

    # Once over, everything is public: every seat's view at every step, and the specials by name.
    program(web, game, 1, *PROGRAMS[2][1])
    events = log_of(web, game_id)
    last = events[-1]["seq"]
    assert events[-1]["type"] == "game_sealed"
    for step in (1, 2, r2_step1, r2_step2, seq_of(events, "round_ended", 1), seq_of(events, "defeated"), last):
        for seat in (None, 0, 1):
            open_step(page, web, game_id, step, seat)
            assert drawn(page) == expected_cards(replay(web, game_id, step, seat)), (step, seat)
    open_step(page, web, game_id, last, 1)
    shown, hidden = drawn(page)
    assert hidden == 0 and shown["zan-tetsu"] == 1 and shown["kesa"] == 1 and shown["counterattack"] == 1
    assert "defeated" in page.inner_text(".kiri-samurai[data-seat='1']")
    hit = seq_of(events, "attacked", 0, seat=0)
    assert page.inner_text(f".log [data-seq='{hit}']").endswith("ann's High Strike from heaven at distance 2: a hit.")
    assert console.errors == []


def test_the_advanced_battlefield_shows_the_start_zones_then_the_secret_starts_as_they_are_revealed(
    web: str, tab: tuple[Page, Console]
) -> None:
    page, console = tab
    game = create_fixed_duel(web, options={"battlefield": "advanced"})
    game_id, red = game["id"], game["seats"][0]["token"]
    answer = start_at(web, game_id, red, 4, "earth")
    seat_tab(page, web, game_id, 0, red)  # this tab holds red's token, as after creating the game in the lobby
    page.wait_for_selector(f"[data-step='{answer.json()['version']}'][data-as='0'] .kiri", timeout=WAIT_MS)
    view = requests.get(f"{web}/v1/games/{game_id}", headers={"Authorization": f"Bearer {red}"}, timeout=TIMEOUT).json()
    assert drawn(page) == expected_cards(view)
    shown, hidden = drawn(page)
    assert shown["kesa"] == 1 and "counterattack" not in shown and hidden == 6 + 1  # blue's hand, the third special
    assert page.locator(".kiri-space").count() == 8
    assert page.locator(".kiri-zone.red").count() == 3 and page.locator(".kiri-zone.blue").count() == 3
    assert "Start: space 4 in earth (secret)" in page.inner_text(".kiri-side[data-seat='0']")
    assert "Start: choosing" in page.inner_text(".kiri-side[data-seat='1']")

    answer = start_at(web, game_id, game["seats"][1]["token"], 3, "heaven")
    page.wait_for_selector(f"[data-step='{answer.json()['version']}'] .kiri", timeout=WAIT_MS)  # live, by the stream
    assert page.get_attribute(".kiri-space[data-space='4'] .kiri-samurai", "data-seat") == "0"
    assert page.get_attribute(".kiri-space[data-space='3'] .kiri-samurai", "data-seat") == "1"
    assert "Earth" in page.inner_text(".kiri-space[data-space='4'] .kiri-samurai")
    assert page.locator(".kiri-zone").count() == 0
    placed = seq_of(log_of(web, game_id), "samurai_placed")
    assert page.inner_text(f".log [data-seq='{placed}']").endswith(
        "ann (Red) on space 4 in earth, bob (Blue) on space 3 in heaven."
    )
    assert console.errors == []


def start_at(web: str, game_id: str, token: str, space: int, stance: str) -> requests.Response:
    """A seat's secret start on the advanced battlefield, through the API."""
    action = {"type": "setup", "space": space, "stance": stance}
    answer = requests.post(
        f"{web}/v1/games/{game_id}/actions",
        json={"action": action},
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 201, answer.text
    return answer


def seat_tab(page: Page, base: str, game_id: str, seat: int, token: str) -> None:
    """Open the game in ``page`` holding ``seat``'s token in sessionStorage, as the lobby leaves it."""
    page.goto(f"{base}/")
    page.evaluate(
        "([id, seat, token]) => sessionStorage.setItem(`kifu:tokens:${id}`, JSON.stringify({[seat]: token}))",
        [game_id, seat, token],
    )
    page.goto(f"{base}/games/{game_id}")
    page.wait_for_selector(f"[data-as='{seat}'] .kiri", timeout=WAIT_MS)


def click_pick(page: Page, token: str) -> None:
    page.click(f".table [data-pick='{token}'].pickable", timeout=WAIT_MS)


def committed(events: list[dict[str, Any]], seat: int) -> int:
    return sum(1 for e in events if e["type"] == "choice_committed" and e["data"]["seat"] == seat)


def test_red_programs_two_rounds_by_clicking_faces_of_the_cards_in_her_hand(
    web: str, tab: tuple[Page, Console]
) -> None:
    """The program is two clicks on the table, in order: the face played first, then the face played second
    (a one-face card whole, a two-face card on one of its faces, the special card as "special")."""
    page, console = tab
    game = create_fixed_duel(web)
    game_id = game["id"]
    seat_tab(page, web, game_id, 0, game["seats"][0]["token"])
    for rnd, (first, second) in enumerate([PROGRAMS[0][0], PROGRAMS[1][0]], start=1):
        version = requests.get(f"{web}/v1/games/{game_id}", timeout=TIMEOUT).json()["version"]
        page.wait_for_selector(f"[data-step='{version}'] .kiri", timeout=WAIT_MS)
        click_pick(page, f"face:{first}")
        page.wait_for_selector(f".table [data-pick='face:{first}'].picked[data-order='1']", timeout=WAIT_MS)
        # the other face of the same card may not be second; a face of another card may
        sibling = {"charge": "change-stance", "approach": "retreat"}[first]
        assert page.locator(f".table [data-pick='face:{sibling}'].pickable").count() == 0
        assert page.locator(f".table [data-pick='face:{second}'].pickable").count() == 1
        if rnd == 1:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "kiri-ai-play.png"), full_page=True)
        click_pick(page, f"face:{second}")
        page.wait_for_selector(".play:has-text('Your choice is committed')", timeout=WAIT_MS)
        assert page.locator(".table [data-pick].pickable").count() == 0
        assert f"{face_name(first)} (secret)" in page.inner_text(".kiri-side[data-seat='0'] .kiri-program")
        events = log_of(web, game_id)
        assert committed(events, 0) == rnd  # one program (committed in two parts), exactly once
        program(web, game, 1, *PROGRAMS[rnd - 1][1])
    events = log_of(web, game_id)
    started = [e["data"]["actions"][0] for e in events if e["type"] == "step_started"]
    assert started == ["charge", "high-strike", "approach", "special"]  # what the clicks programmed, in order
    assert committed(events, 0) == 2
    assert console.errors == []


def test_red_picks_her_advanced_start_by_clicking_a_space_and_a_stance(web: str, tab: tuple[Page, Console]) -> None:
    page, console = tab
    game = create_fixed_duel(web, options={"battlefield": "advanced"})
    game_id = game["id"]
    seat_tab(page, web, game_id, 0, game["seats"][0]["token"])
    page.wait_for_selector(".table [data-pick='space:4'].pickable", timeout=WAIT_MS)  # her move is ready
    assert page.locator(".table [data-pick^='space:'].pickable").count() == 3  # her start zone: 4, 5, 6
    click_pick(page, "stance:earth")  # either order: the stance first
    page.wait_for_selector(".table [data-pick='stance:earth'].picked", timeout=WAIT_MS)
    click_pick(page, "space:4")
    page.wait_for_selector(".play:has-text('Your choice is committed')", timeout=WAIT_MS)
    assert "Start: space 4 in earth (secret)" in page.inner_text(".kiri-side[data-seat='0']")
    assert committed(log_of(web, game_id), 0) == 1
    start_at(web, game_id, game["seats"][1]["token"], 3, "heaven")
    placed = next(e for e in log_of(web, game_id) if e["type"] == "samurai_placed")
    assert placed["data"]["samurai"][0] == {"space": 4, "stance": "earth"}
    assert console.errors == []


def face_name(face: str) -> str:
    """A face as games/kiri-ai.js names it."""
    return {"charge": "Charge", "approach": "Approach"}[face]
