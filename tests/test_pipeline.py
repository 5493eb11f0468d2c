"""The one training pipeline: every entry point checks its keywords the same way, finds
files the same way, and resumes the same way after an error."""

from __future__ import annotations

import pytest
from bytebpe import Phase, RunStore, Tokenizer, read_files, store
from bytebpe.sample import sample_documents

DOCS = sample_documents()[:120]


def train(data=DOCS, vocab_size=600, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: Tokenizer.train_from_iterator(DOCS, 300, vocab_sise=3), "train_from_iterator"),
        (lambda: Tokenizer.train_from_files("x.txt", 300, min_freq=3), "train_from_files"),
        (lambda: Tokenizer.train_from_counts({"ab": 3}, 300, pattrn="gpt2"), "train_from_counts"),
        (lambda: Tokenizer.train_phases([], chunk_size=3), "train_phases"),
    ],
)
def test_unknown_keywords_are_refused_before_any_work(call, name):
    with pytest.raises(TypeError, match=rf"{name}\(\) got an unexpected keyword argument"):
        call()


def test_phases_take_no_single_run_store_object(tmp_path):
    # A phases store is a directory of run stores; `store` is its own keyword there.
    with pytest.raises(TypeError, match="store must be a directory path"):
        Tokenizer.train_phases([Phase(DOCS, merges=5)], store=RunStore(tmp_path / "x.sqlite"))


def _nested_files(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    docs = {
        tmp_path / "top.txt": DOCS[:40],
        tmp_path / "a" / "mid.txt": DOCS[40:80],
        tmp_path / "a" / "b" / "deep.txt": DOCS[80:],
    }
    for path, part in docs.items():
        path.write_text("".join(d.rstrip("\n") + "\n" for d in part))
    return docs


def test_double_star_matches_at_any_depth_everywhere(tmp_path):
    _nested_files(tmp_path)
    pattern = str(tmp_path / "**" / "*.txt")
    docs = list(read_files(pattern))
    # Sorted by path: a/b/deep.txt, a/mid.txt, top.txt, each line a document.
    expected = []
    for name in ("a/b/deep.txt", "a/mid.txt", "top.txt"):
        expected += (tmp_path / name).read_bytes().splitlines(keepends=True)
    assert docs == expected
    from_files = Tokenizer.train_from_files(pattern, 600, progress=False)
    assert from_files == train(read_files(pattern))
    assert from_files.loss_report()["training"]["documents"] == len(expected)


def test_a_bad_item_keeps_what_was_counted_and_the_fixed_data_resumes(tmp_path):
    path = tmp_path / "run.sqlite"
    broken = [*DOCS[:55], 12345, *DOCS[56:]]
    with pytest.raises(TypeError, match="item 55 of the training data is int"):
        train(broken, store=RunStore(path, checkpoint_every=3600), buffer_size=10)
    # Checkpointed before the error propagated: the 50 documents of whole batches.
    assert store.read(path).documents == 50
    fixed = [*DOCS[:55], "a fixed document\n", *DOCS[56:]]
    assert train(fixed, store=path, buffer_size=10) == train(fixed)


class _FailsOnce:
    """Re-iterable data that fails halfway through the first reading, as a flaky
    network source would; it also holds items that are not text."""

    def __init__(self, items):
        self.items = items
        self.failed = False

    def __iter__(self):
        for i, item in enumerate(self.items):
            if i == len(self.items) // 2 and not self.failed:
                self.failed = True
                raise ConnectionError("the source went away")
            yield item


def test_skipped_items_are_counted_once_across_a_resume(tmp_path):
    items = []
    for i, doc in enumerate(DOCS):
        items.append(doc)
        if i % 10 == 0:
            items.append(i)  # an int: skipped, counted by type
    reference = train(items, on_bad_item="skip")
    assert reference.loss_report()["training"]["rejected_items"] == {"int": 12}
    path = tmp_path / "run.sqlite"
    data = _FailsOnce(items)
    with pytest.raises(ConnectionError):
        train(data, store=RunStore(path, checkpoint_every=0), on_bad_item="skip", buffer_size=8)
    assert 0 < store.read(path).documents < len(DOCS)
    resumed = train(data, store=path, on_bad_item="skip", buffer_size=8)
    assert resumed == reference
    assert resumed.loss_report()["training"] == reference.loss_report()["training"]
