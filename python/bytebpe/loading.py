"""One loader for every file bytebpe reads, recognised by its content (not its name): a
bytebpe tokenizer file, a run store (SQLite), a Hugging Face `tokenizer.json` (or a
directory holding one, as `save_pretrained` writes), or a tiktoken `.tiktoken` ranks
file (with its sidecar, or a `pattern`). Returns the native tokenizer and its ledger.
"""

from __future__ import annotations

import os
import re

from bytebpe import file_format, interop, store
from bytebpe.errors import CorruptTokenizerError

__all__ = ["KINDS", "kind_of", "load_any"]

KINDS = ("bytebpe", "store", "huggingface", "tiktoken")
# A `.tiktoken` line: base64 of the token's bytes, a space, its rank.
_RANKS_LINE = re.compile(rb"[A-Za-z0-9+/]*={0,2} \d+\r?\n?")
_HEAD = 4096


def kind_of(path: str | os.PathLike[str]) -> str:
    """Which of `KINDS` the file at `path` is, from its first bytes; CorruptTokenizerError
    when it is none of them (naming the file and what was expected)."""
    where = repr(os.fspath(path))
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "tokenizer.json")):
            return "huggingface"
        raise CorruptTokenizerError(
            f"{where} is a directory without a tokenizer.json; give a tokenizer file"
        )
    with open(path, "rb") as f:
        head = f.read(_HEAD)
    if head.startswith(store.SQLITE_MAGIC):
        return "store"
    if not head.strip():
        raise CorruptTokenizerError(f"{where} is empty (a run store that is being created?)")
    text = head.lstrip()
    if text.startswith(b"{"):
        if b'"bytebpe-tokenizer"' in head:
            return "bytebpe"
        if b'"model"' in head or b'"added_tokens"' in head or b'"version"' in head:
            return "huggingface"
        return "bytebpe"  # let its own reader say what is wrong with it
    first = head.split(b"\n", 1)[0] + b"\n"
    if _RANKS_LINE.fullmatch(first):
        return "tiktoken"
    raise CorruptTokenizerError(
        f"{where} is not a tokenizer bytebpe reads: not a bytebpe tokenizer file, a run "
        "store, a Hugging Face tokenizer.json or a tiktoken ranks file (it starts with "
        f"{head[:40]!r})"
    )


def load_any(
    path: str | os.PathLike[str], *, vocab_size: int | None = None, pattern: str | None = None
) -> file_format.Loaded:
    """The tokenizer in `path`, whatever its kind (see `kind_of`). `vocab_size` (bytebpe
    files and run stores) keeps the first merges only; `pattern` is the pre-tokenization
    regex of a `.tiktoken` file without a sidecar."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load takes a path, not {type(path).__name__}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{os.fspath(path)}: no such file")
    kind = kind_of(path)
    if kind != "tiktoken" and pattern is not None:
        raise ValueError(
            f"pattern= is only for .tiktoken ranks files (which do not store it); "
            f"{os.fspath(path)!r} is a {kind} file and stores its own"
        )
    if kind in ("huggingface", "tiktoken") and vocab_size is not None:
        raise ValueError(
            f"vocab_size= takes a prefix of a bytebpe merge log; {os.fspath(path)!r} is a "
            f"{kind} file without one"
        )
    if kind == "store":
        stored = store.read(path, with_snapshot=False)
        return file_format.from_store(stored, repr(os.fspath(path)), vocab_size)
    if kind == "huggingface":
        return interop.huggingface_import.from_huggingface(path), None
    if kind == "tiktoken":
        return interop.tiktoken.from_tiktoken(path, pattern, None), None
    return file_format.load(path, vocab_size)
