"""The ``kifu`` command: serve, worker, projector, sweeper, run, verify, verify-tournament, keys rotate,
log-monitor, export, rebuild-projections, bench, play."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
import redis

from adapters.redis_client import connect
from entrypoints.gunicorn_command import gunicorn_argv
from entrypoints.stack import API_WORKERS_ENV, MAX_API_WORKERS, METRICS_DIR, OTHER_CORES, URL_FILE, default_api_workers

RUN_DIR = Path(".run")


def _redis() -> redis.Redis:
    """``REDIS_URL``, else the embedded Redis of a ``kifu run`` started in this directory."""
    url = os.environ.get("REDIS_URL")
    if not url:
        found = RUN_DIR / URL_FILE
        if not found.exists():
            raise click.UsageError(
                "set REDIS_URL, or run this next to a running 'make run' / 'kifu run' "
                f"(it writes its embedded Redis's address to {found})"
            )
        url = found.read_text().strip()
    return connect(url)


@click.group()
def main() -> None:
    """Kifu: an event-sourced card-game service with verifiable game records."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=lambda: int(os.environ.get("PORT", "8000")), show_default="$PORT or 8000")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    envvar=API_WORKERS_ENV,
    show_envvar=True,
    default=default_api_workers,
    show_default=f"the cores less {OTHER_CORES}, from 2 to {MAX_API_WORKERS}",
    help="gunicorn worker processes (kifu run's too: it passes the variable on)",
)
@click.option(
    "--access-log/--no-access-log",
    default=False,
    show_default=True,
    help="log every request to stdout (costs about a fifth of the throughput; /metrics counts them)",
)
def serve(host: str, port: int, workers: int, access_log: bool) -> None:
    """Run the REST API under gunicorn with gevent workers.

    gevent rather than threads: an SSE client holds its connection for minutes,
    which costs a greenlet instead of one of a few threads, and under the
    16-client San Ban load it measured the best throughput and p99 of the
    configurations tried (README, Benchmarks).
    """
    _redis()
    if not os.environ.get(METRICS_DIR):  # the workers' metrics, added up by /metrics (adapters.metrics)
        os.environ[METRICS_DIR] = tempfile.mkdtemp(prefix="kifu-metrics-")
    args = gunicorn_argv("entrypoints.api:create_app()", host, port, workers)
    if access_log:
        args[-1:-1] = ["--access-logfile", "-"]
    os.execv(sys.executable, args)


@main.command()
@click.option("--burst", is_flag=True, help="stop when the queue is empty")
@click.option(
    "--queue",
    "queues",
    multiple=True,
    default=("kifu",),
    show_default=True,
    help="the RQ queue(s) to serve, first first: kifu (bot turns, timeouts, tournaments) or kifu-analysis",
)
def worker(burst: bool, queues: tuple[str, ...]) -> None:
    """Run an RQ worker (with the scheduler) for bot turns, move timeouts and tournament steps (or, with
    ``--queue kifu-analysis``, the analyses of finished games); it rides out a Redis outage in its own
    process (``entrypoints.worker``)."""
    from entrypoints.worker import run_worker

    run_worker(_redis(), burst, queues)


@main.command()
def projector() -> None:
    """Run the projector: games list and snapshots, from every partition's feed."""
    from bootstrap import build, events_from_environment
    from entrypoints.supervisor import SignalSafeEvent

    stopping = SignalSafeEvent()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    with contextlib.suppress(KeyboardInterrupt):
        build(_redis(), events=events_from_environment()).projector().run(stopping)


@main.command()
def sweeper() -> None:
    """Run the sweeper: ask again for bot turns, move timeouts and tournament steps whose job was lost."""
    from bootstrap import build, events_from_environment
    from entrypoints import sweeper as sweeping
    from entrypoints.supervisor import SignalSafeEvent

    stopping = SignalSafeEvent()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    with contextlib.suppress(KeyboardInterrupt):
        sweeping.run(build(_redis(), events=events_from_environment()), stopping)


