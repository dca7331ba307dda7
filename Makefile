# mantle-lsp — every target installs what it needs into .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit venv clean docs-check nvim

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

venv: $(STAMP)

## demo: check the example agents (the valid one passes, the broken one shows its mistakes)
demo: $(STAMP)
	@echo "== examples/telecom (valid) =="
	$(VENV)/bin/mantle-lsp check examples/telecom
	@echo
	@echo "== examples/telecom-broken (planted mistakes; exit status 1 expected) =="
	-$(VENV)/bin/mantle-lsp check examples/telecom-broken

## test: lint, type-check and the whole test suite
test: nvim lint typecheck unit

## nvim: Neovim for the editor end-to-end test (tests/test_nvim.py); apt, as root on CI
nvim:
	command -v nvim >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y neovim)

lint: $(STAMP)
	$(VENV)/bin/ruff check server tests
	$(VENV)/bin/ruff format --check server tests

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest -q

## docs-check: regenerate docs/diagnostics.md from the code registry
docs: $(STAMP)
	$(VENV)/bin/mantle-lsp explain --markdown > docs/diagnostics.md

## oracle: differential test against the engine (rasa-pro 3.21.0 in a cached venv under
## .cache/; not part of `test`): every test fixture and example, engine findings vs ours.
## ORACLE_ARGS passes options to tests/oracle/run_oracle.py (e.g. ORACLE_ARGS=-v)
ORACLE_RASA  := 3.21.0
ORACLE_VENV  := .cache/oracle-venv
ORACLE_PY    := $(ORACLE_VENV)/bin/python
ORACLE_STAMP := $(ORACLE_VENV)/.installed-rasa-pro-$(ORACLE_RASA)
ORACLE_ARGS  ?=

.PHONY: oracle

$(ORACLE_STAMP):
	test -x $(ORACLE_PY) || $(PYTHON) -m venv $(ORACLE_VENV)
	$(ORACLE_PY) -m pip install --quiet --upgrade pip
	$(ORACLE_PY) -m pip install --quiet 'rasa-pro==$(ORACLE_RASA)'
	touch $@

oracle: $(STAMP) $(ORACLE_STAMP)
	LITELLM_LOCAL_MODEL_COST_MAP=True $(PY) tests/oracle/run_oracle.py \
		--engine-python $(ORACLE_PY) $(ORACLE_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
