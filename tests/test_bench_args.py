"""The benchmark scripts refuse arguments that would measure nothing, before loading any
corpus or starting any child."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent.parent / "benches"


def run_bench(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCHES / script), *args],
        capture_output=True, text=True, timeout=120, cwd=BENCHES,
    )


@pytest.mark.parametrize("repeats", ["0", "-2"])
def test_phases_needs_at_least_one_repeat(repeats, tmp_path):
    # The corpus does not exist: the check must come before it is read.
    r = run_bench("phases_one.py", "--corpus", str(tmp_path / "absent.jsonl.gz"),
                  "--repeats", repeats)
    assert r.returncode == 2
    assert "--repeats must be at least 1" in r.stderr


def test_compare_refuses_to_skip_every_part(tmp_path):
    r = run_bench("compare.py", "--corpora", str(tmp_path / "absent"),
                  "--skip-train", "--skip-phases", "--skip-encode")
    assert r.returncode == 2
    assert "leave nothing to run" in r.stderr