@main.command("rebuild-projections")
def rebuild_projections() -> None:
    """Drop every read model and snapshot and rebuild them from the log.

    Safe while the service runs: running projectors pause for the rebuild.
    """
    from bootstrap import build, events_from_environment
    from projections.projector import RebuildRefused

    try:
        entries = build(_redis(), events=events_from_environment()).rebuild_projections()
    except RebuildRefused as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"rebuilt from {entries} feed entries")


EXIT_VERIFIED, EXIT_FAILED, EXIT_IN_PROGRESS = 0, 1, 3  # 2 is click's usage error (no such file, ...)
VERDICT_LINES = {
    "verified": ("VERIFIED", EXIT_VERIFIED),
    "in_progress": ("IN PROGRESS: chain and commitments valid, result not proven", EXIT_IN_PROGRESS),
    "failed": ("NOT VERIFIED", EXIT_FAILED),
}


KEYS_HELP = (
    "the server's keys: a JWK set file, or a URL (https://HOST/v1/keys) to fetch it from; checks the "
    "signatures (without it they are reported NOT CHECKED)"
)


@main.command()
@click.argument("record_file", type=click.File("rb"))
@click.option("--keys", "keys_from", default=None, metavar="FILE|URL", help=KEYS_HELP)
@click.option(
    "--log",
    "log_url",
    default=None,
    metavar="URL",
    help="a Kifu server (https://HOST): also check the record's inclusion in its transparency log's current "
    "signed head, and that head's consistency with the one the record carries (needs --keys)",
)
@click.option(
    "--bots",
    "rerun_bots",
    is_flag=True,
    help="also re-run every bot decision of a sealed, verified record and check it is the bot's (seconds: a "
    "search bot's decision is searched again)",
)
def verify(record_file: Any, keys_from: str | None, log_url: str | None, rerun_bots: bool) -> None:
    """Verify a game record offline.

    Exit status: 0 VERIFIED (sealed, every check passed: the result is proven); 1 NOT VERIFIED (a check
    failed, or the file is not strict JSON); 3 IN PROGRESS (not sealed: chain and commitments valid,
    result not proven); 2 a usage error (no such file).
    """
    from domain.audit import verify_record

    record = _strict_json(record_file)
    keys = _keys(keys_from)
    report = verify_record(record, keys=keys)
    if log_url is not None:
        if keys is None:
            raise click.UsageError("--log needs --keys: a tree head is only worth its signature")
        _against_log(report, record, log_url, keys)
    if rerun_bots:
        _bots_check(report, record)
    _attestations(report)
    _report(report)


@main.command("verify-tournament")
@click.argument("archive_file", type=click.File("rb"))
@click.option("--quiet", is_flag=True, help="no progress bar")
@click.option("--keys", "keys_from", default=None, metavar="FILE|URL", help=KEYS_HELP)
def verify_tournament(archive_file: Any, quiet: bool, keys_from: str | None) -> None:
    """Verify a tournament archive offline: every game, every pairing, the standings.

    Exit status as ``kifu verify``: 0 VERIFIED (the event is over and every game sealed and verified),
    1 NOT VERIFIED, 3 IN PROGRESS (the event is not over: no standing proven), 2 a usage error.
    """
    from tqdm import tqdm

    from domain.tournament.archive import verify_archive

    archive = _strict_json(archive_file)
    keys = _keys(keys_from)
    total = len(archive.get("games", [])) if isinstance(archive, dict) else 0
    with tqdm(total=total, unit="game", disable=quiet, file=sys.stderr) as bar:
        report = verify_archive(archive, progress=lambda _game: bar.update(), keys=keys)
    click.echo(f"signatures: {'checked against the keys given' if keys is not None else 'NOT CHECKED (no --keys)'}")
    _report(report)


