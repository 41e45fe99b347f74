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
* ``standings``: re-derived from the games' own results, equal to the final standings;
* ``signature``: the archive's signature (``kifu-tournament-head/1``) is over this log's head, and, given
  the server's keys, the server's; ``transparency``: every signed game carries its inclusion proof
  against the archive's one signed tree head (``log_head``), whose signature holds given the keys.

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
from domain.audit import (
    FAILED,
    HEX64,
    IN_PROGRESS,
    LOWER_HEX,
    VERIFIED,
    Failure,
    check_chain,
    check_envelope,
    check_private_parts,
    first_difference,
    run_check,
    verify_record,
)
from domain.canonical import same
from domain.errors import KifuError
from domain.events import HIDDEN
from domain.record import strong_salt, to_event
from domain.rng import seed_hash
from domain.signatures import SignatureError, check_shape, check_signature, tournament_statement
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
Rule = Callable[[Tournament, Mapping[str, Any], Records, int], None]


ARCHIVE_IN_PROGRESS_NOTE = (
    "the tournament is in progress: its hidden parts are withheld, and so are the games of a duplicate "
    "round still in play; fetch the archive again once it is over"
)
COMPLETE_CHECK = "complete"
ARCHIVE_KEYS = frozenset({"format", "complete", "tournament", "games", "note", "signature", "log_head"})
LOG_KEYS = frozenset({"id", "head", "events"})


def verify_archive(
    archive: Any,
    progress: Progress | None = None,
    *,
    unfinished_ok: bool = False,
    keys: Mapping[str, Any] | None = None,
    unsigned_ok: bool = False,
) -> dict[str, Any]:
    """Run every check on ``archive``, with the verdict; ``progress`` is called once per game verified (a CLI's bar).
    ``keys``: the server's JWK set, to check the archive's signature, its tree head's and every game's
    (with ``unsigned_ok``, an unsigned archive or game is not refused for that alone).

    The verdict, as a game record's (``domain.audit``): ``verified`` once the log ends with
    ``tournament_finished`` and every check passed (every game among them sealed and verified);
    ``in_progress`` while it does not, when everything that can be checked is valid; else ``failed``.
    ``unfinished_ok``: the server's own audit, which reads every log whole, checks an event in
    progress as far as it goes, its running games included (an archive leaves them out).
    """
    checks = [run_check("format", _check_format, archive)]
    finished = False
    if checks[0]["ok"]:
        events = archive["tournament"]["events"]
        finished = events[-1]["type"] == TOURNAMENT_FINISHED
        games = {r["events"][0]["data"]["game_id"]: r for r in archive["games"]}
        checks += [
            run_check("tournament_chain", _check_log, events, archive["tournament"], finished),
            run_check("header", _check_header, archive, events, finished),
            _complete(finished),
            run_check("signature", _check_signature, archive, events, finished, keys, unsigned_ok),
        ]
        if finished or unfinished_ok:
            checks += [
                run_check("games", _check_games, games, progress, finished, keys, unsigned_ok),
                run_check("transparency", _check_transparency, archive, keys),
                run_check("membership", _check_membership, events, archive["games"], games),
                run_check("rules", _check_rules, events, games),
                run_check("deals", _check_deals, events, games),
                run_check("standings", _check_standings, events, games),
            ]
    failed = [c for c in checks if not c["ok"] and c["name"] != COMPLETE_CHECK]
    verdict = FAILED if failed else VERIFIED if finished else IN_PROGRESS
    return {
        "verified": verdict == VERIFIED,
        "verdict": verdict,
        "format": ARCHIVE_FORMAT,
        "checks": [{k: v for k, v in c.items() if k != "field"} for c in checks],
        "games": len(archive["games"]) if checks[0]["ok"] else None,
        "head": archive["tournament"]["events"][-1]["hash"] if checks[0]["ok"] else None,
    }


