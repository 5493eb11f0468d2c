"""The README's Python examples run as written (in order, sharing one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

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
