"""Verify a game record with no server: chain, header, private parts, seed, commitments, re-derivation.

``verify_record(record, keys)`` returns::

    {"verified", "verdict", "sealed", "format", "checks", "head", "first_bad_event", "bad_field",
     "signed", "logged"}

The same function backs ``GET /v1/games/{id}/audit``, ``POST /v1/audits`` and
``kifu verify RECORD.json``. The verdict is one of three (docs/record-format.md):

* ``verified``: the log is sealed (its last event is ``game_sealed``, which
  publishes the seed) and every check passed: the deal, every event and the
  result are proven;
* ``in_progress``: the log is not sealed, and everything it holds that can be
  checked is valid (chain, header, every part and choice it shows against its
  commitment, the rules as far as its private parts allow); the result is *not*
  proven, because the seed is not published and the deal cannot be re-derived.
  Whether a record is sealed is decided by its events alone, never by a field
  outside the chain;
* ``failed``: a check failed. ``first_bad_event`` is the position (1-based, in
  the record's ``events``) of the first event at which the record stops being
  the game it claims to be; every failure names one (a header field names the
  event it copies, and ``bad_field`` names the field), except an unknown field or
  a record that is no record at all.

Each check is ``{"name", "ok", "detail", "seq"}``; ``seq`` is the position of
the first event the check found wrong. Positions, not the events' own ``seq``
fields: an inserted or renumbered event is named where it stands.

Both record formats verify (``domain.record``): ``kifu-record/2`` and the old
``kifu-record/1``, whose hashes covered private parts in the clear (the
report's ``format`` check says so). A format-2 record may begin with format-1
events: a game that was running when its server was upgraded.

The rules re-run are those of the rules version event 1 names (the game's
``rules_versions``), so a record valid when made verifies for as long as the
game still plays its version; a version the game does not know fails at event 1.

A sealed record's attestations, outside the chain (``domain.signatures``): its ``signature`` (the
server's Ed25519 signature over the sealed head) and its ``inclusion`` (an RFC 9162 proof that the
transparency log holds that signed head). Given the server's key set (``keys``, a JWK set) both are
checked in full; without it their statements and proofs are, and ``signed`` / ``logged`` say
``unchecked``. A failure of either names the last event, whose head they vouch for.

Every comparison of a recorded value with a derived one is exact, type included
(``domain.canonical.same``): ``0``, ``0.0`` and ``false`` are three values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

from domain import engine
from domain.canonical import canonical_json, same
from domain.errors import KifuError
from domain.events import HIDDEN, Event
from domain.merkle import leaf_hash, verify_inclusion
from domain.record import (
    GENESIS,
    OLD_RECORD_FORMAT,
    RECORD_FORMAT,
    chain_hash,
    hashed_body,
    is_current,
    is_sealed,
    part_commitment,
    record_header,
    strong_salt,
    to_event,
)
from domain.rng import seed_hash
from domain.signatures import (
    SignatureError,
    check_shape,
    check_signature,
    log_head_statement,
    sealed_game_statement,
    valid_at,
)

VERIFIED, IN_PROGRESS, FAILED = "verified", "in_progress", "failed"
SEALED_CHECK = "sealed"
IN_PROGRESS_DETAIL = (
    "in progress: chain and commitments valid, result not proven (the log does not end with game_sealed, "
    "so the seed is not published and the deal cannot be re-derived)"
)
CURRENT_KEYS = frozenset({"v", "seq", "type", "data", "private_commitments", "at", "prev", "hash"})
CURRENT_PRIVATE_KEYS = frozenset({"private", "private_salts"})  # in a record, ``{}`` while withheld
OLD_KEYS = frozenset({"seq", "type", "data", "at", "prev", "hash"})
FORMATS = (RECORD_FORMAT, OLD_RECORD_FORMAT)
ACTS = (engine.ACTION_TAKEN, engine.CHOICE_COMMITTED, engine.SEAT_JOINED)  # what a player does; the rest follows
BY_TIMEOUT, BY_FORFEIT = "timeout", "forfeit"
HEX64 = re.compile(r"[0-9a-f]{64}")
LOWER_HEX = re.compile(r"(?:[0-9a-f]{2})+")
SEAT_KEY = re.compile(r"0|[1-9][0-9]*")
# A record's fields and the event each one copies: event 1, or the end of the log (its head, its seal).
ATTESTATIONS = ("signature", "inclusion")  # record fields that vouch for the events, not copies of them
INCLUSION_KEYS, HEAD_KEYS = frozenset({"index", "size", "path", "head"}), frozenset({"size", "root", "signature"})
CHECKED, UNCHECKED, UNSIGNED, ABSENT = "checked", "unchecked", "unsigned", "absent"
FROM_CREATION = ("format", "game_id", "game", "rules_version", "engine_version", "options", "seats", "seed_hash")
MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)


class Failure(Exception):
    """A check failed at position ``seq`` (None: not tied to one event); ``field``: the header field at fault."""

    def __init__(self, detail: str, seq: int | None = None, field: str | None = None) -> None:
        super().__init__(detail)
        self.seq = seq
        self.field = field


def verify_record(record: Any, keys: Mapping[str, Any] | None = None, *, unsigned_ok: bool = False) -> dict[str, Any]:
    """Run every check on ``record`` and report them all, with the verdict; ``keys``: the server's JWK set
    (``GET /v1/keys``), to check the signatures with. Given keys, a sealed record must be signed, unless
    ``unsigned_ok`` (a server verifying an upload: its report then says ``signed: unsigned``)."""
    checks = [run_check("format", _check_format, record)]
    sealed = False
    if checks[0]["ok"]:
        events = record["events"]
        sealed = is_sealed(events)
        checks += [
            run_check("hash_chain", check_chain, events),
            run_check("header", _check_header, record),
            run_check("private_parts", check_private_parts, events, sealed),
            run_check("seed", _check_seed, events, sealed),
            run_check("commitments", _check_commitments, events, sealed),
        ]
        if sealed or _every_part_present(events):
            checks.append(run_check("rederivation", _check_rederivation, events, sealed))
        checks.append(run_check("signature", _check_signature, record, sealed, keys, unsigned_ok))
        if "inclusion" in record:
            checks.append(run_check("inclusion", _check_inclusion, record, keys))
        if not sealed:
            checks.append({"name": SEALED_CHECK, "ok": False, "seq": None, "detail": IN_PROGRESS_DETAIL})
    has = checks[0]["ok"] and isinstance(record, Mapping)
    failed = [c for c in checks if not c["ok"] and c["name"] != SEALED_CHECK]
    bad = [c["seq"] for c in failed if c["seq"] is not None]
    verdict = FAILED if failed else VERIFIED if sealed else IN_PROGRESS
    return {
        "verified": verdict == VERIFIED,
        "verdict": verdict,
        "sealed": sealed,
        "format": record.get("format") if checks[0]["ok"] else None,
        "checks": [{k: v for k, v in c.items() if k != "field"} for c in checks],
        "head": record["events"][-1]["hash"] if checks[0]["ok"] else None,
        "first_bad_event": min(bad) if bad else None,
        "bad_field": next((c["field"] for c in failed if c.get("field")), None),
        "signed": (CHECKED if keys is not None else UNCHECKED) if has and "signature" in record else UNSIGNED,
        "logged": (CHECKED if keys is not None else UNCHECKED) if has and "inclusion" in record else ABSENT,
    }


def run_check(name: str, check: Callable[..., str], *args: Any) -> dict[str, Any]:
    """Run one check: ``ok`` with its detail, or failed with what it found wrong and where."""
    try:
        detail = check(*args)
    except Failure as failure:
        return {"name": name, "ok": False, "detail": str(failure), "seq": failure.seq, "field": failure.field}
    except MALFORMED as exc:
        # a malformed record the check did not expect: failed, though not tied to one event
        return {"name": name, "ok": False, "detail": f"malformed record: {exc!r}", "seq": None}
    return {"name": name, "ok": True, "detail": detail, "seq": None}


# ---------------------------------------------------------------- shape, chain and header


def _check_format(record: Any) -> str:
    if not isinstance(record, Mapping) or not isinstance(record.get("events"), list) or not record["events"]:
        raise Failure("a record is a JSON object with a non-empty list 'events'")
    if record.get("format") not in FORMATS:
        raise Failure(
            f"unknown record format {record.get('format')!r}: this verifier reads {' and '.join(FORMATS)}",
            1,
            field="format",
        )
    old = 0
    for pos, env in enumerate(record["events"], start=1):
        current = check_envelope(env, pos)
        if not current:
            old += 1
            if old != pos:
                raise Failure(f"event {pos} is in format 1 after events in format 2", pos)
        elif record["format"] != RECORD_FORMAT:
            where = f"event {pos}: a format-2 envelope does not belong in a {record['format']} record"
            raise Failure(where, 1, field="format")  # the field is wrong, and it is bound to event 1
    count = f"{len(record['events'])} events"
    if record["format"] == OLD_RECORD_FORMAT:
        return (
            f"{count}, old format {OLD_RECORD_FORMAT}: its hashes covered the private parts in the clear, "
            "so they exposed hidden cards while the game ran"
        )
    if old:
        return f"{count}, {RECORD_FORMAT}; the first {old} in format 1 (written before the server's upgrade)"
    return f"{count}, {RECORD_FORMAT}"


def check_envelope(env: Any, pos: int) -> bool:
    """Refuse an envelope with a missing or unknown key or a value of the wrong type; True when it is format 2.

    Exact types: ``seq`` and ``v`` are integers (``true`` and ``2.0`` are not), hashes are 64
    lowercase hex digits, every private part is an object and every salt and commitment a string.
    """
    if not isinstance(env, Mapping):
        raise Failure(f"event {pos} is not an object", pos)
    current = "v" in env
    required = CURRENT_KEYS | CURRENT_PRIVATE_KEYS if current else OLD_KEYS
    allowed = required | (set() if current else {"private"})
    missing, unknown = sorted(required - set(env)), sorted(set(env) - allowed)
    if missing or unknown:
        raise Failure(f"event {pos}: missing key(s) {missing}, unknown key(s) {unknown}", pos)
    if current and not (type(env["v"]) is int and env["v"] == 2):
        raise Failure(f"event {pos}: envelope version {env['v']!r} is not the integer 2", pos)
    if type(env["seq"]) is not int or not isinstance(env["type"], str) or not isinstance(env["at"], str):
        raise Failure(f"event {pos}: seq must be an integer, type and at strings", pos)
    if not isinstance(env["data"], Mapping):
        raise Failure(f"event {pos}: data must be an object", pos)
    if not all(isinstance(env[k], str) and HEX64.fullmatch(env[k]) for k in ("prev", "hash")):
        raise Failure(f"event {pos}: prev and hash must be 64 lowercase hex digits", pos)
    private = env.get("private", {})
    if not isinstance(private, Mapping) or not all(isinstance(p, Mapping) for p in private.values()):
        raise Failure(f"event {pos}: private must be an object of objects", pos)
    for key in ("private_commitments", "private_salts") if current else ():
        value = env.get(key, {})
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise Failure(f"event {pos}: {key} must be an object of strings", pos)
    return current


def check_chain(events: Sequence[Mapping[str, Any]]) -> str:
    """``seq`` runs 1, 2, ...; each ``prev`` is the hash before; each hash matches its event."""
    prev = GENESIS
    for pos, env in enumerate(events, start=1):
        if env["seq"] != pos:
            moved = "an event was dropped, added or moved"
            raise Failure(f"event {pos}: seq is {env['seq']!r}, expected {pos} ({moved})", pos)
        if env["prev"] != prev:
            raise Failure(f"event {pos}: prev does not match the hash of event {pos - 1}", pos)
        try:
            digest = chain_hash(prev, hashed_body(env))
        except (TypeError, ValueError) as exc:
            raise Failure(f"event {pos}: not canonical JSON ({exc})", pos) from None
        if env["hash"] != digest:
            raise Failure(f"event {pos}: hash does not match its content", pos)
        prev = digest
    return f"{len(events)} events chained; head {prev}"


def _check_header(record: Mapping[str, Any]) -> str:
    """Every field besides ``events`` is exactly what the events commit to; no other field is allowed."""
    events = record["events"]
    if events[0]["type"] != engine.GAME_CREATED:
        raise Failure(f"event 1 is {events[0]['type']!r}, not {engine.GAME_CREATED}", 1)
    try:
        derived = record_header(events)
    except MALFORMED as exc:
        raise Failure(f"event 1 is not a well-formed {engine.GAME_CREATED}: {exc!r}", 1) from None
    unknown = sorted(set(record) - set(derived) - {"events", "note", *ATTESTATIONS})
    if unknown:
        raise Failure(
            f"unknown record field(s) {unknown}: a record holds only copies of what its events commit to",
            field=unknown[0],
        )
    for name in (*derived, *(["note"] if "note" not in derived else [])):
        want = derived.get(name, MISSING)
        if name in record and not _same_or_both_missing(record[name], want):
            where, expected, got = first_difference(want, record[name], name)
            bound = 1 if name in FROM_CREATION else len(events)
            source = "event 1" if bound == 1 else "the end of the log"
            raise Failure(
                f"record field {where} is {_short(got)}, {source} gives {_short(expected)}", bound, field=where
            )
    return "every field matches what the events commit to (event 1, the head, the seal)"


# ---------------------------------------------------------------- the attestations


def _check_signature(
    record: Mapping[str, Any], sealed: bool, keys: Mapping[str, Any] | None, unsigned_ok: bool = False
) -> str:
    """The signature vouches for exactly this sealed game; with ``keys``, it is a valid key's."""
    events, end = record["events"], len(record["events"])
    if "signature" not in record:
        if "inclusion" in record:
            raise Failure("an inclusion proof, but no signature to prove", end, field="inclusion")
        if keys is not None and sealed and not unsigned_ok:
            raise Failure("the record is not signed, and keys were given to check its signature", end, "signature")
        return "none: an unsigned record (a game sealed before records were signed, or not sealed)"
    if not sealed:
        raise Failure("a record in progress carries no signature: only a sealed head is signed", end, "signature")
    signature = record["signature"]
    try:
        check_shape(signature)
    except SignatureError as exc:
        raise Failure(f"signature: {exc}", end, field="signature") from None
    # (``.get``: an event 1 without its id fails the header; here the statement simply differs from it)
    want = sealed_game_statement(events[0]["data"].get("game_id"), end, events[-1]["hash"], events[-1]["at"])
    if not same(signature["statement"], want):
        where, expected, got = first_difference(want, signature["statement"], "signature.statement")
        raise Failure(f"{where} is {_short(got)}, the events give {_short(expected)}", end, field=where)
    if keys is None:
        return "the statement is this game's sealed head; the signature is NOT CHECKED (no keys given)"
    try:
        jwk = check_signature(signature, keys)
    except SignatureError as exc:
        raise Failure(f"signature: {exc}", end, field="signature") from None
    if not valid_at(jwk, want["sealed_at"]):
        validity = f"{jwk.get('valid_from')} to {jwk.get('valid_until')}"
        raise Failure(f"key {jwk['kid']} was not valid when the game was sealed ({validity})", end, "signature")
    return f"signed by key {jwk['kid']} ({jwk.get('status', 'active')})"


