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

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
