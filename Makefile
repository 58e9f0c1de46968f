# The front door. `make test` and `make demo` do all the set-up on a fresh machine (Python 3.10+, Java 17).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DELTA_VERSION := 3.3.2
SCALA_VERSION := 2.12

.PHONY: test demo lint install jars clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Delta's jars come through spark.jars.packages (cached in ~/.ivy2). If Spark's resolver cannot reach
# Maven Central, fill the local Maven repository (~/.m2), which Spark's resolver also searches, and retry.
jars: $(VENV)/.jars

$(VENV)/.jars: $(VENV)/.installed
	$(PY) -m deltainc.spark --warm || { \
	  mvn -q dependency:get -Dartifact=io.delta:delta-spark_$(SCALA_VERSION):$(DELTA_VERSION) && \
	  mvn -q dependency:get -Dartifact=io.delta:delta-storage:$(DELTA_VERSION) && \
	  $(PY) -m deltainc.spark --warm; }
	touch $@

# Two workers, one SparkSession each; a test file stays on one worker (its module fixtures are built once).
test: lint jars
	$(PY) -m pytest -n 2 --dist loadfile --durations=25

demo: jars
	$(PY) -m deltainc demo

# Formatting, lint rules and strict typing; `make test` (and so CI) runs it first.
lint: install
	$(PY) -m ruff format --check deltainc tests jobs benchmarks
	$(PY) -m ruff check deltainc tests jobs benchmarks
	$(PY) -m mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache spark-warehouse metastore_db derby.log

# Benchmarks (benchmarks/README.md): `make bench` runs the defaults and writes benchmarks/RESULTS.md;
# options pass through ARGS, e.g. `make bench ARGS="--rows-per-day 2000 --days 40"`.
.PHONY: bench
bench: jars
	$(PY) -m benchmarks.run $(ARGS)