def _check_inclusion(record: Mapping[str, Any], keys: Mapping[str, Any] | None) -> str:
    """The proof puts this game's signed statement in the log's tree head it carries; with ``keys``, the
    head is the server's."""
    end = len(record["events"])
    proof = record["inclusion"]
    if "signature" not in record:
        raise Failure("an inclusion proof, but no signature to prove", end, field="inclusion")
    try:
        index, size, root, path = _proof_parts(proof)
        leaf = leaf_hash(canonical_json(record["signature"]["statement"]))
    except (SignatureError, TypeError, ValueError, KeyError) as exc:
        raise Failure(f"inclusion: {exc}", end, field="inclusion") from None
    if not verify_inclusion(leaf, index, size, path, root):
        raise Failure(f"inclusion: the path does not prove leaf {index} in the tree of {size}", end, "inclusion")
    if keys is None:
        return f"leaf {index} of the tree of {size}; the tree head's signature is NOT CHECKED (no keys given)"
    try:
        jwk = check_signature(proof["head"]["signature"], keys)
    except SignatureError as exc:
        raise Failure(f"inclusion: the tree head's {exc}", end, field="inclusion.head.signature") from None
    return f"leaf {index} of the tree of {size}, whose head key {jwk['kid']} signed"


def _proof_parts(proof: Any) -> tuple[int, int, bytes, list[bytes]]:
    """An inclusion proof's index, size, root and path, with its shape and its head's statement checked."""
    if not isinstance(proof, Mapping) or set(proof) != INCLUSION_KEYS:
        raise ValueError(f"an inclusion proof has exactly the keys {sorted(INCLUSION_KEYS)}")
    head = proof["head"]
    if not isinstance(head, Mapping) or set(head) != HEAD_KEYS:
        raise ValueError(f"a tree head has exactly the keys {sorted(HEAD_KEYS)}")
    index, size, path = proof["index"], proof["size"], proof["path"]
    if not (_is_int(index) and _is_int(size) and same(head["size"], size)):
        raise ValueError("index and size are integers, and the head's size is the proof's")
    if not isinstance(path, list) or not all(isinstance(h, str) and HEX64.fullmatch(h) for h in path):
        raise ValueError("the path is a list of 64-hex-digit hashes")
    if not (isinstance(head["root"], str) and HEX64.fullmatch(head["root"])):
        raise ValueError("the head's root is 64 lowercase hex digits")
    check_shape(head["signature"])
    if not same(head["signature"]["statement"], log_head_statement(size, head["root"])):
        raise ValueError("the head's signed statement is not this head's")
    return index, size, bytes.fromhex(head["root"]), [bytes.fromhex(h) for h in path]


