"""POST /v1/audits: verify an uploaded record; stores nothing."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from domain.audit import verify_record
from entrypoints.api.body import json_body

bp = Blueprint("audits", __name__)


@bp.post("/v1/audits")
def verify_uploaded() -> ResponseReturnValue:
    record = json_body()
    return jsonify(verify_record(record))