def _check_format(archive: Any) -> str:
    if not isinstance(archive, Mapping) or archive.get("format") != ARCHIVE_FORMAT:
        raise Failure(f"an archive is a JSON object with format {ARCHIVE_FORMAT!r}")
    log = archive.get("tournament")
    if not isinstance(log, Mapping) or not isinstance(log.get("events"), list) or not log["events"]:
        raise Failure("the archive's 'tournament' holds a non-empty list 'events'")
    for pos, env in enumerate(log["events"], start=1):
        if not check_envelope(env, pos):
            raise Failure(f"tournament event {pos} is not in the current envelope format", pos)
    if not isinstance(archive.get("games"), list):
        raise Failure("the archive's 'games' is a list of game records")
    for i, rec in enumerate(archive["games"]):
        if not isinstance(rec, Mapping) or not isinstance(rec.get("events"), list) or not rec["events"]:
            raise Failure(f"game record {i} has no events")
        first = rec["events"][0]
        if not isinstance(first, Mapping) or not isinstance(first.get("data"), Mapping):
            raise Failure(f"game record {i} does not start with an event")
        if not isinstance(first["data"].get("game_id"), str):
            raise Failure(f"game record {i} does not name its game in event 1")
    return f"{len(log['events'])} tournament events, {len(archive['games'])} games"


def _check_log(events: Sequence[Mapping[str, Any]], log: Mapping[str, Any], finished: bool) -> str:
    chained = check_chain(events)
    if events[0]["type"] != TOURNAMENT_CREATED or events[0]["data"].get("tournament_id") != log.get("id"):
        raise Failure(f"event 1 is not the creation of tournament {log.get('id')!r}", 1)
    check_private_parts(events, sealed=finished)
    return chained


def _check_header(archive: Mapping[str, Any], events: Sequence[Mapping[str, Any]], finished: bool) -> str:
    """The archive's fields besides the logs are exactly what the tournament's log commits to."""
    log = archive["tournament"]
    unknown = sorted((set(archive) - ARCHIVE_KEYS) | {f"tournament.{k}" for k in set(log) - LOG_KEYS})
    if unknown:
        raise Failure(f"unknown archive field(s) {unknown}: an archive holds only its logs and copies of them")
    if not same(archive.get("complete"), finished):
        raise Failure(
            f"'complete' is {archive.get('complete')!r}, but the log "
            f"{'ends' if finished else 'does not end'} with tournament_finished",
            len(events),
        )
    if "note" in archive and (finished or archive["note"] != ARCHIVE_IN_PROGRESS_NOTE):
        raise Failure("'note' is only the note of an archive in progress", len(events))
    if not same(log.get("head"), events[-1]["hash"]):
        raise Failure("the tournament's head is not the hash of its last event", len(events))
    return "complete, note and head match the tournament's log"


def _complete(finished: bool) -> dict[str, Any]:
    """Whether the event is over, from its log alone: an event in progress proves no result yet."""
    if finished:
        return {"name": COMPLETE_CHECK, "ok": True, "seq": None, "detail": "the log ends with tournament_finished"}
    return {
        "name": COMPLETE_CHECK,
        "ok": False,
        "seq": None,
        "detail": "in progress: the log does not end with tournament_finished, so no standing is proven; "
        "the archive withholds its hidden parts and those of its running games: fetch it again once it is over",
    }


def _check_signature(
    archive: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    finished: bool,
    keys: Mapping[str, Any] | None,
    unsigned_ok: bool = False,
) -> str:
    """The archive's signature vouches for its tournament's log as it is (``domain.signatures``)."""
    if "signature" not in archive:
        if keys is not None and not unsigned_ok:
            raise Failure("the archive is not signed, and keys were given to check its signature", len(events))
        return "none: an unsigned archive"
    signature = archive["signature"]
    want = tournament_statement(archive["tournament"]["id"], len(events), events[-1]["hash"], finished)
    try:
        check_shape(signature)
        if not same(signature["statement"], want):
            where, expected, got = first_difference(want, signature["statement"], "signature.statement")
            raise SignatureError(f"{where} is {got!r}, the log gives {expected!r}")
        if keys is None:
            return "the statement is this tournament's head; the signature is NOT CHECKED (no keys given)"
        jwk = check_signature(signature, keys)
    except SignatureError as exc:
        raise Failure(f"signature: {exc}", len(events)) from None
    return f"signed by key {jwk['kid']}"


