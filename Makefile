# The two commands of the README, and their parts.
#   make demo   install, bring the local stack up, run the pipeline on a corpus burst
#   make test   install, bring the local stack up, run the whole test suite
VENV   ?= .venv
PYTHON ?= python3.11
SLUICE := $(VENV)/bin/sluice

.PHONY: demo test install up down status lint

$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

up: install
	$(SLUICE) stack up

down:
	$(SLUICE) stack down

status:
	$(SLUICE) stack status

demo: up
	$(SLUICE) demo

test: up
	$(VENV)/bin/pytest

lint: install
	$(VENV)/bin/ruff check streams tests
	$(VENV)/bin/mypy
