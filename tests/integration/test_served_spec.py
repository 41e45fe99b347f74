"""The contract served (``entrypoints/api/spec.py``): ``/openapi.json`` and ``/openapi.yaml`` are the
repository's ``openapi.yaml``, and ``/docs`` is Swagger UI built only from this server's own files."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient

from entrypoints.api import create_app, spec

ROOT = Path(__file__).resolve().parents[2]
SPEC_FILE = ROOT / "openapi.yaml"


@pytest.fixture
def spec_app() -> Flask:
    """The spec needs no Redis: an app whose Redis is nowhere."""
    return create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0"})


@pytest.fixture
def client(spec_app: Flask) -> FlaskClient:
    return spec_app.test_client()


class Sources(HTMLParser):
    """Every URL a page makes the browser load: script ``src``, link ``href``, img/iframe/... ``src``."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is not None and name in ("src", "href", "srcset", "data", "poster", "action"):
                self.urls.append(value)


def test_openapi_json_is_the_yaml_parsed(client: FlaskClient) -> None:
    r = client.get("/openapi.json")
    assert r.status_code == 200 and r.mimetype == "application/json"
    assert json.loads(r.data) == yaml.safe_load(SPEC_FILE.read_text(encoding="utf-8"))
    again = client.get("/openapi.json", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304 and not again.data


def test_openapi_yaml_is_the_file(client: FlaskClient) -> None:
    r = client.get("/openapi.yaml")
    assert r.status_code == 200 and r.mimetype == "application/yaml"
    assert r.data == SPEC_FILE.read_bytes()
    assert yaml.safe_load(r.data)["openapi"].startswith("3.")
    assert r.headers["ETag"] != client.get("/openapi.json").headers["ETag"]  # two representations, two tags


def test_docs_loads_only_this_servers_own_files(client: FlaskClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "http" not in policy  # the browser may fetch from nowhere else
    parser = Sources()
    parser.feed(page.get_data(as_text=True))
    assert len(parser.urls) >= 4
    for url in parser.urls:
        assert not re.match(r"^([a-z][a-z0-9+.-]*:|//)", url, re.IGNORECASE), url  # no scheme, no other host
        assert url.startswith("/"), url
        asset = client.get(url)
        assert asset.status_code == 200, url
    served = {url.rsplit("/", 1)[1] for url in parser.urls}
    assert {"swagger-ui-bundle.js", "swagger-ui.css", "kifu-docs.js"} <= served
    assert 'data-spec="/openapi.json"' in page.get_data(as_text=True)


def test_docs_assets_have_their_types_and_nothing_else_is_served(client: FlaskClient) -> None:
    expected = {"js": "text/javascript", "css": "text/css", "png": "image/png"}
    for name, mimetype in spec.ASSETS.items():
        r = client.get(f"/docs/assets/{name}")
        assert r.status_code == 200 and r.mimetype == mimetype, name
        assert r.mimetype == expected.get(name.rsplit(".", 1)[-1], "text/plain"), name
    for name in ("VENDORED.md", "..%2Fspec.py", "nothing.js"):  # files beside them, a way out, no file
        r = client.get(f"/docs/assets/{name}")
        assert r.status_code == 404 and r.mimetype == "application/problem+json", name


def test_the_start_script_keeps_swagger_ui_at_home() -> None:
    """No online validator badge (it would load an image from validator.swagger.io), no spec URL taken from
    the query string, the spec read from this server."""
    start = (spec.ASSETS_DIR / "kifu-docs.js").read_text(encoding="utf-8")
    assert "validatorUrl: null" in start and "queryConfigEnabled: false" in start
    assert "http" not in start


def test_the_vendored_copy_is_the_version_its_note_names() -> None:
    note = (spec.ASSETS_DIR / "VENDORED.md").read_text(encoding="utf-8")
    version = re.search(r"`swagger-ui-dist` (\d+\.\d+\.\d+)", note)
    assert version is not None
    bundle = (spec.ASSETS_DIR / "swagger-ui-bundle.js").read_text(encoding="utf-8")
    assert f'PACKAGE_VERSION:"{version.group(1)}"' in bundle
    assert "Apache License" in (spec.ASSETS_DIR / "LICENSE").read_text(encoding="utf-8")


def test_the_assets_are_package_data() -> None:
    """A built package ships them: pyproject's package-data for ``entrypoints.api`` covers every asset."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["entrypoints.api"]
    package = ROOT / "entrypoints" / "api"
    for name in spec.ASSETS:
        relative = (spec.ASSETS_DIR / name).relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_the_spec_is_found_from_the_code_whatever_the_working_directory(tmp_path: Path) -> None:
    script = (
        "from entrypoints.api import create_app\n"
        "app = create_app({'TESTING': True, 'REDIS_URL': 'redis://127.0.0.1:1/0'})\n"
        "r = app.test_client().get('/openapi.yaml')\n"
        "print(r.status_code, len(r.data))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["200", str(len(SPEC_FILE.read_bytes()))]


def test_kifu_openapi_path_names_another_file_and_none_is_a_404(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("openapi: 3.2.0\ninfo: {title: other, version: '0'}\npaths: {}\n", encoding="utf-8")
    app = create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0", "OPENAPI_PATH": str(other)})
    assert app.test_client().get("/openapi.json").json["info"]["title"] == "other"
    missing = create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0", "OPENAPI_PATH": str(tmp_path / "x")})
    for path in ("/openapi.json", "/openapi.yaml", "/docs"):
        r = missing.test_client().get(path)
        assert r.status_code == 404 and "KIFU_OPENAPI_PATH" in r.json["detail"], path
        assert str(tmp_path) not in r.json["detail"]  # no path of the server's disk in an answer


def test_cors_applies_to_the_spec_as_to_the_rest() -> None:
    origin = "https://play.example"
    app = create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0", "CORS_ORIGINS": origin})
    r = app.test_client().get("/openapi.json", headers={"Origin": origin})
    assert r.headers["Access-Control-Allow-Origin"] == origin
    closed = create_app({"TESTING": True, "REDIS_URL": "redis://127.0.0.1:1/0"})
    assert (
        "Access-Control-Allow-Origin"
        not in closed.test_client().get("/openapi.json", headers={"Origin": origin}).headers
    )
