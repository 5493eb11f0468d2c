"""Batch encoding into lists: the same ids as one call per text, in order, on any thread
count and batch shape; the first failing text is the one reported; Ctrl-C stops it."""

from __future__ import annotations

import sys
import textwrap
import threading

import pytest
from bytebpe import PatternError, Tokenizer
from bytebpe.sample import sample_documents
from ctrl_c import interrupt_child

DOCS = sample_documents(split="heldout")
# Backtracks without end on a run of "a" followed by something else than "b": the regex
# engine gives up (its backtracking limit) on BAD.
PATHOLOGICAL = r"(?:(a+)+\1)+b|\S|\s"
BAD = "a" * 300 + "c"
# Backtracks too, quadratically: slow (tens of ms for SLOW) but it succeeds.
QUADRATIC = r"(a+)+\1b|\S|\s"
SLOW = "a" * 1500 + "c"


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train_from_iterator(sample_documents()[:300], 2000, progress=False)


@pytest.fixture(scope="module")
def picky():
    return Tokenizer.train_from_iterator(["hello world"] * 20, 256, pattern=PATHOLOGICAL, progress=False)


def shapes():
    """Batches of many shapes: empty texts, one huge text among small ones, many tiny
    texts (many per chunk), texts in every order of length."""
    long = "".join(DOCS)[:300_000]
    tiny = [d[:7] for d in DOCS] * 40
    return {
        "empty texts": ["", "", ""],
        "empty among others": ["", DOCS[0], "", DOCS[1], ""],
        "one huge among small": DOCS[:5] + [long] + DOCS[5:40],
        "huge first": [long] + DOCS[:20],
        "huge last": DOCS[:20] + [long],
        "many tiny": tiny,
        "short to long": sorted(DOCS, key=len),
        "long to short": sorted(DOCS, key=len, reverse=True),
        "repeated": [DOCS[3]] * 50,
    }


@pytest.mark.parametrize("shape", list(shapes()))
def test_every_batch_shape_gives_the_ids_of_single_calls_in_order(tok, shape):
    docs = shapes()[shape]
    expected = [tok.encode_ordinary(d) for d in docs]
    for threads in (None, 1, 2, 3, 8):
        assert tok.encode_ordinary_batch(docs, num_threads=threads) == expected, threads
        assert tok.encode_batch(docs, num_threads=threads) == expected, threads


@pytest.mark.parametrize("shape", list(shapes()))
def test_numpy_batches_give_the_ids_of_single_calls_in_order(tok, shape):
    # Texts are read into UTF-8 chunk by chunk while earlier chunks are encoded; non-ASCII
    # texts and bytes among them take other paths through that reading.
    docs = shapes()[shape] + ["déjà vu, naïve café", "日本語のテキスト", b"raw bytes \xc3\xa9"]
    expected = [tok.encode_ordinary(d if isinstance(d, str) else d.decode()) for d in docs]
    eot = tok.vocab_size - 1
    for threads in (None, 1, 2, 3, 8):
        ids, offsets = tok.encode_batch_numpy(docs, num_threads=threads)
        got = [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(docs))]
        assert got == expected, threads
        ids, offsets = tok.encode_batch_numpy(docs, eot=eot, num_threads=threads)
        got = [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(docs))]
        assert got == [e + [eot] for e in expected], threads


def test_more_threads_than_texts(tok):
    for n in range(5):
        docs = DOCS[:n]
        assert tok.encode_ordinary_batch(docs, num_threads=16) == [tok.encode_ordinary(d) for d in docs]


