# Two commands do everything: `make demo` and `make test`. Each installs what it needs on
# first run (Python venv, solc-js/anvil/forge from npm, vyper from PyPI) and nothing twice.
SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export SOLCX_BINARY_PATH := $(CURDIR)/.solcx
# Where vvm (and so ape-vyper) finds the Vyper side venvs toolchain/install.sh makes (0.3.x).
export VVM_BINARY_PATH := $(CURDIR)/.vyper/vvm
export PATH := $(BIN):$(PATH)
PYTEST_ARGS ?=

# The tiers beside the main venv, each made once (stamped) and given the freshly built wheel:
# Python 3.13 (the newest Python eth-ape 0.8 installs on), and the oldest Ape the plugin supports
# on the oldest Python (3.10), installed beside a project's own pins (toolchain/floor_venv.sh).
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
DIST := $(CURDIR)/.dist
WHEEL := $(DIST)/ape_contract_verify-$(VERSION)-py3-none-any.whl
PY313 := $(CURDIR)/.venv-py313
FLOOR := $(CURDIR)/.venv-floor
# Python's own paths and files we lint and format (corpus/ and example/ are projects' sources).
LINTED := ape_contract_verify tests benchmarks $(wildcard toolchain/*.py)
# An installed package's tests run from the repository: `bin/pytest`, not `python -m pytest`,
# which would put the repository's package first instead of the installed wheel's.
INSTALLED_PKG = cd / && $(1)/bin/python -c 'import sys, ape_contract_verify as p; sys.exit(0 if "site-packages" in p.__file__ else f"not the wheel: {p.__file__}")'

.PHONY: install test unit test-py313 test-floor lint typecheck format wheel corpus demo explore bench clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt toolchain/package.json toolchain/package-lock.json toolchain/install.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[explorer,test,typecheck]'
	@# ape-foundry 0.8.12 (the newest) still pins evm-trace<0.3, which eth-ape 0.8.52 raised to >=0.3;
	@# it imports nothing of evm-trace, so it is installed beside Ape without its own pins.
	$(BIN)/python -m pip install --quiet --no-deps -c constraints.txt ape-foundry
	VENV=$(VENV) bash toolchain/install.sh
	@# The explorer pages' browser tests drive Debian's Chromium (no browser download).
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@touch $(STAMP)

# The layer contracts and the declared dependencies first (seconds): a forbidden or undeclared
# import fails the run before any test.
# pytest exits 5 when it collected nothing: that is a broken suite, not a pass.
# ruff (lint, then format) likewise: a finding fails the run.
# The unit tier (tests/unit/) runs in the two tiers below, on the installed wheel: Python 3.13 with
# the newest Ape, Python 3.10 at the floor. Here, once more on 3.11, it would prove the same again;
# only its type check stays (mypy is the main venv's). A PYTEST_ARGS run picks from the whole tree.
MAIN_SUITE = $(if $(PYTEST_ARGS),,tests/engine tests/e2e tests/browser tests/unit/test_typecheck.py)

# The tiers run beside the main suite, their output kept in TIERS_LOG and shown after it: the main
# suite leaves about a quarter of two cores idle (it waits on chains and explorers), and the unit
# tier mostly sleeps (deadlines, stalls). Each tier has its own Ape data folder, so Ape's package
# folder never has two writers (the floor's deploy and the main suite's both install dependencies).
TIERS_LOG := $(CURDIR)/.tiers.log

test: install
	@cd $(CURDIR) && $(BIN)/lint-imports
	@cd $(CURDIR) && $(BIN)/deptry .
	@$(MAKE) --no-print-directory lint typecheck
	@tiers=; if [ -z "$(PYTEST_ARGS)" ]; then \
	  echo "make test: the tiers (make test-py313 test-floor) run beside the main suite; their output follows it"; \
	  $(MAKE) --no-print-directory test-py313 test-floor > $(TIERS_LOG) 2>&1 & tiers=$$!; \
	else echo "make test: PYTEST_ARGS runs a part of the suite and not the tiers (make test-py313 test-floor)"; fi; \
	$(BIN)/python -m pytest -m "not corpus" $(MAIN_SUITE) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; rc=1; fi; \
	if [ -n "$$tiers" ]; then \
	  wait $$tiers; trc=$$?; echo "== make test-py313 test-floor (beside the main suite)"; cat $(TIERS_LOG); \
	  if [ $$trc -ne 0 ]; then echo "make test: a tier failed (its output above)" >&2; [ $$rc -ne 0 ] || rc=$$trc; fi; \
	fi; exit $$rc

# The unit tier alone (tests/unit/: no chain, no compiler process), the edit loop's: under 2 minutes.
# The same tests as `pytest -m unit` (the folder gives the marker: tests/conftest.py).
unit: install
	@$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make unit: pytest collected no tests" >&2; exit 1; fi; exit $$rc

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

# mypy, strict, on the files [tool.mypy] names (the package but server/).
typecheck: install
	$(BIN)/mypy

# What pre-commit does: fix what ruff can, then format (a fix can leave a line to reformat).
format: install
	$(BIN)/ruff check --fix $(LINTED) || true
	$(BIN)/ruff format $(LINTED)

wheel: $(WHEEL)

# setuptools builds in build/ of the tree; the wheel goes to .dist/ (both ignored).
$(WHEEL): pyproject.toml README.md LICENSE $(shell find ape_contract_verify -type f -not -path '*/__pycache__/*') | install
	@rm -rf $(DIST) && mkdir -p $(DIST)
	$(BIN)/python -m pip wheel --quiet --no-deps -w $(DIST) .
	@rm -rf build

# Python 3.13: eth-ape 0.8 holds numpy<2, which has no wheel for 3.13; pip builds numpy 1.26.4
# once (minutes; pip keeps the wheel it built). The other pins are the main venv's. The tiers' pip
# byte-compiles nothing (--no-compile): of the ~6,400 files it would (18 CPU-s a venv), the tests
# import a part, and Python compiles those as they are imported.
$(PY313)/.installed: pyproject.toml constraints.txt toolchain/find_python.sh | $(WHEEL)
	@python=$$(bash toolchain/find_python.sh 3.13) && rm -rf $(PY313) && $$python -m venv $(PY313)
	$(PY313)/bin/python -m pip install --quiet --no-compile --upgrade pip
	grep -v '^numpy==' constraints.txt > $(PY313)/constraints.txt
	$(PY313)/bin/python -m pip install --quiet --no-compile -c $(PY313)/constraints.txt '$(WHEEL)[test]'
	@touch $@

$(FLOOR)/.installed: pyproject.toml toolchain/find_python.sh toolchain/floor_venv.sh toolchain/floor-project.txt toolchain/pins.py | $(WHEEL)
	bash toolchain/floor_venv.sh $(FLOOR) $(WHEEL)
	@touch $@

# Each tier gets the wheel of this tree (no dependency moves: --no-deps).
$(PY313)/.wheel $(FLOOR)/.wheel: %/.wheel: %/.installed $(WHEEL)
	$*/bin/python -m pip install --quiet --no-compile --no-deps --force-reinstall $(WHEEL)
	@touch $@

# The unit tier is tests/unit/ (the folder gives the marker): named, so the other folders' modules
# are not imported only to be deselected (1.8 CPU-s a tier).
# The type checker is the main venv's (the typecheck extra), not a tier's: its test runs there.
TIER_SKIPS := --ignore=tests/unit/test_typecheck.py
# No worker process: `make test` runs them beside the main suite, which keeps both CPUs busy; a
# worker (even one) collects and imports the suite a second time, beside pytest's own process
# (2.5 CPU-s a tier, benchmarks/suite_cpu.py), and the unit tier mostly waits.
TIER_WORKERS := -n 0

# The unit tier on Python 3.13, the installed wheel's `ape verify` first.
test-py313: export APE_DATA_FOLDER := $(PY313)/ape-data
test-py313: $(PY313)/.wheel
	@$(call INSTALLED_PKG,$(PY313))
	@cd / && PATH=$(PY313)/bin:$$PATH $(PY313)/bin/ape verify --help >/dev/null
	PATH=$(PY313)/bin:$$PATH $(PY313)/bin/pytest -m unit tests/unit -p no:cacheprovider $(TIER_SKIPS) $(TIER_WORKERS)

# The unit tier at the floor, and the example deployed with auto on and every contract verified.
test-floor: export APE_DATA_FOLDER := $(FLOOR)/ape-data
test-floor: $(FLOOR)/.wheel
	@$(call INSTALLED_PKG,$(FLOOR))
	@cd / && PATH=$(FLOOR)/bin:$$PATH $(FLOOR)/bin/ape verify --help >/dev/null
	PATH=$(FLOOR)/bin:$$PATH $(FLOOR)/bin/pytest -m unit tests/unit -p no:cacheprovider $(TIER_SKIPS) $(TIER_WORKERS)
	PATH=$(FLOOR)/bin:$$PATH $(FLOOR)/bin/pytest -n 0 -p no:cacheprovider \
	  tests/e2e/test_verify_e2e.py::test_ape_run_deploy_verifies_everything_on_the_embedded_explorer

# Published protocols (corpus/: their sources from npm and PyPI, their own compiler settings)
# deployed to anvil and verified every way: minutes each (Morpho Blue's via-IR compiles are the
# slowest), so not in `make test`. CI runs both.
corpus: install
	@$(BIN)/python -m pytest -m corpus $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make corpus: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# The deploy script says nothing about verification: `contract_verify.auto: true` in the
# example's ape-config.yaml makes the plugin verify every deployment on its embedded local
# explorer, beside the script. anvil (ethereum:local:foundry) has traces, so contracts made by
# other contracts (OpenZeppelin's ProxyAdmin) get their constructor arguments from them; a node
# without traces gets them from a replay on a local fork (README: Verifying through a hosted node).
demo: install
	cd example && $(BIN)/ape compile --include-dependencies
	@set -o pipefail; cd example && $(BIN)/ape run deploy --network ethereum:local:foundry 2>&1 | tee .build/demo.log
	@if grep -q "not verified" example/.build/demo.log; then echo "make demo: some contracts were not verified" >&2; exit 1; fi
	@echo "make demo: every deployment verified on the embedded local explorer."

# The demo's run, kept up: anvil and a standalone explorer stay until Ctrl-C, so every link of the
# summary opens the contract's page (http://127.0.0.1:5005/ unless that port is busy).
explore: install
	@$(BIN)/python toolchain/explore.py

bench: install
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(PY313) $(FLOOR) $(DIST) .solcx toolchain/node_modules toolchain/openzeppelin-contracts toolchain/pypi example/.build
