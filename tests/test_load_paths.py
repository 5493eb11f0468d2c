"""Loading from pipes, FIFOs and standard input (each read exactly once), and file names
that are not UTF-8 (loaded, saved and trained on)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from typing import Any

import pytest
from bytebpe import CorruptTokenizerError, Tokenizer, read_files

posix_only = pytest.mark.skipif(os.name != "posix", reason="pipes and byte file names are POSIX")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train_from_iterator(
        ["hello world, low lower lowest"] * 20, 270, special_tokens=["<|eot|>"], progress=False
    )


def _feed(path: str, data: bytes) -> threading.Thread:
    """A writer thread: opens `path` (a FIFO) for writing, writes `data`, closes it."""

    def write() -> None:
        with open(path, "wb") as f:
            f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _files(tok: Tokenizer, tmp_path: Any) -> dict[str, bytes]:
    tok.save(tmp_path / "tok.json")
    tok.save_huggingface(tmp_path / "hf.json")
    tok.save_tiktoken(tmp_path / "tok.tiktoken")
    return {kind: (tmp_path / name).read_bytes()
            for kind, name in (("bytebpe", "tok.json"), ("huggingface", "hf.json"),
                               ("tiktoken", "tok.tiktoken"))}


@posix_only
@pytest.mark.parametrize("kind", ["bytebpe", "huggingface", "tiktoken"])
def test_a_fifo_is_read_once(tok, tmp_path, kind):
    data = _files(tok, tmp_path)[kind]
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    writer = _feed(fifo, data)
    if kind == "tiktoken":  # a pipe has no sidecar: the pattern is given
        loaded = Tokenizer.load(fifo, pattern=tok.pattern)
        assert loaded.encode("hello lowest") == tok.encode("hello lowest")
    else:
        assert Tokenizer.load(fifo) == tok
    writer.join(timeout=30)
    assert not writer.is_alive()


@posix_only
def test_an_os_pipe_is_read_once(tok, tmp_path):
    data = _files(tok, tmp_path)["bytebpe"]
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        assert Tokenizer.load(f"/dev/fd/{read_end}") == tok
    finally:
        os.close(read_end)
    writer.join(timeout=30)


@posix_only
def test_dev_stdin_and_process_substitution_in_the_cli(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    code = "import sys; from bytebpe import Tokenizer; print(Tokenizer.load('/dev/stdin').vocab_size)"
    with open(path, "rb") as f:
        done = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tok.vocab_size)
    with open(path, "rb") as f:
        done = subprocess.run([sys.executable, "-m", "bytebpe.cli", "inspect", "/dev/stdin"],
                              stdin=f, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(bytebpe)" in done.stdout and f"vocab_size: {tok.vocab_size:,}" in done.stdout


@posix_only
def test_a_store_cannot_come_from_a_pipe(tmp_path):
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    writer = _feed(fifo, b"SQLite format 3\x00" + b"\x00" * 100)
    with pytest.raises(CorruptTokenizerError, match="run store .*not from a pipe"):
        Tokenizer.load(fifo)
    writer.join(timeout=30)


# ==================== file names that are not UTF-8

NAME = b"tok-\xff\xfe"


@posix_only
def test_a_non_utf8_name_loads_and_saves(tok, tmp_path):
    directory = os.fsencode(tmp_path)
    path = os.path.join(directory, NAME + b".json")
    tok.save(path)
    assert os.path.exists(path)
    assert Tokenizer.load(path) == tok
    assert Tokenizer.load(os.fsdecode(path)) == tok  # the same name as surrogate escapes
    tiktoken_path = os.path.join(directory, NAME + b".tiktoken")
    tok.save_tiktoken(os.fsdecode(tiktoken_path))
    assert Tokenizer.load(tiktoken_path).encode("hello") == tok.encode("hello")


@posix_only
def test_a_damaged_non_utf8_file_is_named_printably(tmp_path):
    path = os.path.join(os.fsencode(tmp_path), NAME + b".json")
    with open(path, "wb") as f:
        f.write(b'{"merges": 1')
    with pytest.raises(CorruptTokenizerError) as e:
        Tokenizer.load(path)
    message = str(e.value)
    assert "tok-\\udcff\\udcfe" in message
    message.encode("utf-8")  # printable: no lone surrogate in the message itself


@posix_only
def test_training_on_non_utf8_names(tmp_path):
    directory = os.fsencode(tmp_path)
    for i in range(2):
        with open(os.path.join(directory, NAME + b"-%d.txt" % i), "wb") as f:
            f.write(b"low lower lowest\n" * 50)
    pattern = os.path.join(directory, b"tok-*.txt")
    by_bytes = Tokenizer.train_from_files(pattern, 262, progress=False)
    by_str = Tokenizer.train_from_files([os.fsdecode(pattern)], 262, progress=False)
    reference = Tokenizer.train_from_iterator(["low lower lowest\n"] * 100, 262, progress=False)
    assert by_bytes == by_str == reference
    assert len(list(read_files(pattern))) == 100


@posix_only
def test_a_missing_non_utf8_name_is_named_printably(tmp_path):
    missing = os.path.join(os.fsencode(tmp_path), NAME + b".txt")
    with pytest.raises(FileNotFoundError) as e:
        Tokenizer.train_from_files(missing, 270, progress=False)
    assert "\\xff\\xfe" in str(e.value)
    str(e.value).encode("utf-8")


@posix_only
def test_a_non_utf8_parquet_name_is_read(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"text": ["low lower lowest"] * 50}), plain)
    odd = os.path.join(os.fsencode(tmp_path), NAME + b".parquet")
    os.replace(plain, odd)
    assert list(read_files(odd)) == ["low lower lowest"] * 50


@posix_only
def test_process_substitution_in_the_cli(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    bash = "/bin/bash"
    if not os.path.exists(bash):
        pytest.skip("needs bash for <(...)")
    command = f"{shlex.quote(sys.executable)} -m bytebpe.cli inspect <(cat {shlex.quote(str(path))})"
    done = subprocess.run([bash, "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"vocab_size: {tok.vocab_size:,}" in done.stdout