def _keys(keys_from: str | None) -> dict[str, Any] | None:
    """The JWK set of ``--keys``: a file, or fetched from a URL."""
    if keys_from is None:
        return None
    from domain.strict_json import StrictJSONError, loads

    try:
        if keys_from.startswith(("http://", "https://")):
            import requests

            raw = requests.get(keys_from, timeout=30).content
        else:
            raw = Path(keys_from).read_bytes()
        keys = loads(raw)
    except (OSError, StrictJSONError, ValueError) as exc:  # requests' errors are OSErrors
        raise click.UsageError(f"--keys {keys_from}: {exc}") from None
    if not isinstance(keys, dict) or not isinstance(keys.get("keys"), list):
        raise click.UsageError(f'--keys {keys_from}: not a JWK set ({{"keys": [...]}})')
    return keys


def _attestations(report: dict[str, Any]) -> None:
    """Say what was checked of the signature and the inclusion proof, in words."""
    signed = {
        "checked": "checked against the keys given",
        "unchecked": "NOT CHECKED (no --keys given)",
        "unsigned": "none (an unsigned record)",
    }
    logged = {"checked": "checked", "unchecked": "proof valid, head signature NOT CHECKED", "absent": "none"}
    click.echo(f"signature: {signed[report['signed']]}")
    click.echo(f"inclusion: {logged[report['logged']]}")


def _bots_check(report: dict[str, Any], record: Any) -> None:
    """Add a ``bots`` check: every bot decision re-run gives the recorded action (a verified record only:
    anything else has failed already, or has no seed to derive a search bot's stream from)."""
    from domain.bots import rerun
    from domain.canonical import canonical_json

    if report["verdict"] != "verified":
        report["checks"].append({"name": "bots", "ok": True, "detail": "not re-run (the record is not verified)"})
        return
    decisions = rerun(record)
    wrong = [d for d in decisions if not d["same"]]
    levels = sorted({d["level"] for d in decisions})
    counts = ", ".join(f"{level}: {sum(d['level'] == level for d in decisions)}" for level in levels)
    if not wrong:
        detail = f"{len(decisions)} bot decisions re-run, every one the bot's ({counts or 'no bot seat'})"
        report["checks"].append({"name": "bots", "ok": True, "detail": detail, "seq": None})
        return
    first = wrong[0]
    detail = (
        f"{len(wrong)} of {len(decisions)} bot decisions are not the bot's: event {first['seq']}, seat "
        f"{first['seat']} ({first['level']}) recorded {canonical_json(first['action']).decode()}, the bot chooses "
        f"{canonical_json(first['rerun']).decode()}"
    )
    report["checks"].append({"name": "bots", "ok": False, "detail": detail, "seq": first["seq"]})
    report["verified"], report["verdict"] = False, "failed"
    named = [x for x in (report["first_bad_event"], first["seq"]) if x is not None]
    report["first_bad_event"] = min(named)


def _against_log(report: dict[str, Any], record: Any, url: str, keys: dict[str, Any]) -> None:
    """Add a ``log`` check: the record's game is in the server's current signed tree head, which extends
    the head the record carries."""
    from entrypoints.log_monitor import Alarm, check_in_log

    try:
        detail = check_in_log(record, url, keys)
        check = {"name": "log", "ok": True, "detail": detail, "seq": None}
    except (Alarm, OSError, KeyError, TypeError, ValueError) as exc:
        end = len(record["events"]) if report["head"] is not None else None  # it names the last event
        check = {"name": "log", "ok": False, "detail": str(exc), "seq": end}
        report["verified"], report["verdict"] = False, "failed"
        named = [x for x in (report["first_bad_event"], end) if x is not None]
        report["first_bad_event"] = min(named) if named else None
    report["checks"].append(check)


