"""POST /v1/audits: verify an uploaded record; stores nothing. Its body may be as large as a record
(``MAX_RECORD_BYTES``, 16 MiB by default), every other request's at most ``MAX_BODY_BYTES``."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from domain.audit import verify_record
from entrypoints.api.body import json_body, takes_record

bp = Blueprint("audits", __name__)


@bp.post("/v1/audits")
@takes_record
def verify_uploaded() -> ResponseReturnValue:
    record = json_body()
    return jsonify(verify_record(record))
