# The front door. `make test` and `make demo` do all the set-up on a fresh machine (Python 3.10+, Java 17).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# The tested pyspark / delta-spark pair (docs/reference/versions.md). SPARK_LINE=3.5 with VENV=.venv-spark35 is the
# smoke line; `make smoke-spark35` does exactly that.
SPARK_LINE ?= 4
# The clean virtualenv of `make wheel-check`.
WHEEL_VENV := .venv-wheel
# Airflow's own virtualenv (`make airflow-check`), apart from deltainc's: Airflow is no dependency of deltainc.
AIRFLOW_VENV := .venv-airflow
CONSTRAINTS := constraints/spark-$(SPARK_LINE).txt

.PHONY: setup test smoke-spark35 demo lint docs dist wheel-check airflow-check install jars clean

# `make`: the set-up. .venv with deltainc (editable) and its dependencies, and Delta's jars downloaded once.
setup: jars

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c $(CONSTRAINTS) -e '.[dev]'
	touch $@

# Delta's jars come through spark.jars.packages (cached in ~/.ivy2). If Spark's resolver cannot reach
# Maven Central, fill the local Maven repository (~/.m2), which Spark's resolver also searches, and retry.
jars: $(VENV)/.jars

# $(call warm,FLAGS): start Spark once with the jars FLAGS name; if that fails, fetch them with mvn and start again.
warm = $(PY) -m deltainc.spark --warm $(1) || { \
	  for artifact in $$($(PY) -m deltainc.spark --coordinates $(1)); do mvn -q dependency:get -Dartifact=$$artifact || exit 1; done && \
	  $(PY) -m deltainc.spark --warm $(1); }

$(VENV)/.jars: $(VENV)/.installed
	$(call warm,)
	touch $@

# The suite's workers start with S3A's jars too (tests/pipeline/controller/test_object_storage.py). They are resolved here,
# once, before the workers start: two JVMs resolving at once into Ivy's cache broke each other's downloads on a
# fresh machine (one worker's session never started).
$(VENV)/.jars-s3: $(VENV)/.jars
	$(call warm,--s3)
	touch $@

# A developer's loop: the tests that need nothing or the worker's one Spark session for the engine or one window of a
# job (the tiers `pure` and `spark`, tests/README.md), on two workers as below; a job run over many windows or by many
# commands, and what starts processes or a service (Connect, the cluster, S3), are left to `make test`. No lint and no
# Spark 3.5 smoke here. Its JVMs start from the suite's class-data archive too (`archive`, below: made once per pyspark
# release, then found in ~/.cache/deltainc).
.PHONY: check
check: archive
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "not windows and not processes and not service" $(ARGS)

# Two workers, one SparkSession each; a test file stays on one worker (its module fixtures are built once).
# The whole suite runs on the main line with Spark's default ANSI mode (on), and the smoke subset (-m smoke: the
# seed example, ANSI parity, daily = monthly = one run, a rerun) a second time in the same run with ANSI off, in a
# session of its own (tests/conftest.py); the smoke subset, a kill -9 recovery too, also runs on Spark 3.5.
# The set-up runs three at a time: the two lines' virtualenvs at once (pip keeps one core busy); then lint and the
# class-data archive that the suite's JVMs start from (tests/support/jvm_options.py, once per pyspark release, about 45 s)
# beside the Spark 3.5 smoke; the suite starts as soon as lint and the archive are done, the smoke going on beside
# it (its output kept in a file, printed when it ends: its summary, or all of it if it failed). The suite is
# CPU-bound; side by side the two leave the cores less idle than one after the other.
# Beside the suite, after the smoke, the built wheel is checked in a clean virtualenv (wheel-check, below), then the
# Airflow 3 recipes run under a real Airflow (airflow-check, below).
test:
	$(MAKE) -j3 suite beside-suite

.PHONY: suite archive install-spark35 smoke-after-jars beside-suite chromium
suite: lint docs archive chromium
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=25

archive: $(VENV)/.jars-s3
	$(PY) tests/support/jvm_options.py

# The report's browser test (tests/report/test_report_page.py) opens the page in Debian's chromium, driven by the
# playwright package (dev extras) pointed at /usr/bin/chromium; installed once, skipped when present.
chromium:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

install-spark35:
	$(MAKE) install VENV=.venv-spark35 SPARK_LINE=3.5

