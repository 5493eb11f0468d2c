"""Training from files and streams: chunk boundaries never change the result (merges and
ledger equal training on the same documents from a list), safe cuts are safe for the
built-in patterns, every bad input names the file, and a stored run resumes after the
file is fixed."""

from __future__ import annotations

import gzip
import io
import json
import multiprocessing
import os
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bytebpe import InputError, RunStore, StoreError, Tokenizer, _bytebpe, store
from hypothesis import given, settings
from hypothesis import strategies as st

VOCAB = 330
# Small corpora may run out of pairs before VOCAB: both sides of each comparison stop at
# the same point, which the comparison checks.
pytestmark = pytest.mark.filterwarnings("ignore::bytebpe.TrainingWarning")


def corpus(seed: int, n: int = 60) -> list[bytes]:
    """Documents with what chunking could break: multi-byte characters, invalid UTF-8,
    CRLF, blank lines, indentation, contractions, long runs."""
    rng = random.Random(seed)
    parts = [b"def f(x):\n", b"    return x\n", b"caf\xc3\xa9 ", b"\xe4\xb8\xad\xe6\x96\x87",
             b"\xf0\x9f\x98\x80", b"\xff", b"\xe2\x82", b"it's ", b"\r\n", b"\n\n", b"  \n",
             b"x\ny", b"12345 ", b"!!\n", b"word ", b"Hello", b"\t\n", b" \n"]
    docs = []
    for _ in range(n):
        doc = b"".join(rng.choice(parts) for _ in range(rng.randint(0, 40)))
        docs.append(doc.replace(b"<SEP>", b""))
    return docs


def lines_of(data: bytes) -> list[bytes]:
    return re.findall(rb"[^\n]*\n|[^\n]+$", data)


def train_list(docs, **kw):
    return Tokenizer.train_from_iterator(docs, VOCAB, progress=False, **kw)


def same(a: Tokenizer, b: Tokenizer) -> None:
    assert a.merges() == b.merges()
    assert a.loss_report() == b.loss_report()


def write(path, data: bytes, compression: str | None) -> str:
    """Writes `data` to `path` plus the compression's extension."""
    if compression == "gzip":
        path = f"{path}.gz"
        with gzip.open(path, "wb") as f:
            f.write(data)
    elif compression == "zstd":
        path = f"{path}.zst"
        with pa.output_stream(path, compression="zstd") as f:
            f.write(data)
    else:
        path = str(path)
        with open(path, "wb") as f:
            f.write(data)
    return path


COMPRESSIONS = [None, "gzip", "zstd"]
CHUNKS = [1, 2, 7, 64, 1 << 20]


# ==================== Chunk boundaries: files


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("documents", ["lines", "files", "separator"])
def test_text_files_equal_the_same_documents_in_memory(tmp_path, compression, documents):
    texts = [b"\n".join(corpus(seed)) for seed in range(3)]
    paths = [write(tmp_path / f"part{i}.txt", t, compression) for i, t in enumerate(texts)]
    if documents == "lines":
        docs = [line for t in texts for line in lines_of(t)]
    elif documents == "files":
        docs = texts
    else:
        docs = [d for t in texts for d in _split_separator(t, b"\n\n")]
    expected = train_list(docs)
    rng = random.Random(f"{compression}{documents}")
    for chunk in [*CHUNKS, rng.randint(3, 300)]:
        got = Tokenizer.train_from_files(
            paths, VOCAB, documents=documents, separator="\n\n" if documents == "separator" else None,
            chunk_size=chunk, progress=False,
        )
        same(got, expected)


