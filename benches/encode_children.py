"""Running `encode_one.py` children for encode_compare.py: one at a time, or two at
once with their timed loops started together, each answering with one JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# Bound on a run of two single-thread children at once (each takes seconds to a minute).
PAIR_TIMEOUT_S = 900


def encode_one_command(cmd_args: list[str]) -> list[str]:
    return [sys.executable, str(HERE / "encode_one.py"), *cmd_args]


def child_result(returncode: int, stdout: str, stderr: str, load: float) -> dict:
    """The JSON line a child printed last, or an error naming its last stderr line."""
    lines = stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        err = [line for line in stderr.strip().splitlines() if line.strip()] or ["(no output)"]
        out = {"error": f"exit {returncode}: {err[-1][:200]}"}
    if returncode and "error" not in out:
        out["error"] = f"exit {returncode}"
    out["load1"] = load
    return out


def run_child(cmd_args: list[str], env: dict, timeout: float | None) -> dict:
    cmd = encode_one_command(cmd_args)
    load = os.getloadavg()[0]
    try:
        p = subprocess.run(
            cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout: killed after {timeout:g} s", "timeout": True, "load1": load}
    return child_result(p.returncode, p.stdout, p.stderr, load)


def run_pair(cmd_args: list[str], env: dict, barrier: Path, timeout: float) -> dict:
    """Two single-mode children at once, their timed loops started together (they meet in
    the empty directory `barrier`): both children's bytes over the wall time until the
    later one finished, as "mb_s", so it compares with one child alone as a batch call's
    throughput does (the machine's own ceiling for running the work twice)."""
    barrier.mkdir()
    cmd = encode_one_command([*cmd_args, "--barrier", str(barrier)])
    load = os.getloadavg()[0]
    procs = [
        subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
        )
        for _ in range(2)
    ]
    runs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            runs.append({"error": f"timeout: killed after {timeout:g} s"})
            continue
        runs.append(child_result(p.returncode, out, err, load))
    if failed := [r["error"] for r in runs if "error" in r]:
        return {"error": failed[0], "load1": load}
    starts = [r["started_epoch"] for r in runs]
    ends = [s + r["wall_s"] for s, r in zip(starts, runs)]
    wall = max(ends) - min(starts)
    return {
        "mb_s": round(sum(r["bytes"] for r in runs) / 1e6 / wall, 3),
        "wall_s": round(wall, 4),
        "walls_s": [r["wall_s"] for r in runs],
        "start_gap_ms": round(1e3 * (max(starts) - min(starts)), 2),
        "load1": load,
    }
