"""Kifu's web app: pages served by the API's own Flask app, drawn in the browser from the public API only.

No build step and nothing from elsewhere: each page is a small HTML shell that loads plain ES modules
from ``static/`` (``/app/...``): one module per page (``pages/``), one per game's drawing (``games/``),
and a few shared ones (``lib/``); ``/app/verifier/`` serves the repository's JavaScript verifier
(``verifier/kifu-verify.mjs``), which Verify runs in the browser. The shell names its page in
``data-page``; everything else (the game, the step, the seat's token) the page reads from its URL,
``sessionStorage`` and the API. The ``Content-Security-Policy`` lets a page load and fetch from this
server only.
"""

from __future__ import annotations

import html
from pathlib import Path

from flask import Blueprint, Response, abort, send_from_directory
from flask.typing import ResponseReturnValue

bp = Blueprint("web", __name__)

STATIC = Path(__file__).resolve().parent / "static"
FOLDERS = ("lib", "pages", "games")  # /app/<folder>/<file>: these folders and nothing else
TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
# The second verifier, at the checkout's root (docs/record-format.md, "The second verifier"): its .mjs files only.
VERIFIER = Path(__file__).resolve().parents[2] / "verifier"
POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SHELL = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Kifu</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app/app.css">
<script type="module" src="/app/pages/{page}.js"></script>
</head>
<body>
<header class="bar"><a class="brand" href="/" title="棋譜, a game record">Kifu</a>
<nav><a href="/">Games</a> <a href="/audit">Verify</a> <a href="/docs">API</a></nav></header>
<main id="app" data-page="{page}" aria-live="polite"><p class="loading">Loading…</p></main>
<noscript>This page needs JavaScript; the whole API is at <a href="/docs">/docs</a>.</noscript>
</body>
</html>
"""


def _page(page: str, title: str) -> Response:
    answer = Response(SHELL.format(page=page, title=html.escape(title)), mimetype="text/html")
    answer.headers["Content-Security-Policy"] = POLICY
    return answer


@bp.get("/")
def lobby() -> ResponseReturnValue:
    """The lobby: games live and finished, open seats to join, a form to create a game."""
    return _page("lobby", "Games")


@bp.get("/games/<game_id>")
def game(game_id: str) -> ResponseReturnValue:
    """A game's table: live, or at ``?step=N`` (``&as=S``), with its log; played with a seat's token."""
    return _page("game", f"Game {game_id}")


@bp.get("/tournaments/<tournament_id>")
def tournament(tournament_id: str) -> ResponseReturnValue:
    """A tournament: standings (live), rounds and their tables, shared deals, the archive; the organiser's commands."""
    return _page("tournament", f"Tournament {tournament_id}")


@bp.get("/audit")
def audit() -> ResponseReturnValue:
    """Verify a record or a tournament archive from a file (``POST /v1/audits``), as anyone can."""
    return _page("audit", "Verify a record")


@bp.get("/app/<name>")
def asset(name: str) -> ResponseReturnValue:
    """A file of the app at the top of ``static/`` (its style sheet)."""
    return _file(STATIC, name)


@bp.get("/app/verifier/<name>")
def verifier(name: str) -> ResponseReturnValue:
    """The JavaScript verifier (``verifier/kifu-verify.mjs``): the browser's half of Verify."""
    if Path(name).suffix != ".mjs":
        abort(404)
    return _file(VERIFIER, name, "text/javascript")


@bp.get("/app/<folder>/<name>")
def module(folder: str, name: str) -> ResponseReturnValue:
    """A module of the app: ``lib/``, ``pages/`` or ``games/``."""
    if folder not in FOLDERS:
        abort(404)
    return _file(STATIC / folder, name)


def _file(folder: Path, name: str, kind: str | None = None) -> ResponseReturnValue:
    kind = kind or TYPES.get(Path(name).suffix)
    if kind is None or not (folder / name).is_file():
        abort(404)
    answer = send_from_directory(folder, name, mimetype=kind, max_age=0)
    answer.headers["Content-Security-Policy"] = POLICY
    return answer
