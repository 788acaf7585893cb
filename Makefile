# The documented way to do everything. `make run` and `make test` install what
# they need into .venv themselves.
# The interpreter the venv is made from (override: make PYTHON=...). The
# distribution's python3.11 when it has venv: Debian builds it with
# profile-guided and link-time optimisation, as the python:3.11-slim image
# production runs is built, and it ran the app 10-20% faster than a default
# source build (pyenv's, here): bench/README.md, annotation, seventh round.
PYTHON ?= $(shell /usr/bin/python3.11 -c "import ensurepip, venv" >/dev/null 2>&1 && echo /usr/bin/python3.11 || echo python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run web worker migrate demo test test-fast lint format typecheck bench bench-annotate bench-release bench-agreement bench-curation bench-label-quality clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py seed_demo

# Web server and Celery worker together on the embedded default (SQLite,
# filesystem broker). Ctrl-C stops both.
run: demo
	@echo "Starting worker and web server on http://$(HOST):$(PORT)/"
	@DEBUG=$${DEBUG:-true} $(VENV)/bin/celery -A config worker --loglevel=warning --concurrency=1 & \
	  worker=$$!; trap "kill $$worker 2>/dev/null" EXIT INT TERM; \
	  DEBUG=$${DEBUG:-true} $(PY) manage.py runserver $(HOST):$(PORT)

# As in production: static files collected (and gzipped) first.
web: install
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(VENV)/bin/gunicorn config.wsgi --bind $(HOST):$(PORT) --workers 2 --worker-class gthread --threads 4

worker: install
	$(VENV)/bin/celery -A config worker --loglevel=info

lint: install
	$(VENV)/bin/ruff check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: install
	$(VENV)/bin/mypy accounts annotate curation config

# The whole suite. With DATABASE_URL / REDIS_URL set it runs against those
# servers (as .ci/run does); without them on SQLite, skipping only what needs a server.
test: install
	$(VENV)/bin/ruff check .
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: install
	$(PY) -m pytest -x -q -m "not e2e" $(PYTEST_ARGS)

bench: install
	$(PY) bench/import_bench.py

# Annotators over HTTP against gunicorn + PostgreSQL (see bench/README.md).
bench-annotate: install
	$(PY) bench/annotate_bench.py

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
