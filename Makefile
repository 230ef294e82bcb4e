# The few verbs people need. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The JavaScript linter (package.json, pinned by package-lock.json) in node_modules/.
NODE_STAMP := node_modules/.installed
PORT ?= 8000
DEMO_ENV := DEBUG=1
# Python writes its bytecode caches (__pycache__/, git-ignored) even where the shell asks it not
# to: without them every process compiles the project again and pytest rewrites every test
# module again (collection 8.7 s -> 4.8 s on a second run; each test worker and subprocess).
unexport PYTHONDONTWRITEBYTECODE
# The task worker (imports, image derivation, the analysis) runs beside the web server and
# stops with it: the shell's EXIT trap ends it once runserver has ended (Ctrl-C).
WITH_WORKER = trap 'kill $$WORKER 2>/dev/null; wait $$WORKER' EXIT INT TERM; \
	$(DEMO_ENV) $(BIN)/python manage.py db_worker --no-reload --interval 0.5 -v0 & WORKER=$$!;

.PHONY: install migrate serve demo demo-pacs test test-js test-python test-fast test-stats coverage fuzz lint \
	format bench bench-roracle bench-load bench-scale bench-viewer bench-reader bench-expert clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found; run: make PYTHON=python3 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

# npm ci installs exactly package-lock.json's versions (node_modules/ is git-ignored).
$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: Node.js >= 20.19 with npm is needed for make lint"; exit 1; }
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

# The local database (db.sqlite3, or DATABASE_URL) brought up to date.
migrate: $(STAMP)
	$(DEMO_ENV) $(BIN)/python manage.py migrate --noinput -v0

