"""The hash chain, private-part commitments and the portable record of a game.

Record format 2 (``kifu-record/2``). A stored event (an *envelope*) is::

    {"v": 2, "seq", "type", "data", "private_commitments", "at", "prev", "hash",
     "private", "private_salts"}

``seq`` counts from 1 and ``prev`` of event 1 is ``GENESIS``. Each private part
(audience ``"0"``, ``"1"``, ... or ``"hidden"``) gets its own random salt of
``SALT_BYTES`` bytes (hex), and is committed to by

    private_commitments[a] = SHA-256( canonical_json({"audience": a, "part": private[a], "salt": private_salts[a]}) )

The chain hashes only what is public:

    hash_n = SHA-256( ascii(prev_n) || canonical_json({"v", "seq", "type", "data", "private_commitments", "at"}) )

So the chain and the commitments can be published while the game runs (and
checked by anyone), yet no guess about a private part can be tested against
them: the salt is unknown until the part is shown. A seat receives its own
parts with their salts at once; everything is published when the game ends, and
the auditor then checks every part against its commitment.

Format 1 (``kifu-record/1``, before commitments) hashed the private parts in
the clear: ``hash_n = SHA-256(ascii(prev_n) || canonical_json({"seq", "type",
"data", "private", "at"}))``. Such envelopes (no ``"v"``) still verify, marked
as the old format; see ``domain.audit``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from domain.canonical import canonical_json, sha256_hex
from domain.events import Event

GENESIS = "0" * 64
RECORD_FORMAT = "kifu-record/2"
OLD_RECORD_FORMAT = "kifu-record/1"
ENVELOPE_VERSION = 2
SALT_BYTES = 16  # 128 bits
MIN_SALT_HEX = 2 * SALT_BYTES
SALT_HEX = re.compile(f"[0-9a-f]{{{MIN_SALT_HEX}}}")

SaltSource = Callable[[], str]


def rfc3339(moment: datetime) -> str:
    """An envelope's time (``at``): RFC 3339 in UTC, to the millisecond."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def part_commitment(audience: str, part: Mapping[str, Any], salt: str) -> str:
    """The commitment to one private part: SHA-256 over its audience, content and salt."""
    return sha256_hex(canonical_json({"audience": audience, "part": part, "salt": salt}))


def strong_salt(salt: Any) -> bool:
    """True for a salt as the server draws it: 128 bits written as exactly 32 lowercase hex digits.

    Exactly that form, nothing Python's ``int(s, 16)`` would also read (spaces, ``0x``, ``_``,
    capitals): a salt has one spelling, so its commitment has one opening.
    """
    return isinstance(salt, str) and SALT_HEX.fullmatch(salt) is not None


def is_current(env: Mapping[str, Any]) -> bool:
    """Whether an envelope is in the current format (else format 1)."""
    return env.get("v") == ENVELOPE_VERSION


