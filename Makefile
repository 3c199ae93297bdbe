# One entry point for set-up, tests and benchmarks. `make test` is what CI runs.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-classic test-connect lint bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

# All tests on classic Spark, then everything that touches Spark again over Spark Connect.
test: $(STAMP)
	$(PY) -m pytest -q
	DQ_TEST_SPARK_CONNECT=1 $(PY) -m pytest -q tests/metrics tests/checkers tests/checks -m "not classic_only"

test-classic: $(STAMP)
	$(PY) -m pytest -q

test-connect: $(STAMP)
	DQ_TEST_SPARK_CONNECT=1 $(PY) -m pytest -q tests/metrics tests/checkers tests/checks -m "not classic_only"

lint: $(STAMP)
	$(PY) -m ruff check checkers checks alerting scheduling dags tests benchmarks examples
	$(PY) -m mypy checkers checks alerting scheduling dags

bench: $(STAMP)
	$(PY) -m benchmarks.run

clean:
	rm -rf $(VENV) .dq .pytest_cache .mypy_cache .ruff_cache
