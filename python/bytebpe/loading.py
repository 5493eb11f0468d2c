"""One loader for every file bytebpe reads, recognised by its content (not its name): a
bytebpe tokenizer file, a run store (SQLite), a Hugging Face `tokenizer.json` (or a
directory holding one, as `save_pretrained` writes), or a tiktoken `.tiktoken` ranks
file (with its sidecar, or a `pattern`). Returns the native tokenizer and its ledger.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import NamedTuple

from bytebpe import file_format, interop, store
from bytebpe.errors import CorruptTokenizerError

__all__ = ["KINDS", "ReadFile", "build", "load_any", "read"]

KINDS = ("bytebpe", "store", "huggingface", "tiktoken")
# A `.tiktoken` line: base64 of the token's bytes, a space, its rank.
_RANKS_LINE = re.compile(rb"[A-Za-z0-9+/]*={0,2} \d+\r?\n?")
_HEAD = 4096


class ReadFile(NamedTuple):
    """A tokenizer file, read once: its name, its kind (one of `KINDS`) and its bytes
    (None for a run store or a directory, which their readers open themselves)."""

    path: str
    kind: str
    raw: bytes | None

    @property
    def where(self) -> str:
        return repr(self.path)


def read(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> ReadFile:
    """Opens `path` once and tells its kind from its first bytes. A pipe, FIFO or device
    is read exactly once (so `/dev/stdin` and `<(cat tok.json)` work); like `open()`, a
    FIFO blocks until a writer opens it. OS errors (missing file, permission) are OSError
    naming the path; a file of no known kind is CorruptTokenizerError."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"load takes a path, not {type(path).__name__}")
    name = os.fsdecode(path)  # a non-UTF-8 name stays reversible (surrogateescape)
    where = repr(name)
    if os.path.isdir(name):
        if os.path.exists(os.path.join(name, "tokenizer.json")):
            return ReadFile(os.path.join(name, "tokenizer.json"), "huggingface", None)
        raise CorruptTokenizerError(
            f"{where} is a directory without a tokenizer.json; give a tokenizer file"
        )
    try:
        with open(name, "rb") as f:
            head = f.read(_HEAD)
            if head.startswith(store.SQLITE_MAGIC):
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise CorruptTokenizerError(
                        f"{where} holds a run store (SQLite), which is read from a file on "
                        "disk, not from a pipe or device; give the store's path"
                    )
                return ReadFile(name, "store", None)
            raw = head + f.read()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"{name}: no such file") from None
    return ReadFile(name, _kind(raw, where), raw)


def _kind(raw: bytes, where: str) -> str:
    head = raw[:_HEAD]
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


def build(
    file: ReadFile, *, vocab_size: int | None = None, pattern: str | None = None
) -> file_format.Loaded:
    """The tokenizer in a file `read` has read. `vocab_size` (bytebpe files and run
    stores) keeps the first merges only; `pattern` is the pre-tokenization regex of a
    `.tiktoken` file without a sidecar."""
    if file.kind != "tiktoken" and pattern is not None:
        raise ValueError(
            f"pattern= is only for .tiktoken ranks files (which do not store it); "
            f"{file.where} is a {file.kind} file and stores its own"
        )
    if file.kind in ("huggingface", "tiktoken") and vocab_size is not None:
        raise ValueError(
            f"vocab_size= takes a prefix of a bytebpe merge log; {file.where} is a "
            f"{file.kind} file without one"
        )
    if file.kind == "store":
        stored = store.read(file.path, with_snapshot=False)
        return file_format.from_store(stored, file.where, vocab_size)
    if file.raw is None:  # a directory holding a tokenizer.json
        return interop.huggingface_import.from_huggingface(file.path), None
    if file.kind == "huggingface":
        return interop.huggingface_import.from_huggingface_bytes(file.raw, file.where), None
    if file.kind == "tiktoken":
        return interop.tiktoken.from_ranks_bytes(file.raw, file.path, pattern, None), None
    return file_format.load_bytes(file.raw, file.where, vocab_size)


def load_any(
    path: str | bytes | os.PathLike[str] | os.PathLike[bytes],
    *,
    vocab_size: int | None = None,
    pattern: str | None = None,
) -> file_format.Loaded:
    """The tokenizer in `path`, whatever its kind (see `read` and `build`)."""
    return build(read(path), vocab_size=vocab_size, pattern=pattern)
