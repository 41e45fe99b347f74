"""POST /v1/audits: verify an uploaded game record, or a tournament archive; stores nothing. Its body may
be as large as a record (``MAX_RECORD_BYTES``, 16 MiB by default), every other request's at most
``MAX_BODY_BYTES``.

The body goes unparsed to the API process's audit pool (``entrypoints/audit_pool.py``): a verifier
process parses it (strict JSON) and verifies it (an archive, whose top-level ``format`` is
``kifu-tournament/1``, as ``kifu verify-tournament`` does; anything else as a game record, as
``kifu verify`` does), signatures checked against this server's keys (``GET /v1/keys``), while this
request waits without holding up the
event loop. Uploads are rate-limited per client address (``RATE_LIMIT_AUDITS``); a full pool is
503 ``audits-busy`` with ``Retry-After``; a verification past ``AUDIT_SECONDS`` is 422
``audit-too-long`` (README, "Limits").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Flask, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue

from entrypoints.api import body
from entrypoints.api.body import takes_record
from entrypoints.api.context import games
from entrypoints.api.limits import audit_upload
from entrypoints.api.problems import problem
from entrypoints.audit_pool import AuditPool, Busy, Died, Malformed, TooLong

bp = Blueprint("audits", __name__)
POOL = "kifu_audit_pool"


def settings(config: Mapping[str, Any]) -> tuple[int, int, float]:
    """``AUDIT_PROCESSES``, ``AUDIT_QUEUE`` and ``AUDIT_SECONDS``, checked."""
    processes, queue, seconds = (
        int(config["AUDIT_PROCESSES"]),
        int(config["AUDIT_QUEUE"]),
        float(config["AUDIT_SECONDS"]),
    )
    if processes < 1 or queue < 0 or not seconds > 0:
        raise ValueError("KIFU_AUDIT_PROCESSES must be at least 1, KIFU_AUDIT_QUEUE at least 0, KIFU_AUDIT_SECONDS > 0")
    return processes, queue, seconds


@bp.record_once
def _check_settings(state: BlueprintSetupState) -> None:
    settings(state.app.config)  # a bad setting stops the app from starting, not its first audit


def audit_pool(app: Flask) -> AuditPool:
    """The app's audit pool in this process, made at its first use (a forked process makes its own)."""
    pool: AuditPool | None = app.extensions.get(POOL)
    if pool is None or pool.pid != os.getpid():
        pool = app.extensions[POOL] = AuditPool(*settings(app.config))
    return pool


@bp.post("/v1/audits")
@audit_upload
@takes_record
def verify_uploaded() -> ResponseReturnValue:
    try:
        report = audit_pool(current_app).verify(request.get_data(), games().keys())
    except Malformed as malformed:  # the same 400 as any other body's
        raise body.malformed(malformed.error) from None
    except Busy as busy:
        response = problem("audits-busy", f"every verifier is busy; retry in {busy.retry_after} s")
        response.headers["Retry-After"] = str(busy.retry_after)
        return response
    except TooLong as too_long:
        detail = f"the record took longer than {too_long.seconds:g} s to verify, the most one verification may take"
        return problem("audit-too-long", detail)
    except Died as died:
        return problem("internal-error", f"{died}; the error was logged")
    return jsonify(report)
