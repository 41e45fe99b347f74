"""Record format 2: the worked vector of docs/record-format.md, and an independent re-implementation."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.events import Event
from domain.record import GENESIS, envelope, envelopes, public_envelope, withheld_envelope
from tests.support.records import salt_source

SALT_0 = "00112233445566778899aabbccddeeff"
SALT_HIDDEN = "ffeeddccbbaa99887766554433221100"
DEALT = Event("cards_dealt", {"hand_sizes": [1, 1]}, {"0": {"hand": ["rock-7"]}, "hidden": {"unused": ["paper-3"]}})
AT = "2026-01-01T00:00:00.000Z"


def vector_envelope() -> dict[str, Any]:
    salts = iter([SALT_0, SALT_HIDDEN])
    return envelope(DEALT, 1, GENESIS, AT, lambda: next(salts))


def test_the_documented_vector() -> None:
    env = vector_envelope()
    assert env["private_commitments"] == {
        "0": "be791982534219246d8ff07c5900623b9e24589cc6125e11a64ce8b28397072b",
        "hidden": "65026b7eec14b79ecc5b29cfc0ddf214d109febc1b88a8b4dc8397b1639a8761",
    }
    assert env["hash"] == "c9dc94990d7950a09c6e919da0db0d5bc88cef2769fcd633dacb26e5d1189e7f"


def spec_hash(env: dict[str, Any]) -> str:
    """docs/record-format.md written again with nothing but hashlib and json."""

    def canonical(value: Any) -> bytes:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    commitments = {
        a: hashlib.sha256(canonical({"audience": a, "part": p, "salt": env["private_salts"][a]})).hexdigest()
        for a, p in env["private"].items()
    }
    assert commitments == env["private_commitments"]
    body = {
        "v": 2,
        "seq": env["seq"],
        "type": env["type"],
        "data": env["data"],
        "private_commitments": commitments,
        "at": env["at"],
    }
    return hashlib.sha256(env["prev"].encode("ascii") + canonical(body)).hexdigest()


parts = st.dictionaries(
    st.sampled_from(["0", "1", "2", "hidden"]),
    st.dictionaries(st.text(min_size=1, max_size=5), st.lists(st.text(max_size=6), max_size=4), max_size=3),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=12), parts), min_size=1, max_size=5))
def test_the_chain_matches_an_independent_implementation(batch: list[tuple[str, dict[str, Any]]]) -> None:
    events = [Event(kind, {"n": i, "é": "ü"}, private) for i, (kind, private) in enumerate(batch)]
    prev = GENESIS
    for env in envelopes(events, 1, GENESIS, AT, salt_source("hyp")):
        assert env["prev"] == prev and spec_hash(env) == env["hash"]
        prev = env["hash"]


def test_what_a_viewer_sees_of_an_envelope() -> None:
    env = vector_envelope()
    spectator = public_envelope(env, None, False)
    assert "private" not in spectator["data"] and spectator["private_salts"] == {}
    assert spectator["private_commitments"] == env["private_commitments"] and spectator["hash"] == env["hash"]
    seat_0 = public_envelope(env, 0, False)
    assert seat_0["data"]["private"] == {"0": {"hand": ["rock-7"]}} and seat_0["private_salts"] == {"0": SALT_0}
    assert public_envelope(env, 1, False) == spectator
    assert public_envelope(env, None, True)["private_salts"] == env["private_salts"]
    withheld = withheld_envelope(env)
    assert withheld["private"] == withheld["private_salts"] == {} and withheld["hash"] == env["hash"]
    assert SALT_0 not in json.dumps(spectator) and "rock-7" not in json.dumps(withheld)
