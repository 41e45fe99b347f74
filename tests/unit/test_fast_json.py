"""The orjson provider answers the same JSON as Flask's own."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from entrypoints.api import KifuApp

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
printable = st.text(st.characters(min_codepoint=32, max_codepoint=126))
ascii_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | printable,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(printable, inner, max_size=4),
    max_leaves=20,
)


def answers(value: Any) -> tuple[bytes, bytes]:
    fast, plain = KifuApp("fast"), Flask("plain")
    with fast.app_context():
        ours = fast.json.response(value).get_data()
    with plain.app_context():
        flasks = plain.json.response(value).get_data()
    return ours, flasks


@given(json_values)
def test_the_same_json_as_flasks_provider(value: Any) -> None:
    ours, flasks = answers(value)
    assert json.loads(ours) == json.loads(flasks)
    assert ours.endswith(b"\n")


@given(ascii_values)
def test_byte_for_byte_the_same_for_ascii_text_and_64_bit_integers(value: Any) -> None:
    ours, flasks = answers(value)
    assert ours == flasks


def test_what_orjson_refuses_or_does_not_know_is_still_answered() -> None:
    for value in ({"n": 2**70}, {"d": Decimal("1.5")}):
        ours, flasks = answers(value)
        assert ours == flasks
