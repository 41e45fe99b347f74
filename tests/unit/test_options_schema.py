"""Every option of every game, as the catalogue shows it, is a JSON Schema fragment the engine agrees with."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

import tests.support.toy_game  # noqa: F401
from domain.engine import COMMON_OPTIONS, normalize_options
from domain.errors import InvalidOptions
from domain.registry import all_games

PROBES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    2,
    5,
    -1,
    1000,
    1001,
    10**9,
    0.5,
    "",
    "x",
    "coin",
    "standard",
    "advanced",
    [],
    {},
    ["sb-001"] * 5,
    [["sb-001"] * 5, ["sb-002"] * 5],
    [f"sb-{i:03d}" for i in range(1, 7)],
]
OPTIONS = [(game, name) for game in all_games() for name in (*game.options, *COMMON_OPTIONS)]


def spec_of(game: Any, name: str) -> Any:
    return {**game.options, **COMMON_OPTIONS}[name]


@pytest.mark.parametrize("game, name", OPTIONS, ids=[f"{g.id}.{n}" for g, n in OPTIONS])
def test_the_schema_is_valid_and_agrees_with_the_engine(game: Any, name: str) -> None:
    described = spec_of(game, name).describe()
    jsonschema.Draft202012Validator.check_schema(described)
    schema = jsonschema.Draft202012Validator(described)
    assert schema.is_valid(described["default"])
    for value in described.get("allowed", []):
        assert schema.is_valid(value)
    for value in [*PROBES, *described.get("allowed", [])]:
        try:
            normalize_options(game, {name: value})
            accepted = True
        except InvalidOptions:
            accepted = False
        if accepted:  # the schema may be wider than the rules (a card id must exist), never narrower
            assert schema.is_valid(value), (value, described)
        elif not schema.is_valid(value):
            continue  # both refuse
        assert accepted or ("enum" not in described and "minimum" not in described), (value, described)


def test_types_are_json_schema_types_not_ad_hoc_strings() -> None:
    for game, name in OPTIONS:
        kind = spec_of(game, name).describe().get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind else []
        assert set(kinds) <= {"null", "boolean", "integer", "number", "string", "array", "object"}, (game.id, name)
