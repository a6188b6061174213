# Two commands do everything: `make demo` and `make test`. Each installs what it needs on
# first run (Python venv, solc-js/anvil/forge from npm, vyper from PyPI) and nothing twice.
SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export SOLCX_BINARY_PATH := $(CURDIR)/.solcx
export PATH := $(BIN):$(PATH)
PYTEST_ARGS ?=

.PHONY: install test demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt toolchain/package.json toolchain/package-lock.json toolchain/install.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	VENV=$(VENV) bash toolchain/install.sh
	@touch $(STAMP)

# pytest exits 5 when it collected nothing: that is a broken suite, not a pass.
test: install
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

demo: install
	cd example && $(BIN)/ape compile --include-dependencies
	cd example && $(BIN)/ape run deploy --network ethereum:local:test
	@echo "make demo: deployed. Not built yet: verification after deploy against the embedded local explorer."

bench: install
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .solcx toolchain/node_modules example/.build
