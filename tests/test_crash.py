"""Crash safety: training killed with SIGKILL at random moments, then resumed, ends with
exactly the merges of an uninterrupted run. A few kills run by default; many more under
the `slow` marker (`make test-slow`)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from bytebpe import CorruptTokenizerError, StoreError, Tokenizer

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from bytebpe import RunStore, Tokenizer
    from bytebpe.sample import sample_documents
    docs = sample_documents()[:600]
    store = RunStore(sys.argv[1], commit_every=0.01, checkpoint_every=0.01) if sys.argv[1] else None
    tok = Tokenizer.train_from_iterator(docs, 2500, buffer_size=20, progress=False, store=store)
    print(json.dumps(tok.merges()))
    """
)


def run_training(store: str, kill_after: float | None = None) -> list | None:
    """Runs the training script; with `kill_after`, SIGKILLs it after that many seconds
    (returns None if it was killed, the merges if it finished first)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, store], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        out, err = proc.communicate(timeout=kill_after)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        return None
    assert proc.returncode == 0, err.decode()
    return [list(m) for m in json.loads(out)]


@pytest.fixture(scope="module")
def uninterrupted():
    started = time.monotonic()
    merges = run_training("")
    return merges, time.monotonic() - started


def crash_and_resume(tmp_path, uninterrupted, seed: int, kills: int) -> None:
    merges, duration = uninterrupted
    rng = random.Random(seed)
    store = str(tmp_path / f"run-{seed}.sqlite")
    for _ in range(kills):
        finished = run_training(store, kill_after=rng.uniform(0.05, duration * 1.2))
        if finished is not None:
            assert finished == merges
            return
        try:  # whatever survived is a consistent prefix, loadable as a tokenizer
            prefix = Tokenizer.load(store).merges()
            assert [list(m) for m in prefix] == merges[: len(prefix)]
        except FileNotFoundError:
            pass  # killed before the store was created
        except CorruptTokenizerError as e:
            # Only a run killed before the store's first commit; any other refusal (a
            # damaged store, a broken merge log) is a failure.
            assert "is empty" in str(e) or "not a bytebpe run store" in str(e), str(e)
        except StoreError as e:
            # Killed inside that first commit, after its pages spilled to the file: a hot
            # rollback journal (later commits go through the write-ahead log, never a
            # journal), which loading cannot roll back and names; the next run does
            # (tests/test_store.py checks both on such a store made on purpose).
            assert os.path.exists(store + "-journal"), str(e)
            assert "killed mid-transaction" in str(e), str(e)
    assert run_training(store) == merges


@pytest.mark.parametrize("seed", range(3))
def test_kill_and_resume(tmp_path, uninterrupted, seed):
    crash_and_resume(tmp_path, uninterrupted, seed, kills=2)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 130))
def test_kill_and_resume_many(tmp_path, uninterrupted, seed):
    crash_and_resume(tmp_path, uninterrupted, seed, kills=4)
