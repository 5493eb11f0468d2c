"""Encoding and decoding in every form a data pipeline needs."""

from __future__ import annotations

import bytebpe
import numpy as np
import pytest
from bytebpe import Tokenizer, encode_to_file
from bytebpe.checks import packed_batch
from bytebpe.cli import main
from bytebpe.sample import sample_documents
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken_pieces import reference_ids

HELDOUT = sample_documents(split="heldout")[:30]


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train_from_iterator(
        sample_documents()[:300], 2000, special_tokens=["<|endoftext|>"], progress=False
    )


def test_encode_batch_numpy_matches_lists(tok):
    tokens, offsets = tok.encode_batch_numpy(HELDOUT)
    assert tokens.dtype == np.uint16 and offsets.dtype == np.int64
    assert len(offsets) == len(HELDOUT) + 1 and offsets[0] == 0 and offsets[-1] == len(tokens)
    for i, doc in enumerate(HELDOUT):
        assert tokens[offsets[i] : offsets[i + 1]].tolist() == tok.encode_ordinary(doc)
    wide, _ = tok.encode_batch_numpy(HELDOUT, dtype="uint32", num_threads=1)
    assert wide.dtype == np.uint32 and wide.tolist() == tokens.tolist()


def test_id_lists_share_ints_and_keep_their_reference_counts(tok):
    # Lists are built from one shared int per id, each item a new reference to it:
    # building and dropping many lists, one call and batches, leaves every count where it
    # was, and lists held hold one reference per item.
    import gc
    import sys

    text = HELDOUT[0]
    ids = tok.encode_ordinary(text)
    assert tok.encode_ordinary(text)[5] is ids[5]
    high = next(i for i in ids if i > 256)
    low = next(i for i in ids if i < 256)
    shared = (ids[ids.index(high)], ids[ids.index(low)])
    before = [sys.getrefcount(x) for x in shared]
    for _ in range(200):
        lists = [tok.encode_ordinary(text), tok.encode(text), *tok.encode_batch([text] * 3)]
        assert all(lst == ids for lst in lists)
        del lists
    gc.collect()
    assert [sys.getrefcount(x) for x in shared] == before
    held = [tok.encode_ordinary(text) for _ in range(10)]
    if sys.version_info < (3, 12):  # small ints are immortal from 3.12: their count stays
        assert sys.getrefcount(shared[1]) >= before[1] + 10
    assert sys.getrefcount(shared[0]) == before[0] + 10 * ids.count(high)
    del held


def test_encoding_leaves_no_utf8_copy_in_the_callers_strings(tok):
    # CPython keeps a str's UTF-8 inside the str once asked for it in place (as much
    # memory again as the text, for the string's life); every encoding call reads a
    # non-ASCII str through a copy of its own instead, and an ASCII one in place.
    import sys

    calls = [
        lambda t: tok.encode_ordinary(t),
        lambda t: tok.encode(t),
        lambda t: tok.encode(t, allowed_special="all"),
        lambda t: tok.encode_to_numpy(t),
        lambda t: tok.encode_batch([t]),
        lambda t: tok.encode_batch([t, t + " again", "ascii"]),
        lambda t: tok.encode_ordinary_batch([t, t + "!"], num_threads=2),
        lambda t: tok.encode_batch_numpy([t, t + "?"]),
    ]
    for call in calls:
        for text in ("caf\u00e9 na\u00efve \u4e16\u754c " * 50, "\U0001f600 and ascii", "plain"):
            text = text + str(len(calls))  # made here: no earlier call has read it
            size = sys.getsizeof(text)
            ids = call(text)
            assert len(ids) > 0
            assert sys.getsizeof(text) == size, call
    # A str's ids are those of its UTF-8 bytes.
    text = "na\u00efve \u4e16\u754c \U0001f600 caf\u00e9"
    assert tok.encode_ordinary(text) == tok.encode_bytes(text.encode())


# Texts of each way CPython stores a str (1, 2 or 4 bytes a character), longer than the
# 32,768 code points the binding copies out at a time, with characters of every UTF-8
# length on both sides of each chunk's end.
LONG_TEXTS = {
    "latin-1": "caf\u00e9 na\u00efve \u00ff" * 9000,
    "bmp": "\u043c\u0438\u0440 \u4e16\u754c a\u07ff\u0800\ufffd " * 5000,
    "astral": "\U0001f600 \u00e9\u4e16 x\U0010ffff" * 5000,
    "edge": "a" * 32_767 + "\u4e16" + "b" * 32_766 + "\U0001f600\u00e9",
}