# ---------------------------------------------------------------- private parts, seed, choices


def check_private_parts(events: Sequence[Mapping[str, Any]], sealed: bool = True) -> str:
    """Every private part shown is salted with 128 bits and matches its commitment.

    In a sealed log every committed part must be shown; in one still running a
    part may be withheld (the record of a game in progress withholds them all).
    """
    checked = old = withheld = 0
    for pos, env in enumerate(events, start=1):
        if not is_current(env):
            old += 1
            continue
        try:
            shown, kept = _check_parts(env, pos, sealed)
        except MALFORMED as exc:
            raise Failure(f"event {pos}: malformed private parts: {exc!r}", pos) from None
        checked, withheld = checked + shown, withheld + kept
    in_clear = f"; {old} format-1 events hash their private parts in the chain itself" if old else ""
    kept_note = f"; {withheld} withheld while the game runs" if withheld else ""
    return f"{checked} private parts match their commitments{kept_note}{in_clear}"


def _check_parts(env: Mapping[str, Any], pos: int, sealed: bool) -> tuple[int, int]:
    """One envelope's parts against its commitments: how many were checked, and how many withheld."""
    commitments, parts, salts = env["private_commitments"], env["private"], env["private_salts"]
    stray = sorted((set(parts) | set(salts)) - set(commitments))
    if stray:
        raise Failure(f"event {pos}: private part(s) {stray} have no commitment", pos)
    checked = withheld = 0
    for audience, committed in commitments.items():
        if not sealed and audience not in parts and audience not in salts:
            withheld += 1
            continue
        if audience not in parts or audience not in salts:
            raise Failure(f"event {pos}: the private part for {audience!r} or its salt is not in the record", pos)
        if not strong_salt(salts[audience]):
            raise Failure(f"event {pos}: the salt of {audience!r} is not 128 bits as 32 lowercase hex digits", pos)
        if part_commitment(audience, parts[audience], salts[audience]) != committed:
            raise Failure(f"event {pos}: the private part for {audience!r} does not match its commitment", pos)
        checked += 1
    return checked, withheld


