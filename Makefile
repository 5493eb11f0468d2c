# Plain verbs for the development loop. `make check` (tests and lints) is what CI runs (.ci/run).
PYTHON ?= python3

.PHONY: help demo install install-test install-browser build-dev wheel install-wheel wheel-smoke check test test-rust test-python test-slow lint lint-checks fmt bench bench-core fuzz

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

wheel: ## build the abi3 wheel (one for every CPython >= 3.10, profile-guided) into dist/
	$(PYTHON) -m pip install --quiet 'maturin>=1.7,<2'
	rm -f dist/bytebpe-*.whl
	PYTHON=$(PYTHON) bash tools/build_wheel.sh dist

# CI compiles once: the wheel it ships is the build the tests run against (installed over
# any editable install, with what the tests and lints need), then the smoke test installs
# the same wheel into fresh environments. The release profile (fat LTO) takes minutes;
# `install-test` (editable) stays the development loop.
install-wheel: wheel ## install the built wheel with everything the tests and lints need
	$(PYTHON) -m pip install "$$(ls dist/bytebpe-*.whl)[test,lint]"
	$(PYTHON) -m pip install --force-reinstall --no-deps dist/bytebpe-*.whl

wheel-smoke: ## install dist/'s wheel in fresh venvs (no Rust on PATH) and smoke-test it
	PYTHON=$(PYTHON) bash tools/wheel_smoke.sh dist

install-browser: ## Debian's chromium + chromedriver for the report's browser tests (apt-get, only if missing)
	bash tools/install_browser.sh

check: install-wheel install-browser test-rust test-python lint-checks wheel-smoke ## what CI runs: every test and lint, on the wheel

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

BENCH_ARGS ?=
bench: ## the whole comparison with the anchors, written to benches/RESULTS.md (over an hour on 2 cores; BENCH_ARGS="--mb 50" took 39 min)
	$(PYTHON) -m pip install -e '.[bench]'
	$(PYTHON) benches/compare.py --write $(BENCH_ARGS)

bench-core: ## criterion benches of the core's hot paths (pre-tokenizer, counting, merges, encoding)
	cargo bench --bench core

fuzz: ## cargo fuzz: splitters against fancy-regex, encode/decode round trips and ids against tiktoken's rule, loading ranks and merge logs (2 min each)
	cargo install cargo-fuzz
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run pretokenize -- -max_total_time=120
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run roundtrip -- -max_total_time=120
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run load_ranks -- -max_total_time=120
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run load_merges -- -max_total_time=120
