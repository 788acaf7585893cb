# The documented way to do everything. `make run` and `make test` install what
# they need into .venv themselves.
# The interpreter the venv is made from (override: make PYTHON=...). The
# distribution's python3.11 when it has venv: Debian builds it with
# profile-guided and link-time optimisation, as the python:3.11-slim image
# production runs is built, and it ran the app 10-20% faster than a default
# source build (pyenv's, here): bench/HISTORY.md, annotation, seventh round.
PYTHON ?= $(shell /usr/bin/python3.11 -c "import ensurepip, venv" >/dev/null 2>&1 && echo /usr/bin/python3.11 || echo python3)
VENV ?= .venv
PY := $(VENV)/bin/python
# Two installs: what the app needs to run (`pip install -e .`, for make run,
# web, worker, demo) and the development tools on top (`.[dev]`: pytest,
# Playwright, schemathesis, moto, mypy …; for make test, lint, typecheck).
RUNTIME_STAMP := $(VENV)/.runtime-stamp
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
# The embedded server: one gunicorn worker process with threads (SQLite has
# one writer at a time; threads of one process share its memory) and one
# Celery process (solo pool). Raise THREADS for a bigger team.
THREADS ?= 8
# Chromium for the e2e tests: the system's where there is one.
# Test processes (pytest-xdist): one per core by default, each with its own
# test database and Redis database (tests/conftest.py). TEST_WORKERS=0 runs
# everything in this process.
TEST_WORKERS ?= auto
# Single tests are spread over the workers (--dist load). Not loadscope,
# though it would build each module-scoped fixture once: its scheduler keys
# tests by node id, and schemathesis gives its 57 generated tests one node id
# with the first, so under loadscope they never ran and the xdist guard
# (tests/conftest.py) failed the run (docs/decisions.md, "CI time").
TEST_DIST ?= load
XDIST := -n $(TEST_WORKERS) --dist $(TEST_DIST)
CHROMIUM_PATH ?= $(shell command -v chromium || command -v chromium-browser || true)
export CHROMIUM_PATH

.PHONY: check-trl install install-runtime run web worker migrate demo test test-pg test-sqlite test-fast lint format typecheck bench bench-annotate bench-embedded bench-release bench-agreement bench-curation bench-label-quality clean

$(RUNTIME_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP) clients/python/pyproject.toml
	$(PY) -m pip install --quiet -e ".[dev]"
# The Python client (its own package), with both extras its tests use
# (tests/clients: DataFrames and datasets.Dataset from the exports).
	$(PY) -m pip install --quiet -e "clients/python[pandas,datasets]"
# irrCAC, the independent AC1 of tests/curation/agreement/test_ac1_categories.py: its
# metadata pins scipy==1.12.0 (numpy 1 only), which no install of this project can
# satisfy, while its code runs on the scipy and pandas the dev extra brings; so it
# is installed without its pins, here rather than in the dev extra.
	$(PY) -m pip install --quiet --no-deps "irrCAC==0.4.4"
	@if [ -z "$(CHROMIUM_PATH)" ]; then \
	  $(PY) -m playwright install chromium \
	    || echo "No Chromium: the e2e tests (marked e2e) will be skipped."; \
	fi
	touch $(STAMP)

install-runtime: $(RUNTIME_STAMP)

install: $(STAMP)

migrate: install-runtime
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py seed_demo --url http://$(HOST):$(PORT)/

# The embedded default (SQLite, filesystem broker) as a team uses it for
# weeks: gunicorn serving the app (static files through WhiteNoise) and a
# Celery worker. Ctrl-C stops both.
run: demo
	@$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Triplet Studio: http://$(HOST):$(PORT)/ (gunicorn, $(THREADS) threads; Celery worker). Ctrl-C stops both."
	@$(VENV)/bin/celery -A config worker --pool=solo --loglevel=warning & \
	  worker=$$!; trap "kill $$worker 2>/dev/null" EXIT INT TERM; \
	  $(VENV)/bin/gunicorn config.wsgi --bind $(HOST):$(PORT) --workers 1 \
	    --worker-class gthread --threads $(THREADS) --access-logfile - --log-level warning

