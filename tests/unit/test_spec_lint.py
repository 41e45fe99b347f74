"""A lint of ``openapi.yaml`` beyond what the OpenAPI validator checks.

openapi-spec-validator checks the document's structure, but JSON Schema (and so
every Schema Object of OpenAPI 3.1+) takes any unknown keyword as an annotation.
A YAML flow mapping whose unquoted description holds a comma,
``{type: number, description: The sum, once per game.}``, parses as a schema
with a bogus key ``once per game.`` and a cut description, and passes every
validator. ``schema_lint`` walks every Schema Object of the spec (components,
parameters, headers, request bodies, responses, media types and everything
nested in a schema: properties, items, allOf/oneOf/anyOf, additionalProperties,
...) and refuses any key that is not a JSON Schema 2020-12 or OpenAPI keyword
(or an ``x-`` extension). The test proves it on a copy of the spec with the
malformed flow mappings put back.

The same checks pin how the spec declares the answers every request can get
from the HTTP server itself (414, 431) and the 415 of every body.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from openapi_spec_validator import validate as validate_spec

from entrypoints.api.problems import KINDS

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")

# JSON Schema 2020-12, every vocabulary (core, applicator, unevaluated, validation, meta-data,
# format-annotation, content), plus the OpenAPI base vocabulary.
SCHEMA_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
        "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
        "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
        "unevaluatedItems", "unevaluatedProperties",
        "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
        "maxProperties", "minProperties", "required", "dependentRequired",
        "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
        "format",
        "contentEncoding", "contentMediaType", "contentSchema",
        "discriminator", "xml", "externalDocs", "example",
    }
)  # fmt: skip
SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs")  # name -> schema
SCHEMA_ONE = (
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")

Finding = tuple[str, str]  # (JSON pointer of the schema, the key refused there)


def schema_lint(spec: Mapping[str, Any]) -> list[Finding]:
    """Every key of a Schema Object in ``spec`` that is neither a schema keyword nor an ``x-`` extension."""
    findings: list[Finding] = []
    for pointer, schema in schemas_of(spec):
        findings += _schema_findings(schema, pointer)
    return findings


def schemas_of(spec: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each top-level Schema Object of an OpenAPI document, with its JSON pointer (nested ones are the
    schema walk's): it follows the OpenAPI object structure, so that a property or an example that
    happens to be called ``schema`` is never taken for one."""
    for path, item in _items(spec.get("paths")):
        yield from _path_item(item, f"/paths/{_escape(path)}")
    for name, item in _items(spec.get("webhooks")):
        yield from _path_item(item, f"/webhooks/{_escape(name)}")
    components = spec.get("components") or {}
    for name, schema in _items(components.get("schemas")):
        yield f"/components/schemas/{_escape(name)}", schema
    walkers = {
        "responses": _response,
        "parameters": _parameter,
        "headers": _parameter,
        "requestBodies": _content_holder,
        "pathItems": _path_item,
        "mediaTypes": _media_type,
        "callbacks": _callback,
    }
    for section, walk in walkers.items():
        for name, item in _items(components.get(section)):
            yield from walk(item, f"/components/{section}/{_escape(name)}")


def _schema_findings(schema: Any, pointer: str) -> list[Finding]:
    if not isinstance(schema, Mapping):
        return []  # a boolean schema (true/false); anything else is the validator's business
    findings = [
        (pointer, key)
        for key in schema
        if not (isinstance(key, str) and (key in SCHEMA_KEYWORDS or key.startswith("x-")))
    ]
    for keyword in SCHEMA_MAPS:
        for name, sub in _items(schema.get(keyword)):
            findings += _schema_findings(sub, f"{pointer}/{keyword}/{_escape(name)}")
    for keyword in SCHEMA_ONE:
        if keyword in schema:
            findings += _schema_findings(schema[keyword], f"{pointer}/{keyword}")
    for keyword in SCHEMA_LISTS:
        for i, sub in enumerate(schema.get(keyword) or []):
            findings += _schema_findings(sub, f"{pointer}/{keyword}/{i}")
    return findings