@pytest.mark.parametrize("kind", sorted(LONG_TEXTS))
def test_long_str_of_every_storage_reads_as_its_utf8(tok, kind):
    text = LONG_TEXTS[kind]
    assert len(text) > 32_768
    data = text.encode()
    assert tok.encode_ordinary(text) == tok.encode_bytes(data)
    assert tok.encode_ordinary_batch([text, text[1:]], num_threads=2) == [
        tok.encode_bytes(data),
        tok.encode_bytes(text[1:].encode()),
    ]
    assert tok.decode(tok.encode_ordinary(text)) == text
    # Counting reads a str the same way: the same words as its bytes.
    from bytebpe._bytebpe import WordCounter

    counts = []
    for doc in (text, data):
        counter = WordCounter(tok.pattern, [], 2)
        counter.add_batch([doc, "plain"], 0)
        counts.append((counter.distinct_words, counter.ledger()["bytes"]))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("n", [0, 1, 2, 30])
def test_encode_batch_of_any_size_matches_single_calls(tok, n):
    # One document takes a path of its own (no helper thread); every size gives the same ids.
    docs = HELDOUT[:n]
    for threads in (None, 1, 2):
        assert tok.encode_batch(docs, num_threads=threads) == [tok.encode(d) for d in docs]
    with pytest.raises(ValueError, match="contains the special token"):
        tok.encode_batch(["x<|endoftext|>"])


def test_encode_batch_numpy_eot_and_bytes(tok):
    eot = tok.special_tokens["<|endoftext|>"]
    tokens, offsets = tok.encode_batch_numpy(["ab", b"\xffcd"], eot="<|endoftext|>")
    assert tokens[offsets[1] - 1] == eot and tokens[-1] == eot
    assert tok.decode_bytes(tokens[offsets[1] : offsets[2] - 1]) == b"\xffcd"


def test_numpy_bad_inputs(tok):
    with pytest.raises(ValueError, match="dtype='int8'"):
        tok.encode_batch_numpy(["a"], dtype="int8")
    with pytest.raises(ValueError, match="eot='<nope>' is not a special token"):
        tok.encode_batch_numpy(["a"], eot="<nope>")
    with pytest.raises(ValueError, match="document 1 contains a lone surrogate at character 1"):
        tok.encode_batch_numpy(["a", "b\ud800"])
    with pytest.raises(TypeError, match="integer dtype, not float64"):
        tok.decode(np.array([1.0, 2.0]))
    assert tok.decode(np.array(tok.encode("hi there"), dtype=np.uint16)) == "hi there"


def test_uint16_refused_for_large_vocabularies():
    words = {f"w{i:06d}": 2 for i in range(70_000)}
    big = Tokenizer.train_from_counts(words, 66_000, progress=False, min_frequency=1)
    assert big.vocab_size == 66_000
    with pytest.raises(ValueError, match="uint16 cannot hold ids up to 65999"):
        big.encode_batch_numpy(["w1"], dtype="uint16")
    assert big.encode_batch_numpy(["w000001"])[0].dtype == np.uint32


def test_encode_to_file_memmap(tok, tmp_path):
    path = tmp_path / "train.bin"
    n = encode_to_file(tok, HELDOUT, path, eot="<|endoftext|>", progress=False, batch_size=7)
    data = np.memmap(path, dtype=np.uint16, mode="r")
    assert len(data) == n
    expected = []
    for doc in HELDOUT:
        expected += tok.encode_ordinary(doc) + [tok.special_tokens["<|endoftext|>"]]
    assert data.tolist() == expected