def test_batches_from_several_python_threads_at_once(tok):
    # They share the pool; each gets its own results, in its own order.
    batches = [DOCS[i::4] for i in range(4)]
    expected = [[tok.encode_ordinary(d) for d in b] for b in batches]
    got: dict[int, list[list[int]]] = {}

    def encode(i: int) -> None:
        for _ in range(3):
            got[i] = tok.encode_ordinary_batch(batches[i], num_threads=2)

    threads = [threading.Thread(target=encode, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert [got.get(i) for i in range(4)] == expected


def test_batch_lists_are_independent_objects(tok):
    # Equal texts give equal but separate lists: changing one changes no other.
    first, second = tok.encode_ordinary_batch([DOCS[0], DOCS[0]], num_threads=2)
    assert first == second and first is not second
    first.append(-1)
    assert second == tok.encode_ordinary(DOCS[0])


def test_batch_lists_outlive_the_tokenizer_and_cached_ints_keep_their_counts():
    # The lists hold the tokenizer's shared int objects: each holds a reference of its
    # own (none is lost when the tokenizer goes, none leaks over repeated batches, nor
    # when a batch fails part way).
    own = Tokenizer.train_from_iterator(sample_documents()[:50], 600, progress=False)
    docs = DOCS[:60]
    first = own.encode_ordinary_batch(docs, num_threads=2)
    ints = {id(i): i for ids in first for i in ids if i > 256}
    assert len(ints) > 50
    counts = {k: sys.getrefcount(i) for k, i in ints.items()}
    for _ in range(5):
        assert own.encode_ordinary_batch(docs, num_threads=2) == first
        assert [own.encode_ordinary(d) for d in docs[:5]] == first[:5]
        with pytest.raises(ValueError, match="lone surrogate"):
            own.encode_ordinary_batch([*docs, "\ud800"], num_threads=2)
    assert {k: sys.getrefcount(i) for k, i in ints.items()} == counts
    expected = repr(first)
    del own
    import gc

    gc.collect()
    assert repr(first) == expected


def test_the_core_names_a_batch_item_that_is_not_str(tok):
    # The facade checks types first; the native call refuses them on its own too.
    with pytest.raises(TypeError, match=r"texts\[2\] must be str, not bytes"):
        tok._core.encode_batch(["a", "b", b"c"], 2)


def test_a_lone_surrogate_late_in_a_big_batch_wins_over_an_earlier_failure(picky):
    # Texts are read chunk by chunk while the first chunks are encoded, but all of them
    # are read before any result is taken: a lone surrogate anywhere is reported, as
    # when every text was read up front, before a pattern failure in an earlier text.
    docs = ["hello world " * 200] * 400
    docs[3] = BAD
    docs[390] = "fine \ud800"
    for threads in (1, 2, 4):
        with pytest.raises(ValueError, match=r"texts\[390\] contains a lone surrogate at character 5"):
            picky.encode_ordinary_batch(docs, num_threads=threads)
    docs[390] = "fine"
    with pytest.raises(PatternError, match="failed on document 3:"):
        picky.encode_ordinary_batch(docs, num_threads=2)


def test_a_failing_text_is_reported_by_its_index(picky):
    with pytest.raises(PatternError, match="failed on document 0"):
        picky.encode_ordinary(BAD)
    fine = ["hello", "world " * 50, "", "abc"] * 10
    for k in (0, 1, 17, len(fine)):
        docs = fine[:k] + [BAD] + fine[k:]
        for threads in (1, 2, 4):
            with pytest.raises(PatternError, match=rf"failed on document {k}: .*backtrack"):
                picky.encode_ordinary_batch(docs, num_threads=threads)
    # With several failing texts, the first one in order is reported, whichever thread
    # meets which first; the tokenizer works as before afterwards.
    docs = fine * 3
    for k in (30, 5, 90):
        docs[k] = BAD
    for threads in (1, 2, 4):
        with pytest.raises(PatternError, match="failed on document 5:"):
            picky.encode_ordinary_batch(docs, num_threads=threads)
        assert picky.encode_ordinary_batch(fine, num_threads=threads) == [
            picky.encode_ordinary(d) for d in fine
        ]


def test_a_failing_text_is_reported_by_its_index_in_numpy_batches(picky):
    fine = ["hello", "world " * 50, "", "abc"] * 10
    docs = list(fine)
    for k in (30, 5, 10):
        docs[k] = BAD
    for threads in (1, 2, 4):
        with pytest.raises(PatternError, match="failed on document 5:"):
            picky.encode_batch_numpy(docs, num_threads=threads)
    ids, offsets = picky.encode_batch_numpy(fine, num_threads=2)
    assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(fine))] == [
        picky.encode_ordinary(d) for d in fine
    ]


