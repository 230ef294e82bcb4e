# The few verbs people need. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
DEMO_ENV := DEBUG=1

.PHONY: demo test test-fast lint format bench bench-load bench-reader serve migrate clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found; run: make PYTHON=python3 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(DEMO_ENV) $(BIN)/python manage.py migrate --noinput -v0
	$(DEMO_ENV) $(BIN)/python manage.py seed_demo $(if $(DEMO_PASSWORD),--password $(DEMO_PASSWORD))
	@echo "Serving on http://127.0.0.1:$(PORT)/  (Ctrl-C to stop)"
	$(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DEBUG=1 $(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python benchmarks/import_bench.py
	$(BIN)/python benchmarks/analysis_bench.py

# Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); about 5 minutes.
bench-load: $(STAMP)
	$(BIN)/python benchmarks/load/run.py --out benchmarks/load/results.json

# Debian's Chromium drives the reading page: Enter -> next case drawn vs a fresh case load.
bench-reader: $(STAMP)
	$(BIN)/python benchmarks/reader_bench.py

clean:
	rm -rf $(VENV) media db.sqlite3 staticfiles artifacts
