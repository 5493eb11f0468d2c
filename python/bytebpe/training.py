"""Feeding training data to the Rust counter.

Items of any supported shape are flattened into documents (`str` or `bytes`), buffered
into batches, and handed over; the Rust side counts each batch in parallel with the GIL
released. The merges depend only on the documents, never on how they were batched.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from bytebpe import _bytebpe
from bytebpe.progress import ProgressBar

# A batch is flushed at this many bytes even before `buffer_size` documents, so one
# batch never takes long to count (Ctrl-C is seen between batches).
BATCH_BYTES = 16 * 1024 * 1024
SURROGATE_MODES = ("error", "surrogatepass")


class TrainingWarning(UserWarning):
    """Training finished, but not quite as asked (empty data, stopped early)."""


def check_config(
    vocab_size: object,
    special_tokens: object,
    min_frequency: object,
    num_threads: object,
    buffer_size: object = 1,
) -> list[str]:
    """Validates the settings every training entry point shares; returns the specials."""
    if isinstance(special_tokens, (str, bytes)) or not isinstance(special_tokens, Iterable):
        raise TypeError(
            f"special_tokens must be a list of str, not {type(special_tokens).__name__}"
        )
    specials = list(special_tokens)
    for i, token in enumerate(specials):
        if not isinstance(token, str):
            raise TypeError(f"special_tokens[{i}] is {type(token).__name__}, expected str")
        if not token:
            raise ValueError(f"special_tokens[{i}] is empty; special tokens need text")
        if token in specials[:i]:
            raise ValueError(f"special_tokens[{i}] {token!r} is given more than once")
    _check_int("vocab_size", vocab_size, minimum=256 + len(specials), why=(
        f"it counts the 256 byte tokens and the {len(specials)} special tokens"
    ))
    _check_int("min_frequency", min_frequency, minimum=1)
    if num_threads is not None:
        _check_int("num_threads", num_threads, minimum=1)
    _check_int("buffer_size", buffer_size, minimum=1)
    return specials


def _check_int(name: str, value: object, *, minimum: int, why: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        because = f" ({why})" if why else ""
        raise ValueError(f"{name}={value} is too small: it must be at least {minimum}{because}")


def iter_documents(data: Any, text_column: str, buffer_size: int) -> Iterator[str | bytes]:
    """Yields the documents of `data`, raising a TypeError that names the bad item."""
    if _is_hf_dataset(data):
        yield from _dataset_documents(data, text_column, buffer_size)
        return
    if isinstance(data, (str, bytes)):
        raise TypeError(
            "the training data is a single str/bytes; pass an iterable of documents "
            "(e.g. [text]) so each is a document"
        )
    if not isinstance(data, Iterable):
        raise TypeError(f"the training data must be iterable, not {type(data).__name__}")
    for index, item in enumerate(data):
        if isinstance(item, (str, bytes)):
            yield item
        elif isinstance(item, (bytearray, memoryview)):
            yield bytes(item)
        elif isinstance(item, Mapping):
            yield from _row_documents(item, text_column, f"item {index}")
        elif isinstance(item, (list, tuple)):
            for j, element in enumerate(item):
                if isinstance(element, (str, bytes)):
                    yield element
                elif isinstance(element, Mapping):
                    yield from _row_documents(element, text_column, f"item {index}[{j}]")
                else:
                    raise _bad_item(f"item {index}[{j}] (in a batch)", element, text_column)
        else:
            raise _bad_item(f"item {index}", item, text_column)


def _row_documents(row: Mapping, text_column: str, where: str) -> Iterator[str | bytes]:
    if text_column not in row:
        raise KeyError(
            f"{where} is a row without a {text_column!r} column (it has "
            f"{sorted(map(str, row))}); pass text_column=... to pick the text"
        )
    value = row[text_column]
    if isinstance(value, (str, bytes)):
        yield value
    elif isinstance(value, (list, tuple)):  # a batch of rows, as datasets gives them
        for j, element in enumerate(value):
            if not isinstance(element, (str, bytes)):
                raise _bad_item(f"{where}[{text_column!r}][{j}]", element, text_column)
            yield element
    else:
        raise _bad_item(f"{where}[{text_column!r}]", value, text_column)


def _bad_item(where: str, item: object, text_column: str) -> TypeError:
    return TypeError(
        f"{where} of the training data is {type(item).__name__}; expected str, bytes, "
        f"a list of those, or a dict row with a {text_column!r} column"
    )


def _is_hf_dataset(data: object) -> bool:
    cls = type(data)
    return cls.__module__.startswith("datasets.") and cls.__name__ in (
        "Dataset",
        "IterableDataset",
    )


def _dataset_documents(dataset: Any, text_column: str, buffer_size: int) -> Iterator[str | bytes]:
    columns = dataset.column_names
    if columns is not None and text_column not in columns:
        raise KeyError(
            f"the dataset has no {text_column!r} column (it has {columns}); "
            "pass text_column=... to pick the text"
        )
    for b, batch in enumerate(dataset.iter(batch_size=buffer_size)):
        yield from _row_documents(batch, text_column, f"dataset batch {b}")


def batches(
    documents: Iterator[str | bytes], buffer_size: int
) -> Iterator[tuple[int, list[str | bytes]]]:
    """Groups documents into (index of the first, batch) of at most `buffer_size`
    documents or about BATCH_BYTES bytes."""
    batch: list[str | bytes] = []
    batch_bytes = 0
    first = 0
    for doc in documents:
        batch.append(doc)
        batch_bytes += len(doc)
        if len(batch) >= buffer_size or batch_bytes >= BATCH_BYTES:
            yield first, batch
            first += len(batch)
            batch, batch_bytes = [], 0
    if batch:
        yield first, batch


def surrogate_error(batch: list[str | bytes], first: int) -> ValueError:
    """The error for the first document of `batch` with a lone surrogate."""
    for i, doc in enumerate(batch):
        if isinstance(doc, str):
            try:
                doc.encode("utf-8")
            except UnicodeEncodeError as e:
                return ValueError(
                    f"document {first + i} contains a lone surrogate at character {e.start}, "
                    "which is not valid text; pass doc.encode('utf-8', 'surrogatepass') "
                    "to keep it reversibly, or clean the text"
                )
    return ValueError("a document contains a lone surrogate")


def count_documents(
    counter: _bytebpe.WordCounter,
    documents: Iterator[str | bytes],
    *,
    buffer_size: int,
    total: int | None,
    progress: bool,
) -> None:
    """Counts `documents` in batches, updating a progress bar per batch."""
    started = time.perf_counter()
    with ProgressBar(progress, desc="counting", unit="doc", total=total) as bar:
        for first, batch in batches(documents, buffer_size):
            counter.add_batch(batch, first)
            bar.update(len(batch))
            seconds = max(time.perf_counter() - started, 1e-9)
            mb = counter.bytes / 1e6
            bar.set_postfix_str(f"{mb:,.1f} MB, {mb / seconds:,.1f} MB/s")


def merge(
    counter: _bytebpe.WordCounter,
    vocab_size: int,
    min_frequency: int,
    n_special: int,
    progress: bool,
) -> _bytebpe.CoreTokenizer:
    """Runs the merge loop (GIL released, Ctrl-C aware) and warns when it stops short."""
    empty = counter.distinct_words == 0
    with ProgressBar(progress, desc="merging", unit="merge", total=vocab_size - 256 - n_special) as bar:
        report = (lambda created, _merges: bar.update_to(created)) if progress else None
        core = counter.train(vocab_size, min_frequency, [], report)
    if empty:
        warnings.warn(
            "the training data was empty: the tokenizer has only the 256 byte tokens"
            + (" and the special tokens" if n_special else ""),
            TrainingWarning,
            stacklevel=3,
        )
    elif core.vocab_size < vocab_size:
        warnings.warn(
            f"training stopped at vocab_size={core.vocab_size}, short of the requested "
            f"{vocab_size}: no remaining pair occurs at least min_frequency={min_frequency} "
            "times",
            TrainingWarning,
            stacklevel=3,
        )
    return core


def word_count_items(counts: Mapping) -> list[tuple[bytes, int]]:
    """Checks a word -> count mapping and returns (word bytes, count) pairs."""
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping of word -> count, not {type(counts).__name__}")
    items = []
    for word, count in counts.items():
        if isinstance(word, str):
            try:
                data = word.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ValueError(
                    f"word {word!r} contains a lone surrogate at character {e.start}; "
                    "pass it as bytes instead"
                ) from None
        elif isinstance(word, bytes):
            data = word
        else:
            raise TypeError(f"word {word!r} is {type(word).__name__}, expected str or bytes")
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"the count of word {word!r} is {type(count).__name__}, expected int")
        if not 0 <= count < 2**64:
            raise ValueError(f"the count of word {word!r} is {count}; counts must be in [0, 2**64)")
        items.append((data, count))
    return items