def _check_transparency(archive: Mapping[str, Any], keys: Mapping[str, Any] | None) -> str:
    """Every signed game's inclusion proof is against the archive's one signed tree head ``log_head``."""
    signed = [r for r in archive["games"] if "signature" in r]
    if not signed and "log_head" not in archive:
        return "no signed game, no tree head"
    head = archive.get("log_head")
    if head is None:
        raise Failure("signed games but no log_head: the archive proves no game's place in the log")
    for record in signed:
        if not same(record.get("inclusion", {}).get("head"), head):
            game = record["events"][0]["data"]["game_id"]
            raise Failure(f"game {game}: its inclusion proof is not against the archive's log_head")
    if keys is not None:
        try:
            check_signature(head["signature"], keys)
        except (SignatureError, KeyError, TypeError) as exc:
            raise Failure(f"log_head: {exc}") from None
    checked = "its signature checked" if keys is not None else "its signature NOT CHECKED (no keys given)"
    return f"{len(signed)} games proven in the tree of {head.get('size')} (log_head; {checked})"


def _check_games(
    games: Records, progress: Progress | None, finished: bool, keys: Mapping[str, Any] | None, unsigned_ok: bool
) -> str:
    """Every game verifies as ``kifu verify`` verifies it; once the event is over, every game is sealed."""
    running = 0
    for game_id, record in games.items():
        report = verify_record(record, keys=keys, unsigned_ok=unsigned_ok)
        if progress is not None:
            progress(game_id)
        if report["verdict"] == FAILED:
            bad = next(c for c in report["checks"] if not c["ok"])
            raise Failure(f"game {game_id}: {bad['name']}: {bad['detail']}")
        if report["verdict"] == IN_PROGRESS:
            if finished:
                raise Failure(f"game {game_id} is not sealed: its result is not proven (its log lacks game_sealed)")
            running += 1
    return f"{len(games) - running} game records verified" + (f", {running} in progress" if running else "")


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
        if not same(link, {"id": final.id, "round": t.round, "table": t.table}):
            raise Failure(f"{where}: its game_created names {link!r}, not this pairing")
        if created.get("game") != s.game or not same(created.get("options"), dict(s.options)):
            raise Failure(f"{where}: plays {created.get('game')} with other options than the tournament's")
        if created.get("fixed_deal") is not (s.format == "duplicate" and s.fixed_deals):
            raise Failure(f"{where}: fixed_deal is {created.get('fixed_deal')!r}, unlike the event's settings")
        seated = [{"name": x["name"], "bot": x.get("bot")} for x in created.get("seats", [])]
        expected = [{"name": s.entrants[e]["name"], "bot": s.entrants[e]["bot"]} for e in t.entrants]
        if not same(seated, expected):
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
    """Raise unless ``env`` is exactly what the rules give in state ``before`` (its free parts, such as
    a reason, a game's id or a duplicate round's commitment, taken from the event and judged on their own)."""
    kind, data, seq = env["type"], env["data"], env["seq"]
    if before is None:
        _same(kind, data, _created_again(env), seq)
        return
    rule = RULES.get(kind)
    if rule is None:
        raise Failure(f"event {seq}: unknown tournament event {kind!r}", seq)
    rule(before, data, games, seq)


def _started(before: Tournament, data: Mapping[str, Any], games: Records, seq: int) -> None:
    step = commands.next_step(before)
    table = step.table if step is not None else None
    if table is None or not same([data["round"], data["table"]], [table.round, table.table]):
        raise Failure(f"round {data['round']}, table {data['table']}: not the table whose game starts next", seq)
    _same(GAME_STARTED, data, commands.game_started(before, table, data["game"])[0].data, seq)


def _closed(before: Tournament, data: Mapping[str, Any], games: Records, seq: int) -> None:
    if commands.next_step(before) != commands.Step("close"):
        raise Failure(f"round {data['round']} closed while it was not over", seq)
    deal = data.get("deal")
    if not (isinstance(deal, Mapping) if before.settings.format == "duplicate" else deal is None):
        raise Failure(f"round {data['round']}: a revealed deal exactly when the tournament is duplicate", seq)
    _same(ROUND_CLOSED, data, commands.close_round(before, data["deal"])[0].data, seq)


def _ends(before: Tournament, data: Mapping[str, Any], games: Records, seq: int) -> None:
    if commands.next_step(before) != commands.Step("finish"):
        raise Failure("the tournament finished before the rules end it", seq)
    _same(TOURNAMENT_FINISHED, data, commands.finish(before)[0].data, seq)


def _simple(kind: str, command: Callable[[Tournament, Mapping[str, Any]], list[Any]]) -> Rule:
    """The rule of an organiser's command: the event is exactly what the command gives."""
    return lambda before, data, games, seq: _same(kind, data, command(before, data)[0].data, seq)


