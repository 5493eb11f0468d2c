"""Ctrl-C sent to a child process in the middle of a long call, as a user at a terminal
sends it.

The child's script prints a cue line right before its long call and, when
KeyboardInterrupt reaches Python, `caught <time.monotonic()>`. CLOCK_MONOTONIC is one
clock for all processes, so a test bounds how long the call took to notice Ctrl-C, not
how long the interpreter took to exit.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest

# A runner may start the tests with SIGINT ignored (shells ignore it in background jobs,
# and children inherit that); a user at a terminal has Python's handler. Scripts start
# with this line.
DEFAULT_HANDLER = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


@dataclass(frozen=True)
class Stopped:
    """What the interrupted child printed, and when Ctrl-C was sent."""

    out: str
    err: str
    returncode: int
    sent: float

    @property
    def noticed_after(self) -> float:
        """Seconds from Ctrl-C to KeyboardInterrupt reaching the child's Python code."""
        assert "caught" in self.out, (self.out, self.err)
        return float(self.out.split("caught", 1)[1].split()[0]) - self.sent


def interrupt_child(
    script: str,
    *,
    cue: str = "ready",
    wait: float = 0.5,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> Stopped:
    """Runs `script` in a child, sends it Ctrl-C `wait` seconds after it prints `cue`,
    and returns once it exits (failing the test if it is still running after
    `timeout` seconds)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", DEFAULT_HANDLER + script],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != cue:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the child printed {line!r}, not {cue!r}: {err}")
    time.sleep(wait)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"Ctrl-C did not stop the call within {timeout} s")
    return Stopped(out, err, proc.returncode, sent)