@main.command("export")
@click.argument("url")
@click.option("--out", "out", default="-", show_default=True, help="the file to write (- for stdout)")
@click.option(
    "--csv", "as_csv", is_flag=True, help="one row per decision (domain/decisions.py), not one record per line"
)
@click.option(
    "--parquet",
    "as_parquet",
    is_flag=True,
    help="the same rows as --csv, as a Parquet file (needs pyarrow: pip install 'kifu[parquet]'; --out a file)",
)
@click.option(
    "--analysis",
    "with_analysis",
    is_flag=True,
    help="with --csv or --parquet: add each game's analysis (best, value, best_value, loss, label) where the "
    "server has one done (one GET per game)",
)
@click.option("--game", default=None, help="only this game (san-ban, nin-nal, ...)")
@click.option("--player", default=None, help="only games with a seat of this name")
@click.option("--tournament", default=None, help="only this tournament's games")
@click.option("--since", default=None, help="created at or after (RFC 3339 time or date)")
@click.option("--until", default=None, help="created before (RFC 3339 time or date)")
@click.option("--limit", default=100, show_default=True, help="at most this many games (10,000 at most)")
def export(url: str, out: str, as_csv: bool, as_parquet: bool, with_analysis: bool, **filters: Any) -> None:
    """Download finished games from a server (GET /v1/games/export): NDJSON records as served, or one row
    per decision as CSV or Parquet for pandas or polars (docs/analysis.md)."""
    import json

    import requests

    from entrypoints import export_files

    if as_csv and as_parquet:
        raise click.UsageError("--csv or --parquet, not both")
    if with_analysis and not (as_csv or as_parquet):
        raise click.UsageError("--analysis adds columns to the rows of --csv or --parquet")
    if as_parquet and out == "-":
        raise click.UsageError("--parquet writes a file: give --out FILE")
    base = url.rstrip("/")
    params = {k: v for k, v in filters.items() if v is not None}
    answer = requests.get(f"{base}/v1/games/export", params=params, stream=True, timeout=60)
    if answer.status_code != 200:
        raise click.ClickException(f"GET /v1/games/export answered {answer.status_code}: {answer.text[:300]}")
    lines = (line.decode() for line in answer.iter_lines() if line)
    if as_csv or as_parquet:
        analysis = export_files.analysis_from(base) if with_analysis else None
        write = export_files.write_parquet if as_parquet else export_files.write_csv
        games = write((json.loads(line) for line in lines), out, analysis)
    else:
        games = export_files.write_ndjson(lines, out)
    click.echo(f"{games} games exported", err=True)


@main.group()
def keys() -> None:
    """The server's signing key (docs/record-format.md, "Rotating the key")."""


@keys.command("rotate")
@click.option("--data", default=".run", show_default=True, help="the data directory (unless KIFU_SIGNING_KEY_FILE)")
def keys_rotate(data: str) -> None:
    """Replace the signing key with a new one and publish it; the old one is kept in GET /v1/keys, retired.

    Running processes sign with the new key from their next signature on."""
    from adapters.redis_client import connect_events
    from adapters.signing_keys import KeyRegistry, key_file, rotate
    from service.commands import utc_now

    events_url = os.environ.get("KIFU_EVENTS_URL")
    registry = KeyRegistry(connect_events(events_url) if events_url else _redis())
    signer = rotate(key_file(Path(data)), registry, utc_now())
    click.echo(f"new signing key {signer.kid}: published; the previous one is retired")


@main.command("log-monitor")
@click.argument("url")
@click.option("--state", "state_file", default="kifu-log-monitor.json", show_default=True, help="kept between runs")
@click.option(
    "--keys",
    "keys_from",
    default=None,
    metavar="FILE|URL",
    help="the keys to trust (default: the server's own GET /v1/keys as first seen, pinned in the state)",
)
@click.option("--interval", default=10.0, show_default=True, help="seconds between looks")
@click.option("--once", is_flag=True, help="look once and exit (0: all is well)")
def log_monitor(url: str, state_file: str, keys_from: str | None, interval: float, once: bool) -> None:
    """Follow a server's transparency log; say loudly (exit 1) if it forks, shrinks, logs a game twice or
    leaves a finished game out (entrypoints/log_monitor.py)."""
    from entrypoints.log_monitor import Alarm, Monitor, State, follow

    path = Path(state_file)
    monitor = Monitor(url, State.load(path), path, keys=_keys(keys_from), say=click.echo)
    try:
        follow(monitor, interval, once)
    except Alarm as alarm:
        click.echo(f"ALERT: {alarm}", err=True)
        sys.exit(EXIT_FAILED)


