"""The hash chain and the portable record of a game.

A stored event (an *envelope*) is ``{"seq","type","data","private","at","prev","hash"}``.
``seq`` counts from 1; ``prev`` of event 1 is ``GENESIS``; and

    hash_n = SHA-256( ascii(prev_n) || canonical_json({"seq","type","data","private","at"}) )

with ``canonical_json`` from ``domain.canonical``. Private parts are hashed
too, so the last hash fingerprints everything, including what was secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.canonical import canonical_json, sha256_hex
from domain.events import Event

GENESIS = "0" * 64
RECORD_FORMAT = "kifu-record/1"


def event_body(seq: int, ev: Event, at: str) -> dict[str, Any]:
    """The hashed part of an envelope."""
    return {"seq": seq, "type": ev.type, "data": dict(ev.data),
            "private": {k: dict(v) for k, v in ev.private.items()}, "at": at}


def chain_hash(prev: str, body: Mapping[str, Any]) -> str:
    """The hash of one event given the previous hash."""
    return sha256_hex(prev.encode("ascii") + canonical_json(body))


def envelopes(events: Sequence[Event], first_seq: int, prev: str, at: str) -> list[dict[str, Any]]:
    """Number, timestamp and chain a batch of new events after ``prev``."""
    out = []
    for i, ev in enumerate(events):
        body = event_body(first_seq + i, ev, at)
        digest = chain_hash(prev, body)
        out.append({**body, "prev": prev, "hash": digest})
        prev = digest
    return out


def to_event(envelope: Mapping[str, Any]) -> Event:
    """The domain event inside an envelope."""
    return Event.from_dict(envelope)


def build_record(envs: Sequence[Mapping[str, Any]], bot_info: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The portable record: everything an auditor needs, with no server."""
    created = envs[0]["data"]
    sealed = next((e for e in envs if e["type"] == "game_sealed"), None)
    seats = [{**s, "bot_info": dict(bot_info[s["bot"]]) if s.get("bot") else None} for s in created["seats"]]
    return {
        "format": RECORD_FORMAT,
        "game_id": created["game_id"], "game": created["game"],
        "rules_version": created["rules_version"], "engine_version": created["engine_version"],
        "options": created["options"], "seats": seats,
        "seed_hash": created["seed_hash"], "seed": sealed["data"]["seed"] if sealed else None,
        "complete": sealed is not None,
        "head": envs[-1]["hash"] if envs else GENESIS,
        "events": [dict(e) for e in envs],
    }
