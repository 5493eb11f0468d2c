"""The README's Python examples run as written (in order, sharing one namespace)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run(tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    pytest.importorskip("tiktoken")
    pytest.importorskip("tokenizers")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)  # the examples write tok.json
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)


def test_readme_cli_flow_runs_as_written(tmp_path):
    """The README's ```sh block runs line by line, each command exactly as written."""
    pytest.importorskip("tokenizers")
    flow = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(flow) == 1
    from bytebpe.sample import sample_documents

    docs = sample_documents(split="train")[:300]
    (tmp_path / "corpus" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "corpus" / "a.txt").write_text("\n".join(docs[:150]) + "\n")
    (tmp_path / "corpus" / "deep" / "er" / "b.txt").write_text("\n".join(docs[150:]) + "\n")
    bytebpe = [sys.executable, "-m", "bytebpe.cli"]
    lines = [ln for ln in flow[0].splitlines() if ln.strip()]
    assert [ln.split()[1] for ln in lines] == ["train", "export", "export", "encode", "inspect"]
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "bytebpe"
        proc = subprocess.run([*bytebpe, *argv[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert proc.returncode == 0, f"{line}\n{proc.stderr}"
    from bytebpe import Tokenizer

    tok = Tokenizer.load(tmp_path / "tok.json")
    assert Tokenizer.load(tmp_path / "tokenizer.json") == tok
    assert sorted(os.listdir(tmp_path / "hf-tokenizer")) == [
        "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    ids = np.fromfile(tmp_path / "train.bin", dtype=np.uint16).tolist()
    eot = tok.special_tokens["<|endoftext|>"]
    lines = [ln for f in ("a.txt", "deep/er/b.txt")
             for ln in (tmp_path / "corpus" / f).read_text().splitlines(keepends=True)]
    assert ids.count(eot) == len(lines)  # one document per line; ** reached the nested file
    assert ids[: ids.index(eot)] == tok.encode_ordinary(lines[0])
