"""Compressed inputs (issue 14): gzip, zstd, xz and bzip2 recognised by their first bytes
whatever the name; names the bytes contradict and formats bytebpe cannot read refused,
naming the file; a file that is mostly not UTF-8 warned about."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile

import pytest
from bytebpe import InputError, Tokenizer, TrainingWarning, read_files
from bytebpe.sample import sample_documents

DOCS = [d.replace("\n", " ") + "\n" for d in sample_documents(split="train")[:150]]
DATA = "".join(DOCS).encode("utf-8")
COMPRESS = {"gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}


def train(path, **kw):
    return Tokenizer.train_from_files(path, 400, progress=False, **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("plain") / "c.txt"
    path.write_bytes(DATA)
    return train(path)


@pytest.mark.parametrize("ext", ["xz", "bz2", "gz"])
def test_xz_and_bz2_read_like_plain_text(tmp_path, reference, ext):
    path = tmp_path / f"c.txt.{ext}"
    path.write_bytes(COMPRESS[ext](DATA))
    assert train(path).merges() == reference.merges()
    assert [d.decode() for d in read_files(path)] == DOCS
    # Several members in one file (`xz -c a b > ab.xz`) are one input.
    half = len(DATA) // 2
    joined = tmp_path / f"two.txt.{ext}"
    joined.write_bytes(COMPRESS[ext](DATA[:half]) + COMPRESS[ext](DATA[half:]))
    assert train(joined).merges() == reference.merges()


def test_jsonl_inside_xz(tmp_path):
    path = tmp_path / "rows.jsonl.xz"
    path.write_bytes(lzma.compress(b'{"text": "a b"}\n{"text": "c d"}\n'))
    assert list(read_files(path)) == ["a b", "c d"]


@pytest.mark.parametrize("ext", ["xz", "bz2", "gz"])
def test_compression_is_found_by_magic_bytes_not_the_name(tmp_path, reference, ext):
    path = tmp_path / "mislabelled.txt"
    path.write_bytes(COMPRESS[ext](DATA))
    assert train(path).merges() == reference.merges()
    wrong = tmp_path / "other.txt.zst"  # named zstd, holds another format: still read
    wrong.write_bytes(COMPRESS[ext](DATA))
    assert train(wrong).merges() == reference.merges()


def test_a_name_the_bytes_contradict_is_refused(tmp_path):
    path = tmp_path / "plain.txt.xz"
    path.write_bytes(DATA)
    with pytest.raises(InputError, match=r"plain.txt.xz: is named as xz but does not hold xz"):
        train(path)
    with pytest.raises(InputError, match="plain.txt.xz"):
        list(read_files(path))


def test_unreadable_formats_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "corpus.txt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("inner.txt", DATA)
    with pytest.raises(InputError, match=r"corpus.txt: is a zip archive.*decompress it first"):
        train(path)
    lz4 = tmp_path / "c.lz4"
    lz4.write_bytes(b"\x04\x22\x4d\x18" + b"\x00" * 40)
    with pytest.raises(InputError, match="c.lz4: is lz4 data"):
        train(lz4)


@pytest.mark.parametrize("ext", ["xz", "bz2"])
def test_cut_short_names_the_file_and_format(tmp_path, ext):
    path = tmp_path / f"cut.txt.{ext}"
    data = COMPRESS[ext](DATA)
    path.write_bytes(data[: len(data) // 2])
    name = {"xz": "xz", "bz2": "bzip2"}[ext]
    with pytest.raises(InputError, match=rf"cut.txt.{ext}: the {name} data is cut short or corrupt"):
        train(path)


def test_binary_input_is_warned_about_naming_the_file(tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(128, 256)) * 100)
    with pytest.warns(TrainingWarning, match=r"blob.bin: 12,800 of its 12,800 bytes \(100%\) are not valid UTF-8"):
        Tokenizer.train_from_files(path, 256, progress=False)  # 256: nothing to merge
    clean = tmp_path / "clean.txt"
    clean.write_bytes(DATA)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train(clean)  # no warning for text