def _reason(data: Mapping[str, Any]) -> str | None:
    """A command's free-text reason: a string, or null where none was given (the chain alone binds its text)."""
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise KifuError(f"a reason is a string or null, not {reason!r}")
    return reason


def _same(kind: str, got: Mapping[str, Any], want: Mapping[str, Any], seq: int) -> None:
    """``got`` is exactly ``want``, types included (``same``); else the first field that differs."""
    if not same(got, want):
        where, expected, found = first_difference(want, got)
        raise Failure(f"event {seq} ({kind}): {where} is {found!r}, the rules give {expected!r}", seq)


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
    got = [t["entrants"] for t in data["tables"]]
    if not same(got, [list(t) for t in tables]) or not same(data["byes"], byes):
        raise Failure(
            f"round {data['round']}: tables {got} and byes {data['byes']} are not what the pairing rules give "
            f"from the results before it: tables {tables}, byes {byes}",
            seq,
        )
    deal, s = data.get("deal"), before.settings
    if s.format != "duplicate":
        if deal is not None:
            raise Failure(f"round {data['round']}: a deal commitment in a tournament that is not duplicate", seq)
    elif not _commitment_of_kind(deal, COMMITTED_BY[s.fixed_deals]):
        kind = "a fixed deal's" if s.fixed_deals else "a seed's"
        raise Failure(
            f"round {data['round']}: the deal commitment must be {kind} (exactly "
            f"{{{COMMITTED_BY[s.fixed_deals]!r}: 64 hex digits}}), as tournament_created fixes; it is {deal!r}",
            seq,
        )
    _same(ROUND_PAIRED, data, commands.pair(before, deal)[0].data, seq)


COMMITTED_BY = {True: "commitment", False: "seed_hash"}  # a duplicate round's commitment, by fixed_deals


def _commitment_of_kind(deal: Any, key: str) -> bool:
    """``{key: 64 lowercase hex digits}``, and nothing else."""
    if not isinstance(deal, Mapping) or set(deal) != {key} or not isinstance(deal[key], str):
        return False
    return HEX64.fullmatch(deal[key]) is not None


