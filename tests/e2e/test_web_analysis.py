"""A finished game's analysis on its page, in Debian's Chromium (pages/analysis.js, docs/web.md, "Analysis").

A game of bots is played out by the ``kifu`` queue's worker; its page offers "Analyse this game", whose
click queues the analysis (``POST``); the ``kifu-analysis`` queue's worker runs it, and the page, polling,
shows it done and stops polling. Then: the evaluation graph has one point per analysed decision with the
API's label, a click on a point steps the page there (the URL follows), the log's lines carry their
decisions' labels, the suggestion under the table shows the engine's best action at and just before its
step, a running game has no analysis section, and a 390-pixel phone has nothing wider than its screen.
Screenshots go to ``SCREENSHOTS`` (tests/support/browser.py): ``analysis.png`` and ``analysis-phone.png``.
"""

from __future__ import annotations

import json
from typing import Any

import redis
import requests
from playwright.sync_api import Browser, Page
from rq import Queue, SimpleWorker

from adapters.analysis_store import ANALYSIS_QUEUE
from tests.e2e.conftest import work
from tests.support.browser import SCREENSHOTS, Console, wider_than_the_screen

WAIT_MS = 30_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10
BOTS = [{"name": "ann", "bot": "greedy"}, {"name": "bob", "bot": "random"}]


