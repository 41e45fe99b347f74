"""The export of finished games for analysts (issue 25, item 5), over real HTTP: ``GET /v1/games/export``
streams one record a line, each verifying alone against the server's keys; the filters (game, player,
tournament, creation dates, limit) pick exactly the games they say; gzip gives the same lines; ``kifu
export`` writes the NDJSON, or a CSV of one row per decision that agrees with the records."""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import redis
import requests
from click.testing import CliRunner
from rq import Queue, SimpleWorker

from adapters.analysis_store import ANALYSIS_QUEUE
from adapters.embedded_redis import EmbeddedRedis
from bootstrap import build
from domain.audit import verify_record
from domain.decisions import decision_rows
from entrypoints.api import create_app
from entrypoints.cli import main as cli
from service.ports import NoScheduler
from tests.support.http import serving
from tests.support.http_games import finished_san_ban

TIMEOUT = 10


@pytest.fixture
def server(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[str]:
    app = create_app({"REDIS_URL": redis_server.url, "SCHEDULER": NoScheduler()})
    with serving(app) as url:
        yield url


def export(base: str, **params: Any) -> list[dict[str, Any]]:
    answer = requests.get(f"{base}/v1/games/export", params=params, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in answer.text.splitlines()]


def without_proof(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "inclusion"}


def test_finished_games_are_exported_one_verifiable_record_a_line_and_filtered(
    server: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    records = [finished_san_ban(server) for _ in range(3)]
    running = requests.post(
        f"{server}/v1/games", json={"game": "nin-nal", "players": [{"name": "x"}, {"name": "y"}]}, timeout=TIMEOUT
    ).json()
    build(redis_client, scheduler=NoScheduler()).projector().run_until_idle()  # the games list knows them
    keys = requests.get(f"{server}/v1/keys", timeout=TIMEOUT).json()

    lines = export(server)
    assert [r["game_id"] for r in lines] == [r["game_id"] for r in reversed(records)]  # newest first
    assert running["id"] not in {r["game_id"] for r in lines}  # only finished games
    for line, served in zip(lines, reversed(records), strict=True):
        assert without_proof(line) == without_proof(served)  # what GET .../record answers (the log grew since)
        assert line["inclusion"]["size"] == 3
        assert verify_record(line, keys=keys)["verified"]

    assert [r["game_id"] for r in export(server, limit=2)] == [r["game_id"] for r in lines[:2]]
    assert export(server, game="nin-nal") == [] and len(export(server, game="san-ban")) == 3
    assert len(export(server, player="ann")) == 3 and export(server, player="nobody") == []
    middle = lines[1]["events"][0]["at"]
    assert [r["game_id"] for r in export(server, since=middle)] == [r["game_id"] for r in lines[:2]]
    assert [r["game_id"] for r in export(server, until=middle)] == [lines[2]["game_id"]]
    assert export(server, since="2999-01-01") == [] and len(export(server, until="2999-01-01")) == 3
    for bad in ({"since": "yesterday"}, {"limit": 0}, {"limit": 10_001}, {"colour": "red"}):
        answer = requests.get(f"{server}/v1/games/export", params=bad, timeout=TIMEOUT)
        assert answer.status_code == 422 and answer.json()["type"] == "/problems/invalid-request", bad

    packed = requests.get(
        f"{server}/v1/games/export", headers={"Accept-Encoding": "gzip"}, timeout=TIMEOUT, stream=True
    )
    assert packed.headers["Content-Encoding"] == "gzip"
    raw = gzip.decompress(packed.raw.read())
    assert [json.loads(line) for line in raw.decode().splitlines()] == lines

    ndjson, table = tmp_path / "games.ndjson", tmp_path / "decisions.csv"
    runner = CliRunner()
    assert runner.invoke(cli, ["export", server, "--out", str(ndjson), "--game", "san-ban"]).exit_code == 0
    assert [json.loads(line) for line in ndjson.read_text().splitlines()] == lines
    assert runner.invoke(cli, ["export", server, "--out", str(table), "--csv"]).exit_code == 0
    with table.open() as f:
        rows = list(csv.DictReader(f))
    expected = [row for record in lines for row in decision_rows(record)]
    assert len(rows) == len(expected) > 0
    assert [(r["game_id"], int(r["step"]), int(r["seat"]), json.loads(r["action"])) for r in rows] == [
        (e["game_id"], e["step"], e["seat"], json.loads(e["action"])) for e in expected
    ]
    for row in rows:  # each row is the record's own event at that step
        record = next(r for r in lines if r["game_id"] == row["game_id"])
        event = record["events"][int(row["step"]) - 1]
        assert event["type"] in ("action_taken", "choices_revealed")
        assert (
            json.loads(row["result"])
            == next(e for e in record["events"] if e["type"] == "game_ended")["data"]["result"]
        )


def test_the_analysis_example_in_the_docs_runs_on_an_export(
    server: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    records = [finished_san_ban(server) for _ in range(2)]
    build(redis_client, scheduler=NoScheduler()).projector().run_until_idle()
    assert (
        CliRunner()
        .invoke(cli, ["export", server, "--game", "san-ban", "--out", str(tmp_path / "san-ban.ndjson")])
        .exit_code
        == 0
    )
    text = (Path(__file__).resolve().parents[2] / "docs" / "analysis.md").read_text()
    example = text.split("<!-- analysis: first-player -->\n```python\n", 1)[1].split("```", 1)[0]
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    first = [next(e["data"]["seat"] for e in r["events"] if e["type"] == "card_placed") for r in records]
    won = [next(e["data"]["result"]["winners"] for e in r["events"] if e["type"] == "game_ended") for r in records]
    share = sum(w == [f] for w, f in zip(won, first, strict=True)) / 2
    assert done.stdout.split() == ["standard", "2", "games:", "the", "first", "player", "won", f"{share:.0%},",
                                   f"{sum(len(w) > 1 for w in won) / 2:.0%}", "drawn"]  # fmt: skip


def test_decision_rows_carry_the_analysis_and_parquet_holds_the_same_rows(
    server: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    """``kifu export --csv --analysis`` joins each analysed game's verdicts onto its rows (by the step where
    the seat decided), leaves the others' empty; ``--parquet`` writes the same rows, typed."""
    analysed, plain = finished_san_ban(server), finished_san_ban(server)
    build(redis_client, scheduler=NoScheduler()).projector().run_until_idle()
    path = f"{server}/v1/games/{analysed['game_id']}/analysis"
    assert requests.post(path, timeout=TIMEOUT).status_code == 202
    SimpleWorker([Queue(ANALYSIS_QUEUE, connection=redis_client)], connection=redis_client).work(burst=True)
    verdicts = {(v["step"], v["seat"]): v for v in requests.get(path, timeout=TIMEOUT).json()["decisions"]}
    assert verdicts

    table, columns = tmp_path / "decisions.csv", tmp_path / "decisions.parquet"
    runner = CliRunner()
    done = runner.invoke(cli, ["export", server, "--out", str(table), "--csv", "--analysis"])
    assert done.exit_code == 0, done.output
    with table.open() as f:
        rows = list(csv.DictReader(f))
    assert {r["game_id"] for r in rows} == {analysed["game_id"], plain["game_id"]}
    for row in rows:
        verdict = (
            verdicts.get((int(row["decided_at"]), int(row["seat"]))) if row["game_id"] == analysed["game_id"] else None
        )
        if verdict is None:
            assert row["label"] == row["loss"] == row["best"] == "", row
            continue
        assert row["label"] == verdict["label"] and float(row["loss"]) == verdict["loss"]
        assert json.loads(row["best"]) == verdict["best"]
    judged = [r for r in rows if r["label"]]
    assert len(judged) >= len(verdicts)  # every verdict lands on a row (a choice in parts on each part)

    done = runner.invoke(cli, ["export", server, "--out", str(columns), "--parquet", "--analysis"])
    assert done.exit_code == 0, done.output
    read = pq.read_table(columns).to_pylist()
    assert [(r["game_id"], r["step"], r["seat"], r["decided_at"], r["label"], r["loss"]) for r in read] == [
        (
            r["game_id"],
            int(r["step"]),
            int(r["seat"]),
            int(r["decided_at"]),
            r["label"],
            float(r["loss"]) if r["loss"] else None,
        )
        for r in rows
    ]
    assert runner.invoke(cli, ["export", server, "--parquet"]).exit_code == 2  # a file, not stdout
    assert runner.invoke(cli, ["export", server, "--analysis"]).exit_code == 2  # rows only
    text = (Path(__file__).resolve().parents[2] / "docs" / "analysis.md").read_text()
    example = text.split("<!-- analysis: losses -->\n```python\n", 1)[1].split("```", 1)[0]
    ran = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    judged_losses = [float(r["loss"]) for r in judged]
    words = ran.stdout.split()
    assert words[:3] == ["human", str(len(judged_losses)), "decisions,"]
    assert words[5] == f"{sum(judged_losses) / len(judged_losses):.3f},"
