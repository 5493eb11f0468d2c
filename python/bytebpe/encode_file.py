"""Encoding a corpus into one flat binary token file (nanoGPT's `.bin` layout).

The file is the token ids back to back as native-endian uint16 (or uint32) integers, readable with `numpy.memmap(path, dtype=..., mode="r")`. Documents are
encoded in batches in parallel and written as they finish, so memory stays bounded by
one batch whatever the corpus size.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from bytebpe import documents as docs_mod
from bytebpe import training
from bytebpe.progress import ProgressBar

if TYPE_CHECKING:
    from bytebpe.tokenizer import Tokenizer

DTYPES = {"uint16": 2, "uint32": 4}


def itemsize_for(tokenizer: Tokenizer, dtype: Any) -> tuple[str, int]:
    """The dtype name and item size to store `tokenizer`'s ids, checked to fit."""
    if dtype is None:
        name = "uint16" if tokenizer.vocab_size <= 2**16 else "uint32"
    else:
        name = getattr(dtype, "__name__", None) or str(getattr(dtype, "name", dtype))
        if name not in DTYPES:
            raise ValueError(f"dtype={dtype!r}; token arrays are 'uint16' or 'uint32'")
        if name == "uint16" and tokenizer.vocab_size > 2**16:
            raise ValueError(
                f"dtype=uint16 cannot hold ids up to {tokenizer.vocab_size - 1}; use uint32"
            )
    return name, DTYPES[name]


def eot_id(tokenizer: Tokenizer, eot: str | int | None) -> int | None:
    if eot is None:
        return None
    if isinstance(eot, str):
        if eot not in tokenizer.special_tokens:
            raise ValueError(
                f"eot={eot!r} is not a special token of this tokenizer "
                f"(it has {sorted(tokenizer.special_tokens)})"
            )
        return tokenizer.special_tokens[eot]
    if isinstance(eot, bool) or not isinstance(eot, int) or not 0 <= eot < tokenizer.vocab_size:
        raise ValueError(f"eot={eot!r} is not a token id below {tokenizer.vocab_size}")
    return eot


def encode_to_file(
    tokenizer: Tokenizer,
    documents: Any,
    path: str | os.PathLike[str],
    *,
    dtype: Any = None,
    eot: str | int | None = None,
    text_column: str = "text",
    batch_size: int = 1024,
    num_threads: int | None = None,
    progress: bool = True,
) -> int:
    """Encodes `documents` (anything `train_from_iterator` accepts, or
    `bytebpe.read_files(...)`) into a flat token file at `path`; returns the token count.

    `eot` (a special token's text or an id) is written after every document. The file
    appears only when complete (written to a temporary name, then renamed).
    """
    _, itemsize = itemsize_for(tokenizer, dtype)
    eot_token = eot_id(tokenizer, eot)
    if num_threads is not None:
        training.check_int("num_threads", num_threads, minimum=1)
    training.check_int("batch_size", batch_size, minimum=1)
    docs = docs_mod.iter_documents(documents, text_column, batch_size)
    tmp = f"{os.fspath(path)}.tmp-{os.getpid()}"
    written = 0
    try:
        with open(tmp, "wb") as out, ProgressBar(progress, desc="encoding", unit="doc") as bar:
            first = 0
            for batch in docs_mod.batches(docs, batch_size):
                try:
                    flat, _ = tokenizer._core.encode_batch_flat(batch, itemsize, eot_token, num_threads)
                except UnicodeEncodeError:
                    raise docs_mod.surrogate_error(batch, first) from None
                first += len(batch)
                out.write(flat)
                written += len(flat) // itemsize
                bar.update(len(batch))
                bar.set_postfix_str(f"{written:,} tokens")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return written
