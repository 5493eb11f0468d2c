"""The public API: inputs of every shape, save/load, pickle, threads, fork, Ctrl-C."""

from __future__ import annotations

import os
import pickle
import signal
import textwrap
import threading
import time

import pytest
from bytebpe import Merge, Tokenizer
from bytebpe.sample import sample_documents
from ctrl_c import interrupt_child

DOCS = sample_documents(split="train")[:200]
HELDOUT = sample_documents(split="heldout")[:40]


def train(data, vocab_size=600, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


@pytest.fixture(scope="module")
def tok():
    return train(DOCS, special_tokens=["<|endoftext|>", "<|pad|>"])


def test_vocabulary_layout(tok):
    ranks = tok.mergeable_ranks()
    assert sorted(ranks.values()) == list(range(len(ranks)))
    assert all(ranks[bytes([b])] == b for b in range(256))
    # No byte string twice: every id holds its own bytes, and they map back to it.
    by_id = [tok.decode_single_token_bytes(i) for i in range(len(ranks))]
    assert len(set(by_id)) == len(by_id)
    assert {b: i for i, b in enumerate(by_id)} == ranks
    assert tok.special_tokens == {"<|endoftext|>": 598, "<|pad|>": 599}
    assert tok.vocab_size == 600 == len(ranks) + 2
    merges = tok.merges()
    assert all(isinstance(m, Merge) for m in merges)
    assert [m.count for m in merges] == sorted((m.count for m in merges), reverse=True)
    for m in merges:
        assert tok.token_bytes(m.token) == tok.token_bytes(m.left) + tok.token_bytes(m.right)


def test_roundtrip_text_and_bytes(tok):
    for doc in HELDOUT:
        assert tok.decode(tok.encode(doc)) == doc
    data = b"\xff\xfe valid \xe2\x82 text \xf0\x9f\x98"
    assert tok.decode_bytes(tok.encode_bytes(data)) == data


def test_matches_tiktoken_on_heldout(tok):
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding(
        "bytebpe-test",
        pat_str=tok.pattern,
        mergeable_ranks=tok.mergeable_ranks(),
        special_tokens=tok.special_tokens,
    )
    for doc in HELDOUT:
        assert tok.encode_ordinary(doc) == enc.encode_ordinary(doc)
    text = "a<|endoftext|>b<|pad|>"
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


def test_encode_batch_equals_single(tok):
    assert tok.encode_batch(HELDOUT, num_threads=2) == [tok.encode_ordinary(d) for d in HELDOUT]


def test_save_load_and_pickle(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = Tokenizer.load(path)
    assert loaded == tok
    assert loaded.merges() == tok.merges()
    assert loaded.special_tokens == tok.special_tokens
    assert loaded.pattern == tok.pattern
    clone = pickle.loads(pickle.dumps(tok))
    assert clone == tok
    assert clone.encode(HELDOUT[0]) == tok.encode(HELDOUT[0])


def test_input_shapes_give_identical_merges():
    docs = DOCS[:60]
    base = train(docs).merges()
    assert train(iter(docs)).merges() == base
    assert train([docs[:25], docs[25:]]).merges() == base
    assert train([{"text": d, "id": i} for i, d in enumerate(docs)]).merges() == base
    assert train([{"body": d} for d in docs], text_column="body").merges() == base
    assert train([{"text": docs[:30]}, {"text": docs[30:]}]).merges() == base
    assert train([d.encode() for d in docs]).merges() == base
    assert train([bytearray(d.encode()) for d in docs]).merges() == base
    assert train(docs, buffer_size=7, num_threads=1).merges() == base


def test_datasets_are_accepted():
    datasets = pytest.importorskip("datasets")
    docs = DOCS[:60]
    base = train(docs).merges()
    ds = datasets.Dataset.from_dict({"text": docs, "n": list(range(len(docs)))})
    assert train(ds).merges() == base
    assert train(ds.to_iterable_dataset()).merges() == base
    with pytest.raises(KeyError, match=r"no 'content' column .*\['text', 'n'\]"):
        train(ds, text_column="content")


def test_progress_bars_run(capsys):
    tok = Tokenizer.train_from_iterator(DOCS[:20], 300, progress=True)
    assert tok.vocab_size == 300
    err = capsys.readouterr().err
    assert "counting" in err and "merging" in err


def test_shared_between_threads(tok):
    expected = [tok.encode_ordinary(d) for d in HELDOUT]
    results: dict[int, list] = {}

    def work(i: int) -> None:
        results[i] = [tok.encode_ordinary(d) for d in HELDOUT]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results.values())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_parallel_work_survives_fork(tok):
    expected = tok.encode_batch(HELDOUT, num_threads=2)  # the parent's pool now exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: must not deadlock on the parent's pool
        ok = tok.encode_batch(HELDOUT, num_threads=2) == expected
        ok = ok and train(DOCS[:10], 300).vocab_size == 300
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the forked child hung")
    assert os.read(read, 1) == b"1"


def test_ctrl_c_interrupts_the_merge_loop(tmp_path):
    # The child reports when KeyboardInterrupt reached Python (CLOCK_MONOTONIC is one
    # clock for all processes), so the bound measures the loop noticing Ctrl-C, not the
    # interpreter's exit.
    script = textwrap.dedent(
        """
        import random, time
        from bytebpe import Tokenizer
        rng = random.Random(0)
        words = {"".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=24)): rng.randint(1, 9)
                 for _ in range(300_000)}
        print("ready", flush=True)
        try:
            Tokenizer.train_from_counts(words, 400_000, min_frequency=1, progress=False)
        except KeyboardInterrupt:
            print("caught", time.monotonic(), flush=True)
            raise
        print("finished", flush=True)
        """
    )
    # 1.5 s is well inside the merge loop (it runs for 15 s or more).
    stopped = interrupt_child(script, wait=1.5, timeout=60)
    assert "finished" not in stopped.out
    # The loop checks every 100 ms; the bound leaves room for a loaded CI machine.
    assert stopped.noticed_after < 2.0
    assert "KeyboardInterrupt" in stopped.err
    assert stopped.returncode != 0
