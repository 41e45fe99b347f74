"""The contract, served: ``GET /openapi.yaml`` (the file), ``GET /openapi.json`` (the same document as
JSON) and ``GET /docs`` (interactive documentation: Swagger UI, vendored in ``static/docs/``).

Where the spec is. ``openapi.yaml`` lives at the repository's root, beside the
packages, and the project is installed editable from there (``pip install -e
.``, as ``make install`` does): the file is the parent of the ``entrypoints``
package's directory, found from this module's own path, whatever the working
directory. ``KIFU_OPENAPI_PATH`` names another file (an installation that is
not a checkout of the repository); without one either way, the three paths
answer a 404 problem saying so, and the API serves on.

The file is read once per process (at its first request), converted to JSON
once and both kept, with an ETag of the file's bytes: an answer is a lookup,
and ``If-None-Match`` gets a 304. ``application/yaml`` is the registered type
(RFC 9512).

``/docs`` is Swagger UI from the copy in ``static/docs/`` (``VENDORED.md``
there says which version, from where). Nothing is loaded from elsewhere: the
page names only this server's files (``/docs/assets/...``, a fixed list) and
its ``Content-Security-Policy`` lets a browser fetch nothing from another
origin. CORS applies as to every path (``cors.py``).
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from flask import Blueprint, Response, abort, current_app, request, send_from_directory, url_for
from flask.typing import ResponseReturnValue

bp = Blueprint("spec", __name__)

REPOSITORY_SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"  # <root>/entrypoints/api/spec.py
ASSETS_DIR = Path(__file__).resolve().parent / "static" / "docs"
YAML_TYPE = "application/yaml"
# What /docs/assets/ serves, and as what: these files and nothing else from the folder.
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "kifu-docs.js": "text/javascript",
    "favicon-32x32.png": "image/png",
    "LICENSE": "text/plain",
    "NOTICE": "text/plain",
    "swagger-ui-bundle.js.LICENSE.txt": "text/plain",
}
# Swagger UI sets inline styles (style-src 'unsafe-inline') and draws a few icons from data: URLs; every
# script, style sheet, font and request comes from this origin.
DOCS_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)
DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kifu API</title>
<link rel="stylesheet" href="{css}">
<link rel="icon" type="image/png" href="{icon}">
</head>
<body>
<div id="swagger-ui" data-spec="{spec}"></div>
<script src="{bundle}"></script>
<script src="{start}"></script>
</body>
</html>
"""


@dataclass(frozen=True)
class Spec:
    """The spec file's bytes, the same document as JSON, and their validator."""

    yaml: bytes
    json: bytes
    etag: str


@functools.cache
def load(path: Path) -> Spec:
    """``path`` read and converted once per process (it does not change while the server runs)."""
    text = path.read_bytes()
    document: Any = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # the safe loaders only
    as_json = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()  # a date would raise
    return Spec(text, as_json, hashlib.sha256(text).hexdigest()[:32])


def spec_path() -> Path:
    configured = current_app.config.get("OPENAPI_PATH")
    return Path(configured) if configured else REPOSITORY_SPEC


def current() -> Spec:
    path = spec_path()
    if not path.is_file():
        abort(404, description="this installation has no openapi.yaml where the server looks; set KIFU_OPENAPI_PATH")
    return load(path)


def _answer(body: bytes, mimetype: str, etag: str) -> Response:
    response = Response(body, mimetype=mimetype)
    response.set_etag(etag)
    response.headers["Cache-Control"] = "no-cache"  # revalidate each time: a 304 while it is the same file
    response.make_conditional(request)  # 304 for a matching If-None-Match (it changes the response in place)
    return response


@bp.get("/openapi.yaml")
def openapi_yaml() -> ResponseReturnValue:
    spec = current()
    return _answer(spec.yaml, YAML_TYPE, f"{spec.etag}-yaml")


@bp.get("/openapi.json")
def openapi_json() -> ResponseReturnValue:
    spec = current()
    return _answer(spec.json, "application/json", f"{spec.etag}-json")


@bp.get("/docs")
def docs() -> ResponseReturnValue:
    """Swagger UI's page, every asset of it from this server."""
    current()  # a 404 here too when there is no spec to show

    def asset(name: str) -> str:
        return html.escape(url_for("spec.docs_asset", filename=name))

    page = DOCS_PAGE.format(
        css=asset("swagger-ui.css"),
        icon=asset("favicon-32x32.png"),
        spec=html.escape(url_for("spec.openapi_json")),
        bundle=asset("swagger-ui-bundle.js"),
        start=asset("kifu-docs.js"),
    )
    response = Response(page, mimetype="text/html")
    response.headers["Content-Security-Policy"] = DOCS_POLICY
    return response


@bp.get("/docs/assets/<filename>")
def docs_asset(filename: str) -> ResponseReturnValue:
    mimetype = ASSETS.get(filename)
    if mimetype is None:
        abort(404)
    response = send_from_directory(ASSETS_DIR, filename, mimetype=mimetype)
    response.headers["Cache-Control"] = "no-cache"
    return response
