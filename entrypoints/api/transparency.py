"""What anyone needs to check a record's signature and the transparency log (docs/record-format.md,
"Signatures and the transparency log"): the server's keys, the log's signed tree heads, inclusion and
consistency proofs, and its entries. Public, read-only, no token."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from entrypoints.api.context import games, kifu
from entrypoints.api.problems import problem
from entrypoints.api.schemas import (
    CONSISTENCY_QUERY_SCHEMA,
    ENTRIES_QUERY_SCHEMA,
    INCLUSION_QUERY_SCHEMA,
    LOG_HEAD_QUERY_SCHEMA,
)
from service.ports import BadTreeSize, NotLogged

bp = Blueprint("transparency", __name__)


@bp.get("/v1/keys")
def keys() -> ResponseReturnValue:
    return jsonify(games().keys())


@bp.get("/v1/log/head")
def log_head() -> ResponseReturnValue:
    query = LOG_HEAD_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(kifu().notary.head(query["size"]))


@bp.get("/v1/log/inclusion")
def inclusion() -> ResponseReturnValue:
    query = INCLUSION_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(kifu().notary.inclusion(query["game"], query["size"]))


@bp.get("/v1/log/consistency")
def consistency() -> ResponseReturnValue:
    query = CONSISTENCY_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify(kifu().notary.consistency(query["first"], query["second"]))


@bp.get("/v1/log/entries")
def entries() -> ResponseReturnValue:
    query = ENTRIES_QUERY_SCHEMA.load(request.args.to_dict())
    return jsonify({"entries": kifu().notary.entries(query["start"], query["end"])})


@bp.errorhandler(NotLogged)
def _not_logged(exc: NotLogged) -> ResponseReturnValue:
    return problem("not-logged", str(exc))


@bp.errorhandler(BadTreeSize)
def _bad_size(exc: BadTreeSize) -> ResponseReturnValue:
    return problem("bad-tree-size", str(exc))
