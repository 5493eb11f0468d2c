"""Wrong data is never trained on silently (issue 14): mappings at the top level,
formatted and wide datasets, finished run stores reused with other data, the store lock,
the `bytebpe` logger."""

from __future__ import annotations

import logging
import warnings
from typing import ClassVar

import numpy as np
import pytest
from bytebpe import StoreError, Tokenizer, TrainingWarning, encode_to_file
from bytebpe.documents import text_column_only
from bytebpe.sample import sample_documents

datasets = pytest.importorskip("datasets")

DOCS = sample_documents(split="train")[:120]


def train(data, vocab_size=400, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


@pytest.fixture(scope="module")
def ds():
    return datasets.Dataset.from_dict(
        {"text": DOCS, "id": list(range(len(DOCS))), "blob": ["x" * 1000] * len(DOCS)}
    )


@pytest.fixture(scope="module")
def reference():
    return train(DOCS)


def test_dataset_dict_is_refused_naming_the_splits(ds, tmp_path, reference):
    dd = datasets.DatasetDict({"train": ds, "test": ds.select(range(5))})
    with pytest.raises(TypeError, match=r"DatasetDict with the splits \['train', 'test'\].*data\['train'\]"):
        train(dd)
    with pytest.raises(TypeError, match="the documents to encode is a DatasetDict"):
        encode_to_file(reference, dd, tmp_path / "x.bin", progress=False)
    assert not (tmp_path / "x.bin").exists()
    with pytest.raises(TypeError, match="IterableDatasetDict with the splits"):
        train(datasets.IterableDatasetDict({"train": ds.to_iterable_dataset()}))
    with pytest.raises(TypeError, match="DatasetDict"):
        Tokenizer.train_phases([__import__("bytebpe").Phase(dd, 10)], progress=False)


def test_dict_of_columns_is_refused_naming_the_columns(ds, reference, tmp_path):
    with pytest.raises(TypeError, match=r"dict with the keys \['text', 'id', 'blob'\].*data\['text'\]"):
        train(ds[:20])
    with pytest.raises(TypeError, match="the documents to encode is a dict"):
        reference.encode_batch_numpy(ds[:20])
    with pytest.raises(TypeError, match="for one row, pass \\[row\\]"):
        train({"text": "one row"})
    assert train(ds[:120]["text"]) == reference  # the fix the message gives


@pytest.mark.parametrize("fmt", ["numpy", "pandas", "arrow", None])
def test_formatted_datasets_read_as_text(ds, reference, fmt):
    formatted = ds.with_format(fmt)
    assert train(formatted).merges() == reference.merges()
    iterable = ds.to_iterable_dataset().with_format(fmt)
    assert train(iterable).merges() == reference.merges()
    flat, offsets = reference.encode_batch_numpy(formatted)
    assert len(offsets) == len(DOCS) + 1
    assert flat[offsets[3]:offsets[4]].tolist() == reference.encode_ordinary(DOCS[3])


def test_arrow_text_columns_are_read_as_their_utf8_bytes():
    # A dataset's Arrow strings reach the core as UTF-8 bytes, never as str; training,
    # encoding and the loss report are those of the texts themselves, nulls are refused
    # or skipped where they stand, and a resumed run sees the same fingerprint.
    import pyarrow as pa
    from bytebpe._bytebpe import WordCounter
    from bytebpe.documents import iter_documents

    texts = [*DOCS[:100], "naïve café ✓ 中文 Ω 𝄞", "Привет, мир"]
    want = train(texts)
    plain = datasets.Dataset.from_dict({"text": texts})
    large = plain.cast_column("text", datasets.Value("large_string"))
    assert large.data.column("text").type == pa.large_string()
    for ds in (plain, large, plain.to_iterable_dataset(), large.to_iterable_dataset()):
        docs = list(iter_documents(ds, "text", 16))
        assert docs == [t.encode() for t in texts]
        assert WordCounter.fingerprint_of(docs) == WordCounter.fingerprint_of(texts)
        got = train(ds)
        assert got.merges() == want.merges()
        assert got.loss_report()["training"] == want.loss_report()["training"]
        flat, offsets = want.encode_batch_numpy(ds)
        ids = [want.encode_ordinary(t) for t in texts]
        assert flat.tolist() == [i for one in ids for i in one]
        assert np.diff(offsets).tolist() == [len(one) for one in ids]
    holes = datasets.Dataset.from_dict({"text": [texts[0], None, *texts[1:60], None]})
    with pytest.raises(TypeError, match=r"dataset batch 0\['text'\]\[1\] of the training data is NoneType"):
        train(holes)
    with pytest.raises(TypeError, match=r"dataset batch 0\['text'\]\[1\] of the documents to encode is NoneType"):
        want.encode_batch_numpy(holes.to_iterable_dataset())
    skipped = train(holes, on_bad_item="skip").loss_report()["training"]
    assert skipped["rejected_items"] == {"NoneType": 2} and skipped["documents"] == 60
    assert train(holes, on_bad_item="skip").merges() == train(texts[:60]).merges()


def test_only_the_text_column_is_read(ds):
    assert text_column_only(ds.with_format("numpy"), "text").column_names == ["text"]
    assert text_column_only(ds.to_iterable_dataset(), "text").column_names == ["text"]
    with pytest.raises(KeyError, match=r"no 'body' column \(it has \['text', 'id', 'blob'\]\)"):
        text_column_only(ds, "body")


def test_text_column_in_encode_batch_numpy_and_encode_to_file(ds, reference, tmp_path):
    renamed = ds.rename_column("text", "body")
    flat, offsets = reference.encode_batch_numpy(renamed, text_column="body")
    plain, plain_offsets = reference.encode_batch_numpy(DOCS)
    assert flat.tolist() == plain.tolist() and offsets.tolist() == plain_offsets.tolist()
    n = encode_to_file(reference, renamed.with_format("pandas"), tmp_path / "a.bin",
                       text_column="body", progress=False)
    assert np.fromfile(tmp_path / "a.bin", dtype=np.uint16).tolist() == plain.tolist()
    assert n == len(plain)
    with pytest.raises(KeyError, match="no 'text' column"):
        reference.encode_batch_numpy(renamed)


def test_finished_store_with_other_data_is_refused(tmp_path, reference, caplog):
    store = tmp_path / "run.sqlite"
    first = train(DOCS, store=store)
    assert first == reference
    with caplog.at_level(logging.INFO, logger="bytebpe"):
        assert train(DOCS, store=store) == reference  # the same data: the stored run
    assert any(r.getMessage() == "train.input_checked" for r in caplog.records)
    with pytest.raises(StoreError, match="holds a finished run on other data.*its documents differ"):
        train([d.upper() for d in DOCS], store=store)
    with pytest.raises(StoreError, match="it has more documents"):
        train([*DOCS, "one more"], store=store)
    with pytest.raises(StoreError, match="it has 119 documents"):
        train(DOCS[:-1], store=store)
    with pytest.warns(TrainingWarning, match="one-shot iterator and cannot be checked"):
        assert train(iter(DOCS), store=store) == reference


def test_finished_file_store_checks_the_files(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(d + "\n" for d in DOCS[:50]))
    store = tmp_path / "run.sqlite"
    kw = dict(progress=False, store=store)
    first = Tokenizer.train_from_files(corpus, 350, **kw)
    assert Tokenizer.train_from_files(corpus, 350, **kw) == first
    corpus.write_text("".join(d + "\n" for d in DOCS[50:100]))
    with pytest.raises(StoreError, match="finished run on other data"):
        Tokenizer.train_from_files(corpus, 350, **kw)


def test_store_lock_leaves_no_file_and_reuses_a_stale_one(tmp_path):
    store = tmp_path / "run.sqlite"
    train(DOCS[:30], 300, store=store)
    assert not (tmp_path / "run.sqlite.lock").exists()
    # A killed run leaves its lock file but no lock: the next run takes it and removes it.
    (tmp_path / "run2.sqlite.lock").write_text("pid 1")
    with warnings.catch_warnings():
        train(DOCS[:30], 300, store=tmp_path / "run2.sqlite")
    assert not (tmp_path / "run2.sqlite.lock").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sqlite", "run2.sqlite"]


def test_bytebpe_logger_reports_resumes(tmp_path, caplog):
    store = tmp_path / "run.sqlite"
    with caplog.at_level(logging.INFO, logger="bytebpe"):
        train(DOCS[:30], 300, store=store)
    names = {r.name for r in caplog.records}
    assert names and all(n.startswith("bytebpe") for n in names)
    counted = [r for r in caplog.records if r.getMessage() == "train.counted"]
    assert len(counted) == 1 and counted[0].documents == 30


class _RecordingBar:
    """Stands in for tqdm: records each bar's options and progress."""

    bars: ClassVar[list[_RecordingBar]] = []

    def __init__(self, **options):
        self.options, self.n = options, options.get("initial", 0)
        self.total = options.get("total")
        _RecordingBar.bars.append(self)

    def update(self, n):
        self.n += n

    def refresh(self):
        pass

    def set_postfix_str(self, *a, **k):
        pass

    def close(self):
        pass


def test_progress_bars_show_totals(tmp_path, monkeypatch, ds, reference):
    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", _RecordingBar)
    _RecordingBar.bars = []
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(d + "\n" for d in DOCS[:40]))
    Tokenizer.train_from_files(corpus, 300, progress=True)
    counting = _RecordingBar.bars[0]
    assert counting.options["desc"] == "counting" and counting.options["unit"] == "B"
    assert counting.total == counting.n == corpus.stat().st_size
    _RecordingBar.bars = []
    Tokenizer.train_from_iterator(ds, 300, progress=True)
    assert _RecordingBar.bars[0].total == len(ds) == _RecordingBar.bars[0].n
    _RecordingBar.bars = []
    encode_to_file(reference, ds, tmp_path / "x.bin")
    assert _RecordingBar.bars[0].total == len(ds) == _RecordingBar.bars[0].n


def test_dataframe_is_refused_naming_the_columns(ds):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"text": DOCS[:10], "n": range(10)})
    with pytest.raises(TypeError, match=r"pandas DataFrame with the columns \['text', 'n'\].*data\['text'\]"):
        train(df)
    assert train(df["text"]) == train(DOCS[:10])  # a Series of text is documents
