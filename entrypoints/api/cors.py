"""Cross-origin access for browser front ends (flask-cors), off unless origins are configured.

``KIFU_CORS_ORIGINS``: a comma-separated list of origins (``https://play.example``)
or ``*``; empty (the default) sends no CORS header, so browsers keep other
origins out. Tokens travel in ``Authorization``, never in cookies, so no
credentials mode is needed; the headers a client sends and reads are listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import Flask
from flask_cors import CORS

ALLOWED_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key", "If-Match", "Last-Event-ID")
EXPOSED_HEADERS = ("Idempotent-Replayed", "Allow", "Retry-After")
MAX_AGE_S = 600


def origins(setting: Any) -> list[str]:
    """The configured origins: a list, or a comma-separated string."""
    items: Sequence[Any] = setting.split(",") if isinstance(setting, str) else (setting or [])
    return [str(o).strip().rstrip("/") for o in items if str(o).strip()]


def init_app(app: Flask) -> None:
    """Answer preflights and add CORS headers for the configured origins (nothing when there are none)."""
    allowed = origins(app.config.get("CORS_ORIGINS"))
    if not allowed:
        return
    CORS(
        app,
        origins="*" if "*" in allowed else allowed,
        allow_headers=list(ALLOWED_HEADERS),
        expose_headers=list(EXPOSED_HEADERS),
        methods=["GET", "POST", "OPTIONS"],
        max_age=MAX_AGE_S,
        supports_credentials=False,
    )
