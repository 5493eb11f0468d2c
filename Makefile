# Plain verbs for the development loop. `make test` is what CI runs (.ci/run).
PYTHON ?= python3

.PHONY: help demo install install-test build-dev test test-rust test-python test-slow lint fmt bench

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

demo: ## install, then train on the bundled sample and show what was learned
	$(PYTHON) -m pip install .
	bytebpe train --sample --vocab-size 4096 -o sample-tokenizer.json

install: ## build and install the wheel
	$(PYTHON) -m pip install .

install-test: ## install the package (editable) with everything the tests need
	$(PYTHON) -m pip install -e '.[test]'

build-dev: ## rebuild the native module (editable install) after Rust changes
	$(PYTHON) -m pip install -e . --no-deps --no-build-isolation

test: install-test test-rust test-python ## install test dependencies, run every test

test-rust:
	cargo test

test-python:
	$(PYTHON) -m pytest

test-slow: install-test ## the long runs (marked slow), not part of `make test`
	$(PYTHON) -m pytest -m slow

lint: ## formatting and lints, Rust and Python, and the native module's stubs
	$(PYTHON) -m pip install -e '.[lint]'
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	$(PYTHON) -m ruff check python tests benches tools
	$(PYTHON) -m mypy.stubtest bytebpe._bytebpe

fmt:
	cargo fmt
	$(PYTHON) -m ruff format python tests benches tools

bench: ## train bytebpe and the anchors side by side (see benches/README.md)
	$(PYTHON) -m pip install -e '.[bench]'
	$(PYTHON) benches/train_compare.py
