"""Verify a game record with no server: chain, private parts, seed, commitments, re-derivation.

``verify_record(record)`` returns ``{"verified", "format", "checks", "head", "first_bad_event"}``.
Each check is ``{"name", "ok", "detail", "seq"}``; ``seq`` is the first event
the check found wrong. The same function backs ``GET /v1/games/{id}/audit``,
``POST /v1/audits`` and ``kifu verify RECORD.json``.

Both record formats verify (``domain.record``): ``kifu-record/2`` and the old
``kifu-record/1``, whose hashes covered private parts in the clear (the
report's ``format`` check says so). A format-2 record may begin with format-1
events: a game that was running when its server was upgraded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.canonical import canonical_json
from domain.errors import KifuError
from domain.events import HIDDEN, Event
from domain.record import (
    GENESIS,
    OLD_RECORD_FORMAT,
    RECORD_FORMAT,
    chain_hash,
    hashed_body,
    is_current,
    part_commitment,
    strong_salt,
    to_event,
)
from domain.rng import seed_hash

ENVELOPE_KEYS = ("seq", "type", "data", "at", "prev", "hash")
CURRENT_KEYS = ("private_commitments", "private", "private_salts")
HEADER_FIELDS = ("game_id", "game", "rules_version", "options", "seed_hash")
FORMATS = (RECORD_FORMAT, OLD_RECORD_FORMAT)
ACTS = (engine.ACTION_TAKEN, engine.CHOICE_COMMITTED, engine.SEAT_JOINED)  # what a player does; the rest follows


class Failure(Exception):
    """A check failed at event ``seq`` (None: not tied to one event)."""

    def __init__(self, detail: str, seq: int | None = None) -> None:
        super().__init__(detail)
        self.seq = seq


def verify_record(record: Any, *, unfinished_ok: bool = False) -> dict[str, Any]:
    """Run every check on ``record`` and report them all.

    A record marked ``complete: false`` (a game in progress, private parts and
    seed withheld) is checked as far as its public parts allow (format, chain,
    header) and is not verified; the server's own audit of a running game reads
    the whole log and passes ``unfinished_ok``.
    """
    checks = [run_check("format", _check_format, record)]
    if checks[0]["ok"]:
        events = record["events"]
        checks += [run_check("hash_chain", check_chain, events, record), run_check("header", _check_header, record)]
        if record.get("complete") is False and not unfinished_ok:
            checks.append(
                {
                    "name": "complete",
                    "ok": False,
                    "seq": None,
                    "detail": "the record of a game in progress withholds private parts and the seed; "
                    "fetch the record again once the game is over",
                }
            )
        else:
            checks += [
                run_check("private_parts", check_private_parts, events),
                run_check("seed", _check_seed, record),
                run_check("commitments", _check_commitments, events),
                run_check("rederivation", _check_rederivation, events, _sealed_seed(events)),
            ]
    bad = [c["seq"] for c in checks if not c["ok"] and c["seq"] is not None]
    head = record["events"][-1]["hash"] if checks[0]["ok"] else None
    return {
        "verified": all(c["ok"] for c in checks),
        "format": record.get("format") if checks[0]["ok"] else None,
        "checks": checks,
        "head": head,
        "first_bad_event": min(bad) if bad else None,
    }


def _sealed_seed(events: Sequence[Mapping[str, Any]]) -> str | None:
    """The seed published by the game's seal (the record's own ``seed`` is only a copy)."""
    seal = events[-1]
    return seal["data"].get("seed") if seal.get("type") == engine.GAME_SEALED else None


def run_check(name: str, check: Any, *args: Any) -> dict[str, Any]:
    """Run one check: ``ok`` with its detail, or failed with what it found wrong and where."""
    try:
        detail = check(*args)
    except Failure as failure:
        return {"name": name, "ok": False, "detail": str(failure), "seq": failure.seq}
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # A malformed record (wrong types where the format has objects or lists) fails the check.
        return {"name": name, "ok": False, "detail": f"malformed record: {exc!r}", "seq": None}
    return {"name": name, "ok": True, "detail": detail, "seq": None}


def _check_format(record: Any) -> str:
    if not isinstance(record, Mapping) or not isinstance(record.get("events"), list) or not record["events"]:
        raise Failure("a record is a JSON object with a non-empty list 'events'")
    if record.get("format") not in FORMATS:
        raise Failure(f"unknown record format {record.get('format')!r}: this verifier reads {' and '.join(FORMATS)}")
    old = 0
    for i, env in enumerate(record["events"], start=1):
        if not isinstance(env, Mapping) or any(k not in env for k in ENVELOPE_KEYS):
            raise Failure(f"event {i} lacks one of {', '.join(ENVELOPE_KEYS)}", i)
        if not isinstance(env["data"], Mapping) or not isinstance(env.get("private", {}), Mapping):
            raise Failure(f"event {i}: data and private must be objects", i)
        if "v" not in env:
            old += 1
            if old != i:
                raise Failure(f"event {i} is in format 1 after events in format 2", i)
            continue
        if env["v"] != 2 or record["format"] != RECORD_FORMAT:
            raise Failure(f"event {i}: envelope version {env['v']!r} does not belong in a {record['format']} record", i)
        if any(not isinstance(env.get(k), Mapping) for k in CURRENT_KEYS):
            raise Failure(f"event {i}: {', '.join(CURRENT_KEYS)} must be objects", i)
    count = f"{len(record['events'])} events"
    if record["format"] == OLD_RECORD_FORMAT:
        return (
            f"{count}, old format {OLD_RECORD_FORMAT}: its hashes covered the private parts in the clear, "
            "so they exposed hidden cards while the game ran"
        )
    if old:
        return f"{count}, {RECORD_FORMAT}; the first {old} in format 1 (written before the server's upgrade)"
    return f"{count}, {RECORD_FORMAT}"


def check_chain(events: Sequence[Mapping[str, Any]], record: Mapping[str, Any]) -> str:
    prev = GENESIS
    for i, env in enumerate(events, start=1):
        if env["seq"] != i:
            raise Failure(f"event {i}: seq is {env['seq']!r}, expected {i} (an event was dropped, added or moved)", i)
        if env["prev"] != prev:
            raise Failure(f"event {i}: prev does not match the hash of event {i - 1}", i)
        try:
            digest = chain_hash(prev, hashed_body(env))
        except (TypeError, ValueError) as exc:
            raise Failure(f"event {i}: not canonical JSON ({exc})", i) from None
        if env["hash"] != digest:
            raise Failure(f"event {i}: hash does not match its content", i)
        prev = digest
    if record.get("head") not in (None, prev):
        raise Failure("the record's head is not the hash of its last event", len(events))
    return f"{len(events)} events chained; head {prev}"


def check_private_parts(events: Sequence[Mapping[str, Any]]) -> str:
    """Every private part is present, salted with at least 128 bits, and matches its commitment."""
    checked = old = 0
    for env in events:
        if not is_current(env):
            old += 1
            continue
        seq, commitments = env["seq"], env["private_commitments"]
        parts, salts = env["private"], env["private_salts"]
        stray = sorted((set(parts) | set(salts)) - set(commitments))
        if stray:
            raise Failure(f"event {seq}: private part(s) {stray} have no commitment", seq)
        for audience, committed in commitments.items():
            if audience not in parts or audience not in salts:
                raise Failure(f"event {seq}: the private part for {audience!r} or its salt is not in the record", seq)
            if not strong_salt(salts[audience]):
                raise Failure(f"event {seq}: the salt of {audience!r} is not 128 bits of hex", seq)
            if part_commitment(audience, parts[audience], salts[audience]) != committed:
                raise Failure(f"event {seq}: the private part for {audience!r} does not match its commitment", seq)
            checked += 1
    in_clear = f"; {old} format-1 events hash their private parts in the chain itself" if old else ""
    return f"{checked} private parts match their commitments{in_clear}"


def _check_header(record: Mapping[str, Any]) -> str:
    created = record["events"][0]
    if created["type"] != engine.GAME_CREATED:
        raise Failure(f"event 1 is {created['type']!r}, not {engine.GAME_CREATED}", 1)
    for name in HEADER_FIELDS:
        if name in record and record[name] != created["data"].get(name):
            raise Failure(f"record field {name!r} differs from event 1", 1)
    seats = record.get("seats")
    if seats is not None:
        bare = [{k: s[k] for k in ("seat", "name", "bot", "open") if k in s} for s in seats]
        if bare != created["data"]["seats"]:
            raise Failure("record seats differ from event 1", 1)
        for s in seats:
            info = s.get("bot_info")
            if s.get("bot") and (not isinstance(info, Mapping) or info.get("name") != s["bot"]):
                raise Failure(f"seat {s.get('seat')}: bot provenance does not name bot {s['bot']!r}", 1)
    return "header matches event 1"


def _check_seed(record: Mapping[str, Any]) -> str:
    events = record["events"]
    sealed = [e for e in events if e["type"] == engine.GAME_SEALED]
    if not sealed:
        if record.get("seed"):
            raise Failure("a seed is given but no game_sealed event publishes it")
        return "not yet revealed: the game is in progress"
    seal = sealed[0]
    if set(seal["data"]) != {"seed", "head"}:
        raise Failure("game_sealed must hold exactly the seed and the head hash", seal["seq"])
    if seal is not events[-1]:
        raise Failure("game_sealed must be the last event", seal["seq"])
    seed = seal["data"].get("seed")
    if record.get("seed") not in (None, seed):
        raise Failure("the record's seed differs from the one game_sealed published", seal["seq"])
    try:
        digest = seed_hash(bytes.fromhex(seed))
    except (TypeError, ValueError):
        raise Failure("the published seed is not hex", seal["seq"]) from None
    if digest != events[0]["data"].get("seed_hash"):
        raise Failure("sha256(seed) differs from the seed_hash published in event 1", seal["seq"])
    if seal["data"].get("head") != events[-2]["hash"]:
        raise Failure("game_sealed does not carry the head hash before it", seal["seq"])
    return "seed matches its published hash"


def _check_commitments(events: Sequence[Mapping[str, Any]]) -> str:
    game_id = events[0]["data"].get("game_id")
    committed: dict[tuple[int, int], list[str]] = {}
    checked = 0
    for env in events:
        if env["type"] == engine.CHOICE_COMMITTED:
            committed[(env["data"]["step"], env["data"]["seat"])] = env["data"]["commitments"]
        elif env["type"] == engine.CHOICES_REVEALED:
            step, part = env["data"]["step"], env["data"]["part"]
            for seat, shown in _revealed(env).items():
                hashes = committed.get((step, seat))
                if hashes is None or part >= len(hashes):
                    raise Failure(f"event {env['seq']}: seat {seat} revealed a choice it never committed", env["seq"])
                if not strong_salt(shown["salt"]):
                    raise Failure(
                        f"event {env['seq']}: seat {seat}'s salt is not 128 bits of hex, so its "
                        "commitment could have been opened by guessing",
                        env["seq"],
                    )
                if engine.commitment(game_id, seat, step, part, shown["action"], shown["salt"]) != hashes[part]:
                    raise Failure(
                        f"event {env['seq']}: seat {seat}'s revealed choice does not match its commitment", env["seq"]
                    )
                checked += 1
    return f"{checked} revealed choices match their commitments"


def _revealed(env: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    if "choices" in env["data"]:
        return {int(s): v for s, v in env["data"]["choices"].items()}
    private = env.get("private", {})
    missing = [s for s in env["data"].get("seats", []) if str(s) not in private]
    if missing:
        raise Failure(f"event {env['seq']}: private reveal of seat(s) {missing} is not in the record", env["seq"])
    return {int(s): private[str(s)] for s in env["data"].get("seats", [])}


def _seed_matches(seed: str, published: Any) -> bool:
    """Whether ``seed`` is the one published at creation (else the seed check reports it)."""
    try:
        return bool(seed_hash(bytes.fromhex(seed)) == published)
    except (TypeError, ValueError):
        return False


def _normal(ev: Event) -> Any:
    return json.loads(canonical_json(ev.to_dict()))


def _compare(expected: Sequence[Event], envs: Sequence[Mapping[str, Any]], what: str) -> None:
    for offset, ev in enumerate(expected):
        if offset >= len(envs):
            last = envs[-1]["seq"] if envs else None
            raise Failure(f"the record ends where the rules derive {ev.type} ({what})", last)
        env = envs[offset]
        derived, recorded = _normal(ev), _normal(to_event(env))
        if derived != recorded:
            where, want, got = first_difference(derived, recorded)
            raise Failure(
                f"event {env['seq']}: the rules derive {ev.type}, the record has a different {env['type']} "
                f"({what}): {where} should be {_short(want)}, the record has {_short(got)}",
                env["seq"],
            )


MISSING = object()


def first_difference(want: Any, got: Any, path: str = "") -> tuple[str, Any, Any]:
    """The first place where two JSON values differ, as a path (``data.result.scores[1]``), and both values."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if want.get(key, MISSING) != got.get(key, MISSING):
                return first_difference(want.get(key, MISSING), got.get(key, MISSING), f"{path}.{key}" if path else key)
    if isinstance(want, list) and isinstance(got, list):
        for i in range(max(len(want), len(got))):
            a = want[i] if i < len(want) else MISSING
            b = got[i] if i < len(got) else MISSING
            if a != b:
                return first_difference(a, b, f"{path}[{i}]")
    return path or "the event", want, got


