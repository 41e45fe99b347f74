"""``openapi.yaml`` as the tests that play the test-only toy game validate against it.

The contract describes the five games the server runs, and no other: a view, a creation
(request and answer), an action and an event are unions discriminated by the game or by
``type``, closed to other games. The toy game (``tests.support.toy_game``) exists only in
tests, so the tests that play it (``tests/integration/test_openapi.py``, ``test_limits.py``,
``tests/e2e/test_schemathesis.py``) validate against a copy of the spec with the toy added to
each of those unions (``with_toy_game``): its view and creation answer are San Ban's envelope
(every generic field checked as for a real game) around a ``state``, ``options`` and
``result`` of any shape; its actions are ``pick`` and ``ack``; its events are the generic ones
plus its own, whose ``data`` may be any object. The real spec is never changed.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
TOY = "toy"
TOY_EVENTS = ("toy_dealt", "round_scored", "acked")  # the toy's own event types
GENERIC_EVENTS = {  # type -> the schema every game's union shares
    "game_created": "GameCreatedEvent",
    "seat_joined": "SeatJoinedEvent",
    "action_taken": "ActionTakenEvent",
    "choice_committed": "ChoiceCommittedEvent",
    "choices_revealed": "ChoicesRevealedEvent",
    "game_ended": "GameEndedEvent",
    "game_sealed": "GameSealedEvent",
}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def load_spec() -> dict[str, Any]:
    """``openapi.yaml`` as it is."""
    spec: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text())
    return spec


@functools.cache
def _spec_with_toy_game() -> str:
    return yaml.safe_dump(with_toy_game(load_spec()), sort_keys=False)


def spec_with_toy_game() -> dict[str, Any]:
    """A fresh copy of ``openapi.yaml`` with the toy game in its unions."""
    spec: dict[str, Any] = yaml.safe_load(_spec_with_toy_game())
    return spec


def _add_branch(union: dict[str, Any], key: str, name: str) -> None:
    union["oneOf"].append(ref(name))
    union["discriminator"]["mapping"][key] = ref(name)["$ref"]


def _loose_envelope(model: dict[str, Any]) -> dict[str, Any]:
    """San Ban's view (or creation answer) with the game's own fields of any shape."""
    toy = copy.deepcopy(model)
    fields = toy["properties"]
    fields["game"] = {"const": TOY}
    fields["phase"] = {"type": "string"}
    fields["options"] = {"type": "object"}
    fields["state"] = {"type": "object"}
    fields["result"] = {"oneOf": [ref("Result"), {"type": "null"}]}
    if fields["my_choice"] != {"type": "null"}:
        fields["my_choice"] = {"oneOf": [ref("ToyAction"), {"type": "null"}]}
    return toy


def with_toy_game(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` with the toy game added to every union of the games."""
    spec = copy.deepcopy(spec)
    schemas = spec["components"]["schemas"]
    schemas["ToyAction"] = {
        "type": "object",
        "required": ["type"],
        # a JSON integer the server can read: a 64-bit one (a larger one is a 400, malformed, by design)
        "properties": {
            "type": {"enum": ["pick", "ack"]},
            "n": {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1},
        },
        "additionalProperties": False,
    }
    schemas["Action"]["anyOf"].append(ref("ToyAction"))
    schemas["ToyView"] = _loose_envelope(schemas["SanBanView"])
    _add_branch(schemas["GameView"], TOY, "ToyView")
    schemas["ToyCreatedGame"] = _loose_envelope(schemas["SanBanCreatedGame"])
    _add_branch(schemas["CreatedGame"], TOY, "ToyCreatedGame")
    create = copy.deepcopy(schemas["CreateSanBanGame"])
    options = {"type": ["object", "null"], "additionalProperties": ref("JsonValue")}  # any, as the server reads JSON
    create["properties"].update(game={"const": TOY}, options=options)
    create["properties"]["players"].update(minItems=1, maxItems=16)
    schemas["CreateToyGame"] = create
    _add_branch(schemas["CreateGameRequest"], TOY, "CreateToyGame")
    schemas["ToyOwnEvent"] = {
        "allOf": [ref("EventEnvelope")],
        "required": ["type", "data"],
        "properties": {"type": {"enum": list(TOY_EVENTS)}, "data": {"type": "object"}},
        "unevaluatedProperties": False,
    }
    mapping = {t: ref(n)["$ref"] for t, n in GENERIC_EVENTS.items()}
    mapping.update((t, ref("ToyOwnEvent")["$ref"]) for t in TOY_EVENTS)
    schemas["ToyEvent"] = {
        "oneOf": [*(ref(n) for n in GENERIC_EVENTS.values()), ref("ToyOwnEvent")],
        "discriminator": {"propertyName": "type", "mapping": mapping},
    }
    schemas["Event"]["anyOf"].append(ref("ToyEvent"))
    return spec
