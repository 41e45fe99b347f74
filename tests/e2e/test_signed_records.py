"""Signed records and the transparency log over real HTTP (issue 24): every finished game's record is
signed by a key of ``GET /v1/keys`` and proven in the log's signed tree head; a self-consistent forgery
signed by any other key fails against the server's keys; ``kifu log-monitor`` catches a log rewritten to
fork, shrink or drop a game; rebuilding every read model leaves every head and proof valid; a rotated key
stays published and what it signed still verifies."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from adapters.embedded_redis import EmbeddedRedis
from adapters.signing_keys import KeyRegistry, rotate
from adapters.transparency_log import TransparencyLog
from bench.forgeries import counter_salts, play, sealed
from bootstrap import build
from domain.audit import verify_record
from domain.canonical import canonical_json
from domain.events import Event
from domain.merkle import leaf_hash, verify_consistency, verify_inclusion
from domain.signatures import Signer, check_signature, log_head_statement, sealed_game_statement
from entrypoints.api import create_app
from entrypoints.cli import main as cli
from entrypoints.log_monitor import Alarm, Monitor, State
from service.ports import NoScheduler
from tests.support.http import serving
from tests.support.http_games import finished_san_ban

TIMEOUT = 10
VERIFIER = Path(__file__).resolve().parents[2] / "verifier" / "kifu-verify.mjs"


@pytest.fixture
def server(redis_server: EmbeddedRedis, redis_client: redis.Redis, tmp_path: Path) -> Iterator[str]:
    """The app over HTTP signing with a key of its own (``tmp_path/key.pem``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KIFU_SIGNING_KEY_FILE", str(tmp_path / "key.pem"))
        app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler()})
        with serving(app) as url:
            yield url


