"""The web app's pages in Debian's Chromium (issue 21): the lobby's create and join, a live spectator, a replay
stepped with the keyboard, deep links; no console error on any of them. Each game's own drawing has its own
test (``test_web_<game>.py``)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import redis
import requests
import yaml
from playwright.sync_api import Browser, Page

from bootstrap import build
from projections.projector import Projector
from tests.support.browser import SCREENSHOTS, Console, wider_than_the_screen
from tests.support.http_games import finished_san_ban

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 15_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10
PREFIXES = ("SanBan", "NinNal", "KiriAi", "SanNiIchi", "FrontLine")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def table_clicks(legal: dict[str, Any]) -> list[str]:
    """What a player clicks for a legal San Ban move: the data-pick tokens on the table, or a button's selector."""
    if "choose" in legal:
        return [f"card:{card}" for card in legal["choose"]["from"][: legal["choose"]["count"]]]
    action = legal["actions"][0]
    if action["type"] == "place":
        return [f"card:{action['card']}", f"cell:{action['cell']}"]
    return [f".play button[data-action='{json.dumps(action, separators=(',', ':'))}'] >> nth=0"]


def san_ban(base: str, **body: Any) -> dict[str, Any]:
    players = body.pop("players", [{"name": "ann"}, {"name": "bob"}])
    r = requests.post(f"{base}/v1/games", json={"game": "san-ban", "players": players, **body}, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_the_pages_are_served_with_their_modules_and_nothing_from_elsewhere(web: str) -> None:
    for path in ("/", "/games/gunknown", "/tournaments/tunknown", "/audit"):
        r = requests.get(web + path, timeout=TIMEOUT)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
        assert "default-src 'self'" in r.headers["Content-Security-Policy"]
        sources = re.findall(r'(?:src|href)="([^"]+)"', r.text)
        assert sources and all(s.startswith("/") or s.startswith("data:") for s in sources), sources
    module = requests.get(f"{web}/app/pages/game.js", timeout=TIMEOUT)
    assert module.status_code == 200 and module.headers["Content-Type"].startswith("text/javascript")
    for missing in ("/app/secret/x.js", "/app/pages/nope.js", "/app/pages/game.py", "/app/..%2F__init__.py"):
        assert requests.get(web + missing, timeout=TIMEOUT).status_code == 404, missing


def test_the_live_page_listens_to_every_event_type_of_every_game() -> None:
    """An EventSource hands a named event only to that name's listeners: the page's list must be whole."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())["components"]["schemas"]
    declared = {t for prefix in PREFIXES for t in spec[f"{prefix}Event"]["discriminator"]["mapping"]}
    source = (ROOT / "entrypoints/web/static/pages/game.js").read_text()
    listed = set(re.findall(r'"([a-z_]+)"', source.split("EVENT_TYPES = [", 1)[1].split("];", 1)[0]))
    assert listed == declared


def test_a_replay_is_stepped_with_the_keyboard_and_the_url_follows(web: str, page: tuple[Page, Console]) -> None:
    tab, _console = page
    game = san_ban(web)
    last = game["version"]
    assert last >= 3
    tab.goto(f"{web}/games/{game['id']}?step=2")
    tab.wait_for_selector("[data-step='2'][data-as='spectator']", timeout=WAIT_MS)
    tab.keyboard.press("ArrowRight")
    tab.wait_for_selector("[data-step='3']", timeout=WAIT_MS)
    assert tab.url.endswith(f"/games/{game['id']}?step=3")
    tab.keyboard.press("Home")
    tab.wait_for_selector("[data-step='1']", timeout=WAIT_MS)
    tab.keyboard.press("ArrowLeft")  # nothing before the first step
    tab.keyboard.press("End")
    tab.wait_for_selector(f"[data-step='{last}']", timeout=WAIT_MS)
    assert tab.url.endswith(f"?step={last}")
    tab.click(".log [data-seq='1'] a")
    tab.wait_for_selector("[data-step='1']", timeout=WAIT_MS)
    assert "created for ann, bob" in tab.inner_text(".log li.current")


def test_a_table_stepped_to_each_step_is_the_table_a_deep_link_draws(web: str, page: tuple[Page, Console]) -> None:
    """A step changes only what differs in the table (lib/h.js morph): stepped there from step 1 with the
    right arrow, each step's table is exactly (its HTML) the one a fresh page at ``?step=N&as=0`` draws."""
    tab, _console = page
    record = finished_san_ban(web)
    game_id, last = record["game_id"], len(record["events"])
    fresh = tab.context.browser.new_page()  # type: ignore[union-attr]
    tab.goto(f"{web}/games/{game_id}?step=1&as=0")
    tab.wait_for_selector("[data-step='1'][data-as='0']", timeout=WAIT_MS)
    for step in range(2, last + 1):
        tab.keyboard.press("ArrowRight")
        tab.wait_for_selector(f"[data-step='{step}']", timeout=WAIT_MS)
        fresh.goto(f"{web}/games/{game_id}?step={step}&as=0")
        fresh.wait_for_selector(f"[data-step='{step}'][data-as='0']", timeout=WAIT_MS)
        assert tab.inner_html(".table") == fresh.inner_html(".table"), f"step {step}"
    fresh.close()


def test_a_spectator_sees_a_move_made_through_the_api(web: str, page: tuple[Page, Console]) -> None:
    tab, _console = page
    game = san_ban(web, options={"mode": "gamer"})
    tab.goto(f"{web}/games/{game['id']}")
    tab.wait_for_selector(f"[data-step='{game['version']}'][data-as='spectator']", timeout=WAIT_MS)  # live, latest
    tab.wait_for_function("() => !!document.querySelector('.badge.live')", timeout=WAIT_MS)
    token = game["seats"][0]["token"]
    legal = requests.get(
        f"{web}/v1/games/{game['id']}/actions", headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT
    ).json()
    moved = time.monotonic()
    r = requests.post(
        f"{web}/v1/games/{game['id']}/actions",
        json={"action": legal["actions"][0]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 201, r.text
    version = r.json()["version"]
    tab.wait_for_selector(f"[data-step='{version}']", timeout=WAIT_MS)
    shown_after = time.monotonic() - moved
    assert tab.query_selector(f".log [data-seq='{version}']") is not None
    print(f"the spectator's page showed the move {shown_after * 1000:.0f} ms after it was made")  # the closing note's


def test_a_search_seats_tag_shows_the_budget_it_plays_with(web: str, page: tuple[Page, Console]) -> None:
    """The seat's tag names the bot; a search seat's tooltip gives the budget its record commits to."""
    tab, console = page
    players = [{"name": "ann"}, {"name": "sol", "bot": "search"}, {"name": "gus", "bot": "greedy"}]
    created = requests.post(f"{web}/v1/games", json={"game": "nin-nal", "players": players}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    settings = created.json()["seats"][1]["bot_settings"]
    tab.goto(f"{web}/games/{created.json()['id']}")
    tag = tab.locator("li[data-seat='1'] .tag", has_text="bot: search")
    tag.wait_for(timeout=WAIT_MS)
    assert tag.get_attribute("title") == f"so-ismcts: {settings['iterations']} iterations per decision"
    assert tab.locator("li[data-seat='2'] .tag", has_text="bot: greedy").get_attribute("title") is None
    assert console.errors == []


def test_an_expectimax_seats_tag_shows_its_depth(web: str, page: tuple[Page, Console]) -> None:
    """San Ban's advanced mode is searched by expectimax: the tooltip gives its depth, not iterations."""
    tab, console = page
    players = [{"name": "ann"}, {"name": "deep", "bot": "search"}]
    body = {"game": "san-ban", "players": players, "options": {"mode": "advanced"}}
    created = requests.post(f"{web}/v1/games", json=body, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    settings = created.json()["seats"][1]["bot_settings"]
    tab.goto(f"{web}/games/{created.json()['id']}")
    tag = tab.locator("li[data-seat='1'] .tag", has_text="bot: search")
    tag.wait_for(timeout=WAIT_MS)
    expected = f"expectimax: {settings['depth']} placements ahead, to the end from {settings['exact']} empty cells"
    assert tag.get_attribute("title") == expected
    assert console.errors == []


def test_the_lobby_creates_a_game_and_a_visitor_joins_its_open_seat(
    web: str, redis_client: redis.Redis, page: tuple[Page, Console]
) -> None:
    tab, _console = page
    tab.goto(f"{web}/")
    tab.wait_for_selector("form.create select[name=game]", timeout=WAIT_MS)
    tab.select_option("form.create select[name=game]", "san-ban")
    rows = tab.query_selector_all(".seat-row")
    assert len(rows) == 2
    rows[0].query_selector("[name=name]").fill("ann")  # type: ignore[union-attr]
    rows[1].query_selector("[name=kind]").select_option("open")  # type: ignore[union-attr]
    tab.select_option("select[name='option:mode']", '"gamer"')
    tab.click("form.create button[type=submit]")
    tab.wait_for_url(re.compile(r"/games/g[0-9a-f]+$"), timeout=WAIT_MS)
    game_id = tab.url.rsplit("/", 1)[1]
    tab.wait_for_selector("[data-as='0']", timeout=WAIT_MS)  # the creator's token kept in the tab: her seat
    view = requests.get(f"{web}/v1/games/{game_id}", timeout=TIMEOUT).json()
    assert view["options"]["mode"] == "gamer" and view["seats"][0]["name"] == "ann" and view["seats"][1]["open"]

    visitor = tab.context.browser.new_page()  # type: ignore[union-attr]
    console = Console(visitor)
    visitor.on("dialog", lambda dialog: dialog.accept("cy"))
    wait_for_lobby(web, redis_client, game_id)
    visitor.goto(f"{web}/")
    visitor.wait_for_selector(f"[data-game-id='{game_id}'] button[data-join='1']", timeout=WAIT_MS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    visitor.screenshot(path=str(SCREENSHOTS / "lobby.png"))
    visitor.set_viewport_size({"width": 375, "height": 800})  # a phone: nothing wider than the screen
    assert wider_than_the_screen(visitor) == [], wider_than_the_screen(visitor)[:12]
    visitor.screenshot(path=str(SCREENSHOTS / "lobby-phone.png"), full_page=True)
    visitor.click(f"[data-game-id='{game_id}'] button[data-join='1']", timeout=WAIT_MS)
    visitor.wait_for_url(re.compile(f"/games/{game_id}$"), timeout=WAIT_MS)
    visitor.wait_for_selector("[data-as='1']", timeout=WAIT_MS)
    assert requests.get(f"{web}/v1/games/{game_id}", timeout=TIMEOUT).json()["seats"][1]["name"] == "cy"
    visitor.close()
    assert console.errors == []


def wait_for_lobby(web: str, client: redis.Redis, game_id: str) -> None:
    """The lobby is a read model: the game is in it once a projector has applied its creation."""
    wired = build(client)
    Projector(wired.store, wired.client).run_until_idle()
    assert any(g["id"] == game_id for g in requests.get(f"{web}/v1/games?open=true", timeout=TIMEOUT).json()["items"])


def test_a_whole_san_ban_game_is_played_by_clicking(web: str, browser: Browser) -> None:
    """Two tabs, one per seat, each given its token through the page's own form; every move is made by
    clicking on the table: five cards of the deck, a card of the hand then an empty cell, or a button for
    who starts. The last click of each move is a double click, which acts once."""
    game = san_ban(web)
    tabs, consoles = [], []
    for seat in game["seats"]:
        tab = browser.new_page(viewport={"width": 1000, "height": 800})
        consoles.append(Console(tab))
        tab.goto(f"{web}/games/{game['id']}")
        tab.fill(".play input[name=token]", seat["token"], timeout=WAIT_MS)
        tab.click(".play button[type=submit]")
        tab.wait_for_selector(f"[data-as='{seat['seat']}']", timeout=WAIT_MS)
        tabs.append(tab)
    moves, keyboard_move = 0, False
    for _ in range(100):
        view = requests.get(f"{web}/v1/games/{game['id']}", timeout=TIMEOUT).json()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        tab = tabs[seat]
        tab.wait_for_selector(f"[data-step='{view['version']}']", timeout=WAIT_MS)  # the stream brought it
        token = game["seats"][seat]["token"]
        legal = requests.get(f"{web}/v1/games/{game['id']}/actions", headers=bearer(token), timeout=TIMEOUT).json()
        for click in table_clicks(legal)[:-1]:
            tab.click(f".table [data-pick='{click}'].pickable", timeout=WAIT_MS)
            tab.wait_for_selector(f".table [data-pick='{click}'].picked", timeout=WAIT_MS)
        if (
            legal["actions"]
            and legal["actions"][0]["type"] == "place"
            and not (SCREENSHOTS / "san-ban-play.png").exists()
        ):
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)  # a card chosen, the empty cells offered
            tab.screenshot(path=str(SCREENSHOTS / "san-ban-play.png"), full_page=True)
        last = table_clicks(legal)[-1]
        if last.startswith("cell:") and not keyboard_move:  # one move by the keyboard alone: Tab there, Enter
            tab.focus(f".table [data-pick='{last}'].pickable[tabindex='0'][role=button]", timeout=WAIT_MS)
            tab.keyboard.press("Enter")
            keyboard_move = True
        else:
            tab.dblclick(
                f".table [data-pick='{last}'].pickable" if not last.startswith(".play") else last, timeout=WAIT_MS
            )
        moves += 1
        tab.wait_for_function(
            "v => Number(document.querySelector('[data-step]').dataset.step) > v", arg=view["version"], timeout=WAIT_MS
        )
    else:
        raise AssertionError("the game did not end after 100 moves")
    assert keyboard_move
    actions = [
        e
        for e in requests.get(f"{web}/v1/games/{game['id']}/events?limit=1000", timeout=TIMEOUT).json()["items"]
        if e["type"] in ("action_taken", "choice_committed")
    ]
    assert len(actions) == moves  # each double click acted exactly once
    tabs[0].wait_for_selector(".game-head:has-text('finished')", timeout=WAIT_MS)
    tabs[0].click("[data-verify]")  # the record, verified by POST /v1/audits from the page
    tabs[0].wait_for_selector(".verdict[data-verdict=verified]", timeout=WAIT_MS)
    with tabs[1].expect_download() as downloading:
        tabs[1].click("text=Download the record")
    record = json.loads(Path(downloading.value.path()).read_text())
    assert record["game_id"] == game["id"] and record["events"][-1]["type"] == "game_sealed"
    for tab, console in zip(tabs, consoles):
        tab.wait_for_selector(".game-head:has-text('finished')", timeout=WAIT_MS)
        tab.close()
        assert console.errors == []
