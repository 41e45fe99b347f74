"""A table as plain JSON data, for snapshots: no pickle, no code run on load.

A snapshot stored in Redis is read back by the API and the workers, so it must
not be able to run code (pickle can: any process able to write to Redis could
then run code in ours). This codec writes the table as JSON-able data:

* ``None``, booleans, numbers and strings as themselves; tuples as arrays;
* every other value as a one-key object: ``{"list": [...]}``,
  ``{"map": [[key, value], ...]}`` (keys of any encodable type), and
  ``{"dc": ["module:Class", {field: value, ...}]}`` for a frozen dataclass.

Decoding builds only frozen dataclasses defined in this package's modules
(``domain.`` and below) or in a registered game's module, and assigns their
fields directly, as
``contract.changed`` does: no ``__init__``, no ``__post_init__``, no
``__setstate__``. Anything else is refused with ``SnapshotError``, and the
caller falls back to the log, which is always the truth.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

from domain.engine import Table
from domain.registry import all_games

ALLOWED_MODULE_PREFIX = "domain."
SCALARS = (str, int, float, bool, type(None))


class SnapshotError(ValueError):
    """The data is not a snapshot this codec wrote."""


def encode(value: Any) -> Any:
    """``value`` as JSON-able data (see the module docstring)."""
    if isinstance(value, SCALARS):
        return value
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    if isinstance(value, list):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, Mapping):
        return {"map": [[encode(k), encode(v)] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"dc": [f"{cls.__module__}:{cls.__qualname__}", fields]}
    raise SnapshotError(f"cannot encode a {type(value).__name__} in a snapshot")


def decode(data: Any) -> Any:
    """The value ``encode`` made ``data`` from."""
    if isinstance(data, SCALARS):
        return data
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if not isinstance(data, dict) or len(data) != 1:
        raise SnapshotError("not snapshot data")
    ((tag, body),) = data.items()
    if tag == "list" and isinstance(body, list):
        return [decode(v) for v in body]
    if tag == "map" and isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body):
        return {_hashable(decode(k)): decode(v) for k, v in body}
    if tag == "dc" and isinstance(body, list) and len(body) == 2:
        return _dataclass(*body)
    raise SnapshotError(f"unknown snapshot tag {tag!r}")


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        raise SnapshotError("a map key in a snapshot is not hashable") from None
    return key


def _dataclass(name: Any, fields: Any) -> Any:
    cls = _allowed_class(name)
    if not isinstance(fields, dict) or set(fields) != {f.name for f in dataclasses.fields(cls)}:
        raise SnapshotError(f"the fields of {name} do not match its class")
    obj: Any = object.__new__(cls)
    obj.__dict__.update({k: decode(v) for k, v in fields.items()})
    return obj


def _allowed_module(module_name: str) -> bool:
    """The ``domain`` package, or the module of a registered game (a test may register its own)."""
    return module_name.startswith(ALLOWED_MODULE_PREFIX) or module_name in {
        type(game).__module__ for game in all_games()
    }


def _allowed_class(name: Any) -> type:
    """A frozen dataclass of an allowed module, or ``SnapshotError``."""
    module_name, _, qualname = name.partition(":") if isinstance(name, str) else ("", "", "")
    if not _allowed_module(module_name) or not qualname or "." in qualname:
        raise SnapshotError(f"class {name!r} may not appear in a snapshot")
    try:
        cls = getattr(importlib.import_module(module_name), qualname)
    except (ImportError, AttributeError):
        raise SnapshotError(f"no class {name!r}") from None
    params = getattr(cls, "__dataclass_params__", None)
    if not isinstance(cls, type) or params is None or not params.frozen:
        raise SnapshotError(f"{name!r} is not a frozen dataclass")
    return cls


def table_to_data(table: Table) -> Any:
    """The table as JSON-able data."""
    return encode(table)


def table_from_data(data: Any) -> Table:
    """The table ``table_to_data`` wrote, or ``SnapshotError``."""
    table = decode(data)
    if not isinstance(table, Table):
        raise SnapshotError("the snapshot does not hold a table")
    return table