def test_encode_to_file_errors_leave_no_file(tok, tmp_path):
    path = tmp_path / "bad.bin"
    with pytest.raises(TypeError, match="item 1 of the documents to encode is int") as e:
        encode_to_file(tok, ["ok", 5], path, progress=False)
    assert "on_bad_item" not in str(e.value)  # encode_to_file takes no such option
    assert not path.exists() and not list(tmp_path.iterdir())
    # A path that cannot be written is refused before any document is encoded (a
    # generator shows it: nothing of it is read).
    read = []
    documents = (read.append(d) or d for d in ["ok"])
    with pytest.raises(IsADirectoryError, match="is a directory; give a file path"):
        encode_to_file(tok, documents, tmp_path, progress=False)
    with pytest.raises(FileNotFoundError, match="its directory .* does not exist"):
        encode_to_file(tok, documents, tmp_path / "no" / "x.bin", progress=False)
    assert read == [] and not list(tmp_path.iterdir())


def test_cli_encode(tok, tmp_path, capsys):
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"line one\nline \xff two\n")
    out = tmp_path / "c.bin"
    assert main(["encode", str(corpus), "-t", str(tok_path), "-o", str(out),
                 "--eot", "<|endoftext|>", "--no-progress"]) == 0
    assert "tokens (uint16)" in capsys.readouterr().out
    ids = np.fromfile(out, dtype=np.uint16).tolist()
    eot = tok.special_tokens["<|endoftext|>"]
    assert tok.decode_bytes([t for t in ids if t != eot]) == corpus.read_bytes()
    assert ids.count(eot) == 2


def test_streaming_decoder_never_garbles(tok):
    text = "héllo 世界 😀 👩‍👩‍👧 done"
    data = text.encode()
    # Single-byte ids split every multi-byte character across tokens.
    dec = tok.decoder()
    out = "".join(dec.feed(b) for b in data) + dec.flush()
    assert out == text
    dec = tok.decoder()
    parts = [dec.feed(b) for b in data[:8]]
    assert "".join(parts) == "héllo " and parts[1:3] == ["", "é"]  # é waits for byte 2
    # Ids taken one by one from a NumPy array are NumPy integers: fed as ints are.
    for dtype in (np.uint16, np.int64):
        dec = tok.decoder()
        ids = np.array(tok.encode(text), dtype=dtype)
        assert "".join(dec.feed(t) for t in ids) + dec.flush() == text


def test_streaming_decoder_errors(tok):
    dec = tok.decoder(errors="strict")
    assert dec.feed([0xE4, 0xB8]) == ""
    with pytest.raises(UnicodeDecodeError):
        dec.flush()
    dec = tok.decoder()  # "replace" by default, as decode
    assert dec.feed([0xE4, 0xB8]) + dec.flush() == "\ufffd"
    with pytest.raises(bytebpe.UnknownTokenError, match="id 99999 at position 0"):
        tok.decoder().feed(99999)


def test_numpy_arrays_decode_as_their_lists(tok):
    # A 1-D integer array is read by the core as packed integers (every dtype, either
    # byte order, strided views); the bytes, the skipping of special tokens and the
    # errors are those of the same ids as a list.
    eot = tok.special_tokens["<|endoftext|>"]
    ids = [i for d in HELDOUT[:20] for i in [*tok.encode_ordinary(d), eot]]
    want = tok.decode_bytes(ids)
    skipped = tok.decode_bytes(ids, skip_special_tokens=True)
    assert skipped == b"".join(d.encode() for d in HELDOUT[:20]) and want != skipped
    for dtype in ("uint16", "int16", "uint32", "int32", "uint64", "int64", ">u4", ">i8"):
        arr = np.array(ids, dtype=dtype)
        assert tok.decode_bytes(arr) == want, dtype
        assert tok.decode_bytes(arr, skip_special_tokens=True) == skipped, dtype
        assert tok.decode(arr) == want.decode(), dtype
    doubled = np.repeat(np.array(ids, dtype=np.uint32), 2)[::2]
    assert not doubled.flags.c_contiguous and tok.decode_bytes(doubled) == want
    assert tok.decode_bytes(np.array([104, 105], dtype=np.uint8)) == tok.decode_bytes([104, 105])
    assert tok.decode_bytes(np.array([], dtype=np.int64)) == b""
    for bad, message in (
        (np.array([104, 99999], dtype=np.uint32), "unknown token id 99999 at position 1"),
        (np.array([104, 105, -1], dtype=np.int32), "unknown token id -1 at position 2"),
        (np.array([104, 2**40], dtype=np.int64), f"unknown token id {2**40} at position 1"),
    ):
        with pytest.raises(bytebpe.UnknownTokenError, match=message):
            tok.decode(bad)
    with pytest.raises(TypeError):
        tok.decode(np.array([[104, 105]], dtype=np.uint32))  # 2-D: as its nested list
    # The core's packed reader refuses what no NumPy array gives it.
    with pytest.raises(ValueError, match="3 bytes are not a whole number of 2-byte integers"):
        tok._core.decode_packed(b"\x68\x00\x69", 2, False)
    with pytest.raises(ValueError, match="1, 2, 4 or 8 bytes each, not 3"):
        tok._core.decode_packed(b"\x68\x00\x00", 3, False)
    assert tok._core.decode_packed(b"\xff", 1, True) is None  # -1: the list path names it


