"""POST /v1/audits: verify an uploaded record; stores nothing."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from domain.audit import verify_record

bp = Blueprint("audits", __name__)


@bp.post("/v1/audits")
def verify_uploaded() -> ResponseReturnValue:
    record = request.get_json(force=True, silent=False)
    return jsonify(verify_record(record))
