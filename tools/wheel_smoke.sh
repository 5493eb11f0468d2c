#!/usr/bin/env bash
# Installs the built wheel as a user would: into a fresh virtual environment of each
# Python found (the one running `make`, and CPython 3.10 and 3.13 when present: one abi3
# wheel serves them all), with no Rust toolchain on PATH, then trains, encodes,
# decodes, saves, loads and runs the CLI there. Usage: tools/wheel_smoke.sh [DIST_DIR]
set -euo pipefail
dist="${1:-dist}"
shopt -s nullglob
wheels=("$dist"/bytebpe-*.whl)
if [ "${#wheels[@]}" -ne 1 ]; then
    echo "wheel_smoke: expected exactly one bytebpe wheel in $dist, found ${#wheels[@]}" >&2
    exit 1
fi
wheel="$(cd "$(dirname "${wheels[0]}")" && pwd)/$(basename "${wheels[0]}")"
case "$wheel" in
    *-abi3-*) ;;
    *) echo "wheel_smoke: $wheel is not an abi3 wheel" >&2; exit 1 ;;
esac

# Interpreters: $PYTHON (default python3), plus python3.10 (the oldest the abi3 wheel
# supports) and python3.13 when present.
pythons=("${PYTHON:-python3}")
for version in 3.10 3.13; do
    found=""
    if command -v "python$version" >/dev/null 2>&1 && "python$version" -c "" >/dev/null 2>&1; then
        found="python$version"
    elif command -v pyenv >/dev/null 2>&1; then  # installed by pyenv, not the active one
        for candidate in "$(pyenv root)"/versions/"$version".*/bin/"python$version"; do
            if [ -x "$candidate" ]; then found="$candidate"; fi
        done
    fi
    if [ -n "$found" ]; then pythons+=("$found"); fi
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A PATH without cargo/rustc (rustup's ~/.cargo/bin), so nothing can be compiled.
clean_path="$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e '\.cargo' -e rustup | paste -sd: -)"

for python in "${pythons[@]}"; do
    version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    venv="$work/venv-$version"
    "$python" -m venv "$venv"
    PATH="$venv/bin:$clean_path" "$venv/bin/python" -m pip install --quiet \
        --disable-pip-version-check "$wheel"
    (cd "$work" && PATH="$venv/bin:$clean_path" "$venv/bin/python" - <<'PY'
import os
import shutil
import sys
import warnings

warnings.simplefilter("error")

assert shutil.which("cargo") is None and shutil.which("rustc") is None, "Rust is on PATH"
import bytebpe
from bytebpe import Tokenizer, _bytebpe

assert bytebpe.__file__.startswith(sys.prefix), bytebpe.__file__
assert _bytebpe.__file__.endswith(".abi3.so"), _bytebpe.__file__
docs = ["hello world, hello bytebpe"] * 50 + ["def f(x):\n    return x\n"] * 20
tok = Tokenizer.train_from_iterator(docs, 270, special_tokens=["<|endoftext|>"], progress=False)
ids = tok.encode("hello world<|endoftext|>", allowed_special="all")
assert tok.decode(ids) == "hello world<|endoftext|>"
assert tok.decode_bytes(tok.encode_bytes(b"\xff raw")) == b"\xff raw"
# Id lists share one int per id, counted in place above 256; small ints (immortal from
# 3.12, their count fixed) are left to the interpreter. Counts are compared by position
# (a dict keyed by id would hold the ints), and on 3.10/3.11 only above 256 (a small
# int's count moves with any use of it).
text = "hello world, hello bytebpe " * 20
ids = tok.encode_ordinary(text)
shared = {i: ids[ids.index(i)] for i in set(ids)}
order = sorted(i for i in shared if i > 256 or sys.version_info >= (3, 12))
assert min(shared) <= 256 < max(shared) and order, sorted(shared)
def counts():
    return [sys.getrefcount(shared[i]) for i in order]
before = counts()
held = [tok.encode_ordinary(text) for _ in range(5)] + tok.encode_batch([text] * 5)
assert all(h == ids for h in held)
during = counts()
want = [n + (10 * ids.count(i) if i > 256 else 0) for n, i in zip(before, order)]
assert during == want, (order, before, during)
del held
assert counts() == before
tok.save("t.json")
assert Tokenizer.load("t.json") == tok
print(f"wheel ok on Python {sys.version.split()[0]}: {os.path.basename(_bytebpe.__file__)}, "
      f"bytebpe {bytebpe.__version__}")
PY
    )
    (cd "$work" && PATH="$venv/bin:$clean_path" bytebpe train --sample --vocab-size 300 \
        --no-progress --show 0 -o "$work/sample.json" >/dev/null)
    echo "wheel ok: bytebpe CLI on Python $version"
done
