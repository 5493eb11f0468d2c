# Plain verbs for the development loop. `make check` (tests and lints) is what CI runs (.ci/run).
PYTHON ?= python3

.PHONY: help demo install install-test install-browser build-dev check test test-rust test-python test-slow lint lint-checks fmt bench bench-core fuzz

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

demo: ## install, then train on the bundled sample and show what was learned
	$(PYTHON) -m pip install .
	bytebpe train --sample --vocab-size 4096 -o sample-tokenizer.json

install: ## build and install the wheel
	$(PYTHON) -m pip install .

install-test: ## install the package (editable) with everything the tests and lints need
	$(PYTHON) -m pip install -e '.[test,lint]'

build-dev: ## rebuild the native module (editable install) after Rust changes
	$(PYTHON) -m pip install -e . --no-deps --no-build-isolation

install-browser: ## Debian's chromium + chromedriver for the report's browser tests (apt-get, only if missing)
	bash tools/install_browser.sh

check: install-test install-browser test-rust test-python lint-checks ## what CI runs: every test, then every lint

test: install-test install-browser test-rust test-python ## install test dependencies, run every test

test-rust:
	cargo test

test-python:
	$(PYTHON) -m pytest

test-slow: install-test ## the long runs (marked slow), not part of `make test`
	$(PYTHON) -m pytest -m slow

lint: install-test lint-checks ## formatting and lints, Rust and Python, types, the native module's stubs

lint-checks:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	$(PYTHON) -m ruff check python tests benches tools
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest bytebpe._bytebpe

fmt:
	cargo fmt
	$(PYTHON) -m ruff format python tests benches tools

bench: ## the whole comparison with the anchors, written to benches/RESULTS.md (about an hour)
	$(PYTHON) -m pip install -e '.[bench]'
	$(PYTHON) benches/compare.py --write

bench-core: ## criterion benches of the core's hot paths (pre-tokenizer, counting, merges, encoding)
	cargo bench --bench core

fuzz: ## cargo fuzz: splitters against fancy-regex, encode/decode round trips (2 min each)
	cargo install cargo-fuzz
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run pretokenize -- -max_total_time=120
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run roundtrip -- -max_total_time=120
