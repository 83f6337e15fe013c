# The two commands of the README, and their parts.
#   make demo   install, bring the local stack up, run the pipeline on a corpus burst
#   make test   install, bring the local stack up, run the whole test suite
VENV   ?= .venv
PYTHON ?= python3.11
# Developer tools (local stack, demo, benches) run from the checkout; the wheel does not ship them.
DEV    := $(VENV)/bin/python -m devtools

.PHONY: demo test install up down status lint agents

$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
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

test: up agents
	$(VENV)/bin/pytest

lint: install
	$(VENV)/bin/ruff check streams tests
	$(VENV)/bin/mypy
