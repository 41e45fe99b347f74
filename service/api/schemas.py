"""Request shapes (marshmallow): the route checks these before anything else."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate


class PlayerSchema(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    bot = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=32))


class CreateGameSchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    players = fields.List(fields.Nested(PlayerSchema), required=True, validate=validate.Length(min=1, max=16))
    options = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    deal = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)


class ActionSchema(Schema):
    class Meta:
        unknown = RAISE

    action = fields.Dict(keys=fields.String(), required=True)
    expected_version = fields.Integer(load_default=None, allow_none=True, strict=True,
                                      validate=validate.Range(min=0))


class ListQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(load_default=None)
    status = fields.String(load_default=None, validate=validate.OneOf(["active", "finished"]))
    player = fields.String(load_default=None)
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=200))
    cursor = fields.String(load_default=None, validate=validate.Regexp(r"^\d{13}:[A-Za-z0-9_-]+$"))


class EventsQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    after = fields.Integer(load_default=0, validate=validate.Range(min=0))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class ReplayQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    step = fields.Integer(required=True, validate=validate.Range(min=1))
    as_ = fields.Integer(data_key="as", load_default=None, validate=validate.Range(min=0))
