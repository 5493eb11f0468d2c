"""Thread counts are bounded with a clear error, in the facade and in the core."""

from __future__ import annotations

import bytebpe
import pytest
from bytebpe import Tokenizer


@pytest.mark.parametrize("threads", [1025, 5000, 10_000, 2**63])
def test_too_many_threads_is_a_clear_error(threads):
    with pytest.raises(ValueError, match=rf"num_threads={threads} .*at most 1024"):
        Tokenizer.train_from_iterator(["hello world"] * 10, 260, num_threads=threads, progress=False)
    tok = Tokenizer.train_from_iterator(["hello world"] * 10, 260, progress=False)
    with pytest.raises(ValueError, match=rf"num_threads={threads}"):
        tok.encode_batch(["a"], num_threads=threads)


@pytest.mark.parametrize("threads", [0, 1025, 10_000, 2**63])
def test_core_refuses_thread_counts_out_of_range(threads):
    core = bytebpe._bytebpe.CoreTokenizer.from_merges("gpt2", [], [])
    with pytest.raises(ValueError, match=rf"num_threads={threads} is out of range"):
        core.encode_batch(["a"], threads)
    with pytest.raises(ValueError, match=rf"num_threads={threads} is out of range"):
        bytebpe._bytebpe.WordCounter("gpt2", [], threads)


def test_many_thread_counts_reuse_pools():
    tok = Tokenizer.train_from_iterator(["hello world"] * 10, 260, progress=False)
    for threads in range(1, 30):
        assert tok.encode_batch(["a b"], num_threads=threads) == [tok.encode("a b")]
    # At most a few pools of at most 29 threads are alive, not 435 threads.
    with open("/proc/self/status") as status:
        alive = next(int(line.split()[1]) for line in status if line.startswith("Threads:"))
    assert alive < 300
