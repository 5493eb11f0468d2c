"""Training in forked children after the parent trained: never hangs (Rayon's global pool
does not survive fork; every parallel call runs on the project's fork-safe pool)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time

import pytest
from bytebpe import Tokenizer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork on Linux")

# Enough distinct words (letters only: the pattern splits digits off) for the parallel
# sorts to split work across threads.
def _word(n: int) -> str:
    letters = []
    while n:
        n, r = divmod(n, 26)
        letters.append(chr(97 + r))
    return "".join(letters)


DOCS = [" ".join(_word(i * 7 + j + 1000) for j in range(7)) for i in range(3000)] * 2


def merges() -> list[bytes]:
    tok = Tokenizer.train_from_iterator(DOCS, 300, num_threads=2, progress=False)
    return [tok.decode_bytes([i]) for i in range(256, tok.vocab_size)]


def test_train_in_forked_children_after_parent_trained():
    expected = merges()  # the parent's pools and Rayon's global pool now exist
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os._exit(0 if merges() == expected else 1)
            except BaseException:
                os._exit(2)
        children.append(pid)
    deadline = time.monotonic() + 60
    codes = {}
    while len(codes) < len(children) and time.monotonic() < deadline:
        for pid in children:
            if pid not in codes:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    codes[pid] = os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    for pid in children:
        if pid not in codes:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert codes == {pid: 0 for pid in children}, "a forked child hung or trained differently"


def test_multiprocessing_fork_pool_of_trainers():
    expected = merges()
    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(2)
    try:
        result = pool.map_async(_train_one, range(3))
        assert result.get(timeout=60) == [expected] * 3
    finally:
        pool.terminate()
        pool.join()


def _train_one(_: int) -> list[bytes]:
    return merges()
