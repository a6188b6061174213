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

.PHONY: install test corpus demo explore bench clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt toolchain/package.json toolchain/package-lock.json toolchain/install.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
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
test: install
	@cd $(CURDIR) && $(BIN)/lint-imports
	@cd $(CURDIR) && $(BIN)/deptry .
	@$(BIN)/python -m pytest -m "not corpus" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

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
	rm -rf $(VENV) .solcx toolchain/node_modules toolchain/openzeppelin-contracts toolchain/pypi example/.build
