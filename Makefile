# GPU Classroom. `make run` serves the flagship lesson; `make test` passes the whole suite. Both set everything up.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
HOST    ?= 127.0.0.1
PORT    ?= 8000
CHROMIUM ?= /usr/bin/chromium

.PHONY: run test install install-test lock frontend chromium check lint bench bench-streamlit screenshots clean

run: install frontend                  ## set up, migrate the SQLite database and serve on http://127.0.0.1:8000
	$(BIN)/gpu-classroom migrate
	$(BIN)/gpu-classroom serve --host $(HOST) --port $(PORT)

test: install-test frontend chromium   ## set up and run the whole suite (lessons, ruff, mypy strict, layers, unit, web, e2e, PostgreSQL)
	$(BIN)/gpu-classroom check lessons
	$(BIN)/ruff check app tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -q

install: $(VENV)/.stamp-app            ## the virtualenv with the app

install-test: $(VENV)/.stamp-test      ## the virtualenv with the test extras

# The virtualenvs install the locked versions (the ones the tests passed on, every file's hash checked), then the
# app itself without dependencies.
$(VENV)/.stamp-app: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --require-hashes -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $@

$(VENV)/.stamp-test: pyproject.toml requirements-test.lock $(VENV)/.stamp-app
	$(BIN)/pip install -q --require-hashes -r requirements-test.lock
	touch $@

lock: install-test                     ## re-lock requirements*.lock from pyproject.toml (uv, hashes), keeping the installed versions
	$(BIN)/pip install -q uv
	$(BIN)/pip freeze --exclude-editable | grep -v '^uv==' > .lock-constraints.txt
	for extra in "" test; do out=requirements$${extra:+-$$extra}.lock; \
	  $(BIN)/uv pip compile pyproject.toml $${extra:+--extra $$extra} --generate-hashes --python-version 3.11 \
	    -c .lock-constraints.txt --no-header --no-annotate -q -o $$out || exit 1; done; rm -f .lock-constraints.txt

VENDOR := static/vendor/htmx.min.js static/vendor/swagger-ui-bundle.js static/vendor/swagger-ui.css \
          static/vendor/redoc.standalone.js

frontend: $(VENDOR)                    ## htmx, Swagger UI, ReDoc and axe-core from the npm registry (pinned in package-lock.json)

node_modules/.stamp: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

static/vendor/htmx.min.js: node_modules/.stamp
	mkdir -p static/vendor
	cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js

static/vendor/swagger-ui-bundle.js static/vendor/swagger-ui.css: node_modules/.stamp
	mkdir -p static/vendor
	cp node_modules/swagger-ui-dist/$(notdir $@) $@

static/vendor/redoc.standalone.js: node_modules/.stamp
	mkdir -p static/vendor
	cp node_modules/redoc/bundles/redoc.standalone.js $@

chromium:                              ## a Chromium for Playwright: Debian's package, else Playwright's own
	@if [ -x $(CHROMIUM) ]; then echo "chromium: $(CHROMIUM)"; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; \
	else $(BIN)/playwright install chromium; fi

check: install                         ## validate every lesson
	$(BIN)/gpu-classroom check lessons

lint: install-test                     ## ruff, mypy strict and the layer contract
	$(BIN)/ruff check app tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: install-test frontend           ## print the benchmark figures (engine, widgets, classroom, then Streamlit)
	for b in bench/*.py; do $(BIN)/python $$b; done
	$(MAKE) bench-streamlit

bench-streamlit: .venv-streamlit/.stamp frontend  ## the weight-storage widget against the same widget in Streamlit
	.venv-streamlit/bin/python bench/streamlit/compare.py

.venv-streamlit/.stamp: pyproject.toml  # its own virtualenv: Streamlit is no dependency of the app or its tests
	test -x .venv-streamlit/bin/python || $(PY) -m venv .venv-streamlit
	.venv-streamlit/bin/pip install -q --upgrade pip
	.venv-streamlit/bin/pip install -q -e . streamlit playwright
	touch $@

screenshots: install-test frontend chromium  ## retake docs/screenshots from a fresh server on 127.0.0.1:8766
	d=$$(mktemp -d); GPU_CLASSROOM_DATA_DIR=$$d $(BIN)/gpu-classroom serve --port 8766 & pid=$$!; \
	$(BIN)/python docs/screenshots/take.py --base http://127.0.0.1:8766 --wait 30; rc=$$?; kill $$pid; rm -rf $$d; \
	[ $$rc = 0 ] || exit $$rc; GC_DOCS_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/pytest -q -p no:randomly \
	  tests/e2e/test_room_e2e.py tests/e2e/test_stale_results_e2e.py tests/e2e/test_phone_present_e2e.py

clean:                                 ## remove everything installed or generated
	rm -rf $(VENV) node_modules static/vendor data test-artifacts