def hashed_body(env: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an envelope its hash covers (by the envelope's own format)."""
    if is_current(env):
        return {
            "v": ENVELOPE_VERSION,
            "seq": env["seq"],
            "type": env["type"],
            "data": env["data"],
            "private_commitments": env["private_commitments"],
            "at": env["at"],
        }
    return {
        "seq": env["seq"],
        "type": env["type"],
        "data": env["data"],
        "private": env.get("private", {}),
        "at": env["at"],
    }


def chain_hash(prev: str, body: Mapping[str, Any]) -> str:
    """The hash of one event given the previous hash."""
    return sha256_hex(prev.encode("ascii") + canonical_json(body))


def envelope(ev: Event, seq: int, prev: str, at: str, new_salt: SaltSource) -> dict[str, Any]:
    """One event numbered, salted, committed and chained after ``prev``."""
    private = {audience: dict(part) for audience, part in ev.private.items()}
    salts = {audience: new_salt() for audience in private}
    commitments = {audience: part_commitment(audience, part, salts[audience]) for audience, part in private.items()}
    env: dict[str, Any] = {
        "v": ENVELOPE_VERSION,
        "seq": seq,
        "type": ev.type,
        "data": dict(ev.data),
        "private_commitments": commitments,
        "at": at,
    }
    env["prev"], env["hash"] = prev, chain_hash(prev, hashed_body(env))
    env["private"], env["private_salts"] = private, salts
    return env


def envelopes(
    events: Sequence[Event], first_seq: int, prev: str, at: str, new_salt: SaltSource
) -> list[dict[str, Any]]:
    """Number, timestamp, commit and chain a batch of new events after ``prev``.

    ``new_salt`` draws one fresh salt per private part (the service passes
    ``secrets.token_hex(SALT_BYTES)``; the domain draws no randomness itself).
    """
    out = []
    for i, ev in enumerate(events):
        env = envelope(ev, first_seq + i, prev, at, new_salt)
        out.append(env)
        prev = env["hash"]
    return out


def to_event(envelope: Mapping[str, Any]) -> Event:
    """The domain event inside an envelope (private parts as far as the envelope holds them)."""
    return Event.from_dict(envelope)


def public_envelope(env: Mapping[str, Any], viewer: int | None, everything_public: bool) -> dict[str, Any]:
    """An envelope as a caller may see it.

    ``data`` carries, under ``data.private``, the parts ``viewer`` may see
    (its own seat's while the game runs, all once it is over) and
    ``private_salts`` their salts, so the caller can check each against its
    commitment. The commitments of every part and the chain are always shown.
    """
    data = to_event(env).visible_data(viewer, everything_public)
    out: dict[str, Any] = {
        "seq": env["seq"],
        "type": env["type"],
        "data": data,
        "at": env["at"],
        "prev": env["prev"],
        "hash": env["hash"],
    }
    if is_current(env):
        shown = data.get("private", {})
        salts = env.get("private_salts", {})
        out["v"] = ENVELOPE_VERSION
        out["private_commitments"] = dict(env["private_commitments"])
        out["private_salts"] = {audience: salts[audience] for audience in shown if audience in salts}
    return out


def withheld_envelope(env: Mapping[str, Any]) -> dict[str, Any]:
    """A record's envelope while the game runs: public data, commitments and chain; no part, no salt."""
    out = {k: v for k, v in env.items() if k not in ("private", "private_salts")}
    out["private"] = {}
    if is_current(env):
        out["private_salts"] = {}
    return out


def record_format(envs: Sequence[Mapping[str, Any]]) -> str:
    """The format of a stored log: format 2 as soon as one of its events is."""
    return RECORD_FORMAT if any(is_current(e) for e in envs) else OLD_RECORD_FORMAT


IN_PROGRESS_NOTE = (
    "the game is in progress: private parts, their salts and the seed are withheld; "
    "the hash chain can be checked, the rest once the game is over"
)


def is_sealed(envs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a log is complete: its last event is ``game_sealed`` (decided by the events alone)."""
    return bool(envs) and envs[-1].get("type") == "game_sealed"


def bot_info(created: Mapping[str, Any], seat: Mapping[str, Any]) -> dict[str, Any]:
    """A bot seat's provenance as the record shows it, derived from ``game_created`` alone.

    Every bot plays the rules version the game was created with; a search level's settings (its
    budget) are the seat's ``bot_settings``, which ``game_created`` committed to, and the other
    levels have none (``{}``). So nothing in a bot's provenance is left unbound: an auditor derives
    it from event 1 exactly as the server does.
    """
    version = f"{created['game']}/{created['rules_version']}"
    return {"name": seat["bot"], "version": version, "settings": seat.get("bot_settings", {})}


def record_header(envs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every field of a record besides ``events``: each one a copy of what the events commit to.

    ``seed``, ``complete``, ``head`` and ``note`` follow from whether the log is
    sealed; the rest is event 1's. The verifier derives the header the same way and
    refuses a record whose fields differ (``domain.audit``).
    """
    created = envs[0]["data"]
    sealed = is_sealed(envs)
    seats = [{**s, "bot_info": bot_info(created, s) if s.get("bot") else None} for s in created["seats"]]
    header = {
        "format": record_format(envs),
        "game_id": created["game_id"],
        "game": created["game"],
        "rules_version": created["rules_version"],
        "engine_version": created["engine_version"],
        "options": created["options"],
        "seats": seats,
        "seed_hash": created["seed_hash"],
        "seed": envs[-1]["data"].get("seed") if sealed else None,  # a seal without one fails the seed check
        "complete": sealed,
        "head": envs[-1]["hash"],
    }
    if not sealed:
        header["note"] = IN_PROGRESS_NOTE
    return header


def build_record(envs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The portable record: everything an auditor needs, with no server."""
    return {**record_header(envs), "events": [dict(e) for e in envs]}
