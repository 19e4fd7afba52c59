# ALiCT Studio — the two commands a new user needs:
#   make run    set up, start building any missing offline model in the background, start the app
#   make test   set up, build any missing offline model, run the whole test suite
PYTHON ?= python3
PORT ?= 8501
STAMP := .setup-stamp

.PHONY: run test test-fast setup models browser-deps bench clean

$(STAMP): requirements.txt
	$(PYTHON) -m pip install -q -r requirements.txt
	@touch $(STAMP)

setup: $(STAMP)

models: setup
	$(PYTHON) -m alict_core build missing

run: setup
	@mkdir -p out
	@echo "Building missing offline models in the background (log: out/build.log); pages say what is still missing."
	@nohup $(PYTHON) -m alict_core build missing > out/build.log 2>&1 &
	$(PYTHON) -m streamlit run app.py --server.port $(PORT) --server.headless true

browser-deps:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null) || echo "chromium not installed: the browser test will be skipped"

test: setup browser-deps models
	$(PYTHON) -m pytest -q

test-fast: setup
	$(PYTHON) -m pytest -q -m "not slow"

bench: setup
	$(PYTHON) benchmarks/seeds.py

clean:
	rm -rf out .pytest_cache $(STAMP)