def finished_game(base: str, client: redis.Redis, players: list[dict[str, str]] = BOTS) -> str:
    created = requests.post(f"{base}/v1/games", json={"game": "nin-nal", "players": players}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    game_id = str(created.json()["id"])
    work(client)
    assert requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()["status"] == "finished"
    return game_id


def analyse(client: redis.Redis) -> None:
    SimpleWorker([Queue(ANALYSIS_QUEUE, connection=client)], connection=client).work(burst=True)


def the_analysis(base: str, game_id: str) -> dict[str, Any]:
    answer = requests.get(f"{base}/v1/games/{game_id}/analysis", timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def status(tab: Page) -> str | None:
    return tab.locator("section.analysis").get_attribute("data-status")


def test_a_finished_game_is_analysed_from_its_page(
    bot_server: str, redis_client: redis.Redis, page: tuple[Page, Console]
) -> None:
    tab, _console = page
    game_id = finished_game(bot_server, redis_client)
    polls: list[str] = []
    path = f"/v1/games/{game_id}/analysis"
    tab.on("request", lambda r: polls.append(r.method) if r.url.endswith(path) else None)
    tab.clock.install()  # the page's timers run as usual until paused: then only run_for moves them
    tab.goto(f"{bot_server}/games/{game_id}?step=1")
    tab.wait_for_selector("section.analysis[data-status=none] [data-analyse]", timeout=WAIT_MS)
    assert tab.locator("section.analysis [data-analyse]").inner_text() == "Analyse this game"
    assert polls == []  # nobody asked here: no GET, so no 404 in the console (the button's POST answers)

    tab.click("[data-analyse]")
    tab.wait_for_selector("section.analysis[data-status=queued] progress", timeout=WAIT_MS)
    for _ in range(2):  # the page polls while the analysis waits for a worker
        with tab.expect_request(lambda r: r.method == "GET" and r.url.endswith(path), timeout=WAIT_MS):
            pass
    assert polls.count("POST") == 1 and polls.count("GET") >= 2
    assert status(tab) == "queued"

    analyse(redis_client)
    tab.wait_for_selector("section.analysis[data-status=done] svg.eval-graph", timeout=WAIT_MS)
    asked = len(polls)
    tab.clock.pause_at(tab.evaluate("Date.now()"))
    tab.clock.run_for(10_000)  # ten polling periods of the page's time: a poll still due would fire
    tab.evaluate("0")  # a round trip to the page: a request it made before this is reported before the answer
    assert len(polls) == asked  # done: the polling stopped
    tab.clock.resume()

    found = the_analysis(bot_server, game_id)
    decisions = found["decisions"]
    assert found["status"] == "done" and decisions
    points = tab.eval_on_selector_all(
        ".eval-graph circle[data-step]", "els => els.map(e => [Number(e.dataset.step), e.dataset.label])"
    )
    assert sorted(map(tuple, points)) == sorted((d["step"], d["label"]) for d in decisions)
    labelled = tab.eval_on_selector_all(
        ".log li[data-label]", "els => els.map(e => [Number(e.dataset.seq), e.dataset.label])"
    )
    assert sorted(map(tuple, labelled)) == sorted((d["step"], d["label"]) for d in decisions)
    for d in decisions[:5]:  # each badge says its label in words too (not by colour alone)
        badge = tab.locator(f".log li[data-seq='{d['step']}'] .label-badge")
        assert ("forced" if d["forced"] else d["label"]) in badge.inner_text()
        assert badge.get_attribute("title")

    # The most costly decision: its point steps the page there; the suggestion shows the engine's choice.
    worst = max(decisions, key=lambda d: (d["loss"], -d["step"]))
    step = worst["step"]
    tab.click(f".eval-graph circle[data-step='{step}']")
    tab.wait_for_selector(f"section.table[data-step='{step}']", timeout=WAIT_MS)
    assert f"step={step}" in tab.url
    assert tab.locator(".eval-graph .now").get_attribute("data-step") == str(step)
    here = tab.locator(f".suggestion[data-step='{step}']")
    assert here.get_attribute("data-seat") == str(worst["seat"])
    assert json.loads(here.get_attribute("data-best") or "null") == worst["best"]
    assert worst["label"] in here.inner_text() or "best" in here.inner_text() or "forced" in here.inner_text()
    assert "ann" in here.inner_text() or "bob" in here.inner_text()

    tab.keyboard.press("ArrowLeft")  # the position before the decision: its suggestion shows already
    tab.wait_for_selector(f"section.table[data-step='{step - 1}']", timeout=WAIT_MS)
    before = tab.locator(f".suggestion[data-step='{step}']")
    assert json.loads(before.get_attribute("data-best") or "null") == worst["best"]

    tab.focus(f".eval-graph a:has(circle[data-step='{decisions[0]['step']}'])")  # the points take the keyboard
    tab.keyboard.press("Enter")
    tab.wait_for_selector(f"section.table[data-step='{decisions[0]['step']}']", timeout=WAIT_MS)

    tab.goto(f"{bot_server}/games/{game_id}?step={step}")  # opened again in this browser: shown without a click
    tab.wait_for_selector("section.analysis[data-status=done] .eval-graph circle[data-step]", timeout=WAIT_MS)
    tab.wait_for_selector(f".suggestion[data-step='{step}']", timeout=WAIT_MS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / "analysis.png"), full_page=True)


def test_the_analysis_fits_a_phone(bot_server: str, redis_client: redis.Redis, browser: Browser) -> None:
    game_id = finished_game(bot_server, redis_client, [*BOTS, {"name": "cid", "bot": "greedy"}])  # a line per seat
    assert requests.post(f"{bot_server}/v1/games/{game_id}/analysis", timeout=TIMEOUT).status_code == 202
    analyse(redis_client)
    decisions = the_analysis(bot_server, game_id)["decisions"]
    step = max(decisions, key=lambda d: (d["loss"], -d["step"]))["step"]
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    console = Console(phone)
    try:
        phone.goto(f"{bot_server}/games/{game_id}?step={step}")
        phone.click("section.analysis[data-status=none] [data-analyse]")  # analysed elsewhere: shown at once
        phone.wait_for_selector("section.analysis[data-status=done] svg.eval-graph circle[data-step]", timeout=WAIT_MS)
        phone.wait_for_selector(f".suggestion[data-step='{step}']", timeout=WAIT_MS)
        assert wider_than_the_screen(phone) == []
        assert phone.locator(".eval-graph circle[data-step]").count() == len(decisions)
        assert phone.locator(".eval-graph polyline").count() == 3
        assert phone.locator(".eval-legend li").all_inner_texts() == ["ann", "bob", "cid"]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        phone.screenshot(path=str(SCREENSHOTS / "analysis-phone.png"), full_page=True)
    finally:
        phone.close()
    assert console.errors == []


def test_a_running_game_has_no_analysis(bot_server: str, page: tuple[Page, Console]) -> None:
    tab, _console = page
    players = [{"name": "ann"}, {"name": "bob"}]
    created = requests.post(f"{bot_server}/v1/games", json={"game": "nin-nal", "players": players}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    tab.goto(f"{bot_server}/games/{game_id}")
    tab.wait_for_selector("section.table[data-step]", timeout=WAIT_MS)
    # the page drew the step and, in the same task, decided on the analysis (game.js: show())
    assert tab.locator("section.analysis").count() == 0
    assert tab.locator("[data-analyse]").count() == 0
