"""Encoding a corpus into one flat binary token file (nanoGPT's `.bin` layout).

The file is the token ids back to back as native-endian uint16 (or uint32) integers,
readable with `numpy.memmap(path, dtype=..., mode="r")`. Documents are encoded in batches
in parallel and written as they finish, so memory stays bounded by one batch whatever the
corpus size. `flat_tokens` is the one call that encodes a batch into such bytes, for the
file and for `Tokenizer.encode_batch_numpy` alike.
"""

from __future__ import annotations

import os
from collections.abc import Sequence, Sized

from bytebpe import arrays
from bytebpe._bytebpe import CoreTokenizer
from bytebpe.checks import check_int, check_str, check_threads, check_writable_file
from bytebpe.documents import (
    ENCODING,
    ENCODING_ADVICE,
    batches,
    iter_documents,
    surrogate_error,
)
from bytebpe.progress import ProgressBar


def flat_tokens(
    core: CoreTokenizer, batch: Sequence[str | bytes], itemsize: int, eot: int | None,
    num_threads: int | None, first: int = 0,
) -> tuple[bytes, bytes]:
    """The ids of `batch` back to back (`itemsize` bytes each, `eot` after each
    document) and int64 document offsets; documents are numbered from `first` in errors."""
    try:
        return core.encode_batch_flat(list(batch), itemsize, eot, num_threads)
    except UnicodeEncodeError:
        raise surrogate_error(batch, first, ENCODING_ADVICE) from None


def write_token_file(
    core: CoreTokenizer,
    documents: object,
    path: str | os.PathLike[str],
    *,
    dtype: object,
    eot: str | int | None,
    text_column: str,
    batch_size: int,
    num_threads: int | None,
    progress: bool,
) -> int:
    """Writes the token file of `documents`; returns the token count. The file appears
    only when complete (written to a temporary name, then renamed)."""
    specials = dict(core.special_tokens)
    _, itemsize = arrays.itemsize_for(core.vocab_size, dtype)
    eot_token = arrays.eot_id(core.vocab_size, specials, eot)
    threads = check_threads(num_threads)
    check_int("batch_size", batch_size, minimum=1)
    check_writable_file(path)  # before the encoding, not at its end
    items = iter_documents(
        documents, check_str("text_column", text_column), batch_size, what=ENCODING
    )
    tmp = f"{os.fspath(path)}.tmp-{os.getpid()}"
    written = 0
    try:
        total = len(documents) if isinstance(documents, Sized) else None
        with open(tmp, "wb") as out, ProgressBar(
            progress, desc="encoding", unit="doc", total=total
        ) as bar:
            first = 0
            for batch in batches(items, batch_size):
                flat, _ = flat_tokens(core, batch, itemsize, eot_token, threads, first)
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
