# The two commands of the README: `make run` plays on the embedded default, `make test` runs the tests.
# Both build .venv on first use, so a fresh clone needs nothing but Python 3.11+ and the package index.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m agent $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache transcripts
