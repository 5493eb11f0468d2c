"""A batch of documents is counted on all cores in items, while the calling thread reads
the next items as UTF-8: the counts, ledger and fingerprint do not depend on the thread
count or on how documents are batched, and a bad document late in a batch leaves nothing
of the batch counted."""

from __future__ import annotations

import textwrap

import pytest
from bytebpe import PatternError, _bytebpe
from ctrl_c import interrupt_child

# Backtracks without end on a run of "a" not followed by "b": the regex engine gives up.
PATHOLOGICAL = r"(?:(a+)+\1)+b|\S|\s"


def documents() -> list[str | bytes | bytearray]:
    docs: list[str | bytes | bytearray] = []
    for i in range(3000):
        text = f"document {i} says {'word ' * (i % 50)}and ends.\n"
        if i % 5 == 0:
            text += "café 世界 naïve "
        if i % 13 == 0:
            docs.append(text.encode() + b"\xff bad \xc0")
        elif i % 17 == 0:
            docs.append(bytearray(text.encode()))
        else:
            docs.append(text)
    return docs


def state(counter) -> tuple:
    return (
        counter.snapshot(),
        counter.ledger(),
        counter.fingerprint,
        counter.documents,
        counter.distinct_words,
    )


def test_counts_do_not_depend_on_threads_or_batching() -> None:
    docs = documents()
    one_by_one = _bytebpe.WordCounter("cl100k", [], 1)
    for i, doc in enumerate(docs):
        one_by_one.add_batch([doc], i)
    for threads in (1, 2, 4):
        counter = _bytebpe.WordCounter("cl100k", [], threads)
        counter.add_batch(docs[:1234], 0)
        counter.add_batch(docs[1234:], 1234)
        assert state(counter) == state(one_by_one), threads


@pytest.mark.parametrize("threads", [1, 2])
def test_a_lone_surrogate_late_in_a_batch_counts_nothing_of_it(threads: int) -> None:
    docs = documents()
    docs[2900] = "late \ud800 surrogate"
    counter = _bytebpe.WordCounter("cl100k", [], threads)
    counter.add_batch(["kept words"], 0)
    before = state(counter)
    with pytest.raises(UnicodeEncodeError):
        counter.add_batch(docs, 1)
    assert state(counter) == before
    kept = _bytebpe.WordCounter("cl100k", [], threads, True)
    kept.add_batch(docs, 0)
    assert kept.documents == len(docs)
    assert kept.ledger()["lone_surrogates"] == 1


@pytest.mark.parametrize("threads", [1, 2])
def test_a_wrong_type_late_in_a_batch_is_named_and_counts_nothing(threads: int) -> None:
    docs: list = documents()
    docs[2950] = 42
    counter = _bytebpe.WordCounter("cl100k", [], threads)
    counter.add_batch(["kept words"], 0)
    before = state(counter)
    with pytest.raises(TypeError, match="document 2960 is int, expected str or bytes"):
        counter.add_batch(docs, 10)
    assert state(counter) == before


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_document_late_in_a_batch_is_the_first_named(threads: int) -> None:
    docs: list = [f"text {i} " for i in range(3000)]
    docs[2500] = "a" * 300 + "c"
    docs[2800] = "a" * 300 + "c"
    counter = _bytebpe.WordCounter(PATHOLOGICAL, [], threads)
    counter.add_batch(["kept words"], 0)
    before = state(counter)
    with pytest.raises(PatternError, match="document 2501"):
        counter.add_batch(docs, 1)
    assert state(counter) == before


def huge_documents() -> list[str | bytes]:
    """Two documents above the 4 Mi characters from which a document is counted in parts,
    one `str` with non-ASCII text and one `bytes` with invalid UTF-8, among small ones."""
    small = documents()[:60]
    text = "".join(d if isinstance(d, str) else bytes(d).decode("utf-8", "replace") for d in small)
    big = text * (4_300_000 // len(text) + 1)
    return [small[0], big, small[1], big.encode()[:4_500_000] + b"\xff tail \xc0", small[2]]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_huge_document_is_counted_in_parts_as_the_whole(threads: int) -> None:
    # Under a memory limit every document is counted whole; without one, a huge document
    # is cut where it pre-tokenizes as the whole does and its parts are counted on every
    # thread. Counts, ledger and fingerprint are the same.
    docs = huge_documents()
    whole = _bytebpe.WordCounter("cl100k", [], threads, False, None, 64 << 30)
    whole.add_batch(docs, 0)
    parts = _bytebpe.WordCounter("cl100k", [], threads)
    parts.add_batch(docs, 0)
    assert state(parts) == state(whole)
    assert parts.documents == len(docs)


def test_a_huge_document_is_counted_whole_where_cuts_are_not_safe() -> None:
    # A pattern of the caller's own, or a special token holding a space, can make a cut
    # change the pieces: such documents are not cut.
    docs = huge_documents()
    for pattern, specials in ((r"\S+\s*|\s+", []), ("cl100k", ["<|end of text|>"])):
        whole = _bytebpe.WordCounter(pattern, specials, 2, False, None, 64 << 30)
        whole.add_batch(docs, 0)
        counter = _bytebpe.WordCounter(pattern, specials, 2)
        counter.add_batch(docs, 0)
        assert state(counter) == state(whole), pattern


def test_a_lone_surrogate_in_a_huge_document_counts_nothing_of_the_batch() -> None:
    docs = huge_documents()
    docs[1] = docs[1][:3_000_000] + "\ud800" + docs[1][3_000_000:]
    counter = _bytebpe.WordCounter("cl100k", [], 2)
    counter.add_batch(["kept words"], 0)
    before = state(counter)
    with pytest.raises(UnicodeEncodeError):
        counter.add_batch(docs, 1)
    assert state(counter) == before


@pytest.mark.slow
def test_ctrl_c_is_seen_inside_one_huge_document() -> None:
    # One document of 1 GB on one thread counts for seconds; cut in parts of 1 MiB, the
    # call sees Ctrl-C between them (before, only once the whole document was counted).
    script = textwrap.dedent(
        """
        import random, time
        from bytebpe import _bytebpe
        rng = random.Random(0)
        words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 12)))
                 for _ in range(200_000)]
        doc = " ".join(words)[:1_000_000] * 1000
        counter = _bytebpe.WordCounter("cl100k", [], 1)
        counter.add_batch(["warm"], 0)
        print("ready", flush=True)
        start = time.monotonic()
        try:
            counter.add_batch([doc], 1)
        except KeyboardInterrupt:
            print("caught", time.monotonic(), flush=True)
            raise
        print("finished after", time.monotonic() - start, flush=True)
        """
    )
    stopped = interrupt_child(script, wait=0.5, timeout=120)
    assert "finished" not in stopped.out, stopped.out
    assert stopped.noticed_after < 1.0
    assert "KeyboardInterrupt" in stopped.err
