"""A TypeScript client generated from ``openapi.yaml`` types a small front end, and catches renames.

``openapi-typescript`` turns the spec into TypeScript types, and ``tsc --noEmit`` (strict) checks
``tests/typescript/front_end.ts`` against them, both pinned in ``tests/typescript/package.json`` and its
``package-lock.json``. The front end narrows a view by ``game`` to read a San Ban board and Front Line
lines, builds typed actions and a creation request, and switches on event types; its
``@ts-expect-error`` lines are mistakes the types must catch (an unused directive is itself an error,
so a type too loose fails the check too). Then the same front end against a copy of the spec with
fields it reads renamed, and with one union opened up, must fail, naming each.

Node.js and npm are needed: without ``npm`` the test fails and says how to get it. ``npm ci`` runs only
when ``package-lock.json`` changed since the last install (a stamp in ``node_modules``), under a file
lock so that two runs never install at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.spec import SPEC_PATH, load_spec

pytestmark = pytest.mark.xdist_group("npm")  # one process installs and runs the npm packages (make test: -n 2)

PACKAGE = Path(__file__).resolve().parents[1] / "typescript"
BIN = PACKAGE / "node_modules" / ".bin"
STAMP = PACKAGE / "node_modules" / ".kifu-package-lock.sha256"  # the lock file's hash at the last `npm ci`
# request bodies keep their defaults optional; an object schema without properties reads as `unknown`
GENERATE_OPTIONS = ["--default-non-nullable", "false", "--empty-objects-unknown"]
SECONDS = 300  # for `npm ci` on a slow network; a check itself takes a few seconds


def npm() -> str:
    found = shutil.which("npm")
    if found is None:
        pytest.fail(
            "npm not found: install Node.js 20 or later with npm (https://nodejs.org/, or `apt install nodejs npm`)"
            " to run the TypeScript client check",
            pytrace=False,
        )
    return found


@pytest.fixture(scope="module")
def installed() -> Iterator[None]:
    """``tests/typescript/node_modules`` as ``package-lock.json`` pins it (``npm ci`` when it changed)."""
    command = npm()
    wanted = hashlib.sha256((PACKAGE / "package-lock.json").read_bytes()).hexdigest()
    # npm ci removes node_modules first: the lock lives outside it
    lock_path = Path(tempfile.gettempdir()) / f"kifu-npm-ci-{hashlib.sha256(bytes(PACKAGE)).hexdigest()[:16]}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not STAMP.exists() or STAMP.read_text() != wanted:
            done = run([command, "ci", "--no-audit", "--no-fund"], cwd=PACKAGE)
            assert done.returncode == 0, f"npm ci failed in {PACKAGE}:\n{done.stdout}{done.stderr}"
            STAMP.write_text(wanted)
        yield


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=SECONDS, check=False)


def type_check(spec: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Generate ``kifu-api.d.ts`` from ``spec`` next to a copy of the front end, then run tsc there."""
    generated = run([str(BIN / "openapi-typescript"), str(spec), "-o", "kifu-api.d.ts", *GENERATE_OPTIONS], workdir)
    assert generated.returncode == 0, f"openapi-typescript failed on {spec}:\n{generated.stdout}{generated.stderr}"
    for name in ("front_end.ts", "tsconfig.json"):
        shutil.copy(PACKAGE / name, workdir / name)
    return run([str(BIN / "tsc"), "-p", "tsconfig.json"], workdir)


def test_the_front_end_type_checks_against_the_generated_client(installed: None, tmp_path: Path) -> None:
    checked = type_check(SPEC_PATH, tmp_path)
    assert checked.returncode == 0, f"tsc refused tests/typescript/front_end.ts:\n{checked.stdout}{checked.stderr}"


def test_a_renamed_field_or_a_loose_type_breaks_the_front_end(installed: None, tmp_path: Path) -> None:
    spec = load_spec()
    schemas: dict[str, Any] = spec["components"]["schemas"]
    rename(schemas["SanBanState"], "board", "cells")
    rename(schemas["FrontLineState"], "front", "front_line")
    schemas["NinNalAction"] = {"type": "object", "additionalProperties": True}  # as open as `Action` once was
    copy = tmp_path / "renamed.yaml"
    copy.write_text(yaml.safe_dump(spec, sort_keys=False))
    checked = type_check(copy, tmp_path)
    errors = checked.stdout + checked.stderr
    assert checked.returncode != 0, "tsc accepted the front end against a spec without the fields it reads"
    assert "Property 'board' does not exist" in errors, errors
    assert "Property 'front' does not exist" in errors, errors
    assert "Unused '@ts-expect-error' directive" in errors, errors  # `{"type": "program"}` is no longer refused


def rename(schema: dict[str, Any], old: str, new: str) -> None:
    """Rename property ``old`` of an object schema, in ``required`` too."""
    schema["properties"] = {(new if k == old else k): v for k, v in schema["properties"].items()}
    schema["required"] = [new if k == old else k for k in schema["required"]]