def _split_separator(data: bytes, sep: bytes) -> list[bytes]:
    docs = data.split(sep)
    return docs[:-1] if docs and docs[-1] == b"" else docs


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_jsonl_files_equal_the_same_documents_in_memory(tmp_path, compression):
    docs = [d.decode("utf-8", "replace") for d in corpus(4)]
    rows = "".join(json.dumps({"id": i, "text": d}) + ("\n" if i % 7 else "\r\n\n")
                   for i, d in enumerate(docs))
    path = write(tmp_path / "rows.jsonl", rows.encode(), compression)
    expected = train_list(docs)
    for chunk in CHUNKS:
        same(Tokenizer.train_from_files(path, VOCAB, chunk_size=chunk, progress=False), expected)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_parquet_files_equal_the_same_documents_in_memory(tmp_path, compression):
    docs = [d.decode("utf-8", "replace") for d in corpus(5, n=300)]
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs}), raw, row_group_size=50)
    path = write(tmp_path / "rows.parquet", raw.read_bytes(), compression)
    same(Tokenizer.train_from_files(path, VOCAB, progress=False), train_list(docs))
    # Strings reach the core as their UTF-8 bytes, small or large offsets alike.
    large = tmp_path / "large.parquet"
    pq.write_table(pa.table({"text": pa.array(docs, pa.large_string())}), large)
    same(Tokenizer.train_from_files(large, VOCAB, progress=False), train_list(docs))
    binary = tmp_path / "binary.parquet"
    data = corpus(6)
    pq.write_table(pa.table({"body": pa.array(data, pa.binary())}), binary)
    got = Tokenizer.train_from_files(binary, VOCAB, text_column="body", progress=False)
    same(got, train_list(data))


def test_mixed_formats_in_order_with_globs(tmp_path):
    a, b, c = corpus(7), corpus(8), [d.decode("utf-8", "replace") for d in corpus(9)]
    (tmp_path / "1.txt").write_bytes(b"".join(a))
    pq.write_table(pa.table({"text": c}), tmp_path / "2.parquet")
    write(tmp_path / "3.txt", b"".join(b), "gzip")
    expected = train_list(lines_of(b"".join(a)) + c + lines_of(b"".join(b)))
    got = Tokenizer.train_from_files(str(tmp_path / "*"), VOCAB, chunk_size=5, progress=False)
    same(got, expected)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", r"\w+|\s+|[^\w\s]+"])
@pytest.mark.parametrize("specials", [[], ["<|eot|>"], ["a\nb"]])
def test_whole_file_documents_under_every_pattern(tmp_path, pattern, specials):
    texts = [b"<|eot|>".join(corpus(seed, n=20)) + b"a\nb z\na\nb" for seed in range(2)]
    paths = [write(tmp_path / f"{i}.txt", t, None) for i, t in enumerate(texts)]
    expected = train_list(texts, pattern=pattern, special_tokens=specials)
    for chunk in (1, 3, 50):
        got = Tokenizer.train_from_files(paths, VOCAB, documents="files", chunk_size=chunk,
                                         pattern=pattern, special_tokens=specials, progress=False)
        same(got, expected)


def test_invalid_utf8_offsets_are_the_documents_own(tmp_path):
    doc = b"start\nline\n" * 50 + b"bad \xff here\nmore\n\xfe"
    path = write(tmp_path / "one.txt", doc, None)
    got = Tokenizer.train_from_files(path, VOCAB, documents="files", chunk_size=4, progress=False)
    examples = got.loss_report()["training"]["invalid_utf8_examples"]
    assert [(e["document"], e["offset"]) for e in examples] == [
        (0, doc.index(b"\xff")), (0, doc.index(b"\xfe"))]
    same(got, train_list([doc]))


# ==================== Safe cuts


def safe_cuts(data: bytes) -> list[int]:
    """The cut rule of src/read/cut.rs, restated: after a line break between printable
    ASCII bytes (not before "/"), or before a space between printable ASCII bytes."""
    def printable(b: int) -> bool:
        return 0x21 <= b <= 0x7E
    after_line_break = [p for p in range(2, len(data))
                        if printable(data[p - 2]) and data[p - 1] == 0x0A
                        and printable(data[p]) and data[p] != 0x2F]
    before_space = [p for p in range(1, len(data) - 1)
                    if printable(data[p - 1]) and data[p] == 0x20 and printable(data[p + 1])]
    return sorted(set(after_line_break + before_space))


TRICKY = st.text(
    alphabet=st.sampled_from(list("aZ1 \n\r\t'sdltvmre!.,_-(){}/") + [
        "é", "中", "😀", "\u00a0", "\u2028", "\u0301", "ǅ", "٣", "\x0b", "\x1c", "\x85"]),
    max_size=60,
)


