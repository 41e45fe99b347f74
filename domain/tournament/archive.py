"""Verify a tournament archive with no server: its log, every game, every pairing, the standings.

An archive (``kifu-tournament/1``) is one JSON object::

    {"format": "kifu-tournament/1", "tournament": {"id", "head", "events": [envelopes]},
     "games": [game records, as GET /v1/games/{id}/record answers them]}

The tournament log uses the games' envelope format (``domain.record``): a hash
chain over public fields, salted commitments to private parts. ``verify_archive``
checks, and names the first thing wrong in each check:

* ``format``; ``tournament_chain`` (chain and private parts of the log);
* ``games``: every game record verifies as ``kifu verify`` would;
* ``membership``: the archive holds exactly the games the log started, each
  game's ``game_created`` names its tournament, round and table, plays the
  tournament's game and options, and seats the table's entrants in order;
* ``pairings``: each round's tables and byes are what the pairing rules give
  from the results before it (``domain.tournament.pairing``), and each
  ``game_finished`` (and ``game_forfeited``) agrees with the game's own record;
* ``deals`` (duplicate): each round's revealed deal matches the commitment
  published before the round, and every game of the round played it;
* ``standings``: re-derived from the games' own results, equal to the final standings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.audit import Failure, check_chain, check_private_parts, run_check, verify_record
from domain.record import to_event
from domain.rng import seed_hash
from domain.tournament import commands
from domain.tournament.model import (
    GAME_FINISHED,
    GAME_FORFEITED,
    ROUND_CLOSED,
    ROUND_PAIRED,
    TOURNAMENT_FINISHED,
    Tournament,
    evolve,
)
from domain.tournament.standings import Played, standings

ARCHIVE_FORMAT = "kifu-tournament/1"
Progress = Callable[[str], None]


def verify_archive(archive: Any, progress: Progress | None = None, *, unfinished_ok: bool = False) -> dict[str, Any]:
    """Run every check on ``archive``; ``progress`` is called once per game verified (a CLI's bar).

    ``unfinished_ok``: the server's own audit, which reads every log whole, checks
    games still running as far as they go (``verify_record``'s flag).
    """
    checks = [run_check("format", _check_format, archive)]
    if checks[0]["ok"]:
        events = archive["tournament"]["events"]
        games = {r["events"][0]["data"]["game_id"]: r for r in archive["games"]}
        checks += [
            run_check("tournament_chain", _check_log, events, archive["tournament"]),
            run_check("games", _check_games, games, progress, unfinished_ok),
            run_check("membership", _check_membership, events, games),
            run_check("pairings", _check_pairings, events, games),
            run_check("deals", _check_deals, events, games),
            run_check("standings", _check_standings, events, games),
        ]
    return {
        "verified": all(c["ok"] for c in checks),
        "format": ARCHIVE_FORMAT,
        "checks": checks,
        "games": len(archive["games"]) if checks[0]["ok"] else None,
        "head": archive["tournament"]["events"][-1]["hash"] if checks[0]["ok"] else None,
    }


def _check_format(archive: Any) -> str:
    if not isinstance(archive, Mapping) or archive.get("format") != ARCHIVE_FORMAT:
        raise Failure(f"an archive is a JSON object with format {ARCHIVE_FORMAT!r}")
    log = archive.get("tournament")
    if not isinstance(log, Mapping) or not isinstance(log.get("events"), list) or not log["events"]:
        raise Failure("the archive's 'tournament' holds a non-empty list 'events'")
    if not isinstance(archive.get("games"), list):
        raise Failure("the archive's 'games' is a list of game records")
    for i, rec in enumerate(archive["games"]):
        if not isinstance(rec, Mapping) or not isinstance(rec.get("events"), list) or not rec["events"]:
            raise Failure(f"game record {i} has no events")
        if not isinstance(rec["events"][0], Mapping) or not isinstance(rec["events"][0].get("data"), Mapping):
            raise Failure(f"game record {i} does not start with an event")
    return f"{len(log['events'])} tournament events, {len(archive['games'])} games"


def _check_log(events: Sequence[Mapping[str, Any]], log: Mapping[str, Any]) -> str:
    chained = check_chain(events, log)
    check_private_parts(events)
    return chained


def _check_games(games: Mapping[str, Mapping[str, Any]], progress: Progress | None, unfinished_ok: bool) -> str:
    for game_id, record in games.items():
        report = verify_record(record, unfinished_ok=unfinished_ok)
        if progress is not None:
            progress(game_id)
        if not report["verified"]:
            bad = next(c for c in report["checks"] if not c["ok"])
            raise Failure(f"game {game_id}: {bad['name']}: {bad['detail']}")
    return f"{len(games)} game records verified"


def _states(events: Sequence[Mapping[str, Any]]) -> list[tuple[Tournament | None, Mapping[str, Any]]]:
    """Each event with the tournament state before it."""
    out: list[tuple[Tournament | None, Mapping[str, Any]]] = []
    state: Tournament | None = None
    for env in events:
        out.append((state, env))
        state = evolve(state, to_event(env))
    return out


def _final(events: Sequence[Mapping[str, Any]]) -> Tournament:
    state: Tournament | None = None
    for env in events:
        state = evolve(state, to_event(env))
    assert state is not None
    return state


def _check_membership(events: Sequence[Mapping[str, Any]], games: Mapping[str, Mapping[str, Any]]) -> str:
    final = _final(events)
    started = [t for t in final.tables if t.game is not None]
    missing = sorted({t.game for t in started if t.game is not None} - set(games))
    extra = sorted(set(games) - {t.game for t in started})
    if missing or extra:
        raise Failure(f"games started but not in the archive: {missing}; in the archive but not started: {extra}")
    s = final.settings
    for t in started:
        created = games[t.game or ""]["events"][0]["data"]
        where = f"game {t.game} (round {t.round}, table {t.table})"
        link = created.get("tournament")
        if link != {"id": final.id, "round": t.round, "table": t.table}:
            raise Failure(f"{where}: its game_created names {link!r}, not this pairing")
        if created.get("game") != s.game or created.get("options") != dict(s.options):
            raise Failure(f"{where}: plays {created.get('game')} with other options than the tournament's")
        seated = [{"name": x["name"], "bot": x.get("bot")} for x in created.get("seats", [])]
        expected = [{"name": s.entrants[e]["name"], "bot": s.entrants[e]["bot"]} for e in t.entrants]
        if seated != expected:
            raise Failure(f"{where}: seats {seated} are not the table's entrants {expected}")
    return f"{len(started)} games, each created for its table"


def _check_pairings(events: Sequence[Mapping[str, Any]], games: Mapping[str, Mapping[str, Any]]) -> str:
    rounds = 0
    for before, env in _states(events):
        seq, data = env["seq"], env["data"]
        if env["type"] == ROUND_PAIRED and before is not None:
            tables, byes = commands.pairing_of(before)
            got = [tuple(t["entrants"]) for t in data["tables"]]
            if got != tables or list(data["byes"]) != byes:
                raise Failure(
                    f"round {data['round']}: tables {got} and byes {data['byes']} are not what the pairing rules "
                    f"give from the results before it: tables {tables}, byes {byes}",
                    seq,
                )
            rounds += 1
        elif env["type"] == GAME_FINISHED:
            _check_finished(data, games.get(data["game"]), seq)
        elif env["type"] == GAME_FORFEITED:
            _check_forfeit(data, games.get(data["game"]), seq)
    return f"{rounds} rounds re-paired; every result matches its game"


def _check_finished(data: Mapping[str, Any], record: Mapping[str, Any] | None, seq: int) -> None:
    if record is None:
        raise Failure(f"game {data['game']} finished but is not in the archive", seq)
    ended = next((e for e in record["events"] if e["type"] == engine.GAME_ENDED), None)
    if ended is None:
        raise Failure(f"game {data['game']}: the log says it finished, its record has no game_ended", seq)
    result = ended["data"]["result"]
    if list(data["ranks"]) != list(result["ranks"]) or list(data["scores"]) != list(result["scores"]):
        raise Failure(f"game {data['game']}: the result in the log differs from the game's own record", seq)
    if data["head"] != ended["hash"]:
        raise Failure(f"game {data['game']}: head {data['head']} is not the hash of its game_ended", seq)


def _check_forfeit(data: Mapping[str, Any], record: Mapping[str, Any] | None, seq: int) -> None:
    if record is None:
        raise Failure(f"game {data['game']} was forfeited but is not in the archive", seq)
    resigned = any(
        e["type"] == engine.ACTION_TAKEN
        and e["data"] == {"seat": data["seat"], "action": {"type": engine.RESIGN}, "by": "forfeit"}
        for e in record["events"]
    )
    if not resigned:
        raise Failure(
            f"game {data['game']}: seat {data['seat']} was forfeited, the game shows no such resignation", seq
        )


def _check_deals(events: Sequence[Mapping[str, Any]], games: Mapping[str, Mapping[str, Any]]) -> str:
    final = _final(events)
    if final.settings.format != "duplicate":
        return "not a duplicate tournament"
    for env in events:
        if env["type"] != ROUND_CLOSED:
            continue
        rnd, seq = env["data"]["round"], env["seq"]
        committed, revealed = final.deals.get(rnd), env["data"]["deal"]
        if not committed or not revealed:
            raise Failure(f"round {rnd}: no deal committed before it or revealed after it", seq)
        for table in final.round_tables(rnd):
            _check_table_deal(rnd, committed, revealed, games[table.game or ""], seq)
    return f"{final.closed} duplicate rounds: every table played the committed deal"


def _check_table_deal(
    rnd: int, committed: Mapping[str, Any], revealed: Mapping[str, Any], record: Mapping[str, Any], seq: int
) -> None:
    created = record["events"][0]
    game_id = created["data"]["game_id"]
    if "seed_hash" in committed:
        if seed_hash(bytes.fromhex(revealed["seed"])) != committed["seed_hash"]:
            raise Failure(f"round {rnd}: the revealed seed does not match the seed hash committed before it", seq)
        if created["data"]["seed_hash"] != committed["seed_hash"]:
            raise Failure(f"round {rnd}: game {game_id} was not dealt from the round's seed", seq)
        return
    if commands.deal_commitment(revealed["deal"], revealed["salt"]) != committed["commitment"]:
        raise Failure(f"round {rnd}: the revealed deal does not match the commitment made before it", seq)
    if created.get("private", {}).get("hidden", {}).get("deal") != revealed["deal"]:
        raise Failure(f"round {rnd}: game {game_id} did not play the round's deal", seq)


def _check_standings(events: Sequence[Mapping[str, Any]], games: Mapping[str, Mapping[str, Any]]) -> str:
    final = _final(events)
    finished = next((e for e in events if e["type"] == TOURNAMENT_FINISHED), None)
    if finished is None:
        return "the tournament is not over: no final standings to check"
    played = []
    for t in final.tables:
        ended = next((e for e in games[t.game or ""]["events"] if e["type"] == engine.GAME_ENDED), None)
        if ended is not None:
            played.append(Played(t.round, t.table, t.entrants, tuple(ended["data"]["result"]["ranks"])))
    s = final.settings
    derived = standings(s.format, s.entrants, played, final.byes, s.scoring, final.withdrawn)
    for want, got in zip(derived, finished["data"]["standings"]):
        if want != got:
            raise Failure(f"standings: place {want['place']} should be {want}, the log says {got}", finished["seq"])
    if len(derived) != len(finished["data"]["standings"]):
        raise Failure("standings: the log lists another number of entrants", finished["seq"])
    return f"{len(derived)} standings re-derived from the games' own results"