def test_id_lists_of_every_kind_decode_alike(tok):
    # A list of exact ints is read by the core item by item; a list subclass, int
    # subclasses and NumPy integers take the general path; all give the same bytes,
    # and the same named errors.
    class Ids(list):
        pass

    class Id(int):
        pass

    ids = tok.encode(HELDOUT[0])
    want = tok.decode_bytes(ids)
    for form in (Ids(ids), [Id(i) for i in ids], [*ids[:-1], np.int64(ids[-1])], tuple(ids)):
        assert tok.decode_bytes(form) == want
        assert tok.decode_batch([form, ids]) == [want.decode()] * 2
    for bad, error, message in (
        ([104, -1], bytebpe.UnknownTokenError, "unknown token id -1 at position 1"),
        ([104, 2**40], bytebpe.UnknownTokenError, f"unknown token id {2**40} at position 1"),
        ([104, 2**70], bytebpe.UnknownTokenError, f"unknown token id {2**70} at position 1"),
        ([104, Id(-3)], bytebpe.UnknownTokenError, "unknown token id -3 at position 1"),
        ([104, "2"], TypeError, "token at position 1 is str, expected int"),
    ):
        with pytest.raises(error, match=message):
            tok.decode(bad)
        with pytest.raises(error, match=rf"batch\[1\]: {message}"):
            tok.decode_batch([[104], bad])


def test_decode_batch_skips_special_tokens_in_the_core(tok):
    eot = tok.special_tokens["<|endoftext|>"]
    batch = [[*tok.encode_ordinary(d), eot] for d in HELDOUT[:5]]
    assert tok.decode_batch(batch, skip_special_tokens=True, num_threads=2) == HELDOUT[:5]
    assert tok.decode_batch(batch) == [d + "<|endoftext|>" for d in HELDOUT[:5]]


def test_decode_batch(tok):
    batch = [tok.encode_ordinary(d) for d in HELDOUT]
    assert tok.decode_batch(batch, num_threads=2) == HELDOUT
    with pytest.raises(bytebpe.UnknownTokenError, match=r"batch\[1\]: unknown token id 70000 at position 1"):
        tok.decode_batch([[1], [2, 70000]])
    with pytest.raises(TypeError, match=r"batch\[0\]: token at position 1 is str"):
        tok.decode_batch([[1, "2"]])
    # A generator is read once, whether its items are lists, arrays or both.
    assert tok.decode_batch(iter(batch[:3])) == HELDOUT[:3]
    assert tok.decode_batch(np.array(b, dtype=np.uint32) for b in batch[:3]) == HELDOUT[:3]
    assert tok.decode_batch(iter([np.array(batch[0]), batch[1]])) == HELDOUT[:2]
    for bad, message in (
        (5, "a batch is a sequence of token sequences, not int"),
        ("ab", "a batch is a sequence of token sequences, not str"),
        ([[1], np.array([1.5])], r"batch\[1\]: token arrays must have an integer dtype, not float64"),
        ([[1], None], r"batch\[1\]: token ids are a sequence of int, not NoneType"),
    ):
        with pytest.raises(TypeError, match=message):
            tok.decode_batch(bad)
    with pytest.raises(TypeError, match="token ids are a sequence of int, not int"):
        tok.decode(5)
    with pytest.raises(ValueError, match="num_threads=0 is too small"):
        tok.decode_batch([np.array([1])], num_threads=0)
    with pytest.raises(TypeError, match="encode_batch takes a list of str, not NoneType"):
        tok.encode_batch(None)