@settings(derandomize=True, max_examples=1500, deadline=None)
@given(TRICKY, TRICKY)
def test_safe_cuts_split_like_the_whole(left, right):
    text = left + "a\nb c" + right  # at least one safe cut of each kind
    data = text.encode()
    # Against the hand-written splitters and against the regexes themselves (fancy-regex).
    for pattern in ("gpt2", "cl100k", "o200k"):
        for use_regex in (False, True):
            whole = _bytebpe._split(pattern, text, use_regex)
            for p in safe_cuts(data):
                head, tail = data[:p].decode(), data[p:].decode()
                parts = (_bytebpe._split(pattern, head, use_regex)
                         + _bytebpe._split(pattern, tail, use_regex))
                assert parts == whole, (pattern, use_regex, text, p)


def test_a_weaker_rule_would_not_be_safe():
    # Why the byte before the newline must be printable too: gpt2 splits " \n" + "x" as
    # " ", "\n", "x", but a chunk ending in " \n" keeps it as one piece.
    whole = _bytebpe._split("gpt2", "a \nx", False)
    parts = _bytebpe._split("gpt2", "a \n", False) + _bytebpe._split("gpt2", "x", False)
    assert whole != parts
    assert safe_cuts(b"a \nx") == []
    # Why a printable must follow the space: gpt2 splits "a  " as "a", "  ", but a chunk
    # ending in "a " as "a", " ".
    whole = _bytebpe._split("gpt2", "a  ", False)
    parts = _bytebpe._split("gpt2", "a ", False) + _bytebpe._split("gpt2", " ", False)
    assert whole != parts
    assert safe_cuts(b"a  ") == []
    # Why a printable must come before it: cl100k splits " \n " + "." as " \n", " ", " ."
    # but a chunk ending in " \n " as one piece (whitespace that ends the text).
    whole = _bytebpe._split("cl100k", "- \n  .", False)
    parts = _bytebpe._split("cl100k", "- \n ", False) + _bytebpe._split("cl100k", " .", False)
    assert whole != parts
    assert safe_cuts(b"- \n  .") == []
    # Why not before "/": o200k's punctuation pieces end in [\r\n/]*.
    assert _bytebpe._split("o200k", ")\n/", False) == [b")\n/"]
    assert safe_cuts(b")\n/") == []


@pytest.mark.parametrize(("pattern", "specials", "bounded"), [
    ("cl100k", [], True), ("gpt2", ["<|eot|>"], True),
    (r"\w+|\s+", [], False), ("cl100k", ["x\ny"], False), ("o200k", ["<|a b|>"], False),
])
def test_memory_is_bounded_only_where_cuts_are_safe(pattern, specials, bounded):
    counter = _bytebpe.WordCounter(pattern, specials)
    assert counter.cuts_allowed == bounded
    reader = _bytebpe.DocumentReader(None, "s", "files", None, None, counter.cuts_allowed, 1000)
    most = 0
    for _ in range(200):
        reader.feed(b"line of text\n" * 20)
        counter.count_from(reader, 1 << 20)
        most = max(most, reader.pending_bytes)
    # Cut: never more than a chunk and a feed held. Not cut: the whole document held.
    assert most < 2000 if bounded else most == 200 * 20 * 13
    reader.finish()
    assert counter.count_from(reader, 1 << 20)
    assert counter.documents == 1 and not counter.in_document


# ==================== Streams


class Trickle(io.RawIOBase):
    """A pipe-like stream: each read gives a random number of bytes, at most asked."""

    def __init__(self, data: bytes, seed: int) -> None:
        self.data, self.at, self.rng = data, 0, random.Random(seed)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = len(self.data) if n < 0 else n
        take = min(n, self.rng.randint(1, max(1, n)))
        out = self.data[self.at : self.at + take]
        self.at += len(out)
        return out


@pytest.mark.parametrize("documents", ["lines", "files", "separator"])
def test_streams_equal_the_concatenated_bytes(tmp_path, documents):
    data = b"\n\n".join(corpus(10)) + b"\n\ntail"
    sep = "\n\n" if documents == "separator" else None
    path = write(tmp_path / "all.txt", data, None)
    expected = Tokenizer.train_from_files(path, VOCAB, documents=documents, separator=sep,
                                          progress=False)
    docs = {"lines": lines_of(data), "files": [data], "separator": _split_separator(data, b"\n\n")}
    same(expected, train_list(docs[documents]))
    for seed, chunk in enumerate([1, 2, 5, 97, 1 << 20]):
        got = Tokenizer.train_from_stream(Trickle(data, seed), VOCAB, documents=documents,
                                          separator=sep, chunk_size=chunk, progress=False)
        same(got, expected)


