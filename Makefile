# The two commands of the README, and their parts.
#   make demo   install, bring the local stack up, run the pipeline on a corpus burst
#   make test   install, bring the local stack up, run the whole test suite
VENV   ?= .venv
PYTHON ?= python3.11
# Developer tools (local stack, demo, benches) run from the checkout; the wheel does not ship them.
DEV    := $(VENV)/bin/python -m devtools
# Versions come from the lock files (hashes included), so every install resolves the same packages.
LOCK_ARGS := --universal --python-version 3.11 --generate-hashes

.PHONY: demo test install up down status lint lock agents

# The native engine (native/, Rust) is built by the editable install where cargo is on the PATH, again
# whenever its sources change; without cargo the install goes on and the Python core runs (docs/native.md).
$(VENV)/.installed: pyproject.toml requirements-dev.lock native/Cargo.toml native/Cargo.lock $(wildcard native/src/*.rs)
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q --require-hashes -r requirements-dev.lock
	$(VENV)/bin/pip install -q --no-deps -e .
	touch $@

install: $(VENV)/.installed

up: install
	$(DEV) stack up

down:
	$(DEV) stack down

status:
	$(DEV) stack status

demo: up
	$(DEV) demo

# The real agents the integration tests run: rsyslog (apt-get) and an OpenTelemetry Collector
# (built once into the stack directory from the Go module proxy).
agents: install
	$(DEV) agents install

# The agents' install (minutes of Go building the collector) runs beside the suite at low priority; the
# tests that run an agent are collected last and wait for it (tests/conftest.py).
test: up
	@nice -n 15 $(DEV) agents install > $(VENV)/agents-install.log 2>&1 & agents=$$!; \
	$(VENV)/bin/pytest; status=$$?; \
	wait $$agents || echo "make test: the agents' install failed, see $(VENV)/agents-install.log"; \
	exit $$status

lint: install
	$(VENV)/bin/ruff check streams tests devtools
	$(VENV)/bin/mypy

# After changing the dependencies in pyproject.toml: resolve again and commit both lock files.
lock: install
	$(VENV)/bin/pip install -q uv
	$(VENV)/bin/uv pip compile pyproject.toml $(LOCK_ARGS) -o requirements.lock
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev $(LOCK_ARGS) -o requirements-dev.lock