def get(url: str, path: str, **params: Any) -> Any:
    answer = requests.get(f"{url}{path}", params=params, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return answer.json()


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_a_finished_games_record_is_signed_and_proven_in_the_signed_log(server: str, tmp_path: Path) -> None:
    records = [finished_san_ban(server) for _ in range(3)]
    keys = get(server, "/v1/keys")
    [key] = keys["keys"]
    assert {key["kty"], key["crv"], key["alg"], key["status"]} == {"OKP", "Ed25519", "EdDSA", "active"}
    for record in records:
        signature = record["signature"]
        assert signature["alg"] == "EdDSA" and signature["kid"] == key["kid"]
        statement = signature["statement"]
        assert (statement["game"], statement["version"], statement["hash"]) == (
            record["game_id"],
            len(record["events"]),
            record["head"],
        )
        check_signature(signature, keys)
        report = verify_record(record, keys=keys)
        assert report["verified"] and report["signed"] == "checked" and report["logged"] == "checked"
    head = get(server, "/v1/log/head")
    assert head["size"] == 3 and head["signature"]["statement"] == log_head_statement(3, head["root"])
    check_signature(head["signature"], keys)
    for index, record in enumerate(records):
        proof = get(server, "/v1/log/inclusion", game=record["game_id"], size=3)
        assert set(proof) == {"index", "size", "path"} and proof["index"] == index and proof["size"] == 3
        leaf = leaf_hash(canonical_json(record["signature"]["statement"]))
        path = [bytes.fromhex(h) for h in proof["path"]]
        assert verify_inclusion(leaf, index, 3, path, bytes.fromhex(head["root"]))
    first = get(server, "/v1/log/head", size=1)
    proof = get(server, "/v1/log/consistency", first=1, second=3)
    path = [bytes.fromhex(h) for h in proof["path"]]
    assert verify_consistency(1, 3, bytes.fromhex(first["root"]), bytes.fromhex(head["root"]), path)

    keys_file, record_file = tmp_path / "keys.json", tmp_path / "record.json"
    keys_file.write_text(json.dumps(keys))
    record_file.write_text(json.dumps(records[0]))
    checked = invoke("verify", str(record_file), "--keys", f"{server}/v1/keys", "--log", server)
    assert checked.exit_code == 0, checked.output
    assert "signature: checked against the keys given" in checked.output
    assert checked.output.splitlines()[-1] == f"VERIFIED head {records[0]['head']}"
    unchecked = invoke("verify", str(record_file))
    assert unchecked.exit_code == 0 and "signature: NOT CHECKED (no --keys given)" in unchecked.output
    node = shutil.which("node")
    assert node is not None, "the JavaScript verifier's checks need Node 20: install it (apt-get install nodejs)"
    second = subprocess.run(
        [node, str(VERIFIER), str(record_file), "--keys", str(keys_file)], check=False, capture_output=True, text=True
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"signature: checked against key {key['kid']}" in second.stdout
    assert second.stdout.splitlines()[-1] == f"VERIFIED head {records[0]['head']}"
    forged = copy.deepcopy(records[0])
    forged["signature"] = Signer(Ed25519PrivateKey.generate()).sign(forged["signature"]["statement"])
    record_file.write_text(json.dumps(forged))
    refused = subprocess.run(
        [node, str(VERIFIER), str(record_file), "--keys", str(keys_file)], check=False, capture_output=True, text=True
    )
    assert refused.returncode == 1 and refused.stdout.splitlines()[-1].startswith("NOT VERIFIED")
    assert invoke("verify", str(record_file), "--keys", str(keys_file)).exit_code == 1


def test_the_log_endpoints_refuse_what_they_cannot_prove(server: str) -> None:
    record = finished_san_ban(server)
    for path, params, status, kind in (
        ("/v1/log/inclusion", {"game": "gnosuchgame"}, 404, "not-logged"),
        ("/v1/log/inclusion", {"game": record["game_id"], "size": 2}, 404, "bad-tree-size"),
        ("/v1/log/consistency", {"first": 1, "second": 2}, 404, "bad-tree-size"),
        ("/v1/log/consistency", {"first": 1, "second": 0}, 404, "bad-tree-size"),
        ("/v1/log/head", {"size": 5}, 404, "bad-tree-size"),
        ("/v1/log/consistency", {"first": "x", "second": 1}, 422, "invalid-request"),
    ):
        answer = requests.get(f"{server}{path}", params=params, timeout=TIMEOUT)
        assert answer.status_code == status and answer.json()["type"] == f"/problems/{kind}", (path, answer.text)
    assert get(server, "/v1/log/entries", end=10)["entries"][0]["game"] == record["game_id"]
    assert get(server, "/v1/log/entries", start=3, end=1) == {"entries": []}


def a_forged_game(genuine: dict[str, Any], key: Signer) -> dict[str, Any]:
    """Another game under the genuine one's id, every hash and commitment its own, signed by ``key`` and
    proven in a one-leaf log that ``key`` signed: a forgery consistent with itself in every way."""
    salts = counter_salts("forger")
    events, seed = play("san-ban", 7, salts)
    events[0] = Event(events[0].type, {**events[0].data, "game_id": genuine["game_id"]}, events[0].private)
    record = sealed(events, seed, salts)
    end = record["events"][-1]
    statement = sealed_game_statement(record["game_id"], len(record["events"]), end["hash"], end["at"])
    signature = key.sign(statement)
    root = leaf_hash(canonical_json(statement)).hex()
    head = {"size": 1, "root": root, "signature": key.sign(log_head_statement(1, root))}
    events_list = record.pop("events")
    return {
        **record,
        "signature": signature,
        "inclusion": {"index": 0, "size": 1, "path": [], "head": head},
        "events": events_list,
    }


def test_a_self_consistent_forgery_signed_by_another_key_fails_against_the_servers_keys(server: str) -> None:
    genuine = finished_san_ban(server)
    keys = get(server, "/v1/keys")
    forger = Signer(Ed25519PrivateKey.generate())
    forged = a_forged_game(genuine, forger)
    assert verify_record(forged)["verified"]  # without keys: the chain alone cannot tell
    report = verify_record(forged, keys=keys)
    assert report["verdict"] == "failed" and report["first_bad_event"] == len(forged["events"])
    assert "not among the keys given" in next(c for c in report["checks"] if c["name"] == "signature")["detail"]
    claimed = copy.deepcopy(forged)  # the forger's signature, presented as the server's key
    claimed["signature"]["kid"] = keys["keys"][0]["kid"]
    assert verify_record(claimed, keys=keys)["verdict"] == "failed"
    mixed = copy.deepcopy(genuine)  # the genuine signature on the forged events
    mixed["events"], mixed["head"], mixed["seed"] = forged["events"], forged["head"], forged["seed"]
    assert verify_record(mixed, keys=keys)["verdict"] == "failed"


def test_the_monitor_follows_the_log_and_catches_it_forked_shrunk_or_missing_a_game(
    server: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    said: list[str] = []
    state_file = tmp_path / "monitor.json"
    games = [finished_san_ban(server) for _ in range(3)]
    monitor = Monitor(server, State.load(state_file), state_file, say=said.append)
    monitor.look()
    games.append(finished_san_ban(server))
    Monitor(server, State.load(state_file), state_file, say=said.append).look()  # a restarted monitor goes on
    assert said[-1].startswith("ok: tree of 4")
    saved = State.load(state_file)

    def rewritten_log(order: list[dict[str, Any]]) -> None:
        """What a dishonest operator does: throw the log away and log the games again, in another way."""
        for key in redis_client.scan_iter(match="kifu:{tlog}:*"):
            redis_client.delete(key)
        log = build(redis_client, scheduler=NoScheduler()).notary
        for record in order:
            log.add(record["signature"])

    def alarm() -> str:
        with pytest.raises(Alarm) as caught:
            Monitor(server, copy.deepcopy(saved), None, say=said.append).look()
        return str(caught.value)

    rewritten_log([games[1], games[0], games[2], games[3]])  # the same games, two swapped: a fork
    assert "FORKED" in alarm()
    rewritten_log(games[:3])  # the last game dropped: the log shrank
    assert "SHRANK" in alarm()
    rewritten_log(games[:3])
    fifth = finished_san_ban(server)  # logged at once as it is sealed...
    kifu = build(redis_client, scheduler=NoScheduler())
    assert TransparencyLog(redis_client, kifu.signing).index_of(fifth["game_id"]) == 3
    kifu.projector().run_until_idle()  # (the games list, which the monitor reads, knows every finished game)
    result = invoke("log-monitor", server, "--once", "--state", str(tmp_path / "fresh.json"))
    assert result.exit_code == 0, result.output  # a fresh monitor sees a consistent log of 4...

    rewritten_log(games)  # ...and this one: the fifth game never logged, the log otherwise intact
    assert "NOT IN THE LOG" in alarm()
    dropped = invoke("log-monitor", server, "--once", "--state", str(tmp_path / "fresh.json"))
    assert dropped.exit_code == 1 and "ALERT: the log FORKED" in dropped.output


def test_rebuilding_every_read_model_leaves_every_head_and_proof_valid(server: str, redis_client: redis.Redis) -> None:
    records = [finished_san_ban(server) for _ in range(3)]
    kifu = build(redis_client, scheduler=NoScheduler())
    kifu.projector().run_until_idle()
    before = (get(server, "/v1/log/head"), [get(server, f"/v1/games/{r['game_id']}/record") for r in records])
    assert kifu.rebuild_projections() > 0
    after = (get(server, "/v1/log/head"), [get(server, f"/v1/games/{r['game_id']}/record") for r in records])
    assert after == before
    keys = get(server, "/v1/keys")
    assert all(verify_record(r, keys=keys)["verified"] for r in after[1])


def test_a_rotated_key_stays_published_and_old_records_still_verify(
    server: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    old = finished_san_ban(server)
    old_head = get(server, "/v1/log/head")
    rotate(tmp_path / "key.pem", KeyRegistry(redis_client), datetime.now(UTC))
    new = finished_san_ban(server)
    keys = get(server, "/v1/keys")
    status = {k["kid"]: k["status"] for k in keys["keys"]}
    assert status[old["signature"]["kid"]] == "retired" and status[new["signature"]["kid"]] == "active"
    assert old["signature"]["kid"] != new["signature"]["kid"]
    for record in (old, new, get(server, f"/v1/games/{old['game_id']}/record")):
        assert verify_record(record, keys=keys)["verified"]
    check_signature(old_head["signature"], keys)  # the old tree head: the retired key's, still good
    assert get(server, "/v1/log/head")["signature"]["kid"] == new["signature"]["kid"]