def test_socket_stream():
    import socket
    import threading

    data = b"\n".join(corpus(12, n=150))
    left, right = socket.socketpair()

    def send():
        with left:
            for i in range(0, len(data), 1000):
                left.sendall(data[i : i + 1000])

    sender = threading.Thread(target=send)
    sender.start()
    with right, right.makefile("rb") as stream:
        got = Tokenizer.train_from_stream(stream, VOCAB, chunk_size=4096, progress=False)
    sender.join()
    same(got, train_list(lines_of(data)))


def test_jsonl_stream(tmp_path):
    docs = ["one", "two words", "three more words"] * 20
    data = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
    got = Tokenizer.train_from_stream(io.BytesIO(data), 270, format="jsonl", chunk_size=3,
                                      progress=False)
    same(got, Tokenizer.train_from_iterator(docs, 270, progress=False))


def test_stream_must_be_binary():
    with pytest.raises(TypeError, match="binary mode"):
        Tokenizer.train_from_stream(io.StringIO("text"), 300, progress=False)
    with pytest.raises(TypeError, match="readable binary stream"):
        Tokenizer.train_from_stream(b"bytes", 300, progress=False)  # type: ignore[arg-type]


# ==================== Hugging Face datasets, streaming


def test_streaming_dataset_is_consumed_without_materializing(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets")
    from bytebpe import documents

    docs = [d.decode("utf-8", "replace") for d in corpus(11, n=400)]
    for i in range(4):
        with open(tmp_path / f"shard{i}.jsonl", "w") as f:
            f.writelines(json.dumps({"text": d}) + "\n" for d in docs[i::4])
    files = sorted(str(p) for p in tmp_path.glob("shard*.jsonl"))
    ds = datasets.load_dataset("json", data_files=files, split="train", streaming=True)
    assert type(ds).__name__ == "IterableDataset"
    order = [d for i in range(4) for d in docs[i::4]]

    seen = []  # documents handed over at each batch: the first batch comes before the end
    real = documents.batches

    def watching(docs_iter, *limits):
        for batch in real(docs_iter, *limits):
            seen.append(len(batch))
            yield batch

    monkeypatch.setattr(documents, "batches", watching)
    got = Tokenizer.train_from_iterator(ds, VOCAB, buffer_size=50, progress=False)
    assert len(seen) > 1 and max(seen) <= 50
    same(got, train_list(order))

    # Lazily: when the first batch is counted, the dataset has produced little more.
    produced = []
    at_first_batch = []

    def rows():
        for i, d in enumerate(docs):
            produced.append(i)
            yield {"text": d}

    def first_watch(docs_iter, *limits):
        for batch in real(docs_iter, *limits):
            at_first_batch.append(len(produced))
            yield batch

    monkeypatch.setattr(documents, "batches", first_watch)
    lazy = datasets.IterableDataset.from_generator(rows)
    got = Tokenizer.train_from_iterator(lazy, VOCAB, buffer_size=50, progress=False)
    assert at_first_batch[0] < len(docs) // 2, at_first_batch
    same(got, train_list(docs))


# ==================== Errors


def test_missing_files_and_globs(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(FileNotFoundError, match="nothere.txt"):
        Tokenizer.train_from_files([tmp_path / "a.txt", tmp_path / "nothere.txt"], VOCAB,
                                   progress=False)
    with pytest.raises(FileNotFoundError, match="no file matches"):
        Tokenizer.train_from_files(str(tmp_path / "*.jsonl"), VOCAB, progress=False)
    with pytest.raises(ValueError, match="empty"):
        Tokenizer.train_from_files([], VOCAB, progress=False)


def _train_merges(path: str) -> list[tuple[int, int, int, int]]:
    return [tuple(m) for m in Tokenizer.train_from_files(path, VOCAB, progress=False).merges()]


def _drop_root() -> None:
    """Becomes 'nobody' (a forked child's first step when the tests run as root)."""
    import pwd  # POSIX only

    try:
        nobody = pwd.getpwnam("nobody")
        uid, gid = nobody.pw_uid, nobody.pw_gid
    except KeyError:
        uid = gid = 65534
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def _call_unprivileged(fn, *args):
    """`fn(*args)` without root's right to read any file: as root (as in CI) in a forked
    child that drops to 'nobody' first, with a timeout; otherwise in this process."""
    if os.geteuid() != 0:
        return fn(*args)
    pool = multiprocessing.get_context("fork").Pool(1, initializer=_drop_root)
    try:
        return pool.apply_async(fn, args).get(timeout=60)
    finally:
        pool.terminate()
        pool.join()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_unreadable_files(tmp_path):
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        Tokenizer.train_from_files(tmp_path, VOCAB, progress=False)
    # A directory anyone may enter (pytest's own is private to its user): the file's mode,
    # not the way to it, is what refuses the read.
    folder = Path(tempfile.mkdtemp(prefix="bytebpe-modes-"))
    try:
        folder.chmod(0o755)
        readable, secret = folder / "readable.txt", folder / "secret.txt"
        for path in (readable, secret):
            path.write_text("x y x y\n")
        readable.chmod(0o644)
        secret.chmod(0)
        assert _call_unprivileged(_train_merges, str(readable)) == _train_merges(str(readable))
        with pytest.raises(PermissionError, match="secret.txt"):
            _call_unprivileged(_train_merges, str(secret))
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize(("line", "message"), [
    (b"{not json", "line 3: not JSON"),
    (b'{"body": "x"}', 'line 3: no "text" field'),
    (b'{"text": 5}', 'line 3: the "text" field is a number'),
    (b'["text"]', "line 3: the row is an array"),
    (b'{"text": "\\ud800"}', "line 3: not JSON"),
    (b'{"text": "\xff"}', "line 3: not JSON"),
])
def test_bad_jsonl_lines_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"text": "ok"}\n\n' + line + b"\n")
    with pytest.raises(InputError, match=re.escape(f"{path}, {message}")):
        Tokenizer.train_from_files(path, VOCAB, progress=False)


def test_parquet_errors(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"body": ["a", "b"], "n": [1, 2]}), path)
    with pytest.raises(InputError, match=r"t.parquet: no 'text' column \(it has \['body', 'n'\]\)"):
        Tokenizer.train_from_files(path, VOCAB, progress=False)
    with pytest.raises(InputError, match="'n' column holds int64, not text"):
        Tokenizer.train_from_files(path, VOCAB, text_column="n", progress=False)
    pq.write_table(pa.table({"text": ["a", None]}), path)
    with pytest.raises(InputError, match="t.parquet, row 1: the 'text' column is null"):
        Tokenizer.train_from_files(path, VOCAB, progress=False)
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        Tokenizer.train_from_files(path, VOCAB, progress=False)


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
@pytest.mark.parametrize("kind", ["txt", "jsonl"])
def test_compressed_files_cut_short(tmp_path, compression, kind):
    rows = [json.dumps({"text": f"row {i} " * 5}) for i in range(3000)]
    data = ("\n".join(rows) + "\n").encode()
    path = write(tmp_path / f"data.{kind}", data, compression)
    whole = Path(path).read_bytes()
    Path(path).write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match=rf"data.{kind}.*: the {compression} data is cut short"):
        Tokenizer.train_from_files(path, VOCAB, progress=False)


