"""The `bytebpe` command line."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import bytebpe
import bytebpe.loading
import numpy as np
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


@pytest.mark.parametrize(("text", "shown"), [("hello world\nthe quick brown fox\n", "he"),
                                             ("ab\n", "none (no merge learned)")])
def test_learned_tokens_are_merged_ones_printed_escaped(tmp_path, capsys, text, shown):
    # A small corpus learns few merges: the list shows those, never the byte tokens
    # (whose control characters would reach the terminal raw).
    corpus = tmp_path / "c.txt"
    corpus.write_text(text)
    with pytest.warns(bytebpe.TrainingWarning):
        main(["train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t.json"),
              "--no-progress"])
    printed = capsys.readouterr().out
    assert f"longest learned tokens: {shown}\n" in printed
    assert not any(c in printed for c in "\x00\x01\x1b")


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


@pytest.fixture(scope="module")
def sample_tok(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "tok.json"
    assert main(["train", "--sample", "--vocab-size", "600", "--special-token", "<|endoftext|>",
                 "-o", str(path), "--no-progress", "--show", "0"]) == 0
    return path


@pytest.mark.parametrize(("fmt", "default"), [
    ("bytebpe", "bytebpe-tokenizer.json"), ("huggingface", "tokenizer.json"),
    ("tiktoken", "tokenizer.tiktoken"), ("transformers", "tokenizer"),
])
def test_export_every_format_to_its_default_name(sample_tok, tmp_path, monkeypatch, capsys,
                                                 fmt, default):
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(sample_tok), "--format", fmt]) == 0
    assert f"wrote {default}" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == sorted(
        [default, *(["tokenizer.tiktoken.json"] if fmt == "tiktoken" else [])])
    # Whatever was written reads back (by content) as the same tokenizer, in the CLI too.
    assert Tokenizer.load(tmp_path / default) == Tokenizer.load(sample_tok)
    assert main(["inspect", default, "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "vocab_size: 600" in out
    kind = {"bytebpe": "bytebpe", "tiktoken": "tiktoken"}.get(fmt, "huggingface")
    assert f"({kind})" in out


def test_train_writes_the_format_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--sample", "--vocab-size", "300", "--no-progress", "--show", "0",
                 "--format", "huggingface"]) == 0
    assert "wrote tokenizer.json" in capsys.readouterr().out
    assert json.loads((tmp_path / "tokenizer.json").read_text())["model"]["type"] == "BPE"
    assert main(["train", "--sample", "--vocab-size", "300", "--no-progress", "--show", "0"]) == 0
    assert "wrote bytebpe-tokenizer.json" in capsys.readouterr().out
    assert main(["train", "--sample", "--vocab-size", "300", "--no-progress",
                 "--pad-token", "<pad>"]) == 1
    assert "--pad-token and --unk-token go with --format transformers" in capsys.readouterr().err


def test_encode_and_base_take_any_format(sample_tok, tmp_path, capsys):
    tok = Tokenizer.load(sample_tok)
    tok.save_tiktoken(tmp_path / "t.tiktoken")
    (tmp_path / "bare.tiktoken").write_bytes((tmp_path / "t.tiktoken").read_bytes())
    corpus = tmp_path / "c.txt"
    corpus.write_text("one line\ntwo lines\n")
    for name, extra in (("t.tiktoken", []), ("bare.tiktoken", ["--pattern", "cl100k"])):
        out = tmp_path / f"{name}.bin"
        assert main(["encode", str(corpus), "-t", str(tmp_path / name), "-o", str(out),
                     "--no-progress", *extra]) == 0
        assert np.fromfile(out, dtype=np.uint16).tolist() == (
            tok.encode("one line\n") + tok.encode("two lines\n"))
    assert main(["encode", str(corpus), "-t", str(tmp_path / "bare.tiktoken"),
                 "-o", str(tmp_path / "x.bin")]) == 1
    assert "pass --pattern (cl100k" in capsys.readouterr().err
    out = tmp_path / "extended.json"
    assert main(["train", str(corpus), "--base", str(tmp_path / "t.tiktoken"),
                 "--vocab-size", "602", "--min-frequency", "1", "-o", str(out),
                 "--no-progress", "--heldout", str(corpus)]) == 0
    assert Tokenizer.load(out).vocab_size == 602


def test_double_star_globs_in_train_and_encode(sample_tok, tmp_path, capsys):
    (tmp_path / "d" / "e" / "f").mkdir(parents=True)
    (tmp_path / "d" / "top.txt").write_text("top level\n")
    (tmp_path / "d" / "e" / "f" / "deep.txt").write_text("deep down\n" * 3)
    pattern = str(tmp_path / "d" / "**" / "*.txt")
    out = tmp_path / "t.json"
    assert main(["train", pattern, "--vocab-size", "260", "-o", str(out), "--no-progress",
                 "--heldout", pattern]) == 0
    assert "4 documents" in capsys.readouterr().out
    assert main(["encode", pattern, "-t", str(sample_tok), "-o", str(tmp_path / "x.bin"),
                 "--eot", "<|endoftext|>", "--no-progress"]) == 0
    tok = Tokenizer.load(sample_tok)
    assert np.fromfile(tmp_path / "x.bin", dtype=np.uint16).tolist().count(
        tok.eot_token) == 4


def test_report_and_warning_for_mostly_invalid_utf8(tmp_path):
    path = tmp_path / "blob.txt"
    path.write_bytes(bytes(range(128, 256)) * 40 + b"\nsome text\n" * 10)
    proc = subprocess.run(
        [sys.executable, "-m", "bytebpe.cli", "train", str(path), "--vocab-size", "260",
         "-o", str(tmp_path / "t.json"), "--no-progress", "--heldout", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "TrainingWarning" in proc.stderr and "are not valid UTF-8" in proc.stderr
    assert "blob.txt" in proc.stderr
    assert "invalid UTF-8: 5,120 bytes" in proc.stdout
    assert "is the input binary or compressed?" in proc.stdout


def _never_trains(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("training started")

    for name in ("train_from_iterator", "train_from_files", "train_from_stream"):
        monkeypatch.setattr(Tokenizer, name, fail)


@pytest.mark.parametrize("fmt", ["bytebpe", "huggingface", "tiktoken", "transformers"])
def test_a_missing_output_directory_is_refused_before_training(tmp_path, monkeypatch, capsys, fmt):
    _never_trains(monkeypatch)
    out = tmp_path / "nodir" / "tok.json"
    assert main(["train", "--sample", "-o", str(out), "--format", fmt, "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"its directory {str(out.parent)!r} does not exist" in err, err
    assert "training started" not in err and ".tmp-" not in err
    assert os.listdir(tmp_path) == []


def test_an_existing_directory_as_output_is_refused_and_nothing_is_left(
    sample_tok, tmp_path, monkeypatch, capsys
):
    target = tmp_path / "existing_dir"
    target.mkdir()
    assert main(["export", str(sample_tok), "-o", str(target)]) == 1
    assert f"{str(target)!r} is a directory" in capsys.readouterr().err
    _never_trains(monkeypatch)
    assert main(["train", "--sample", "-o", str(target), "--no-progress"]) == 1
    assert f"{str(target)!r} is a directory" in capsys.readouterr().err
    assert main(["encode", "-t", str(sample_tok), str(sample_tok), "-o", str(target)]) == 1
    assert "is a directory" in capsys.readouterr().err
    # The library's atomic writer refuses it too, and cleans up whatever fails.
    with pytest.raises(IsADirectoryError, match="is a directory"):
        Tokenizer.load(sample_tok).save(target)
    assert sorted(os.listdir(tmp_path)) == ["existing_dir"]
    assert os.listdir(target) == []


def test_train_from_a_closed_standard_input(tmp_path):
    out = tmp_path / "tok.json"
    proc = subprocess.run(
        f"'{sys.executable}' -m bytebpe.cli train - -o '{out}' --no-progress <&-",
        shell=True, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    assert "standard input is closed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_traceback_escapes_the_command(sample_tok, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("something unforeseen")

    monkeypatch.setattr(bytebpe.loading, "build", broken)
    assert main(["inspect", str(sample_tok)]) == 1
    assert "bytebpe inspect: error: RuntimeError: something unforeseen" in capsys.readouterr().err
