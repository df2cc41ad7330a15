# Two commands matter:
#   make demo   profile a small model into $(LOGDIR) and open it in TensorBoard
#   make test   every test: Python (with the browser tests), a benchmark smoke run, frontend
# Both set up .venv themselves and are quick when run again (see scripts/ensure_venv.sh).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PORT ?= 6006
LOGDIR ?= demo_logdir

VENV_PYTHON := $(VENV)/bin/python
BUNDLE := tb_plugin/static/index.js
# Everything the bundle is built from; node_modules and build output excluded.
FRONTEND_SOURCES := $(shell find frontend \( -name node_modules -o -name dist -o -name generated \) -prune -o -type f -print 2>/dev/null)

export PYTHON VENV

.PHONY: help demo test venv-demo venv-test system-deps frontend pytest bench-smoke frontend-test

help:
	@echo "make demo   profile a small model into \$$LOGDIR (default demo_logdir) and serve it"
	@echo "            with TensorBoard on 127.0.0.1:\$$PORT (default 6006)"
	@echo "make test   run every test: pytest (browser tests included), a benchmark smoke run,"
	@echo "            the frontend's tests and type check"

# --- demo -----------------------------------------------------------------------------

demo: venv-demo frontend
	@if $(VENV_PYTHON) scripts/logdir_has_runs.py "$(LOGDIR)"; then \
	    echo "demo: $(LOGDIR) already holds runs; not profiling again (remove it to start over)"; \
	else \
	    $(VENV)/bin/profscope demo --logdir "$(LOGDIR)"; \
	fi
	@echo
	@echo "Profscope: open http://127.0.0.1:$(PORT)/#profscope   (Ctrl+C stops TensorBoard)"
	@echo
	$(VENV)/bin/tensorboard --logdir "$(LOGDIR)" --host 127.0.0.1 --port "$(PORT)"

venv-demo:
	@bash scripts/ensure_venv.sh torch

# --- test -----------------------------------------------------------------------------

SKIP_REPORT := $(VENV)/pytest-skips.txt

test: venv-test system-deps frontend pytest bench-smoke frontend-test
	@cat "$(SKIP_REPORT)"
	@echo "make test: all passed"

venv-test:
	@bash scripts/ensure_venv.sh test,torch,cluster

system-deps:
	@bash scripts/install_system_deps.sh

# pytest exits 5 when it collected no test: that is a failure here, like any other
# non-zero code. The skip count and reasons are printed again at the very end of `make test`
# (only what a user may lack, such as PaddlePaddle, may skip). PROFSCOPE_REQUIRE_E2E turns a missing browser into a failure instead of
# a skip, so the browser tests cannot silently stop running; PROFSCOPE_REQUIRE_COLUMNAR does the same for the decoder's C
# module (tb_plugin/ingest/chrome/_columnar.c, built by the install when a C compiler is there).
pytest: venv-test system-deps frontend
	@rm -f "$(SKIP_REPORT)"; status=0; \
	PROFSCOPE_SKIP_REPORT="$(SKIP_REPORT)" PROFSCOPE_REQUIRE_E2E=1 PROFSCOPE_REQUIRE_COLUMNAR=1 $(VENV_PYTHON) -m pytest tests/ -ra --durations=10 || status=$$?; \
	if [ "$$status" -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit "$$status"

bench-smoke: venv-test system-deps frontend
	@echo "bench: ingest smoke run"
	$(VENV_PYTHON) bench/bench_ingest.py --sizes 20 --repeat 1
	@echo "bench: trace viewer smoke run"
	$(VENV_PYTHON) bench/bench_trace_frontend.py --events 200000
	@echo "bench: parse job smoke run"
	$(VENV_PYTHON) bench/bench_parse.py --events 200000 --repeat 1
	@echo "bench: jobs of many ranks smoke run (packs in a real tensorboard, cross-rank answers, ingest engines)"
	$(VENV_PYTHON) bench/bench_cluster.py --ranks 16 --steps 2 --collectives 10 --summary-ranks 50 --summary-steps 4 --summary-collectives 20 --engine-mb 2 --engine-files 2 --repeat 1
	@echo "bench: efficiency routes smoke run (operators with their efficiency columns, roofline)"
	$(VENV_PYTHON) bench/bench_roofline.py --size-mb 20 --repeat 1
	@echo "bench: long texts smoke run (a huge event name, a long header before the events)"
	$(VENV_PYTHON) bench/bench_long_texts.py --name-mb 4 --header-mb 1 --repeat 1
	@echo "bench: memory snapshot smoke run"
	$(VENV_PYTHON) bench/bench_snapshot.py --entries 50000 --repeat 1
	@echo "bench: end-to-end smoke run (a real tensorboard, cold and warm)"
	$(VENV_PYTHON) bench/bench_e2e.py --events 100000 --repeat 1 --windows 10 --timeout 300

frontend-test: frontend
	@for script in test typecheck; do \
	    if node -e 'const s = require("./frontend/package.json").scripts || {}; process.exit(s[process.argv[1]] ? 0 : 1)' "$$script"; then \
	        echo "frontend: npm run $$script"; \
	        (cd frontend && npm run --silent "$$script"); \
	    else \
	        echo "frontend: no '$$script' script in frontend/package.json; skipped"; \
	    fi; \
	done

# --- frontend bundle --------------------------------------------------------------------

# pip builds the bundle during the editable install (setup.py); these rules rebuild it
# when the frontend's sources change afterwards, and reinstall node_modules (pinned by
# package-lock.json) when the lock changes or node_modules is gone.
NODE_MODULES_STAMP := frontend/node_modules/.package-lock.json

frontend: $(BUNDLE)

$(NODE_MODULES_STAMP): frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

# The contract is a source too: the answer types are generated from it (frontend/scripts/gen_api_types.mjs).
$(BUNDLE): $(FRONTEND_SOURCES) tb_plugin/api/openapi.yaml | $(NODE_MODULES_STAMP)
	cd frontend && npm run build
	@test -f $(BUNDLE) || { echo "frontend: the build did not produce $(BUNDLE)" >&2; exit 1; }
	@touch $(BUNDLE)  # a build that leaves an unchanged file as it was must not rerun next time
