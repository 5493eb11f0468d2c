"""Vocabulary versions: prefixes of a growing run store name the store's own prefixes."""

from __future__ import annotations

import warnings

import pytest
from bytebpe import Tokenizer
from bytebpe.serve.version import parse, prefix_version, vocab_size_for, vocabulary_version
from serve_helpers import corpus


def test_prefix_versions_of_a_growing_store_name_the_stores_prefixes(tmp_path) -> None:
    store = str(tmp_path / "run.sqlite")
    docs = corpus(2000)
    names = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for size in (300, 500, 900):
            tok = Tokenizer.train_from_iterator(docs, vocab_size=size, store=store,
                                                special_tokens=["<|eot|>"], progress=False)
            names.append(vocabulary_version(tok))
    full = Tokenizer.load(store)
    assert vocabulary_version(full) == names[-1]
    for version in names:
        # Each earlier version is a prefix of the latest and loads back from the store.
        assert prefix_version(full, version.merges) == version
        prefix = Tokenizer.load(store, vocab_size=vocab_size_for(full, version.merges))
        assert vocabulary_version(prefix) == version
    assert [v.merges for v in names] == [300 - 257, 500 - 257, 900 - 257]
    assert parse(names[0].name) == (43, names[0].sha256[:16])


def test_versions_differ_with_pattern_specials_and_tokens() -> None:
    docs = corpus(500)
    base = Tokenizer.train_from_iterator(docs, vocab_size=400, progress=False)
    others = [
        Tokenizer.train_from_iterator(docs, vocab_size=400, pattern="gpt2", progress=False),
        Tokenizer.train_from_iterator(docs, vocab_size=401, special_tokens=["<|x|>"],
                                      progress=False),
        Tokenizer.train_from_iterator(corpus(500, seed=1), vocab_size=400, progress=False),
    ]
    names = {vocabulary_version(t).name for t in [base, *others]}
    assert len(names) == 4
    assert vocabulary_version(base) == vocabulary_version(Tokenizer.train_from_iterator(
        docs, vocab_size=400, progress=False))


@pytest.mark.parametrize("bad", ["", "12", "x-0123456789abcdef", "1-0123", "1-0123456789ABCDEF",
                                 "1_0123456789abcdef", "-1-0123456789abcdef"])
def test_malformed_version_names(bad: str) -> None:
    with pytest.raises(ValueError, match="version"):
        parse(bad)
