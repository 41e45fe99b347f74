"""Verify, in Debian's Chromium (issue 21; the browser's half since the JavaScript verifier): a record is
verified twice, in the browser by ``verifier/kifu-verify.mjs`` (served at ``/app/verifier/``, the keys
from ``GET /v1/keys``) and by the server (``POST /v1/audits``, which re-runs the rules), and both are shown
with the combined verdict. On the game page and on /audit: a finished game verifies in both, signed and
logged; a forged record fails in both with the same first bad event marked; a record re-signed by another
key fails the browser's signature check; with ``POST /v1/audits`` blocked the browser still verifies it;
a verifier that throws is shown and the server still asked; an archive is the server's alone; a file that
is not JSON is said to be so; nothing logs a console error."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from playwright.sync_api import Page, Route

from domain.signatures import Signer
from tests.support.browser import SCREENSHOTS, Console, wider_than_the_screen
from tests.support.http_games import finished_san_ban

WAIT_MS = 15_000  # a deadline that turns a hang into a failure; nothing waits for it
TIMEOUT = 10
ROOT = Path(__file__).resolve().parents[2]
BROWSER = "[data-where=browser]"
SERVER = "[data-where=server]"


def upload(tab: Page, path: Path) -> None:
    tab.locator("input[type=file]").set_input_files(str(path))


def checks(tab: Page, where: str, ok: bool) -> list[str]:
    """The names of one part's checks that passed (``ok``) or failed, in the page's order."""
    found = tab.locator(f".verdict {where} .checks li[data-ok={str(ok).lower()}]")
    return list(found.evaluate_all("els => els.map(e => e.dataset.check)"))


def failed(report: dict[str, Any]) -> list[str]:
    return [c["name"] for c in report["checks"] if not c["ok"] and c["name"] not in ("sealed", "complete")]


def test_the_javascript_verifier_is_served_to_the_pages(web: str) -> None:
    module = requests.get(f"{web}/app/verifier/kifu-verify.mjs", timeout=TIMEOUT)
    assert module.status_code == 200 and module.headers["Content-Type"].startswith("text/javascript")
    assert "default-src 'self'" in module.headers["Content-Security-Policy"]
    assert module.content == (ROOT / "verifier" / "kifu-verify.mjs").read_bytes()
    for missing in ("/app/verifier/nope.mjs", "/app/verifier/kifu-verify.js", "/app/verifier/..%2Fpyproject.toml"):
        assert requests.get(f"{web}{missing}", timeout=TIMEOUT).status_code == 404, missing
    assert requests.get(f"{web}/app/pages/game.js", timeout=TIMEOUT).status_code == 200  # the other modules stay


def test_a_finished_game_is_verified_on_its_page_in_the_browser_and_on_the_server(
    web: str, page: tuple[Page, Console]
) -> None:
    tab, _console = page
    record = finished_san_ban(web)
    tab.goto(f"{web}/games/{record['game_id']}")
    tab.click("[data-verify]", timeout=WAIT_MS)
    tab.wait_for_selector(".verdict[data-verdict=verified]", timeout=WAIT_MS)
    assert tab.locator(f".verdict {BROWSER}[data-verdict=verified]").count() == 1
    assert tab.locator(f".verdict {SERVER}[data-verdict=verified]").count() == 1
    for name in ("hash_chain", "commitments", "deal", "signature", "inclusion"):
        assert tab.locator(f"{BROWSER} li[data-check={name}][data-ok=true]").count() == 1, name
    assert tab.locator(f"{BROWSER} .attest[data-signed=checked][data-logged=checked]").count() == 1
    assert "checked against the server's keys" in tab.locator(f"{BROWSER} .attest").inner_text()
    assert tab.locator(f"{SERVER} li[data-check=rederivation][data-ok=true]").count() == 1
    assert checks(tab, BROWSER, False) == [] and checks(tab, SERVER, False) == []
    assert tab.locator(".log li.bad").count() == 0
    tab.locator(".audit").scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.locator(".audit").screenshot(path=str(SCREENSHOTS / "game-verify.png"))


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
    assert tab.locator(f"{BROWSER}[data-verdict=verified] li[data-check=signature][data-ok=true]").count() == 1

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
    for where in (BROWSER, SERVER):  # both fail, and both name the changed event
        assert tab.locator(f"{where}[data-verdict=failed]").get_attribute("data-first-bad-event") == str(placed + 1)
    assert checks(tab, SERVER, False) == failed(expected)
    assert "hash_chain" in checks(tab, BROWSER, False)
    assert "rederivation" not in checks(tab, BROWSER, False) + checks(tab, BROWSER, True)  # the server's alone
    (SCREENSHOTS / "audit.png").parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SCREENSHOTS / "audit.png"), full_page=True)  # the verdict, both parts, the events

    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    upload(tab, junk)
    tab.wait_for_selector(".verdict:has-text('is not JSON')", timeout=WAIT_MS)
    assert tab.locator(".verdict").get_attribute("data-verdict") == "failed"
    assert tab.locator(f"{BROWSER}, {SERVER}").count() == 0  # refused before either verifier


def test_a_record_re_signed_by_another_key_fails_the_browsers_signature_check(
    web: str, page: tuple[Page, Console], tmp_path: Path
) -> None:
    tab, _console = page
    record = finished_san_ban(web)
    record["signature"] = Signer(Ed25519PrivateKey.generate()).sign(record["signature"]["statement"])
    expected = requests.post(f"{web}/v1/audits", json=record, timeout=TIMEOUT).json()
    path = tmp_path / "re-signed.json"
    path.write_text(json.dumps(record))
    tab.goto(f"{web}/audit")
    upload(tab, path)
    tab.wait_for_selector(".verdict[data-verdict=failed]", timeout=WAIT_MS)
    assert tab.locator(f"{BROWSER}[data-verdict=failed] li[data-check=signature][data-ok=false]").count() == 1
    assert "not among the keys given" in tab.locator(f"{BROWSER} li[data-check=signature]").inner_text()
    assert checks(tab, BROWSER, False) == ["signature"]  # the statement is the game's own; only the key is wrong
    assert tab.locator(f"{BROWSER} .attest[data-signed=checked]").count() == 1
    assert tab.locator(f"{SERVER}").get_attribute("data-verdict") == expected["verdict"]
    assert checks(tab, SERVER, False) == failed(expected)
    last = str(len(record["events"]))  # a signature names the last event
    assert tab.locator(".record-events li.bad").get_attribute("data-seq") == last


def test_the_browser_verifies_even_when_the_server_cannot_be_asked(
    web: str, page: tuple[Page, Console], tmp_path: Path
) -> None:
    tab, console = page
    record = finished_san_ban(web)
    tab.route("**/v1/audits", lambda route: route.abort())
    tab.goto(f"{web}/games/{record['game_id']}")
    tab.click("[data-verify]", timeout=WAIT_MS)
    tab.wait_for_selector(f"{SERVER} .unreached", timeout=WAIT_MS)
    tab.wait_for_selector(".verdict .verdict-line:has-text('Not fully verified')", timeout=WAIT_MS)  # both answered
    assert tab.locator(f"{BROWSER}[data-verdict=verified] li[data-check=signature][data-ok=true]").count() == 1
    assert tab.locator(f"{BROWSER} li[data-check=inclusion][data-ok=true]").count() == 1
    assert "could not be reached" in tab.locator(SERVER).inner_text()
    assert tab.locator(SERVER).get_attribute("data-verdict") is None
    assert tab.locator(".verdict").get_attribute("data-verdict") is None  # the rules were not re-run: no verdict
    # the blocked request is the one error Chromium logs ("Failed to load resource"); nothing else
    console.errors[:] = [e for e in console.errors if "ERR_FAILED" not in e]


def test_a_verifier_that_throws_is_shown_and_the_server_still_asked(web: str, page: tuple[Page, Console]) -> None:
    tab, _console = page
    record = finished_san_ban(web)

    def broken(route: Route) -> None:
        route.fulfill(
            body="export async function verifyRecord() { throw new TypeError('a bug'); }\n",
            content_type="text/javascript",
        )

    tab.route("**/app/verifier/kifu-verify.mjs", broken)
    tab.goto(f"{web}/games/{record['game_id']}")
    tab.click("[data-verify]", timeout=WAIT_MS)
    tab.wait_for_selector(f"{SERVER}[data-verdict=verified]", timeout=WAIT_MS)
    tab.wait_for_selector(f"{BROWSER} .error:has-text('a bug')", timeout=WAIT_MS)
    assert tab.locator(BROWSER).get_attribute("data-verdict") is None
    assert tab.locator(".verdict").get_attribute("data-verdict") is None  # verified only when both verified


def test_a_tournament_archive_is_verified_by_the_server_alone(
    web: str, page: tuple[Page, Console], tmp_path: Path
) -> None:
    tab, _console = page
    entrants = [{"name": "ann"}, {"name": "bob", "bot": "greedy"}]
    body: dict[str, Any] = {"game": "san-ban", "entrants": entrants, "format": "round-robin"}
    made = requests.post(f"{web}/v1/tournaments", json=body, timeout=TIMEOUT)
    assert made.status_code == 201, made.text
    archive = requests.get(f"{web}/v1/tournaments/{made.json()['id']}/record", timeout=TIMEOUT).json()
    assert archive["format"] == "kifu-tournament/1"
    expected = requests.post(f"{web}/v1/audits", json=archive, timeout=TIMEOUT).json()
    path = tmp_path / "archive.json"
    path.write_text(json.dumps(archive))
    tab.goto(f"{web}/audit")
    upload(tab, path)
    tab.wait_for_selector(f".verdict[data-verdict={expected['verdict']}]", timeout=WAIT_MS)
    assert tab.locator(SERVER).get_attribute("data-verdict") == expected["verdict"]
    assert tab.locator(BROWSER).get_attribute("data-verdict") is None
    assert "verified by the server only" in tab.locator(BROWSER).inner_text()


def test_the_two_verdicts_fit_a_phone(web: str, page: tuple[Page, Console], tmp_path: Path) -> None:
    tab, _console = page
    record = finished_san_ban(web)
    tab.set_viewport_size({"width": 375, "height": 800})
    tab.goto(f"{web}/games/{record['game_id']}")
    tab.click("[data-verify]", timeout=WAIT_MS)
    tab.wait_for_selector(".verdict[data-verdict=verified]", timeout=WAIT_MS)
    tab.evaluate("() => document.querySelectorAll('.verdict details').forEach((d) => { d.open = true; })")
    assert wider_than_the_screen(tab) == []