def test_compressed_parquet_cut_short(tmp_path):
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"text": [f"row {i}" for i in range(2000)]}), raw)
    path = write(tmp_path / "t.parquet", raw.read_bytes(), "gzip")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(InputError, match="t.parquet.gz"):
        Tokenizer.train_from_files(path, VOCAB, progress=False)


@pytest.mark.parametrize(("kw", "error", "message"), [
    ({"documents": "paragraphs"}, ValueError, "documents='paragraphs'"),
    ({"documents": "separator"}, TypeError, "needs separator="),
    ({"documents": "separator", "separator": ""}, ValueError, "separator is empty"),
    ({"separator": "\n\n"}, ValueError, "documents is not"),
    ({"chunk_size": 0}, ValueError, "chunk_size=0"),
])
def test_bad_options(tmp_path, kw, error, message):
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(error, match=re.escape(message)):
        Tokenizer.train_from_files(tmp_path / "a.txt", VOCAB, progress=False, **kw)


# ==================== Resuming after a bad file is fixed


@pytest.mark.parametrize("fault", ["bad_line", "cut_gzip", "missing"])
def test_resume_after_the_file_is_fixed(tmp_path, fault):
    texts = [[d.decode("utf-8", "replace") for d in corpus(20 + i, n=200)] for i in range(3)]
    good = [b"".join(json.dumps({"text": d}).encode() + b"\n" for d in t) for t in texts]
    paths = [write(tmp_path / f"p{i}.jsonl", g, "gzip") for i, g in enumerate(good)]
    if fault == "bad_line":
        lines = good[1].split(b"\n")
        lines[120] = b"{oops"
        write(tmp_path / "p1.jsonl", b"\n".join(lines), "gzip")
    elif fault == "cut_gzip":
        whole = Path(paths[1]).read_bytes()
        Path(paths[1]).write_bytes(whole[: len(whole) * 2 // 3])
    expected = train_list([d for t in texts for d in t])
    run = RunStore(tmp_path / "run.sqlite", checkpoint_every=3600)
    if fault == "missing":
        os.rename(paths[1], tmp_path / "aside")
        with pytest.raises(FileNotFoundError, match="p1.jsonl.gz"):
            Tokenizer.train_from_files(paths, VOCAB, store=run, progress=False)
        os.rename(tmp_path / "aside", paths[1])
    else:
        with pytest.raises(InputError, match="p1.jsonl.gz"):
            Tokenizer.train_from_files(paths, VOCAB, store=run, chunk_size=1000, progress=False)
        counted = store.read(tmp_path / "run.sqlite").documents
        assert 200 < counted < 400  # the first file and part of the second, kept
        write(tmp_path / "p1.jsonl", good[1], "gzip")
    got = Tokenizer.train_from_files(paths, VOCAB, store=run, chunk_size=999, progress=False)
    assert got.merges() == expected.merges()
    assert got.loss_report()["training"] == expected.loss_report()["training"]


def test_resume_refuses_other_files(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"".join(corpus(30, n=100)) + b"\n{broken")
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text('{"text": "x"}\n{broken\n')
    run = RunStore(tmp_path / "run.sqlite")
    with pytest.raises(InputError):
        Tokenizer.train_from_files([path, jsonl], VOCAB, store=run, progress=False)
    path.write_bytes(b"other text\n" + path.read_bytes())
    with pytest.raises(StoreError, match="input differs"):
        Tokenizer.train_from_files([path, jsonl], VOCAB, store=run, progress=False)


def test_stream_resumes_when_streamed_again(tmp_path):
    data = b"\n".join(corpus(31, n=200))
    broken = data + b"\n"

    class Failing(io.BytesIO):
        def read(self, n=-1):
            if self.tell() > len(data) // 2:
                raise OSError("connection reset")
            return super().read(n)

        read1 = read

    run = RunStore(tmp_path / "run.sqlite")
    with pytest.raises(OSError, match="connection reset"):
        Tokenizer.train_from_stream(Failing(broken), VOCAB, store=run, chunk_size=100,
                                    progress=False)
    assert store.read(tmp_path / "run.sqlite").documents > 0
    got = Tokenizer.train_from_stream(io.BytesIO(broken), VOCAB, store=run, chunk_size=33,
                                      progress=False)
    same(got, train_list(lines_of(broken)))


# ==================== read_files shares the reader


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_read_files_gives_the_documents_of_every_format(tmp_path, compression):
    from bytebpe import read_files

    data = b"\n".join(corpus(40))
    texts = [d.decode("utf-8", "replace") for d in corpus(41)]
    txt = write(tmp_path / "a.txt", data, compression)
    jsonl = write(tmp_path / "b.jsonl",
                  "".join(json.dumps({"text": t}) + "\n" for t in texts).encode(), compression)
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"text": texts}), raw)
    parquet = write(tmp_path / "c.parquet", raw.read_bytes(), compression)
    assert list(read_files([txt, jsonl, parquet])) == lines_of(data) + texts + texts
    assert list(read_files(txt, documents="files")) == [data]


def test_read_files_yields_the_rows_before_a_bad_line(tmp_path):
    from bytebpe import read_files

    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "a"}\n{"text": "b"}\n{oops\n{"text": "c"}\n')
    docs = iter(read_files(path))
    assert [next(docs), next(docs)] == ["a", "b"]
    with pytest.raises(InputError, match=re.escape(f"{path}, line 3: not JSON")):
        next(docs)