# The 3.5 smoke once the main line's jars are resolved: two JVMs resolving into Ivy's cache at once can break each
# other's downloads (above).
SMOKE_LOG := .venv-spark35/smoke.log
smoke-after-jars: $(VENV)/.jars-s3 install-spark35
	@echo "the Spark 3.5 smoke runs beside the suite; its output: $(SMOKE_LOG)"
	@$(MAKE) smoke-spark35 > $(SMOKE_LOG) 2>&1 || { cat $(SMOKE_LOG); echo "the Spark 3.5 smoke failed"; exit 1; }
	@echo "the Spark 3.5 smoke: $$(grep -E '[0-9]+ (passed|failed)' $(SMOKE_LOG) | tail -n 1)"

# What runs beside the suite, one after the other: the Spark 3.5 smoke, the wheel check, then the Airflow check
# (their output kept in a file too, printed in full if it fails).
WHEEL_LOG := .venv-wheel.log
AIRFLOW_LOG := .venv-airflow.log
beside-suite: smoke-after-jars
	@$(MAKE) wheel-check > $(WHEEL_LOG) 2>&1 || { cat $(WHEEL_LOG); echo "the wheel check failed"; exit 1; }
	@echo "the wheel check: $$(grep -E "from the wheel" $(WHEEL_LOG) | tail -n 1)"
	@$(MAKE) airflow-check > $(AIRFLOW_LOG) 2>&1 || { cat $(AIRFLOW_LOG); echo "the Airflow check failed"; exit 1; }
	@echo "$$(grep -E "^the Airflow check: " $(AIRFLOW_LOG) | tail -n 1)"

# The Spark 3.5 line (constraints/spark-3.5.txt) in a venv of its own: the smoke subset, ANSI off as 3.5 has it. One
# process, one JVM: two workers took the same wall time (one file holds most of it) and 156-161 busy CPU-s against
# 140-141, which the suite beside it can use.
smoke-spark35:
	$(MAKE) jars VENV=.venv-spark35 SPARK_LINE=3.5
	.venv-spark35/bin/python -m pytest -m smoke -q

demo: jars
	$(PY) -m deltainc demo

# Formatting, lint rules and strict typing; `make test` (and so CI) runs it first.
lint: install
	$(PY) -m ruff format --check deltainc tests jobs benchmarks
	$(PY) -m ruff check deltainc tests jobs benchmarks
	$(PY) -m mypy

# The documentation site (mkdocs.yml, docs/) into site/, not committed; --strict: a broken link or anchor fails.
# `make test` builds it beside lint.
docs: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

# The release's files: dist/deltainc-<version>.tar.gz and dist/deltainc-<version>-py3-none-any.whl (the wheel
# built from the sdist, so a file the sdist leaves out is missing from the wheel too), their metadata checked.
dist: install
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# The wheel as a user installs it: the README's install section run as written in a fresh virtualenv (the wheel and
# only its declared dependencies, the main line's pair pinned by constraints/spark-4.txt, as the README says), then,
# from a folder outside the checkout, `deltainc --version`, the seed example, and `deltainc validate`, `run`, `status`
# and `report` of a small job (tests/tools/wheel_check.py, tests/tools/wheel_smoke.py): a package file left out or a dependency
# a command needs and the wheel does not declare fails here. Two Spark starts (the seed example, the run).
wheel-check: dist
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(PYTHON) tests/tools/wheel_check.py $(WHEEL_VENV)

# The Airflow 3 recipes (docs/production/airflow/) run as written under a real Airflow 3: its own virtualenv, made
# once from constraints/airflow.txt (a few minutes), calling this checkout's deltainc; `airflow dags test` over
# several logical hours of the hourly job, a cleared hour, its rerun, and a run stopped by its execution_timeout
# (tests/tools/airflow_check.py). Several Spark starts, one at a time.
airflow-check: $(VENV)/.jars $(AIRFLOW_VENV)/.installed
	$(PY) tests/tools/airflow_check.py $(AIRFLOW_VENV)

$(AIRFLOW_VENV)/.installed: constraints/airflow.txt
	test -x $(AIRFLOW_VENV)/bin/python || $(PYTHON) -m venv $(AIRFLOW_VENV)
	$(AIRFLOW_VENV)/bin/python -m pip install -q -c constraints/airflow.txt apache-airflow apache-airflow-providers-standard
	touch $@

clean:
	rm -rf $(VENV) .venv-spark35 $(WHEEL_VENV) $(AIRFLOW_VENV) dist site .pytest_cache .mypy_cache .ruff_cache spark-warehouse metastore_db derby.log

# Benchmarks (benchmarks/README.md): `make bench` runs the defaults and writes benchmarks/results/RESULTS.md;
# options pass through ARGS, e.g. `make bench ARGS="--rows-per-day 2000 --days 40"`.
.PHONY: bench
bench: jars
	$(PY) -m benchmarks.run $(ARGS)
