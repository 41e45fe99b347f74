"""``kifu verify`` on record files: exit 0 and VERIFIED, or exit 1 naming the bad event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from entrypoints.cli import main
from tests.unit.test_audit import finished_record


def test_verify_accepts_a_clean_record(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(finished_record()))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 0 and "VERIFIED" in result.output and "FAIL" not in result.output


def test_verify_rejects_a_changed_record_and_names_the_event(tmp_path: Path) -> None:
    record = finished_record()
    record["events"][5]["data"]["points"] = 1
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 1 and "NOT VERIFIED" in result.output and "event 6" in result.output


def test_verify_refuses_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text("{not json")
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code != 0 and "not JSON" in result.output


def test_without_redis_url_the_cli_finds_the_embedded_redis_of_make_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from entrypoints.cli import _redis

    mp = monkeypatch
    mp.delenv("REDIS_URL", raising=False)
    mp.chdir(tmp_path)
    with pytest.raises(Exception, match=r"\.run/redis\.url"):
        _redis()
    (tmp_path / ".run").mkdir()
    (tmp_path / ".run" / "redis.url").write_text("redis://127.0.0.1:6399/0\n")
    assert _redis().connection_pool.connection_kwargs["port"] == 6399
    mp.setenv("REDIS_URL", "redis://127.0.0.1:6400/0")
    assert _redis().connection_pool.connection_kwargs["port"] == 6400


def test_several_workers_each_listen_on_a_socket_of_their_own() -> None:
    """gevent workers racing to accept on one socket can take most keep-alive connections into one
    worker; with SO_REUSEPORT the kernel spreads them (a single worker needs no such thing)."""
    from entrypoints.cli import gunicorn_argv

    assert "--reuse-port" in gunicorn_argv("app:app", "127.0.0.1", 8000, 2)
    assert "--reuse-port" not in gunicorn_argv("app:app", "127.0.0.1", 8000, 1)