def test_decode_batch_of_arrays_as_of_lists(tok):
    # Arrays of one dtype, and a 2-D array's rows, are read packed by the core; the texts,
    # the skipping of special tokens and the errors are those of the same ids as lists.
    eot = tok.special_tokens["<|endoftext|>"]
    lists = [[*tok.encode_ordinary(d), eot] for d in HELDOUT[:30]] + [[]]
    want = tok.decode_batch(lists)
    skipped = tok.decode_batch(lists, skip_special_tokens=True)
    assert skipped == [*HELDOUT[:30], ""] and want != skipped
    for dtype in ("uint16", "int16", "uint32", "int64", ">u4"):
        arrays = [np.array(ids, dtype=dtype) for ids in lists]
        assert packed_batch(arrays) is not None, dtype
        assert tok.decode_batch(arrays, num_threads=2) == want, dtype
        assert tok.decode_batch(arrays, skip_special_tokens=True, num_threads=1) == skipped
    rows = np.array([lists[0][:8], lists[1][:8], lists[2][:8]], dtype=np.int32)
    assert tok.decode_batch(rows) == tok.decode_batch([r[:8] for r in lists[:3]])
    # Mixed dtypes, or arrays beside lists, take the list path with the same texts.
    mixed = [np.array(lists[0], dtype=np.uint16), np.array(lists[1], dtype=np.int64)]
    assert packed_batch(mixed) is None and tok.decode_batch(mixed) == want[:2]
    assert packed_batch([np.array(lists[0]), lists[1]]) is None
    assert packed_batch([]) is None and tok.decode_batch([]) == []
    for bad, message in (
        ([np.array([104]), np.array([104, 99999])], r"batch\[1\]: unknown token id 99999 at position 1"),
        ([np.array([104, -1], dtype=np.int8)], r"batch\[0\]: unknown token id -1 at position 1"),
        (np.array([[104, 2**40]]), rf"batch\[0\]: unknown token id {2**40} at position 1"),
    ):
        with pytest.raises(bytebpe.UnknownTokenError, match=message):
            tok.decode_batch(bad)
    # The core's batch reader refuses buffers no array gives it, as the single one does.
    with pytest.raises(ValueError, match="3 bytes are not a whole number of 2-byte integers"):
        tok._core.decode_packed_batch([b"\x68\x00", b"\x68\x00\x69"], 2, False)
    assert tok._core.decode_packed_batch([b"\x68", b"\xff"], 1, True) is None


def test_verify_reports_nothing_for_trained(tok):
    assert tok.verify() == []


def test_verify_reports_unreachable_tokens():
    ranks = [(bytes([b]), b) for b in range(256)] + [(b"abc", 256)]
    core = bytebpe._bytebpe.CoreTokenizer.from_ranks("cl100k", ranks, [])
    problems = Tokenizer(core).verify()
    assert problems == ['token 256 ("abc") is unreachable: its bytes encode as [97, 98, 99]']


@pytest.mark.parametrize("text", ["a" * 1_000_000, "^" * 1_000_000, "1" * 1_000_000, "ab" * 500_000])
def test_worst_cases_round_trip(tok, text):
    ids = tok.encode_ordinary(text)
    assert ids == reference_ids(tok.mergeable_ranks(), tok.pattern, text)
    assert tok.decode(ids) == text


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_bytes_round_trip(tok, data):
    assert tok.decode_bytes(tok.encode_bytes(data)) == data


FRAGMENTS = ["\r\n", "  ", "\t", "😀", "👩‍👩‍👧", "e\u0301", "'s", "1234", "\n\n", " " * 40]
TEXT = st.lists(
    st.one_of(st.text(st.characters(codec="utf-8"), max_size=20), st.sampled_from(FRAGMENTS)),
    max_size=20,
).map("".join)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(TEXT)
def test_text_round_trip(tok, text):
    assert tok.decode(tok.encode(text, disallowed_special=())) == text
    assert tok.decode(tok.encode_ordinary(text)) == text


def test_bad_thread_and_batch_counts(tok, tmp_path):
    with pytest.raises(ValueError, match="num_threads=0 is too small"):
        tok.encode_batch(["a"], num_threads=0)
    with pytest.raises(ValueError, match="batch_size=0 is too small"):
        encode_to_file(tok, ["a"], tmp_path / "x.bin", batch_size=0, progress=False)
    assert repr(tok).startswith("Tokenizer(vocab_size=2000, pattern='cl100k'")