def _ended(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((e for e in record["events"] if e["type"] == engine.GAME_ENDED), None)


def _finished(before: Tournament, data: Mapping[str, Any], games: Records, seq: int) -> None:
    table = before.table_of(data["game"])
    if table is None or table.finished or not same([table.round, table.table], [data["round"], data["table"]]):
        raise Failure(f"game {data['game']}: not a running game of round {data['round']}, table {data['table']}", seq)
    ended = _ended(_record(games, table, seq))
    if ended is None:
        raise Failure(f"game {data['game']}: the log says it finished, its record has no game_ended", seq)
    result = ended["data"]["result"]
    if not same(data["ranks"], result["ranks"]) or not same(data["scores"], result["scores"]):
        raise Failure(f"game {data['game']}: the result in the log differs from the game's own record", seq)
    if data["head"] != ended["hash"]:
        raise Failure(f"game {data['game']}: head {data['head']} is not the hash of its game_ended", seq)
    _same(GAME_FINISHED, data, commands.game_finished(before, data["game"], result, ended["hash"])[0].data, seq)


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
    if table is None or table.forfeited or table.finished:
        # a forfeit is logged before its game's result: by the command, or by the runner's repair with it
        raise Failure(f"game {data['game']}: not a running game of this tournament, or forfeited already", seq)
    seat = _forfeit_seat(_record(games, table, seq))
    if seat is None or not same(seat, data["seat"]):
        raise Failure(
            f"game {data['game']}: seat {data['seat']} was forfeited, its game shows no such resignation", seq
        )
    _same(GAME_FORFEITED, data, commands.forfeited(before, data["game"], seat, _reason(data))[0].data, seq)


RULES: dict[str, Rule] = {
    TOURNAMENT_STARTED: _simple(TOURNAMENT_STARTED, lambda t, d: commands.start(t)),
    TOURNAMENT_PAUSED: _simple(TOURNAMENT_PAUSED, lambda t, d: commands.pause(t, _reason(d))),
    TOURNAMENT_RESUMED: _simple(TOURNAMENT_RESUMED, lambda t, d: commands.resume(t)),
    ENTRANT_WITHDRAWN: _simple(ENTRANT_WITHDRAWN, lambda t, d: commands.withdraw(t, d["entrant"], _reason(d))),
    ROUND_PAIRED: lambda before, data, games, seq: _paired(before, data, seq),
    GAME_STARTED: _started,
    GAME_FINISHED: _finished,
    GAME_FORFEITED: _forfeited,
    ROUND_CLOSED: _closed,
    TOURNAMENT_FINISHED: _ends,
}


def _every_forfeit_logged(final: Tournament, games: Records) -> None:
    for table in final.tables:
        record = games.get(table.game or "")
        if record is not None and _forfeit_seat(record) is not None and not table.forfeited:
            raise Failure(f"game {table.game} shows a forfeit that the tournament's log does not record")


# ---------------------------------------------------------------- deals and standings


def _check_deals(events: Sequence[Mapping[str, Any]], games: Records) -> str:
    """Every table of a duplicate round played the round's one deal.

    Which kind of deal a round has is fixed by ``tournament_created`` (``fixed_deals``), never by the
    form of the round's commitment: with fixed deals, the deal fixed at creation for the round, committed
    to before the round and revealed after it, is every game's hidden deal; otherwise one seed, whose
    hash was published before the round and which is revealed after it, is every game's seed (each
    game's own audit then re-derives its deal from it).
    """
    final = _final(events)
    if final.settings.format != "duplicate":
        return "not a duplicate tournament"
    fixed = final.settings.fixed_deals
    at_creation = events[0].get("private", {}).get(HIDDEN, {}).get("deals")
    for env in events:
        if env["type"] != ROUND_CLOSED:
            continue
        rnd, seq = env["data"]["round"], env["seq"]
        committed, revealed = final.deals.get(rnd), env["data"]["deal"]
        if not isinstance(committed, Mapping) or not isinstance(revealed, Mapping):
            raise Failure(f"round {rnd}: no deal committed before it or revealed after it", seq)
        tables = final.round_tables(rnd)
        if fixed:
            _check_fixed_deal(rnd, committed, revealed, at_creation, seq)
            for table in tables:
                created = _record(games, table, seq)["events"][0]
                if created["data"].get("fixed_deal") is not True or not same(
                    created.get("private", {}).get(HIDDEN, {}).get("deal"), revealed["deal"]
                ):
                    raise Failure(f"round {rnd}: game {table.game} did not play the round's deal", seq)
        else:
            _check_round_seed(rnd, committed, revealed, seq)
            for table in tables:
                created = _record(games, table, seq)["events"][0]["data"]
                if created.get("fixed_deal") is not False or created.get("seed_hash") != committed["seed_hash"]:
                    raise Failure(f"round {rnd}: game {table.game} was not dealt from the round's seed", seq)
    kind = "the deal fixed at creation" if fixed else "the deal of the round's one seed"
    return f"{final.closed} duplicate rounds: every table played {kind}"


def _check_fixed_deal(
    rnd: int, committed: Mapping[str, Any], revealed: Mapping[str, Any], at_creation: Any, seq: int
) -> None:
    if set(revealed) != {"deal", "salt"} or not strong_salt(revealed["salt"]):
        raise Failure(f"round {rnd}: a fixed deal is revealed as exactly its deal and a 128-bit salt", seq)
    if commands.deal_commitment(revealed["deal"], revealed["salt"]) != committed.get("commitment"):
        raise Failure(f"round {rnd}: the revealed deal does not match the commitment made before it", seq)
    if (
        not isinstance(at_creation, list)
        or not 0 < rnd <= len(at_creation)
        or not same(revealed["deal"], at_creation[rnd - 1])
    ):
        raise Failure(f"round {rnd}: the revealed deal is not the one fixed at the tournament's creation", seq)


def _check_round_seed(rnd: int, committed: Mapping[str, Any], revealed: Mapping[str, Any], seq: int) -> None:
    seed = revealed.get("seed")
    if set(revealed) != {"seed"} or not isinstance(seed, str) or not LOWER_HEX.fullmatch(seed):
        raise Failure(f"round {rnd}: a round's seed is revealed as exactly its lowercase hex", seq)
    if seed_hash(bytes.fromhex(seed)) != committed.get("seed_hash"):
        raise Failure(f"round {rnd}: the revealed seed does not match the seed hash committed before it", seq)


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
        if not same(want, got):
            raise Failure(f"standings: place {want['place']} should be {want}, the log says {got}", finished["seq"])
    if len(derived) != len(logged):
        raise Failure("standings: the log lists another number of entrants", finished["seq"])
    return f"{len(derived)} standings re-derived from the games' own results"