def _every_part_present(events: Sequence[Mapping[str, Any]]) -> bool:
    return all(set(e["private_commitments"]) <= set(e["private"]) for e in events if is_current(e))


def _check_seed(events: Sequence[Mapping[str, Any]], sealed: bool) -> str:
    """``game_sealed`` holds exactly the seed and the head before it, SHA-256(seed) is event 1's
    ``seed_hash``, and nothing follows it (a seal anywhere but last names the event after it)."""
    seals = [pos for pos, e in enumerate(events, start=1) if e["type"] == engine.GAME_SEALED]
    if not seals:
        return "not published: the game is in progress"
    pos = seals[0]
    data = events[pos - 1]["data"]
    if set(data) != {"seed", "head"}:
        raise Failure("game_sealed must hold exactly the seed and the head hash", pos)
    seed = data["seed"]
    if not isinstance(seed, str) or not LOWER_HEX.fullmatch(seed):
        raise Failure("the published seed is not lowercase hex", pos)
    if seed_hash(bytes.fromhex(seed)) != events[0]["data"].get("seed_hash"):
        raise Failure("sha256(seed) differs from the seed_hash published in event 1", pos)
    if pos < 2 or data["head"] != events[pos - 2]["hash"]:
        raise Failure("game_sealed does not carry the head hash before it", pos)
    if pos != len(events):
        raise Failure(f"event {pos + 1} follows game_sealed, after which nothing may be appended", pos + 1)
    return "seed matches its published hash"


