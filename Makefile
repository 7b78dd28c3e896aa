# Set-up and entry points. `make demo` and `make test` each create .venv when it is missing
# and install what the target needs, so a fresh clone needs nothing else (Java 17 aside, for Spark).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_DEV := $(VENV)/.stamp-dev
STAMP_DEMO := $(VENV)/.stamp-demo
STAMP_BENCH := $(VENV)/.stamp-bench
STAMP_DOCS := $(VENV)/.stamp-docs

.PHONY: demo test test-quick lint typecheck bench bench-quick docs docs-browser clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_DEV): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev,spark]'
	touch $@

$(STAMP_DEMO): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[spark]'
	touch $@

$(STAMP_BENCH): $(STAMP_DEV)
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $@

$(STAMP_DOCS): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[docs]'
	touch $@

demo: $(STAMP_DEMO)
	$(BIN)/rstreams demo

test: $(STAMP_DEV)
	$(BIN)/python -m pytest -q -n 2 --timeout=300

lint: $(STAMP_DEV)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP_BENCH)
	$(BIN)/python -m benchmarks

bench-quick: $(STAMP_BENCH)
	$(BIN)/python -m benchmarks --quick

docs: $(STAMP_DOCS)
	$(BIN)/mkdocs build --strict --site-dir site

# Debian's headless Chromium, for tests/docs/test_site_browser.py (needs root; not run by `make test`)
docs-browser:
	@command -v chromium >/dev/null || { command -v apt-get >/dev/null && apt-get install -y chromium chromium-driver; }

clean:
	rm -rf $(VENV) build dist site .pytest_cache .mypy_cache .ruff_cache
