"""The tournament page in Debian's Chromium (issue 21): created from the lobby's form by an organiser, started
with the page's button, followed live (rounds, tables linking to their games, the duplicate format's deals
committed then revealed, the standings as the projector folds them) to its final standings, its archive
verified from the page; a person's entrant token (kept by the form in this tab) opens its game as its seat."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import redis
import requests
import yaml
from playwright.sync_api import Page

from bootstrap import build
from projections.projector import Projector
from tests.e2e.conftest import work
from tests.support.browser import SCREENSHOTS, Console, wider_than_the_screen

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 15_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10


def test_the_page_listens_to_every_tournament_event_type() -> None:
    """An EventSource hands a named event only to that name's listeners: the page's list must be whole."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())["components"]["schemas"]
    declared = set(spec["TournamentEvent"]["properties"]["type"]["enum"])
    source = (ROOT / "entrypoints/web/static/pages/tournament.js").read_text()
    listed = set(re.findall(r'"([a-z_]+)"', source.split("TOURNAMENT_EVENT_TYPES = [", 1)[1].split("];", 1)[0]))
    assert listed == declared


def project(client: redis.Redis) -> None:
    Projector(build(client).store, client).run_until_idle()


def play_pending(base: str, tid: str, token: str) -> int:
    """Ann's first legal action in each of her games that waits on her; how many she made."""
    made = 0
    games = requests.get(f"{base}/v1/tournaments/{tid}/games", timeout=TIMEOUT).json()["items"]
    for table in games:
        if table["status"] != "playing" or 0 not in table["entrants"]:
            continue
        auth = {"Authorization": f"Bearer {token}"}
        legal = requests.get(f"{base}/v1/games/{table['game']}/actions", headers=auth, timeout=TIMEOUT).json()
        if legal["actions"]:
            body = {"action": legal["actions"][0], "expected_version": legal["version"]}
            r = requests.post(f"{base}/v1/games/{table['game']}/actions", json=body, headers=auth, timeout=TIMEOUT)
            assert r.status_code in (200, 201), r.text
            made += 1
    return made


def run_round(base: str, client: redis.Redis, tid: str, token: str, until: int) -> dict[str, Any]:
    """Run the bots' jobs and ann's moves until the tournament's log has ``until`` round_closed events."""
    for _ in range(500):
        work(client)
        project(client)
        events = requests.get(f"{base}/v1/tournaments/{tid}/events?limit=1000", timeout=TIMEOUT).json()["items"]
        if sum(e["type"] == "round_closed" for e in events) >= until:
            return dict(requests.get(f"{base}/v1/tournaments/{tid}", timeout=TIMEOUT).json())
        play_pending(base, tid, token)
    raise AssertionError(f"round {until} did not close")


def test_an_organiser_runs_a_duplicate_tournament_from_the_browser_to_its_final_standings(
    bot_server: str, redis_client: redis.Redis, page: tuple[Page, Console]
) -> None:
    tab, _console = page
    tab.goto(bot_server)
    form = tab.locator("form[data-form=tournament]")
    form.locator("select[name=game]").select_option("nin-nal")
    form.locator("select[name=format]").select_option("duplicate")
    form.locator("input[name=rounds]").fill("2")
    form.locator("input[aria-label='Entrant 0 name']").fill("ann")  # a person; the three others are bots
    form.locator("button[type=submit]").click()
    tab.wait_for_url(re.compile(r"/tournaments/t[0-9a-f]+$"), timeout=WAIT_MS)
    tid = tab.url.rsplit("/", 1)[1]
    held = json.loads(tab.evaluate(f"sessionStorage.getItem('kifu:tokens:{tid}')"))
    assert set(held) == {"organiser", "0"}  # the organiser's token and ann's, kept in this tab only

    tab.click("[data-command=start]", timeout=WAIT_MS)
    tab.wait_for_selector("[data-status=running]", timeout=WAIT_MS)
    work(redis_client)  # the runner pairs round 1; ann's game then waits on her
    tab.wait_for_selector("[data-round='1'] [data-deal=committed]", timeout=WAIT_MS)  # the deal, committed

    run_round(bot_server, redis_client, tid, held["0"], until=1)
    tab.wait_for_selector("[data-round='1'] [data-deal=revealed]", timeout=WAIT_MS)  # revealed once closed
    live = requests.get(f"{bot_server}/v1/tournaments/{tid}/standings", timeout=TIMEOUT).json()
    tab.wait_for_function(
        "n => document.querySelectorAll('[data-standings=live] tbody tr[data-entrant]').length === n",
        arg=len(live["standings"]),
        timeout=WAIT_MS,
    )
    tables = requests.get(f"{bot_server}/v1/tournaments/{tid}/games", timeout=TIMEOUT).json()["items"]
    round_one = [t for t in tables if t["round"] == 1]
    links = tab.locator("[data-round='1'] a[data-game-id]")
    assert sorted(links.evaluate_all("els => els.map(e => e.dataset.gameId)")) == sorted(t["game"] for t in round_one)

    view = run_round(bot_server, redis_client, tid, held["0"], until=2)
    assert view["status"] == "finished"
    try:
        tab.wait_for_selector("[data-standings=final]", timeout=WAIT_MS)
    except Exception as failed:
        shown = tab.inner_text("main")[:1500]
        raise AssertionError(f"no final standings; the page shows: {shown}; console: {_console.errors}") from failed
    shown = tab.locator("[data-standings=final] tbody tr").evaluate_all(
        "rows => rows.map(r => [Number(r.dataset.entrant), Number(r.dataset.place)])"
    )
    assert shown == [[row["entrant"], row["place"]] for row in view["standings"]]
    assert tab.locator("[data-command]").count() == 0  # nothing left to command
    (SCREENSHOTS / "tournament.png").parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / "tournament.png"), full_page=True)
    tab.set_viewport_size({"width": 375, "height": 800})  # a phone: nothing wider than the screen
    assert wider_than_the_screen(tab) == [], wider_than_the_screen(tab)[:12]
    tab.screenshot(path=str(SCREENSHOTS / "tournament-phone.png"), full_page=True)
    tab.set_viewport_size({"width": 1280, "height": 1000})

    tab.click("[data-verify]")  # the archive, verified by POST /v1/audits from the page
    tab.wait_for_selector(".verdict[data-verdict=verified]", timeout=WAIT_MS)
    with tab.expect_download() as downloading:
        tab.click("text=Download the archive")
    archive = json.loads(Path(downloading.value.path()).read_text())
    assert archive["complete"] is True and len(archive["games"]) == 4

    # ann's game, opened from the page: her entrant token is her seat token there.
    ann_game = next(t for t in round_one if 0 in t["entrants"])
    tab.click(f"[data-round='1'] a[data-game-id='{ann_game['game']}']")
    tab.wait_for_selector(f"[data-as='{ann_game['entrants'].index(0)}']", timeout=WAIT_MS)

    tab.goto(bot_server)  # the lobby lists it
    tab.wait_for_selector(f"[data-tournament-id='{tid}']", timeout=WAIT_MS)
