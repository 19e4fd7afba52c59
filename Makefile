# ALiCT Studio — the two commands a new user needs:
#   make run    set up, start building any missing offline model in the background, start the app
#   make test   set up, build any missing offline model (in the background, beside lint and the tests that need
#               none), run the test suite (with a throw-away PostgreSQL server); prints each phase's time at the end
PYTHON ?= python3
PORT ?= 8501
STAMP := .setup-stamp
TIMED := scripts/timed.sh

.PHONY: run test test-full test-fast lint setup models models-full system-deps browser-deps phases-reset bench clean

$(STAMP): requirements.txt requirements-ray.txt
	@$(TIMED) pip-install $(PYTHON) -m pip install -q -r requirements.txt -r requirements-ray.txt
	@touch $(STAMP)

setup: $(STAMP)

# quick profile of every target that has no usable artefact yet (classifiers, then parser, then mlm)
models: setup
	@$(TIMED) models $(PYTHON) -m alict_core build missing --profile quick

# the app starts at once; in the background (niced, so the app stays responsive): classifiers, then the quick
# parser and MLM, then the full profile (hours on 2 cores). The sidebar ("About models") shows each build's
# progress and ETA; model loads prefer full > quick > legacy and switch when a better artefact lands.
run: setup
	@mkdir -p out
	@echo "Building missing offline models in the background (log: out/build.log); pages say what is still missing."
	@nohup nice -n 10 sh -c '$(PYTHON) -m alict_core build missing --profile quick && $(PYTHON) -m alict_core build missing --profile full' > out/build.log 2>&1 &
	$(PYTHON) -m streamlit run app.py --server.port $(PORT) --server.headless true

# the quality profile the docs report (parser test F1 >= 0.85, MLM top-1 >= 33 %)
models-full: setup
	$(PYTHON) -m alict_core build missing --profile full
	$(PYTHON) -m alict_core build --report

# Debian packages the tests use: chromium (browser tests), PostgreSQL (review store; scripts/with_postgres.sh)
SYSTEM_PACKAGES = $$(command -v chromium >/dev/null 2>&1 || echo chromium chromium-driver) \
	$$(ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || echo postgresql)
system-deps:
	@$(TIMED) system-deps sh -c 'set -- $(SYSTEM_PACKAGES); [ $$# -eq 0 ] || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$$@" >/dev/null) || \
	  echo "not installed: $$* (their tests will be skipped)"'
browser-deps: system-deps

# ruff (pyflakes, import order, bugbear) and mypy on alict_core; settings in pyproject.toml
lint: setup
	@$(TIMED) ruff $(PYTHON) -m ruff check .
	@$(TIMED) mypy $(PYTHON) -m mypy

phases-reset:
	@mkdir -p out && rm -f out/phases.tsv && date +%s > out/started

PYTEST_ARGS ?=  # e.g. make test PYTEST_ARGS="-x" (extra pytest options)

# the default suite: every test except the exhaustive `slow_full` ones (make test-full). The quick build of any
# missing model runs in the background beside lint, system packages and the tests that need no built model;
# the `slow` tests follow once it is done (scripts/test_suite.sh)
test: phases-reset setup
	@scripts/test_suite.sh $(PYTHON) "not slow_full" $(PYTEST_ARGS)

# everything, including the exhaustive checks marked slow_full (every LC, every seed count; nightly)
test-full: phases-reset setup
	@scripts/test_suite.sh $(PYTHON) "" $(PYTEST_ARGS)

test-fast: setup
	scripts/with_postgres.sh $(PYTHON) -m pytest -q -m "not slow"

bench: setup
	$(PYTHON) benchmarks/seeds.py

clean:
	rm -rf out .pytest_cache $(STAMP)
