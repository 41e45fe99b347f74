"""Verify a tournament archive with no server: its log, every game, every pairing, the standings.

An archive (``kifu-tournament/1``) is one JSON object::

    {"format": "kifu-tournament/1", "complete": bool,
     "tournament": {"id", "head", "events": [envelopes]},
     "games": [game records, as GET /v1/games/{id}/record answers them]}

The tournament log uses the games' envelope format (``domain.record``): a hash
chain over public fields, salted commitments to private parts. ``verify_archive``
runs these checks and names the first thing wrong in each:

* ``format``; ``tournament_chain`` (chain and private parts of the log, and the
  archive's id is the log's);
* ``complete``: the log ends with ``tournament_finished`` (an archive of an event
  in progress withholds hidden parts and is checked no further);
* ``games``: every game record verifies as ``kifu verify`` would;
* ``membership``: the archive holds each game the log started, once, and no
  other; each game's ``game_created`` names its tournament, round and table,
  plays the tournament's game and options, and seats the table's entrants in order;
* ``rules``: every event of the log follows from the one before by the
  tournament's rules: the creation's settings re-validated, each command allowed
  in the state it met, each round's tables and byes what the pairing rules give
  from the results before it, each table's game started in turn, each result
  (and forfeit) the game's own, each round closed once its games were over, the
  end when the rules say;
* ``deals`` (duplicate): each round's revealed deal matches the commitment
  published before the round, and every game of the round played it (a fixed
  deal, also the one committed at creation);
* ``standings``: re-derived from the games' own results, equal to the final standings.

What this proves: a change anywhere that leaves the archive inconsistent (a
game's event, a result, a pairing, a standing, a dropped or added event or
game) fails, even when the hashes of what was touched are recomputed. A rewrite
of everything consistent with itself (every game replayed and every hash
recomputed) is caught against a head published elsewhere: the tournament's
head, or any game's head as ``game_finished`` recorded it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.audit import Failure, check_chain, check_private_parts, run_check, verify_record
from domain.errors import KifuError
from domain.events import HIDDEN
from domain.record import to_event
from domain.rng import seed_hash
from domain.tournament import commands
from domain.tournament.model import (
    ENTRANT_WITHDRAWN,
    GAME_FINISHED,
    GAME_FORFEITED,
    GAME_STARTED,
    ROUND_CLOSED,
    ROUND_PAIRED,
    TOURNAMENT_CREATED,
    TOURNAMENT_FINISHED,
    TOURNAMENT_PAUSED,
    TOURNAMENT_RESUMED,
    TOURNAMENT_STARTED,
    Table,
    Tournament,
    evolve,
)
from domain.tournament.standings import Played, for_log, standings

ARCHIVE_FORMAT = "kifu-tournament/1"
FORFEIT = "forfeit"
Progress = Callable[[str], None]
Records = Mapping[str, Mapping[str, Any]]


def verify_archive(archive: Any, progress: Progress | None = None, *, unfinished_ok: bool = False) -> dict[str, Any]:
    """Run every check on ``archive``; ``progress`` is called once per game verified (a CLI's bar).

    ``unfinished_ok``: the server's own audit, which reads every log whole, checks
    an event in progress as far as it goes (as ``verify_record``'s flag does for games).
    """
    checks = [run_check("format", _check_format, archive)]
    if checks[0]["ok"]:
        events = archive["tournament"]["events"]
        games = {r["events"][0]["data"]["game_id"]: r for r in archive["games"]}
        checks += [
            run_check("tournament_chain", _check_log, events, archive["tournament"]),
            run_check("complete", _check_complete, archive, events, unfinished_ok),
        ]
        if archive.get("complete") is not False or unfinished_ok:
            checks += [
                run_check("games", _check_games, games, progress, unfinished_ok),
                run_check("membership", _check_membership, events, archive["games"], games),
                run_check("rules", _check_rules, events, games),
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
    if events[0]["type"] != TOURNAMENT_CREATED or events[0]["data"].get("tournament_id") != log.get("id"):
        raise Failure(f"event 1 is not the creation of tournament {log.get('id')!r}", 1)
    if any(env.get("private_salts") for env in events) or any(env.get("private") for env in events):
        check_private_parts(events)
    return chained


def _check_complete(archive: Mapping[str, Any], events: Sequence[Mapping[str, Any]], unfinished_ok: bool) -> str:
    if archive.get("complete") is False:
        if unfinished_ok:
            return "the tournament is in progress"
        raise Failure(
            "the archive of a tournament in progress withholds its hidden parts and those of its running games; "
            "fetch it again once the tournament is over"
        )
    if events[-1]["type"] != TOURNAMENT_FINISHED and not unfinished_ok:
        raise Failure("the log does not end with tournament_finished: it was cut short", len(events))
    return "the log ends with tournament_finished" if events[-1]["type"] == TOURNAMENT_FINISHED else "in progress"


def _check_games(games: Records, progress: Progress | None, unfinished_ok: bool) -> str:
    for game_id, record in games.items():
        report = verify_record(record, unfinished_ok=unfinished_ok)
        if progress is not None:
            progress(game_id)
        if not report["verified"]:
            bad = next(c for c in report["checks"] if not c["ok"])
            raise Failure(f"game {game_id}: {bad['name']}: {bad['detail']}")
    return f"{len(games)} game records verified"


def _final(events: Sequence[Mapping[str, Any]]) -> Tournament:
    state: Tournament | None = None
    for env in events:
        state = evolve(state, to_event(env))
    assert state is not None
    return state


def _record(games: Records, table: Table, seq: int | None = None) -> Mapping[str, Any]:
    record = games.get(table.game or "")
    if record is None:
        raise Failure(f"game {table.game} (round {table.round}, table {table.table}) is not in the archive", seq)
    return record


def _check_membership(events: Sequence[Mapping[str, Any]], records: Sequence[Any], games: Records) -> str:
    twice = sorted(g for g, n in Counter(r["events"][0]["data"]["game_id"] for r in records).items() if n > 1)
    if twice:
        raise Failure(f"games {twice} are in the archive more than once")
    final = _final(events)
    started = [t for t in final.tables if t.game is not None]
    missing = sorted({t.game for t in started if t.game is not None} - set(games))
    extra = sorted(set(games) - {t.game for t in started})
    if missing or extra:
        raise Failure(f"games started but not in the archive: {missing}; in the archive but not started: {extra}")
    s = final.settings
    for t in started:
        created = _record(games, t)["events"][0]["data"]
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
    return f"{len(started)} games, each once, each created for its table"


# ---------------------------------------------------------------- every event by the rules


def _check_rules(events: Sequence[Mapping[str, Any]], games: Records) -> str:
    state: Tournament | None = None
    for env in events:
        try:
            _follows(state, env, games)
        except KifuError as exc:
            raise Failure(f"event {env['seq']} ({env['type']}) breaks the rules: {exc}", env["seq"]) from None
        state = evolve(state, to_event(env))
    assert state is not None
    _every_forfeit_logged(state, games)
    return f"{len(events)} events follow from the rules; {state.round} rounds re-paired"


def _follows(before: Tournament | None, env: Mapping[str, Any], games: Records) -> None:
    """Raise unless ``env`` is what the rules give in state ``before``."""
    kind, data, seq = env["type"], env["data"], env["seq"]
    if before is None:
        _same(kind, data, _created_again(env), seq)
        return
    if kind in SIMPLE:
        _same(kind, data, SIMPLE[kind](before, data)[0].data, seq)
    elif kind == ROUND_PAIRED:
        _paired(before, data, seq)
    elif kind == GAME_STARTED:
        step = commands.next_step(before)
        if step is None or step.table is None or (step.table.round, step.table.table) != (data["round"], data["table"]):
            raise Failure(f"round {data['round']}, table {data['table']}: not the table whose game starts next", seq)
    elif kind == GAME_FINISHED:
        _finished(before, data, games, seq)
    elif kind == GAME_FORFEITED:
        _forfeited(before, data, games, seq)
    elif kind == ROUND_CLOSED:
        if commands.next_step(before) != commands.Step("close"):
            raise Failure(f"round {data['round']} closed while it was not over", seq)
    elif kind == TOURNAMENT_FINISHED:
        if commands.next_step(before) != commands.Step("finish"):
            raise Failure("the tournament finished before the rules end it", seq)
    else:
        raise Failure(f"event {seq}: unknown tournament event {kind!r}", seq)


SIMPLE: dict[str, Callable[[Tournament, Mapping[str, Any]], list[Any]]] = {
    TOURNAMENT_STARTED: lambda t, d: commands.start(t),
    TOURNAMENT_PAUSED: lambda t, d: commands.pause(t, d.get("reason")),
    TOURNAMENT_RESUMED: lambda t, d: commands.resume(t),
    ENTRANT_WITHDRAWN: lambda t, d: commands.withdraw(t, d["entrant"], d.get("reason")),
}


def _same(kind: str, got: Mapping[str, Any], want: Mapping[str, Any], seq: int) -> None:
    if dict(got) != dict(want):
        field = next((k for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)), "?")
        raise Failure(f"event {seq} ({kind}): {field} is {got.get(field)!r}, the rules give {want.get(field)!r}", seq)


def _created_again(env: Mapping[str, Any]) -> Mapping[str, Any]:
    d = env["data"]
    deals = env.get("private", {}).get(HIDDEN, {}).get("deals") if d.get("fixed_deals") else None
    if d.get("fixed_deals") and deals is None:
        raise Failure("the fixed deals committed at creation are not in the record", env["seq"])
    entrants = [{"name": e["name"], "bot": e["bot"]} for e in d["entrants"]]
    again = commands.create(
        d["tournament_id"],
        d["game"],
        d["options"],
        entrants,
        d["format"],
        d["rounds"],
        d["table_size"],
        d["scoring"],
        deals,
    )
    return again[0].data


def _paired(before: Tournament, data: Mapping[str, Any], seq: int) -> None:
    if commands.next_step(before) != commands.Step("pair"):
        raise Failure(f"round {data['round']} was paired while the rules do not pair a round", seq)
    tables, byes = commands.pairing_of(before)
    got = [tuple(t["entrants"]) for t in data["tables"]]
    if got != tables or list(data["byes"]) != byes:
        raise Failure(
            f"round {data['round']}: tables {got} and byes {data['byes']} are not what the pairing rules give "
            f"from the results before it: tables {tables}, byes {byes}",
            seq,
        )
    if (data.get("deal") is not None) != (before.settings.format == "duplicate"):
        raise Failure(f"round {data['round']}: a deal commitment exactly when the tournament is duplicate", seq)


def _ended(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((e for e in record["events"] if e["type"] == engine.GAME_ENDED), None)


def _finished(before: Tournament, data: Mapping[str, Any], games: Records, seq: int) -> None:
    table = before.table_of(data["game"])
    if table is None or table.finished or (table.round, table.table) != (data["round"], data["table"]):
        raise Failure(f"game {data['game']}: not a running game of round {data['round']}, table {data['table']}", seq)
    ended = _ended(_record(games, table, seq))
    if ended is None:
        raise Failure(f"game {data['game']}: the log says it finished, its record has no game_ended", seq)
    result = ended["data"]["result"]
    if list(data["ranks"]) != list(result["ranks"]) or list(data["scores"]) != list(result["scores"]):
        raise Failure(f"game {data['game']}: the result in the log differs from the game's own record", seq)
    if data["head"] != ended["hash"]:
        raise Failure(f"game {data['game']}: head {data['head']} is not the hash of its game_ended", seq)


def _forfeit_seat(record: Mapping[str, Any]) -> int | None:
    """The seat the organiser forfeited in this game (its resignation ``by: forfeit``), if any."""
    return next(
        (
            e["data"]["seat"]
            for e in record["events"]
            if e["type"] == engine.ACTION_TAKEN
            and e["data"].get("by") == FORFEIT
            and e["data"]["action"].get("type") == engine.RESIGN
        ),
        None,
    )


def _forfeited(before: Tournament, data: Mapping[str, Any], games: Records, seq: int) -> None:
    table = before.table_of(data["game"])
    if table is None or table.forfeit is not None:
        raise Failure(f"game {data['game']}: not a game of this tournament, or forfeited already", seq)
    if _forfeit_seat(_record(games, table, seq)) != data["seat"]:
        raise Failure(
            f"game {data['game']}: seat {data['seat']} was forfeited, its game shows no such resignation", seq
        )


def _every_forfeit_logged(final: Tournament, games: Records) -> None:
    for table in final.tables:
        record = games.get(table.game or "")
        if record is not None and _forfeit_seat(record) is not None and table.forfeit is None:
            raise Failure(f"game {table.game} shows a forfeit that the tournament's log does not record")


# ---------------------------------------------------------------- deals and standings


def _check_deals(events: Sequence[Mapping[str, Any]], games: Records) -> str:
    final = _final(events)
    if final.settings.format != "duplicate":
        return "not a duplicate tournament"
    committed_at_creation = events[0].get("private", {}).get(HIDDEN, {}).get("deals")
    for env in events:
        if env["type"] != ROUND_CLOSED:
            continue
        rnd, seq = env["data"]["round"], env["seq"]
        committed, revealed = final.deals.get(rnd), env["data"]["deal"]
        if not committed or not revealed:
            raise Failure(f"round {rnd}: no deal committed before it or revealed after it", seq)
        if committed_at_creation is not None and revealed.get("deal") != committed_at_creation[rnd - 1]:
            raise Failure(f"round {rnd}: the revealed deal is not the one fixed at the tournament's creation", seq)
        for table in final.round_tables(rnd):
            _check_table_deal(rnd, committed, revealed, _record(games, table, seq), seq)
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
    if created.get("private", {}).get(HIDDEN, {}).get("deal") != revealed["deal"]:
        raise Failure(f"round {rnd}: game {game_id} did not play the round's deal", seq)


def _check_standings(events: Sequence[Mapping[str, Any]], games: Records) -> str:
    final = _final(events)
    finished = next((e for e in events if e["type"] == TOURNAMENT_FINISHED), None)
    if finished is None:
        return "the tournament is not over: no final standings to check"
    played = []
    for t in final.tables:
        ended = _ended(_record(games, t)) if t.game is not None else None
        if ended is not None:
            played.append(Played(t.round, t.table, t.entrants, tuple(ended["data"]["result"]["ranks"])))
    s = final.settings
    derived = [for_log(r) for r in standings(s.format, s.entrants, played, final.byes, s.scoring, final.withdrawn)]
    logged = finished["data"]["standings"]
    for want, got in zip(derived, logged):
        if want != got:
            raise Failure(f"standings: place {want['place']} should be {want}, the log says {got}", finished["seq"])
    if len(derived) != len(logged):
        raise Failure("standings: the log lists another number of entrants", finished["seq"])
    return f"{len(derived)} standings re-derived from the games' own results"
