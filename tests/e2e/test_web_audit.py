"""The audit page (/audit) in Debian's Chromium (issue 21): a file chosen on the page is sent to
POST /v1/audits and its verdict shown; a forged record fails with its first bad event marked; a file that
is not JSON is said to be so; nothing logs a console error."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import requests
from playwright.sync_api import Page

from tests.support.browser import SCREENSHOTS, Console
from tests.support.http_games import finished_san_ban

WAIT_MS = 15_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10


def upload(tab: Page, path: Path) -> None:
    tab.locator("input[type=file]").set_input_files(str(path))


def test_a_record_chosen_on_the_audit_page_is_verified_and_a_forgery_is_caught(
    web: str, page: tuple[Page, Console], tmp_path: Path
) -> None:
    tab, _console = page
    record = finished_san_ban(web)
    tab.goto(f"{web}/audit")

    good = tmp_path / "good.json"
    good.write_text(json.dumps(record))
    upload(tab, good)
    tab.wait_for_selector(".verdict[data-verdict=verified]", timeout=WAIT_MS)
    assert tab.locator(".record-events li").count() == len(record["events"])

    forged = copy.deepcopy(record)
    placed = next(i for i, e in enumerate(forged["events"]) if e["type"] == "card_placed")
    forged["events"][placed]["data"]["cell"] = (forged["events"][placed]["data"]["cell"] + 1) % 9
    expected = requests.post(f"{web}/v1/audits", json=forged, timeout=TIMEOUT).json()
    assert expected["verdict"] == "failed" and expected["first_bad_event"] == placed + 1
    bad = tmp_path / "forged.json"
    bad.write_text(json.dumps(forged))
    upload(tab, bad)
    tab.wait_for_selector(".verdict[data-verdict=failed]", timeout=WAIT_MS)
    assert tab.locator(".record-events li.bad").get_attribute("data-seq") == str(placed + 1)
    failing = tab.locator(".checks li[data-ok=false]").evaluate_all("els => els.map(e => e.dataset.check)")
    assert failing == [c["name"] for c in expected["checks"] if not c["ok"]]
    (SCREENSHOTS / "audit.png").parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / "audit.png"))

    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    upload(tab, junk)
    tab.wait_for_selector(".verdict:has-text('is not JSON')", timeout=WAIT_MS)