def _check_commitments(events: Sequence[Mapping[str, Any]], sealed: bool) -> str:
    """Every revealed choice matches the commitment made before anybody's was shown."""
    game_id = events[0]["data"].get("game_id")
    committed: dict[tuple[int, int], list[Any]] = {}
    checked = withheld = 0
    for pos, env in enumerate(events, start=1):
        try:
            if env["type"] == engine.CHOICE_COMMITTED:
                data = env["data"]
                if not (_is_int(data["step"]) and _is_int(data["seat"]) and isinstance(data["commitments"], list)):
                    raise Failure(f"event {pos}: step and seat must be integers, commitments a list", pos)
                committed[(data["step"], data["seat"])] = data["commitments"]
            elif env["type"] == engine.CHOICES_REVEALED:
                shown = _revealed(env, pos, sealed)
                withheld += shown is None
                for seat, choice in (shown or {}).items():
                    _check_reveal(game_id, env["data"], committed, seat, choice, pos)
                    checked += 1
        except Failure:
            raise
        except MALFORMED as exc:
            raise Failure(f"event {pos}: malformed {env['type']}: {exc!r}", pos) from None
    kept = f"; {withheld} private reveals withheld while the game runs" if withheld else ""
    return f"{checked} revealed choices match their commitments{kept}"