# As in production: static files collected (and gzipped) first.
web: install-runtime
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Serving http://$(HOST):$(PORT)/"
	$(VENV)/bin/gunicorn config.wsgi --bind $(HOST):$(PORT) --workers 2 --worker-class gthread --threads 4

worker: install-runtime
	$(VENV)/bin/celery -A config worker --loglevel=info

# Releases as TRL and `datasets` take them: a venv of its own (TRL_VENV, the
# `trl` extra: torch, transformers, TRL, datasets; ~6 GB, ~4-5 min to install)
# and tests/curation/releases/test_trl.py in it (2-step vision DPOTrainer and
# RewardTrainer on tiny models built from configs; ~1 min, nothing downloaded).
TRL_VENV ?= .venv-trl
TRL_STAMP := $(TRL_VENV)/.installed-stamp

$(TRL_STAMP): pyproject.toml
	test -x $(TRL_VENV)/bin/python || $(PYTHON) -m venv $(TRL_VENV)
	$(TRL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(TRL_VENV)/bin/python -m pip install --quiet -e ".[trl]"
	touch $(TRL_STAMP)

check-trl: $(TRL_STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(TRL_VENV)/bin/python -m pytest -p no:cacheprovider \
	  -s -rA tests/curation/releases/test_trl.py

lint: install
	$(VENV)/bin/ruff check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: install
	$(VENV)/bin/mypy annotate curation common config demo
	cd clients/python && $(abspath $(VENV))/bin/mypy --config-file pyproject.toml

# The whole suite, on the database it can have, saying which and why
# (.ci/throwaway-postgres --or-sqlite): the one DATABASE_URL names when it is
# set (CI: .ci/run sets it); else a throw-away PostgreSQL, started for the run
# in a temporary directory and removed after it, when PostgreSQL's server
# binaries are installed (about 2 s to start), so the raw-SQL paths
# (annotate/loop/postgres.py, curation/verdicts/postgres.py) run beside their
# ORM twins; else SQLite, skipping only what needs a server. A test under
# tests/annotate/loop/ skipped on PostgreSQL fails.
test: install
	$(VENV)/bin/ruff check .
	@.ci/throwaway-postgres --or-sqlite $(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# Always a throw-away PostgreSQL (even with DATABASE_URL set); fails when
# PostgreSQL's server binaries are not installed.
test-pg: install
	.ci/throwaway-postgres $(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# Always SQLite (the embedded default), whatever is installed or set.
test-sqlite: install
	@echo "Tests on SQLite: make test-sqlite."
	env -u DATABASE_URL $(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

test-fast: install
	$(PY) -m pytest -x -q -m "not e2e" $(PYTEST_ARGS)

bench: install
	$(PY) bench/import_bench.py

# Annotators over HTTP against gunicorn + PostgreSQL (see bench/README.md).
bench-annotate: install
	$(PY) bench/annotate_bench.py

# The embedded default as `make run` serves it (SQLite, gunicorn, solo
# Celery): a vote's p50/p95/p99 at 1 and 8 annotators, RSS after 15,000 votes.
bench-embedded: install
	$(PY) bench/annotate_bench.py --sqlite --annotators 8 --threads $(THREADS)

# Building releases (5,211 items, then a synthetic 100,000) on PostgreSQL.
bench-release: install
	$(PY) bench/release_bench.py

# Agreement dashboard, point estimates and bootstrap on PostgreSQL.
bench-agreement: install
	$(PY) bench/agreement_bench.py

# Contested queue and adjudication page on PostgreSQL.
bench-curation: install
	$(PY) bench/curation_bench.py

# Label quality (issue 23): simulated truth, then the job in a worker process.
bench-label-quality: install
	$(PY) bench/label_quality_bench.py
	$(PY) bench/label_quality_job_bench.py

clean:
	rm -rf $(VENV) var .pytest_cache
