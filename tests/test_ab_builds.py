"""benches/ab_builds.py: two builds alternated, their ratio per round, and a stop when
they answer differently. The builds here are small scripts that print an example's line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benches" / "ab_builds.py"


def fake_build(path: Path, hash_: str, mb_s: str) -> str:
    """A build printing encode_profile's line with this ids hash and speed, and logging
    each run (its own name) to `runs.log` beside it, so the order can be checked."""
    path.write_text(
        "#!/bin/sh\n"
        f'echo "{path.name}" >> "{path.parent / "runs.log"}"\n'
        f'echo "warming up"\n'
        f'echo "3 docs, 1.00 MB, 7 tokens, ids hash {hash_}, 0.0{mb_s[0]} s, {mb_s} MB/s"\n'
    )
    path.chmod(0o755)
    return str(path)


def ab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=60
    )


def test_ratio_of_b_over_a_per_round_with_the_order_flipped(tmp_path):
    a = fake_build(tmp_path / "a", "00ff", "40.0")
    b = fake_build(tmp_path / "b", "00ff", "50.0")
    r = ab(a, b, "--rounds", "4", "--args", "x y", "--args", "z")
    assert r.returncode == 0, r.stderr
    assert "x y: A 40, B 50; B/A median 1.250 (1.250-1.250)" in r.stdout
    assert "z: A 40, B 50; B/A median 1.250" in r.stdout
    runs = (tmp_path / "runs.log").read_text().split()
    # Two argument sets a round; the order of the pair flips every round.
    assert runs == ["a", "b", "a", "b", "b", "a", "b", "a"] * 2


def test_one_build_given_twice_runs_twice_a_round(tmp_path):
    # An A/A run shows the machine's noise: both sides must really run.
    a = fake_build(tmp_path / "a", "00ff", "40.0")
    r = ab(a, a, "--rounds", "3", "--args", "x")
    assert r.returncode == 0, r.stderr
    assert "x: A 40, B 40; B/A median 1.000 (1.000-1.000)" in r.stdout
    assert (tmp_path / "runs.log").read_text().split() == ["a"] * 6


def test_builds_that_answer_differently_stop_the_comparison(tmp_path):
    a = fake_build(tmp_path / "a", "00ff", "40.0")
    b = fake_build(tmp_path / "b", "0100", "90.0")
    r = ab(a, b, "--rounds", "3", "--args", "x")
    assert r.returncode == 1
    assert "answer differently" in r.stderr
    assert "ids hash 00ff" in r.stderr and "ids hash 0100" in r.stderr
    assert "B/A" not in r.stdout


def test_a_line_without_the_metric_is_an_error(tmp_path):
    a = fake_build(tmp_path / "a", "00ff", "40.0")
    r = ab(a, a, "--args", "x", "--metric", r"([0-9.]+) merges/s")
    assert r.returncode == 1
    assert "no '([0-9.]+) merges/s' in the last line" in r.stderr


def test_a_failing_build_is_reported_with_its_error(tmp_path):
    a = fake_build(tmp_path / "a", "00ff", "40.0")
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'DOCS must be UTF-8' >&2\nexit 101\n")
    broken.chmod(0o755)
    r = ab(a, str(broken), "--args", "x")
    assert r.returncode == 1
    assert "failed (101)" in r.stderr and "DOCS must be UTF-8" in r.stderr


def test_at_least_one_round(tmp_path):
    a = fake_build(tmp_path / "a", "00ff", "40.0")
    r = ab(a, a, "--args", "x", "--rounds", "0")
    assert r.returncode == 2
    assert "--rounds must be at least 1" in r.stderr
    assert not os.path.exists(tmp_path / "runs.log")
