"""The `bytebpe` command line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from bytebpe import Tokenizer
from bytebpe.cli import main


def test_train_on_sample(tmp_path, capsys):
    out = tmp_path / "tok.json"
    assert main(["train", "--sample", "--vocab-size", "1000", "-o", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "vocabulary size: 1,000" in printed
    assert "bytes per token" in printed
    assert "longest learned tokens" in printed
    assert Tokenizer.load(out).vocab_size == 1000


def test_train_with_a_store_then_inspect(tmp_path, capsys):
    store = tmp_path / "run.sqlite"
    args = ["train", "--sample", "--vocab-size", "600", "-o", str(tmp_path / "t.json"),
            "--store", str(store), "--no-progress"]
    assert main(args) == 0
    assert main(args) == 0  # resumes: nothing left to do, same tokenizer
    capsys.readouterr()
    assert main(["inspect", str(store), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "counting: finished" in out and "complete: yes" in out and "first 3 merges" in out
    assert "clean: yes" in out


def test_train_on_files_and_globs(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("hello world\n" * 50 + "goodbye world\n" * 50)
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        for i in range(40):
            f.write(json.dumps({"text": f"row {i} of hello"}) + "\n")
    out = tmp_path / "tok.json"
    code = main(["train", str(tmp_path / "*.txt"), str(tmp_path / "b.jsonl.gz"),
                 "--vocab-size", "265", "-o", str(out), "--no-progress"])
    assert code == 0
    assert "documents" in capsys.readouterr().out
    assert Tokenizer.load(out).vocab_size == 265


def test_train_from_stdin_keeps_invalid_bytes(tmp_path):
    out = tmp_path / "tok.json"
    data = b"caf\xe9 latin-1 line\n" * 40 + b"plain line\n" * 40
    proc = subprocess.run(
        [sys.executable, "-m", "bytebpe.cli", "train", "-", "--vocab-size", "270",
         "-o", str(out), "--no-progress"],
        input=data, capture_output=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    tok = Tokenizer.load(out)
    assert tok.decode_bytes(tok.encode_bytes(data)) == data


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["train"], "give input files"),
        (["train", "--sample", "x.txt"], "not both"),
        (["train", "/no/such/file.txt"], "No such file"),
        (["train", "/no/such/dir/*.txt"], "no file matches"),
        (["train", "x.txt", "--separator", "/"], "--separator goes with --documents separator"),
        (["train", "x.txt", "--documents", "separator"], "--separator goes with"),
        (["train", "-", "x.txt", "--documents", "separator", "--separator", "/"], "give it alone"),
        (["train", "/no/such/file.txt", "--documents", "separator", "--separator", "/"],
         "no such file"),
    ],
)
def test_bad_invocations(args, message, capsys):
    assert main(args + ["--no-progress"]) == 1
    assert message in capsys.readouterr().err


def test_bad_jsonl_names_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n{not json\n')
    assert main(["train", str(path), "--no-progress", "-o", str(tmp_path / "t.json")]) == 1
    assert f"{path}, line 2: not JSON" in capsys.readouterr().err


@pytest.mark.parametrize("documents", [[], ["--documents", "separator", "--separator", r"\n\n"]])
def test_train_from_a_pipe_equals_training_on_the_file(tmp_path, documents):
    data = b"".join(b"para %d: caf\xc3\xa9 \xff text\nmore\n\n" % (i % 13) for i in range(300))
    (tmp_path / "all.txt").write_bytes(data)
    out = tmp_path / "tok.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bytebpe.cli", "train", "-", "--vocab-size", "270",
         "-o", str(out), "--no-progress", *documents],
        input=data, capture_output=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"trained on standard input: " in proc.stdout
    kw = {"documents": "separator", "separator": "\n\n"} if documents else {}
    expected = Tokenizer.train_from_files(tmp_path / "all.txt", 270, progress=False, **kw)
    got = Tokenizer.load(out)
    assert got.merges() == expected.merges()
    assert got.loss_report()["training"] == expected.loss_report()["training"]


def test_train_on_files_split_at_a_separator(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("first doc\nstill first<DOC>second doc<DOC>" * 30)
    out = tmp_path / "tok.json"
    code = main(["train", str(tmp_path / "a.txt"), "--documents", "separator",
                 "--separator", "<DOC>", "--vocab-size", "265", "-o", str(out), "--no-progress"])
    assert code == 0
    assert "60 documents" in capsys.readouterr().out
    expected = Tokenizer.train_from_iterator(
        ["first doc\nstill first", "second doc"] * 30, 265, progress=False)
    assert Tokenizer.load(out).merges() == expected.merges()