Committed = Mapping[tuple[int, int], list[Any]]


def _check_reveal(game_id: Any, data: Mapping[str, Any], committed: Committed, seat: int, shown: Any, pos: int) -> None:
    step, part = data["step"], data["part"]
    hashes = committed.get((step, seat)) if _is_int(step) else None
    if hashes is None or not _is_int(part) or not 0 <= part < len(hashes):
        raise Failure(f"event {pos}: seat {seat} revealed a choice it never committed", pos)
    if not strong_salt(shown["salt"]):
        raise Failure(
            f"event {pos}: seat {seat}'s salt is not 128 bits as 32 lowercase hex digits, "
            "so its commitment could have been opened by guessing",
            pos,
        )
    if engine.commitment(game_id, seat, step, part, shown["action"], shown["salt"]) != hashes[part]:
        raise Failure(f"event {pos}: seat {seat}'s revealed choice does not match its commitment", pos)


def _revealed(env: Mapping[str, Any], pos: int, sealed: bool) -> dict[int, Any] | None:
    """The choices a reveal shows, by seat; None for a private reveal withheld while the game runs."""
    if "choices" in env["data"]:
        return {_seat(s, pos): v for s, v in env["data"]["choices"].items()}
    private, seats = env.get("private", {}), env["data"]["seats"]
    missing = [s for s in seats if str(s) not in private]
    if missing and not sealed and len(missing) == len(seats):
        return None
    if missing:
        raise Failure(f"event {pos}: private reveal of seat(s) {missing} is not in the record", pos)
    return {_seat(str(s), pos): private[str(s)] for s in seats}


def _seat(key: str, pos: int) -> int:
    if not SEAT_KEY.fullmatch(key):
        raise Failure(f"event {pos}: {key!r} is not a seat number", pos)
    return int(key)


def _is_int(value: Any) -> TypeGuard[int]:
    """An integer, not a boolean (``true`` is no seat or step) and not a float."""
    return type(value) is int


# ---------------------------------------------------------------- re-derivation by the rules


def _check_rederivation(events: Sequence[Mapping[str, Any]], sealed: bool) -> str:
    """The opening is what the seed (or the fixed deal) deals, and every later event what the rules
    derive from the recorded actions and choices; a sealed log ends with the seal, after the result."""
    n_setup = next((i for i, e in enumerate(events) if e["type"] in (*ACTS, engine.GAME_SEALED)), len(events))
    seed = events[-1]["data"].get("seed") if sealed else None  # a seal without one: the seal is named below
    if seed is not None and _seed_matches(seed, events[0]["data"].get("seed_hash")):
        table = _dealt_opening(events, n_setup, seed)
    else:  # the seed check names a wrong seed; without one the deal cannot be re-derived
        table = _replayed_opening(events, n_setup)
    created, i, actions = events[0]["data"], n_setup, 0
    while i < len(events):
        env, pos = events[i], i + 1
        if env["type"] == engine.GAME_SEALED:
            if not table.finished:
                raise Failure(f"event {pos}: game_sealed before the rules end the game", pos)
            seal = Event(engine.GAME_SEALED, {"seed": env["data"].get("seed"), "head": events[i - 1]["hash"]})
            _compare([seal], events, i, "the seal")  # its seed is the seed check's to judge
            if pos != len(events):
                raise Failure(f"event {pos + 1} follows game_sealed, after which nothing may be appended", pos + 1)
            break
        expected = _derive_batch(table, created, env, pos)
        held = _compare(expected, events, i, "re-running the rules on the recorded action")
        table = engine.replay(expected[:held], table)
        i += held
        actions += 1
    outcome = f"; result {json.dumps(table.result)}" if table.result else "; game in progress"
    dealt = "" if sealed else "; the deal is not re-derived until the seal publishes the seed"
    return f"{actions} actions re-derived every event{outcome}{dealt}"


