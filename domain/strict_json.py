"""Strict JSON (RFC 8259, I-JSON's restrictions): the one parser for records, archives and request bodies.

Python's ``json.loads`` is lenient where a verifier must not be: a duplicate
key keeps its last value (so two readers of one file can see two different
records), ``NaN``/``Infinity`` and ``1e999`` parse, a string may hold a lone
surrogate (``"\\ud800"``: valid JSON text, but no UTF-8 string, so nothing can
hash or store it), and bytes may be any encoding Python guesses. ``loads``
refuses all of these, with a message that says what and where:

* the text is UTF-8 (bytes that are not, such as UTF-16 or CESU-8, are refused;
  a leading byte-order mark too);
* no object repeats a key;
* numbers are finite; integers fit in 64 bits (also when written ``1e30``);
* no string (value or key) holds a lone surrogate;
* arrays and objects nest at most ``MAX_DEPTH`` deep.

Integers and floats stay distinct (``1`` is an int, ``1.0`` a float), as do
booleans: comparisons in the verifiers go through canonical JSON
(``domain.canonical.same``), where ``0``, ``0.0`` and ``false`` differ.
"""

from __future__ import annotations

import json
import math
from typing import Any

INT64 = 2**63
MAX_DEPTH = 64


class StrictJSONError(ValueError):
    """The text is not strict JSON; the message says why."""


class NestedTooDeep(StrictJSONError):
    """Arrays and objects nest deeper than the limit."""


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``data`` as strict JSON, or raise ``StrictJSONError``."""
    if isinstance(data, (bytes, bytearray)):
        if data.startswith(b"\xef\xbb\xbf"):
            raise StrictJSONError("the text starts with a byte-order mark: JSON is UTF-8 without one")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"not UTF-8 (byte {exc.start}): JSON text is UTF-8") from None
    else:
        text = data
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_float=_finite_float,
            parse_int=_int64,
            parse_constant=_no_constants,
        )
    except StrictJSONError:
        raise
    except RecursionError:
        raise NestedTooDeep(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise StrictJSONError(f"not valid JSON: {exc}") from None
    _check_tree(value, max_depth)
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _finite_float(text: str) -> float:
    value = float(text)
    # a float this large is a whole number: a huge integer is refused however it is written (1e30)
    if not math.isfinite(value) or not -INT64 <= value < INT64:
        raise StrictJSONError(f"number out of range: {text}")
    return value


def _int64(text: str) -> int:
    if len(text) > 21:  # 64-bit integers have at most 19 digits and a sign: refuse before converting
        raise StrictJSONError(f"integer out of range: {text[:24]}...")
    value = int(text)
    if not -INT64 <= value < INT64:
        raise StrictJSONError(f"integer out of range: {text}")
    return value


def _no_constants(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON")


def _check_tree(value: Any, max_depth: int) -> None:
    """Depth and lone surrogates, walked without recursion (a deep value cannot exhaust the stack)."""
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, str):
            _no_lone_surrogate(item)
        elif isinstance(item, (list, dict)):
            if depth > max_depth:
                raise NestedTooDeep(f"nested deeper than {max_depth} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    _no_lone_surrogate(key)
                    todo.append((child, depth + 1))
            else:
                todo.extend((child, depth + 1) for child in item)


def _no_lone_surrogate(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StrictJSONError(
                f"a string holds a lone surrogate (\\u{ord(text[exc.start]):04x}): it is no Unicode text"
            ) from None