@pytest.mark.parametrize("shape", ["one huge among small", "many tiny", "long to short"])
def test_allowed_specials_in_a_batch_give_the_ids_of_single_calls(shape):
    # Batches with allowed special tokens run on the pool like ordinary ones; each text
    # is encoded exactly as `encode` with the same rules.
    specials = ["<|endoftext|>", "<|pad|>"]
    tok = Tokenizer.train_from_iterator(DOCS[:200], 1000, special_tokens=specials, progress=False)
    docs = [
        specials[i % 2].join([d, d[: len(d) // 3], ""]) if i % 3 else d
        for i, d in enumerate(shapes()[shape])
    ]
    for allowed in ("all", {"<|pad|>"}, {"<|endoftext|>"}):
        # A special not allowed is encoded as text only where it is not disallowed.
        rules = {"allowed_special": allowed, "disallowed_special": ()}
        expected = [tok.encode(d, **rules) for d in docs]
        assert any(e != tok.encode_ordinary(d) for e, d in zip(expected, docs))
        for threads in (1, 2, 3):
            assert tok.encode_batch(docs, num_threads=threads, **rules) == expected
    with pytest.raises(ValueError, match=r"texts\[2\] contains the special token .<\|endoftext\|>."):
        tok.encode_batch(docs, allowed_special={"<|pad|>"}, num_threads=2)


@pytest.mark.parametrize("k", [0, 2, 39])
def test_a_lone_surrogate_is_reported_by_its_index(tok, k):
    # The core refuses it while reading the texts; the message is check_text's.
    docs = DOCS[:40]
    docs[k] = "ok \u00e9 then \ud800 and more"
    for encode in (
        tok.encode_ordinary_batch,
        tok.encode_batch,
        lambda t, **kw: tok.encode_batch(t, allowed_special="all", **kw),
    ):
        for threads in (1, 2):
            with pytest.raises(ValueError, match=rf"texts\[{k}\] contains a lone surrogate at character 10"):
                encode(docs, num_threads=threads)
    docs[k] = "fine \u00e9"
    assert tok.encode_batch(docs) == [tok.encode_ordinary(d) for d in docs]


def test_ctrl_c_stops_a_batch(tmp_path):
    # Each text costs the pattern about 50 ms, so the batch runs for seconds (chunks of
    # about 1/32 of it on two threads, a fraction of a second each); the child
    # reports when KeyboardInterrupt reached Python (CLOCK_MONOTONIC is one clock for
    # all processes), then encodes another batch to show nothing was left stuck.
    script = textwrap.dedent(
        f"""
        import resource, time
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        from bytebpe import Tokenizer
        tok = Tokenizer.train_from_iterator(["hello world"] * 20, 256,
                                            pattern={QUADRATIC!r}, progress=False)
        slow = [{SLOW!r}] * 200
        print("ready", flush=True)
        try:
            tok.encode_ordinary_batch(slow, num_threads=2)
        except KeyboardInterrupt:
            print("caught", time.monotonic(), flush=True)
            small = ["hello world", "a" * 20 + "c", ""] * 5
            ok = tok.encode_ordinary_batch(small, num_threads=2) == [
                tok.encode_ordinary(t) for t in small]
            print("still works", ok, flush=True)
            raise
        print("finished", flush=True)
        """
    )
    stopped = interrupt_child(script, wait=1.0)  # inside the batch (about 5 s on two threads)
    assert "finished" not in stopped.out, stopped.out
    # Threads stop after the chunk in hand; the bound leaves room for a loaded machine.
    assert stopped.noticed_after < 3.0
    assert "still works True" in stopped.out
    assert "KeyboardInterrupt" in stopped.err
    assert stopped.returncode != 0