def _path_item(item: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    if not isinstance(item, Mapping) or "$ref" in item:
        return
    for i, parameter in enumerate(item.get("parameters") or []):
        yield from _parameter(parameter, f"{pointer}/parameters/{i}")
    operations = [(method, item[method]) for method in HTTP_METHODS if method in item]
    operations += [(f"additionalOperations/{m}", op) for m, op in _items(item.get("additionalOperations"))]
    for method, operation in operations:
        at = f"{pointer}/{method}"
        for i, parameter in enumerate(operation.get("parameters") or []):
            yield from _parameter(parameter, f"{at}/parameters/{i}")
        if "requestBody" in operation:
            yield from _content_holder(operation["requestBody"], f"{at}/requestBody")
        for status, response in _items(operation.get("responses")):
            yield from _response(response, f"{at}/responses/{status}")
        for name, callback in _items(operation.get("callbacks")):
            yield from _callback(callback, f"{at}/callbacks/{_escape(name)}")


def _callback(callback: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    for expression, item in _items(callback):
        yield from _path_item(item, f"{pointer}/{_escape(expression)}")


def _parameter(parameter: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    """A Parameter or a Header Object: a ``schema``, or a ``content`` map."""
    if not isinstance(parameter, Mapping) or "$ref" in parameter:
        return
    if "schema" in parameter:
        yield f"{pointer}/schema", parameter["schema"]
    yield from _content_holder(parameter, pointer)


def _response(response: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    if not isinstance(response, Mapping) or "$ref" in response:
        return
    for name, header in _items(response.get("headers")):
        yield from _parameter(header, f"{pointer}/headers/{_escape(name)}")
    yield from _content_holder(response, pointer)


def _content_holder(holder: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    """What has a ``content`` map of media types: a request body, a response, a parameter, a header."""
    if not isinstance(holder, Mapping) or "$ref" in holder:
        return
    for media_type, media in _items(holder.get("content")):
        yield from _media_type(media, f"{pointer}/content/{_escape(media_type)}")


def _media_type(media: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    if not isinstance(media, Mapping) or "$ref" in media:
        return
    for keyword in ("schema", "itemSchema"):  # itemSchema: OpenAPI 3.2, e.g. each Server-Sent Event
        if keyword in media:
            yield f"{pointer}/{keyword}", media[keyword]
    encodings = [(f"encoding/{_escape(n)}", e) for n, e in _items(media.get("encoding"))]
    encodings += [(f"prefixEncoding/{i}", e) for i, e in enumerate(media.get("prefixEncoding") or [])]
    encodings += [("itemEncoding", media["itemEncoding"])] if "itemEncoding" in media else []
    for at, encoding in encodings:
        for name, header in _items(encoding.get("headers") if isinstance(encoding, Mapping) else None):
            yield from _parameter(header, f"{pointer}/{at}/headers/{_escape(name)}")


def _items(mapping: Any) -> list[tuple[str, Any]]:
    return [(str(k), v) for k, v in mapping.items()] if isinstance(mapping, Mapping) else []


def _escape(name: str) -> str:
    """A name as a JSON pointer token (RFC 6901)."""
    return name.replace("~", "~0").replace("/", "~1")


def load_spec() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    return spec


def operations(spec: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(method, path, operation)`` of every operation of the spec."""
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                yield method, path, item[method]


# -- the lint ----------------------------------------------------------------------------------


def test_the_spec_is_valid_and_every_schema_keyword_is_a_keyword() -> None:
    spec = load_spec()
    validate_spec(spec)
    assert schema_lint(spec) == []


def test_the_lint_catches_a_flow_mapping_split_by_a_comma() -> None:
    """Put back the defect this lint exists for: every flow-mapping description that holds a comma,
    unquoted, as the spec had three of them. Each is reported, at its schema."""
    text = SPEC_PATH.read_text(encoding="utf-8")
    quoted = re.compile(r'^( +)([\w-]+): \{(.*)description: "([^"\\]*,[^"\\]*)"\}$', re.MULTILINE)
    malformed, count = quoted.subn(r"\1\2: {\3description: \4}", text)
    assert count >= 3, "the spec has no quoted flow-mapping description with a comma to unquote"
    names = {m.group(2) for m in quoted.finditer(text)}
    findings = schema_lint(yaml.safe_load(malformed))
    reported = {pointer.rsplit("/", 1)[1] for pointer, _key in findings}
    assert names <= reported
    standing = "/components/schemas/Standing/properties"
    assert (f"{standing}/buchholz", "once per game together.") in findings
    assert (f"{standing}/place", "Buchholz and mean rank are equal.") in findings


def test_the_lint_follows_every_place_a_schema_can_be() -> None:
    """A bogus key is found in each kind of place a Schema Object sits, nested or not; a property, an
    example or an extension merely named like a keyword is not one."""
    bad = {"type": "string", "oops": 1}
    spec = {
        "openapi": "3.2.0",
        "paths": {
            "/a/{id}": {
                "parameters": [{"name": "id", "in": "path", "schema": bad}],
                "post": {
                    "parameters": [{"name": "q", "in": "query", "content": {"application/json": {"schema": bad}}}],
                    "requestBody": {"content": {"application/json": {"schema": {"properties": {"p": bad}}}}},
                    "responses": {
                        "200": {
                            "headers": {"H": {"schema": {"allOf": [bad]}}},
                            "content": {
                                "text/event-stream": {"itemSchema": {"items": bad}},
                                "application/json": {
                                    "schema": {"properties": {"schema": {"type": "object"}}, "x-any": {"oops": 1}},
                                    "example": {"schema": {"oops": 1}},
                                },
                            },
                        }
                    },
                },
            }
        },
        "components": {
            "schemas": {"S": {"additionalProperties": {"oneOf": [True, bad]}, "$defs": {"D": {"not": bad}}}},
            "responses": {"R": {"content": {"application/json": {"schema": {"anyOf": [bad]}}}}},
            "parameters": {"P": {"name": "p", "in": "query", "schema": {"prefixItems": [bad]}}},
            "headers": {"H": {"schema": {"propertyNames": bad}}},
            "requestBodies": {"B": {"content": {"application/json": {"schema": {"then": bad}}}}},
        },
    }
    found = schema_lint(spec)
    assert {key for _pointer, key in found} == {"oops"}
    assert len(found) == 11, found
    assert ("/components/schemas/S/additionalProperties/oneOf/1", "oops") in found
    assert ("/paths/~1a~1{id}/post/responses/200/content/text~1event-stream/itemSchema/items", "oops") in found


# -- answers every request can get, and every body ----------------------------------------------


def _statuses(operation: Mapping[str, Any]) -> set[str]:
    return {str(status) for status in operation["responses"]}


def test_every_operation_declares_the_servers_own_414_and_431() -> None:
    """gunicorn answers them for any path, before the app (entrypoints/gunicorn_conf.py writes them as
    problems): a request line over 4,094 bytes, more than 100 header fields or one over 8,190 bytes."""
    spec = load_spec()
    missing = [(m, p, s) for m, p, op in operations(spec) for s in ("414", "431") if s not in _statuses(op)]
    assert missing == []
    responses = spec["components"]["responses"]
    assert "uri-too-long" in responses["UriTooLong"]["description"]
    assert "request-header-fields-too-large" in responses["HeadersTooLarge"]["description"]


def test_every_operation_with_a_body_declares_415() -> None:
    spec = load_spec()
    with_body = [(m, p, op) for m, p, op in operations(spec) if "requestBody" in op]
    assert len(with_body) >= 9  # createGame, takeAction, joinSeat, auditRecord, createTournament, ...
    assert [(m, p) for m, p, op in with_body if "415" not in _statuses(op)] == []
    assert [(m, p) for m, p, op in with_body if list(op["requestBody"]["content"]) != ["application/json"]] == []
    assert "unsupported-media-type" in spec["components"]["responses"]["UnsupportedMediaType"]["description"]


def test_the_problem_types_are_the_servers() -> None:
    """The spec's ``Problem.type`` enum, and the table of docs/api.md, list exactly the server's kinds."""
    spec = load_spec()
    types = {kind.type for kind in KINDS.values()}
    assert set(spec["components"]["schemas"]["Problem"]["properties"]["type"]["enum"]) == types
    errors = (SPEC_PATH.parent / "docs" / "api.md").read_text(encoding="utf-8").split("\n## Errors\n", 1)[1]
    table = set(re.findall(r"^\| `(/problems/[a-z-]+)` \| (\d{3}) \|", errors.split("\n## ", 1)[0], re.MULTILINE))
    documented = {(kind.type, str(kind.status)) for kind in KINDS.values() if kind.slug != "http-error"}
    assert table == documented


INT64 = 2**63 - 1  # the largest integer a request may carry: a larger one is malformed JSON to the server (400)


def unbounded_numbers(spec: Mapping[str, Any]) -> list[str]:
    """Where a request (a body or a parameter, every ``$ref`` followed) may carry a number with no upper
    bound in the spec: a client generated from it, or a fuzzer, may send one the server refuses as malformed."""
    found: list[str] = []
    followed: set[str] = set()

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{where}/{i}")
        if not isinstance(node, Mapping):
            return
        if isinstance(node.get("$ref"), str):
            if node["$ref"] not in followed:
                followed.add(node["$ref"])
                *_, section, name = node["$ref"].split("/")
                walk(spec["components"][section][name], node["$ref"])
            return
        declared = node.get("type")  # (a map of properties may have one named "type": its value is a schema)
        kinds = [k for k in (declared if isinstance(declared, list) else [declared]) if isinstance(k, str)]
        bounded = any(key in node for key in ("maximum", "exclusiveMaximum", "enum", "const"))
        if {"integer", "number"} & set(kinds) and not (bounded and node.get("maximum", 0) <= INT64):
            found.append(where)
        for key, value in node.items():
            if key not in ("example", "examples", "default"):
                walk(value, f"{where}/{key}")

    for method, path, operation in operations(spec):
        walk(operation.get("requestBody"), f"{method} {path} body")
        for parameter in [*operation.get("parameters", []), *spec["paths"][path].get("parameters", [])]:
            walk(parameter, f"{method} {path} parameter")
    return found


def test_every_number_a_request_may_carry_is_bounded_within_64_bits() -> None:
    """Schemathesis found this class twice (a seat number above 2^64, a toy action's ``n``): a request the
    spec allows, refused as malformed."""
    assert unbounded_numbers(load_spec()) == []
    loose = load_spec()
    del loose["components"]["schemas"]["SeatNumber"]["maximum"]
    assert unbounded_numbers(loose)  # the check sees it