def _short(value: Any) -> str:
    """A value for a message: JSON, cut at 80 characters; ``absent`` for a missing key."""
    if value is MISSING:
        return "absent"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_rederivation(events: Sequence[Mapping[str, Any]], seed: str | None) -> str:
    created = to_event(events[0])
    n_setup = next(
        (i for i, e in enumerate(events) if e["type"] in (*ACTS, engine.GAME_SEALED)),
        len(events),
    )
    try:
        table = engine.replay([to_event(e) for e in events[:n_setup]])
    except (KifuError, KeyError, TypeError, ValueError) as exc:
        raise Failure(f"the opening events do not replay: {exc}", 1) from None
    if seed and _seed_matches(seed, created.data.get("seed_hash")):
        d = created.data
        seats = [engine.Seat(s["seat"], s["name"], s.get("bot"), s.get("open", False)) for s in d["seats"]]
        try:
            expected = engine.create(
                d["game"],
                d["game_id"],
                seats,
                bytes.fromhex(seed),
                d["options"],
                created.hidden.get("deal") if HIDDEN in created.private else None,
                d.get("tournament"),
            )
        except (KifuError, ValueError) as exc:
            raise Failure(f"the opening cannot be re-derived: {exc}", 1) from None
        _compare(expected, events[:n_setup], "deal from the seed")
        if len(expected) != n_setup:
            raise Failure("the opening has events the seed does not derive", min(n_setup, len(expected)) + 1)
    i, actions = n_setup, 0
    while i < len(events):
        if events[i]["type"] == engine.GAME_SEALED:
            i += 1
            continue
        try:
            expected = _derive_batch(table, events[i])
            _compare(expected, events[i:], "re-running the rules on the recorded action")
            table = engine.replay(expected, table)
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
            # a private part of the wrong shape (a list where the rules read an object, ...)
            raise Failure(f"event {events[i]['seq']}: malformed: {exc!r}", events[i]["seq"]) from None
        i += len(expected)
        actions += 1
    outcome = f"; result {json.dumps(table.result)}" if table.result else "; game in progress"
    return f"{actions} actions re-derived every event{outcome}"


def _derive_batch(table: engine.Table, env: Mapping[str, Any]) -> list[Event]:
    """The events the rules derive from the recorded action (or choice) that opens ``env``."""
    ev, seq = to_event(env), env["seq"]
    if ev.type not in ACTS:
        raise Failure(f"event {seq}: {ev.type} does not follow from any recorded action", seq)
    seat, by = ev.data.get("seat"), ev.data.get("by")
    if not isinstance(seat, int) or isinstance(seat, bool):
        raise Failure(f"event {seq}: {ev.type} does not name a seat", seq)
    try:
        if ev.type == engine.SEAT_JOINED:
            return engine.join(table, seat, ev.data["name"])
        if ev.type == engine.ACTION_TAKEN:
            return engine.decide(table, seat, ev.data["action"], by=by)
        secret = ev.private_for(seat)
        if "action" not in secret:
            raise Failure(f"event {seq}: the committed choice is not in the record (redacted?)", seq)
        return engine.decide(table, seat, secret["action"], salts=secret.get("salts", ()), by=by)
    except (KifuError, KeyError, TypeError, ValueError) as exc:
        raise Failure(f"event {seq}: the rules refuse the recorded action: {exc}", seq) from None
