"""A batch of documents is counted on all cores in items, while the calling thread reads
the next items as UTF-8: the counts, ledger and fingerprint do not depend on the thread
count or on how documents are batched, and a bad document late in a batch leaves nothing
of the batch counted."""

from __future__ import annotations

import pytest
from bytebpe import PatternError, _bytebpe

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