def _strict_json(file: Any) -> Any:
    """The file parsed as strict JSON (``domain.strict_json``), or NOT VERIFIED with the reason (exit 1)."""
    from domain.strict_json import StrictJSONError, loads

    try:
        return loads(file.read())
    except StrictJSONError as exc:
        click.echo(f"FAIL json: not JSON ({exc})")
        click.echo("NOT VERIFIED head None")
        sys.exit(EXIT_FAILED)


def _report(report: dict[str, Any]) -> None:
    for check in report["checks"]:
        mark = "ok  " if check["ok"] else "FAIL" if check["name"] not in ("sealed", "complete") else "----"
        click.echo(f"{mark} {check['name']}: {check['detail']}")
    if report.get("first_bad_event") is not None:
        click.echo(f"first bad event: {report['first_bad_event']}")
    line, status = VERDICT_LINES[report["verdict"]]
    click.echo(f"{line} head {report['head']}")
    sys.exit(status)


@main.command()
@click.argument("which", nargs=-1)
@click.option(
    "--url",
    default=None,
    help="API base URL for the HTTP benchmark (e.g. http://127.0.0.1:8000); for compare, a running API to "
    "measure instead of starting two",
)
@click.option("--seconds", type=float, default=None, help="api, compare: seconds per measurement (20; compare 15)")
@click.option("--clients", type=int, default=16, show_default=True, help="api, compare: concurrent connections")
@click.option("--wrk", is_flag=True, help="compare: also run wrk against one server, as a cross-check")
def bench(which: tuple[str, ...], url: str | None, seconds: float | None, clients: int, wrk: bool) -> None:
    """Print benchmark figures (domain, store, load, api; compare, only when named: Kifu against its
    baselines, a few minutes). Nothing is asserted. The benchmarks are a development tool: they live in the
    source checkout (``bench/``, also ``python -m bench.<name>``), not in the installed package."""
    import importlib

    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "bench" / "__init__.py").is_file():
        raise click.ClickException("kifu bench runs from a source checkout (bench/ is not installed with kifu)")
    sys.path.insert(0, str(checkout))
    importlib.import_module("bench").run_all(list(which), url, seconds, clients, wrk)


@main.command()
@click.argument("game")
@click.option("--url", default=lambda: os.environ.get("KIFU", "http://127.0.0.1:8000"), show_default="$KIFU or :8000")
@click.option("--bot", "levels", multiple=True, default=["greedy"], show_default=True, help="a bot seat (repeat)")
@click.option("--option", "options", multiple=True, help="a game option as NAME=JSON (e.g. mode='\"standard\"')")
@click.option("--name", default="you", show_default=True)
def play(game: str, url: str, levels: tuple[str, ...], options: tuple[str, ...], name: str) -> None:
    """Play GAME in this terminal against the server's bots (a demo of kifu.client, docs/api.md)."""
    import json

    from kifu.client import Client
    from kifu.play import play as play_game

    chosen: dict[str, Any] = {}
    for option in options:
        key, _, value = option.partition("=")
        chosen[key] = json.loads(value)
    with Client(url) as kifu:
        play_game(kifu, game, levels, chosen or None, name, say=click.echo)


@main.command()
@click.option("--port", default=lambda: int(os.environ.get("PORT", "8000")), show_default="$PORT or 8000")
@click.option("--data", default=".run", show_default=True, help="directory for the embedded Redis")
def run(port: int, data: str) -> None:
    """Start everything: Redis (embedded unless REDIS_URL is set), API, worker, projector, sweeper
    (``entrypoints.stack``)."""
    from entrypoints.stack import run_stack

    sys.exit(run_stack(port, Path(data)))


if __name__ == "__main__":
    main()
