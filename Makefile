# The two commands of the README: `make run` plays on the embedded default, `make test` runs the tests.
# Both build .venv on first use, so a fresh clone needs nothing but Python 3.11+ and the package index.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m agent $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check agent benchmarks tests
	$(BIN)/mypy agent benchmarks

# Every benchmark script prints its numbers; each game keeps its own in benchmarks/<game>/bench_*.py.
bench: $(STAMP)
	@set -e; for f in benchmarks/*/bench_*.py; do \
		m=$$(echo "$${f%.py}" | tr / .); echo "== $$m"; $(BIN)/python -m $$m; \
	done

clean:
	rm -rf $(VENV) .pytest_cache transcripts