def _dealt_opening(events: Sequence[Mapping[str, Any]], n_setup: int, seed: str) -> engine.Table:
    """The opening dealt again from the seed, compared event by event with the record's."""
    try:
        expected, table = _start_as_created(to_event(events[0]), bytes.fromhex(seed))
    except (KifuError, *MALFORMED) as exc:
        raise Failure(f"the opening cannot be re-derived: {exc}", 1) from None
    _compare(expected, events, 0, "deal from the seed")
    if len(expected) != n_setup:
        raise Failure("the opening has events the seed does not derive", len(expected) + 1)
    return table


def _replayed_opening(events: Sequence[Mapping[str, Any]], n_setup: int) -> engine.Table:
    """The opening as recorded, without the seed: event 1 is a creation the rules allow, exactly as they
    write it, and the rest are the game's own setup events, folded event by event (each one named)."""
    _check_creation(events)
    table: engine.Table | None = None
    for pos, env in enumerate(events[:n_setup], start=1):
        if pos > 1 and env["type"] in engine.TABLE_EVENTS:
            raise Failure(f"event {pos}: {env['type']} is no part of a game's opening", pos)
        try:
            table = engine.replay([to_event(env)], table)
        except (KifuError, *MALFORMED) as exc:
            raise Failure(f"event {pos}: the opening does not replay: {exc!r}", pos) from None
    if table is None:
        raise Failure("the record has no opening", 1)
    return table


def _check_creation(events: Sequence[Mapping[str, Any]]) -> None:
    """Event 1 is ``game_created`` exactly as the rules write it for its game, seats, options, deal and
    tournament, whatever its seed (the deal after it is judged only with the seed)."""
    created = to_event(events[0])
    d = created.data
    if not (isinstance(d.get("seed_hash"), str) and HEX64.fullmatch(d["seed_hash"])):
        raise Failure("event 1: seed_hash is not 64 lowercase hex digits", 1)
    try:
        again = _start_as_created(created, b"")[0][0]
    except (KifuError, *MALFORMED) as exc:
        raise Failure(f"event 1 is no creation the rules allow: {exc}", 1) from None
    _compare([Event(again.type, {**again.data, "seed_hash": d["seed_hash"]}, again.private)], events, 0, "creation")


def _start_as_created(created: Event, seed: bytes) -> tuple[list[Event], engine.Table]:
    """The opening and table ``engine.start`` gives for the game, seats, options, deal, tournament
    link and rules version that ``game_created`` records, dealt from ``seed``.

    The rules version is the one the game was created under, not today's: a record re-runs under the
    rules it was played by, for as long as the game still plays them (``engine.rules_versions``); a
    version the game does not play is refused, naming it.
    """
    d = created.data
    seats = [engine.Seat.from_dict(s) for s in d["seats"]]
    deal = created.hidden.get("deal") if HIDDEN in created.private else None
    link = d.get("tournament")
    return engine.start(d["game"], d["game_id"], seats, seed, d["options"], deal, link, d["rules_version"])


def _derive_batch(table: engine.Table, created: Mapping[str, Any], env: Mapping[str, Any], pos: int) -> list[Event]:
    """The events the rules derive from the recorded action (or choice) that opens ``env``."""
    try:
        ev = to_event(env)
        if ev.type not in ACTS:
            raise Failure(f"event {pos}: {ev.type} does not follow from any recorded action", pos)
        seat, by = ev.data.get("seat"), ev.data.get("by")
        if not _is_int(seat) or not 0 <= seat < len(table.seats):
            raise Failure(f"event {pos}: {ev.type} does not name a seat of the game", pos)
        if ev.type == engine.SEAT_JOINED:
            return engine.join(table, seat, ev.data["name"])
        if ev.type == engine.ACTION_TAKEN:
            _check_actor(table, created, seat, ev.data["action"], by, pos)
            return engine.decide(table, seat, ev.data["action"], by=by)
        secret = ev.private_for(seat)
        if "action" not in secret:
            raise Failure(f"event {pos}: the committed choice is not in the record (redacted?)", pos)
        _check_actor(table, created, seat, secret["action"], by, pos)
        return engine.decide(table, seat, secret["action"], salts=secret.get("salts", ()), by=by)
    except KifuError as exc:
        raise Failure(f"event {pos}: the rules refuse the recorded action: {exc}", pos) from None
    except MALFORMED as exc:
        raise Failure(f"event {pos}: malformed {env.get('type')}: {exc!r}", pos) from None