# The development server on what is already in the database (no demo data added).
serve: migrate
	@echo "Serving on http://127.0.0.1:$(PORT)/  (Ctrl-C to stop)"
	$(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

demo: migrate
	$(DEMO_ENV) $(BIN)/python manage.py seed_demo $(if $(DEMO_PASSWORD),--password $(DEMO_PASSWORD))
	@echo "Serving on http://127.0.0.1:$(PORT)/ with a task worker beside it (Ctrl-C stops both)"
	$(WITH_WORKER) $(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# The demo with its images in a local PACS: Debian's Orthanc (apt-get install orthanc
# orthanc-dicomweb) on 127.0.0.1:$(PACS_PORT), loaded with the demo radiographs by STOW-RS; the
# demo file is imported through DICOMweb into "ReXVQA demo (PACS)" (study "demo-pacs").
# Orthanc stops when the server does.
PACS_PORT ?= 8043
DEMO_PACS_URL := http://127.0.0.1:$(PACS_PORT)/dicom-web
demo-pacs: migrate
	$(DEMO_ENV) $(BIN)/python manage.py demo_pacs start --port $(PACS_PORT)
	$(DEMO_ENV) DEMO_PACS_PASSWORD=demo-pacs-password $(BIN)/python manage.py seed_demo \
		$(if $(DEMO_PASSWORD),--password $(DEMO_PASSWORD)) --dicomweb $(DEMO_PACS_URL) \
		--dicomweb-user demo --dicomweb-password-env DEMO_PACS_PASSWORD \
		|| { $(DEMO_ENV) $(BIN)/python manage.py demo_pacs stop; exit 1; }
	@echo "Serving on http://127.0.0.1:$(PORT)/  (study demo-pacs; Ctrl-C stops it and the PACS)"
	trap '$(DEMO_ENV) $(BIN)/python manage.py demo_pacs stop; kill $$WORKER 2>/dev/null' EXIT INT TERM; \
		$(DEMO_ENV) $(BIN)/python manage.py db_worker --no-reload --interval 0.5 -v0 & WORKER=$$!; \
		$(DEMO_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Every suite: the JavaScript unit tests first (a second), then the Python suite.
test: test-js test-python

# pytest-xdist workers (0 runs in this process): three on the 2-core machine, because a browser
# test spends most of its time waiting on Chromium, the live server or a timer; with two the
# cores were a third idle (docs/benchmarks.md, "The test suite").
WORKERS ?= 3
PYTEST := $(BIN)/pytest -q -n $(WORKERS) --dist worksteal

# The Python suite (SQLite unless DATABASE_URL is set); PYTEST_ARGS adds options, e.g. -x or -k.
test-python: $(STAMP)
	$(PYTEST) $(PYTEST_ARGS)

# The Python suite without the browser tests: a quicker first answer while working.
test-fast: $(STAMP)
	$(PYTEST) -m "not browser" $(PYTEST_ARGS)

# The statistics library's own tests (tests/stats_tests), without Django or a database: one
# process, seconds. `make test` runs them too. Without pytest-django its ini key
# DJANGO_SETTINGS_MODULE is unknown to pytest, which would warn about it.
test-stats: $(STAMP)
	$(BIN)/pytest -q -p no:django -W ignore::pytest.PytestConfigWarning tests/stats_tests $(PYTEST_ARGS)

# The suite with line coverage of the three apps (pyproject.toml [tool.coverage.run]).
coverage: $(STAMP)
	$(PYTEST) --cov --cov-report=term:skip-covered $(PYTEST_ARGS)

# The pages' JavaScript without a browser (tests/js/*.test.js): Node >= 18, no packages.
NODE ?= node
test-js:
	@command -v $(NODE) >/dev/null 2>&1 || { echo "$(NODE) not found: apt-get install nodejs (or make NODE=/path/to/node)"; exit 1; }
	$(NODE) --test tests/js/

# The property and schema tests with fresh random draws and more examples (CI derandomizes).
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q -m "hypothesis or fuzz"

lint: $(STAMP) $(NODE_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DEBUG=1 $(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/lint-imports
	DEBUG=1 $(BIN)/python tools/check_url_layers.py
	node_modules/.bin/eslint .

format: $(STAMP) $(NODE_STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	node_modules/.bin/eslint --fix .

bench: $(STAMP)
	$(BIN)/python benchmarks/import_bench.py
	$(BIN)/python benchmarks/xlsx_guard_bench.py
	$(BIN)/python benchmarks/analysis_bench.py
	$(BIN)/python benchmarks/uncertainty_bench.py
	$(BIN)/python benchmarks/design_type1_bench.py
	$(BIN)/python benchmarks/simulated_study_bench.py

# The R packages' check at full size: a crossover of 6 readers x 60 X-rays (3-4 questions each)
# made through the commands; MRMCaov and RJafroc (R_LIBS, default /opt/r-oracles) on the
# exported files print the page's aided - unaided. `make test` runs it on 4 readers x 8 X-rays.
bench-roracle: $(STAMP)
	RORACLE_FULL=1 $(BIN)/pytest -q -n 0 -p no:randomly tests/design_tests/test_roracle_acceptance.py

# Headless Debian Chromium; about 2 minutes.
bench-viewer: $(STAMP)
	$(BIN)/python benchmarks/viewer_bench.py

# Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); about 5 minutes.
bench-load: $(STAMP)
	$(BIN)/python benchmarks/load/run.py --out benchmarks/load/results.json

# 2 gunicorn servers + 2 task workers on one PostgreSQL (127.0.0.1:5432, user postgres, trust
# auth) and one Redis (127.0.0.1:6379); 100 readers, a PI, a web server and a worker SIGKILLed.
# About 5 minutes; SCALE_ARGS adds options (e.g. --readers 20 --answers 5, --tasks rq).
bench-scale: $(STAMP)
	$(BIN)/python benchmarks/scale/run.py --out benchmarks/scale/results.json $(SCALE_ARGS)

# Debian's Chromium drives the reading page: Enter -> next case drawn vs a fresh case load.
bench-reader: $(STAMP)
	$(BIN)/python benchmarks/reader_bench.py

# The expert's Enter (save and next) -> next question ready, vs a full review page load.
bench-expert: $(STAMP)
	$(BIN)/python benchmarks/expert_bench.py

clean:
	rm -rf $(VENV) node_modules media db.sqlite3 staticfiles artifacts
