"""Immutable events with public data and private parts addressed to seats.

An event's ``data`` is public. ``private`` maps an audience to data only that
audience may see while the game runs:

* ``"0"``, ``"1"``, ... - the seat with that number;
* ``"hidden"`` - nobody (cards set aside, an advanced-mode shuffle, a fixed
  deal): the server keeps it for the rules and publishes it at the end.

Redaction is therefore generic (``Event.visible_data``): no game writes
redaction code. Once a game has ended every part is public.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

HIDDEN = "hidden"
_NO_PRIVATE: Any = object()  # ``private`` not given: a fresh empty dict, as a ``default_factory`` gives


@dataclass(frozen=True, init=False)
class Event:
    """One thing that happened. ``type`` is a stable past-tense name."""

    type: str
    data: Mapping[str, Any]
    private: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __init__(
        self, type: str, data: Mapping[str, Any], private: Mapping[str, Mapping[str, Any]] = _NO_PRIVATE
    ) -> None:
        """Set the fields once: the ``__init__`` a frozen dataclass generates goes through
        ``object.__setattr__`` per field, twice as slow, and a game makes dozens of events."""
        fields = self.__dict__
        fields["type"] = type
        fields["data"] = data
        fields["private"] = {} if private is _NO_PRIVATE else private

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, private parts included (for the store and the record)."""
        return {"type": self.type, "data": dict(self.data), "private": {k: dict(v) for k, v in self.private.items()}}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Event:
        """Inverse of ``to_dict``."""
        return cls(type=raw["type"], data=dict(raw["data"]), private=dict(raw.get("private") or {}))

    def visible_data(self, viewer: int | None, everything_public: bool) -> dict[str, Any]:
        """``data`` plus, under ``"private"``, the parts ``viewer`` may see."""
        out = dict(self.data)
        if everything_public:
            shown = dict(self.private)
        elif viewer is None:
            shown = {}
        else:
            shown = {k: v for k, v in self.private.items() if k == str(viewer)}
        if shown:
            out["private"] = {k: dict(v) for k, v in shown.items()}
        return out

    def private_for(self, seat: int) -> Mapping[str, Any]:
        """The part addressed to ``seat`` (empty when there is none)."""
        return self.private.get(str(seat), {})

    @property
    def hidden(self) -> Mapping[str, Any]:
        """The part addressed to nobody until the end."""
        return self.private.get(HIDDEN, {})


def event(type_: str, private: Mapping[str, Mapping[str, Any]] | None = None, **data: Any) -> Event:
    """Shorthand: ``event("card_placed", seat=0, cell=4)``."""
    return Event(type=type_, data=data, private=dict(private or {}))
