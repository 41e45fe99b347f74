"""Request shapes (marshmallow): the route checks these before anything else."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, post_load, validate, validates_schema
from werkzeug.routing import IntegerConverter


def _boolean(value: Any) -> None:
    """JSON true or false only (marshmallow's Boolean also takes 1, "yes", ...)."""
    if value is not True and value is not False:
        raise ValidationError("Not a valid boolean.")


class PlayerSchema(Schema):
    """A seat: a human (``name``), a bot (``name``, ``bot``), or an open seat (``open: true``) anyone may join."""

    class Meta:
        unknown = RAISE

    name = fields.String(load_default=None, validate=validate.Length(min=1, max=64))
    bot = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=32))
    open = fields.Raw(load_default=False, validate=_boolean, metadata={"description": "true: anyone may join it"})

    @validates_schema
    def _a_seat_is_named_or_open(self, data: dict[str, Any], **_kw: Any) -> None:
        if data["open"] and (data["name"] is not None or data["bot"] is not None):
            raise ValidationError("an open seat has no name and no bot yet: it is named when someone joins", "open")
        if not data["open"] and data["name"] is None:
            raise ValidationError("Missing data for required field.", "name")


class JoinSchema(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))


class CreateGameSchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    players = fields.List(fields.Nested(PlayerSchema), required=True, validate=validate.Length(min=1, max=16))
    options = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    deal = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)


# Event numbers and versions stay below 2**53: exact in every JSON client (and in a Redis stream id).
MAX_SEQ = 2**53 - 1
SEQ = validate.Range(min=0, max=MAX_SEQ)


class WholeNumber(fields.Integer):
    """A JSON integer as JSON Schema reads one: ``7``, and also ``7.0`` or ``7e0`` (never ``true`` or ``"7"``)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        result: int = super()._deserialize(value, attr, data, **kwargs)
        return result


ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")


class QueryInteger(fields.Integer):
    """An integer in a query string: ASCII digits (and a sign) only. Python's ``int`` also reads any
    Unicode decimal digit ("١", "３"), spaces and underscores: "Not a valid integer." (422) for them."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if not (isinstance(value, str) and ASCII_INTEGER.fullmatch(value)):
            raise self.make_error("invalid")
        result: int = super()._deserialize(value, attr, data, **kwargs)
        return result


class AsciiIntegerConverter(IntegerConverter):
    """``<int:...>`` in a route: ASCII digits only (werkzeug's ``\\d+`` also takes "١", read as 1)."""

    regex = r"[0-9]+"


class ActionSchema(Schema):
    class Meta:
        unknown = RAISE

    action = fields.Dict(keys=fields.String(), required=True)
    expected_version = WholeNumber(load_default=None, allow_none=True, strict=True, validate=SEQ)


# A list's cursor: the last index member of the page before (``projections.games_list``).
LIST_CURSOR = validate.Regexp(r"^[0-9]{13}:[A-Za-z0-9_-]+$")


class ListQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(load_default=None)
    status = fields.String(load_default=None, validate=validate.OneOf(["active", "finished"]))
    player = fields.String(load_default=None)
    tournament = fields.String(load_default=None, metadata={"description": "games of this tournament"})
    limit = QueryInteger(load_default=20, validate=validate.Range(min=1, max=200))
    cursor = fields.String(load_default=None, validate=LIST_CURSOR)
    open = fields.String(
        load_default=None,
        validate=validate.OneOf(["true", "false"]),
        metadata={"description": "true: the lobby (running games with a free seat); false: the others"},
    )

    @post_load
    def _open_as_boolean(self, data: dict[str, Any], **_kw: Any) -> dict[str, Any]:
        return {**data, "open": None if data["open"] is None else data["open"] == "true"}


class EventsQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    after = QueryInteger(load_default=0, validate=SEQ)
    cursor = QueryInteger(
        load_default=None, validate=SEQ, metadata={"description": "the list's `next`; the same as `after`"}
    )
    limit = QueryInteger(load_default=100, validate=validate.Range(min=1, max=1000))

    @post_load
    def _cursor_is_after(self, data: dict[str, Any], **_kw: Any) -> dict[str, Any]:
        """Every list pages with ``cursor`` (docs/api.md); for events it is the ``after`` of ``next``."""
        cursor = data.pop("cursor")
        if cursor is not None:
            data["after"] = cursor
        return data


class StreamQuerySchema(EventsQuerySchema):
    ticket = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=100),
        metadata={"description": "a stream ticket (POST .../stream-tickets), for browsers"},
    )


class WatchedSeatSchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    token = fields.String(required=True, validate=validate.Length(min=1, max=200))


class PlayerTicketSchema(Schema):
    class Meta:
        unknown = RAISE

    seats = fields.List(fields.Nested(WatchedSeatSchema), required=True, validate=validate.Length(min=1, max=100))


class PlayerStreamQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    ticket = fields.String(required=True, validate=validate.Length(min=1, max=100))


class ReplayQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    step = QueryInteger(required=True, validate=validate.Range(min=1, max=MAX_SEQ))
    as_ = QueryInteger(data_key="as", load_default=None, validate=validate.Range(min=0, max=99))


class StepsQuerySchema(Schema):
    """A page of replay steps: ``from`` (or the previous page's ``next`` as ``cursor``) and ``limit``."""

    class Meta:
        unknown = RAISE

    from_ = QueryInteger(data_key="from", load_default=1, validate=validate.Range(min=1, max=MAX_SEQ))
    cursor = QueryInteger(
        load_default=None,
        validate=validate.Range(min=1, max=MAX_SEQ),
        metadata={"description": "the page's `next`; the same as `from`"},
    )
    limit = QueryInteger(load_default=200, validate=validate.Range(min=1, max=1000))
    as_ = QueryInteger(data_key="as", load_default=None, validate=validate.Range(min=0, max=99))

    @post_load
    def _cursor_is_from(self, data: dict[str, Any], **_kw: Any) -> dict[str, Any]:
        """Every list pages with ``cursor`` (docs/api.md); for steps it is the ``from`` of ``next``."""
        cursor = data.pop("cursor")
        if cursor is not None:
            data["from_"] = cursor
        return data


class EntrantSchema(Schema):
    """A tournament entrant: a human by name, or a bot by name and level."""

    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    bot = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=32))


class CreateTournamentSchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    options = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    entrants = fields.List(fields.Nested(EntrantSchema), required=True, validate=validate.Length(min=1, max=1024))
    format = fields.String(required=True, validate=validate.OneOf(["round-robin", "swiss", "duplicate"]))
    rounds = WholeNumber(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=1, max=200))
    table_size = WholeNumber(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=2, max=16))
    scoring = fields.List(
        WholeNumber(strict=True, validate=validate.Range(min=0, max=1_000_000)),
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=2, max=16),
    )
    deals = fields.List(
        fields.Dict(keys=fields.String()), load_default=None, allow_none=True, validate=validate.Length(min=1, max=200)
    )


class TournamentListQuerySchema(Schema):
    """``GET /v1/tournaments``: the games list's ``limit`` and ``cursor``, filtered by game and status."""

    class Meta:
        unknown = RAISE

    game = fields.String(load_default=None)
    status = fields.String(load_default=None, validate=validate.OneOf(["created", "running", "paused", "finished"]))
    limit = QueryInteger(load_default=20, validate=validate.Range(min=1, max=200))
    cursor = fields.String(load_default=None, validate=LIST_CURSOR)


class ReasonSchema(Schema):
    class Meta:
        unknown = RAISE

    reason = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=500))


class ForfeitSchema(Schema):
    class Meta:
        unknown = RAISE

    seat = WholeNumber(required=True, strict=True, validate=validate.Range(min=0, max=15))
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))


class TournamentGamesQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    limit = QueryInteger(load_default=50, validate=validate.Range(min=1, max=200))
    cursor = fields.String(load_default=None, validate=validate.Regexp(r"^[0-9]{1,9}$"))


class LogHeadQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    size = QueryInteger(load_default=None, validate=SEQ, metadata={"description": "a past tree size; default: now"})


class InclusionQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    size = QueryInteger(load_default=None, validate=validate.Range(min=1, max=MAX_SEQ))


class ConsistencyQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    first = QueryInteger(required=True, validate=SEQ)
    second = QueryInteger(required=True, validate=SEQ)


class EntriesQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    start = QueryInteger(load_default=0, validate=SEQ)
    end = QueryInteger(required=True, validate=SEQ)


LOG_HEAD_QUERY_SCHEMA = LogHeadQuerySchema()
INCLUSION_QUERY_SCHEMA = InclusionQuerySchema()
CONSISTENCY_QUERY_SCHEMA = ConsistencyQuerySchema()
ENTRIES_QUERY_SCHEMA = EntriesQuerySchema()


def _moment(text: str) -> None:
    """An RFC 3339 time or a date (``2026-11-26``), as ``since`` and ``until`` take."""
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError("an RFC 3339 time (2026-11-26T12:00:00Z) or a date (2026-11-26)") from None


class ExportQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(load_default=None, validate=validate.Length(max=64))
    player = fields.String(load_default=None, validate=validate.Length(max=64))
    tournament = fields.String(load_default=None, validate=validate.Length(max=64))
    since = fields.String(load_default=None, validate=_moment, metadata={"description": "created at or after"})
    until = fields.String(load_default=None, validate=_moment, metadata={"description": "created before"})
    limit = QueryInteger(load_default=100, validate=validate.Range(min=1, max=10_000))


EXPORT_QUERY_SCHEMA = ExportQuerySchema()
