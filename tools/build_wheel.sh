#!/usr/bin/env bash
# Builds the release wheel into DIST with profile-guided optimization: the native module
# is built once instrumented (-Cprofile-generate), runs tools/pgo_workload.py (training
# and encoding on the bundled sample corpus), and is built again from the merged profile
# (-Cprofile-use). Merging needs llvm-profdata of rustc's own LLVM major version: found on
# PATH, in /usr/lib/llvm-N, or in rustup's llvm-tools, else installed from Debian
# (llvm-N, with apt-get) when that is possible. Without one, or with BYTEBPE_PGO=0, the
# wheel is built once, without a profile, and this says so.
# Usage: tools/build_wheel.sh DIST   (PYTHON: the interpreter with maturin; default python3)
set -euo pipefail
dist="${1:?usage: tools/build_wheel.sh DIST}"
python="${PYTHON:-python3}"
cd "$(dirname "$0")/.."
repo="$(pwd)"

plain_build() {
    echo "build_wheel: $1; building without a profile" >&2
    "$python" -m maturin build --release --out "$dist"
    exit 0
}

if [ "${BYTEBPE_PGO:-1}" = 0 ]; then
    plain_build "BYTEBPE_PGO=0"
fi
major="$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')"
find_profdata() {
    local sysroot candidate
    sysroot="$(rustc --print sysroot)"
    for candidate in "$(command -v "llvm-profdata-$major" || true)" \
        "/usr/lib/llvm-$major/bin/llvm-profdata" \
        "$sysroot"/lib/rustlib/*/bin/llvm-profdata; do
        if [ -x "$candidate" ] && "$candidate" --version 2>/dev/null | grep -q "LLVM version $major\."; then
            echo "$candidate"
            return
        fi
    done
}
profdata="$(find_profdata)"
if [ -z "$profdata" ] && command -v apt-get >/dev/null; then
    echo "build_wheel: installing llvm-$major (llvm-profdata for rustc's LLVM $major) with apt-get" >&2
    bash tools/apt_install.sh "llvm-$major" >/dev/null || true
    profdata="$(find_profdata)"
fi
if [ -z "$profdata" ]; then
    plain_build "no llvm-profdata of LLVM $major (rustc's) found or installable"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Its own target directory: the instrumented build does not evict the release one.
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$work/profiles" CARGO_TARGET_DIR="$work/target" \
    "$python" -m maturin build --release --out "$work/instrumented"
rm -rf "$work/profiles"  # the build scripts' own runs
"$python" -m zipfile -e "$work"/instrumented/bytebpe-*.whl "$work/package"
# From outside the repository, so the unpacked wheel is the bytebpe imported.
(cd "$work" && PYTHONPATH="$work/package" "$python" "$repo/tools/pgo_workload.py")
"$profdata" merge -o "$work/merged.profdata" "$work/profiles"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$work/merged.profdata" \
    "$python" -m maturin build --release --out "$dist"
echo "build_wheel: built with the profile of tools/pgo_workload.py (llvm-profdata: $profdata)" >&2