def _check_actor(table: engine.Table, created: Mapping[str, Any], seat: int, action: Any, by: Any, pos: int) -> None:
    """Who may have taken a recorded action, by the service's rules (the engine judges only the rules').

    ``by`` marks an action its player did not take: ``timeout`` (a human seat of a game with a move
    timeout: a random legal action, never a resignation) or ``forfeit`` (a tournament's organiser
    resigning a seat); nothing else. Without ``by`` the seat's occupant acted: an open seat nobody has
    joined has nobody to act for it, and a bot never resigns (it plays listed legal actions only).
    """
    occupant = table.seats[seat]
    resigns = same(action, {"type": engine.RESIGN})
    if by is None:
        if occupant.open:
            raise Failure(f"event {pos}: seat {seat} is open (nobody joined it): only a timeout acts for it", pos)
        if resigns and occupant.bot is not None:
            raise Failure(f"event {pos}: bot seat {seat} resigns, which a bot never does", pos)
    elif by == BY_TIMEOUT:
        if table.options.get("move_timeout_s") is None or occupant.bot is not None:
            raise Failure(f"event {pos}: by timeout, in a game without a move timeout or for a bot's seat", pos)
        if resigns:
            raise Failure(f"event {pos}: by timeout, a resignation: a timeout plays a legal action", pos)
    elif by == BY_FORFEIT:
        if created.get("tournament") is None or not resigns:
            raise Failure(f"event {pos}: by forfeit, which is only a resignation in a tournament's game", pos)
    else:
        raise Failure(f"event {pos}: by {_short(by)}: an action is its player's own, or by timeout or forfeit", pos)


def _seed_matches(seed: str, published: Any) -> bool:
    """Whether ``seed`` is the one published at creation (else the seed check reports it)."""
    try:
        return bool(LOWER_HEX.fullmatch(seed)) and seed_hash(bytes.fromhex(seed)) == published
    except (TypeError, ValueError):
        return False


def _compare(expected: Sequence[Event], events: Sequence[Mapping[str, Any]], start: int, what: str) -> int:
    """Compare derived events with the record's from index ``start``, exactly; how many the record holds
    (fewer only when the record ends inside them: a log still running, cut short)."""
    for offset, ev in enumerate(expected):
        i = start + offset
        if i >= len(events):
            return offset
        pos = i + 1
        try:
            recorded = to_event(events[i]).to_dict()
        except MALFORMED as exc:
            raise Failure(f"event {pos}: malformed: {exc!r}", pos) from None
        derived = ev.to_dict()
        if not same(derived, recorded):
            where, want, got = first_difference(_plain(derived), recorded)
            raise Failure(
                f"event {pos}: the rules derive {ev.type}, the record has a different {events[i]['type']} "
                f"({what}): {where} should be {_short(want)}, the record has {_short(got)}",
                pos,
            )
    return len(expected)


def _plain(value: Any) -> Any:
    """A derived value as JSON reads it back (tuples as lists), for naming differences."""
    return json.loads(canonical_json(value))


MISSING = object()


def first_difference(want: Any, got: Any, path: str = "") -> tuple[str, Any, Any]:
    """The first place where two JSON values differ, type included, as a path (``data.result.scores[1]``),
    and both values."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            a, b = want.get(key, MISSING), got.get(key, MISSING)
            if not _same_or_both_missing(a, b):
                return first_difference(a, b, f"{path}.{key}" if path else key)
    if isinstance(want, list) and isinstance(got, list):
        for i in range(max(len(want), len(got))):
            a = want[i] if i < len(want) else MISSING
            b = got[i] if i < len(got) else MISSING
            if not _same_or_both_missing(a, b):
                return first_difference(a, b, f"{path}[{i}]")
    return path or "the event", want, got


def _same_or_both_missing(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    return same(a, b)


def _short(value: Any) -> str:
    """A value for a message: JSON, cut at 80 characters; ``absent`` for a missing key."""
    if value is MISSING:
        return "absent"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
