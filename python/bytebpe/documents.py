"""Turning any supported input into a stream of documents (`str` or `bytes`), in batches.

Items may be `str`, `bytes`, lists of those (batches), dict rows with a text column (a
dict whose column holds a list is a batch of rows, as `datasets` gives them), or a
`datasets.Dataset` / `IterableDataset` (in any format: only the text column is read, as
plain Python values). A mapping at the top level (a `DatasetDict`, or a dict of columns
such as `dataset[:20]`) is refused: iterating it would give its keys. A bad item raises a
TypeError naming where it is, or, when the caller keeps a `rejected` tally, is counted by
type and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, Union

from bytebpe.arrow_text import utf8_values


class TextDataset(Protocol):
    """What bytebpe uses of a Hugging Face `datasets.Dataset` / `IterableDataset`."""

    @property
    def column_names(self) -> list[str] | None: ...

    def select_columns(self, column_names: list[str]) -> Any: ...

    def with_format(self, type: str | None = None) -> Any: ...

    def iter(self, batch_size: int) -> Iterator[dict[str, Any]]: ...


# The input of training and of batch encoding: an iterable of documents (str, bytes,
# lists of those, dict rows with a text column), or a dataset.
TrainingData = Union[Iterable[object], TextDataset]

# A batch is flushed at this many bytes even before `buffer_size` documents, so one
# batch never takes long to count (checkpoints and progress come between batches; Ctrl-C
# is seen inside one too). Each batch ends with a fold of its counts into the word table,
# which costs about as much for a small batch as for a large one: 100 MB of the mix
# counted 15-20% faster in batches of 64 MiB than of 16 (benches/RESULTS.md, "2026-12-07
# 08:35"), with the same peak RSS. A memory limit sets smaller batches of its own.
BATCH_BYTES = 64 * 1024 * 1024


TRAINING = "the training data"
ENCODING = "the documents to encode"


def iter_documents(
    data: object,
    text_column: str,
    buffer_size: int,
    rejected: dict[str, int] | None = None,
    *,
    what: str = TRAINING,
) -> Iterator[str | bytes]:
    """The documents of `data` in order. `what` names the data in errors (`TRAINING` or
    `ENCODING`); only training can skip bad items (`rejected`). The top level is checked
    now (before a store or an output file is touched), the items as they are read."""
    check_top_level(data, text_column, what)
    if is_hf_dataset(data):
        return _dataset_documents(
            text_column_only(data, text_column), text_column, buffer_size, rejected, what
        )
    assert isinstance(data, Iterable)
    return _item_documents(data, text_column, rejected, what)


def _item_documents(
    data: Iterable[object], text_column: str, rejected: dict[str, int] | None, what: str
) -> Iterator[str | bytes]:
    for index, item in enumerate(data):
        if isinstance(item, (str, bytes)):
            yield item
        elif isinstance(item, (bytearray, memoryview)):
            yield bytes(item)
        elif isinstance(item, Mapping):
            yield from _row_documents(item, text_column, f"item {index}", rejected, what)
        elif isinstance(item, (list, tuple)):
            for j, element in enumerate(item):
                if isinstance(element, (str, bytes)):
                    yield element
                elif isinstance(element, Mapping):
                    yield from _row_documents(
                        element, text_column, f"item {index}[{j}]", rejected, what
                    )
                else:
                    _reject(f"item {index}[{j}] (in a batch)", element, text_column, rejected, what)
        else:
            _reject(f"item {index}", item, text_column, rejected, what)


def check_top_level(data: object, text_column: str, what: str) -> None:
    """Refuses inputs whose iteration would not give documents: a single text, a mapping
    (a `DatasetDict` gives its split names, a dict of columns its column names), or
    something that is not iterable. The error names the keys and the fix."""
    if isinstance(data, (str, bytes)):
        raise TypeError(
            f"{what} is a single {type(data).__name__}; pass an iterable of documents "
            "(e.g. [text]) so each is a document"
        )
    if isinstance(data, Mapping):
        keys = [str(k) for k in list(data)[:20]]
        name = type(data).__name__
        if name in ("DatasetDict", "IterableDatasetDict"):
            first = keys[0] if keys else "train"
            raise TypeError(
                f"{what} is a {name} with the splits {keys}, not a dataset: iterating it "
                f"would give the split names. Pick one split, e.g. data[{first!r}], or "
                f"load_dataset(..., split={first!r})"
            )
        column = text_column if text_column in data else (keys[0] if keys else text_column)
        raise TypeError(
            f"{what} is a {name} with the keys {keys}: iterating it would give the keys, "
            f"not documents. If it is a dict of columns (as dataset[:n] gives), pass the "
            f"text column, e.g. data[{column!r}], or the dataset itself; for one row, "
            "pass [row]"
        )
    if type(data).__name__ == "DataFrame":  # pandas and polars iterate over column names
        columns = [str(c) for c in list(getattr(data, "columns", []))[:20]]
        column = text_column if text_column in columns else (columns[0] if columns else "text")
        raise TypeError(
            f"{what} is a {type(data).__module__.split('.')[0]} DataFrame with the columns "
            f"{columns}: iterating it would give the column names. Pass its text column, "
            f"e.g. data[{column!r}]"
        )
    if not isinstance(data, Iterable) and not is_hf_dataset(data):
        raise TypeError(f"{what} must be iterable, not {type(data).__name__}")


def is_one_shot(data: object) -> bool:
    """True for inputs that cannot be read twice (iterators, generators)."""
    if is_hf_dataset(data) or not isinstance(data, Iterable):
        return False
    return iter(data) is data


def is_hf_dataset(data: object) -> bool:
    cls = type(data)
    return cls.__module__.startswith("datasets.") and cls.__name__ in (
        "Dataset",
        "IterableDataset",
    )


def batches(
    documents: Iterator[str | bytes], buffer_size: int, batch_bytes: int = BATCH_BYTES
) -> Iterator[list[str | bytes]]:
    """Groups documents into batches of at most `buffer_size` documents or about
    `batch_bytes` bytes."""
    batch: list[str | bytes] = []
    size = 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if len(batch) >= buffer_size or size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


# What to do about a lone surrogate, when training and when encoding.
TRAINING_ADVICE = 'pass surrogates="surrogatepass" to keep it reversibly, or clean the text'
ENCODING_ADVICE = (
    "pass doc.encode('utf-8', 'surrogatepass') to keep it reversibly, or clean the text"
)


def surrogate_error(batch: Sequence[str | bytes], first: int, advice: str) -> ValueError:
    """The error for the first document of `batch` (numbered from `first`) with a lone
    surrogate."""
    for i, doc in enumerate(batch):
        if isinstance(doc, str):
            try:
                doc.encode("utf-8")
            except UnicodeEncodeError as e:
                return ValueError(
                    f"document {first + i} contains a lone surrogate at character {e.start}, "
                    f"which is not valid text; {advice}"
                )
    return ValueError("a document contains a lone surrogate")


def _row_documents(
    row: Mapping[Any, Any], text_column: str, where: str, rejected: dict[str, int] | None,
    what: str,
) -> Iterator[str | bytes]:
    if text_column not in row:
        if rejected is not None:
            _count(rejected, f"row without {text_column!r}")
            return
        raise KeyError(
            f"{where} is a row without a {text_column!r} column (it has "
            f"{sorted(map(str, row))}); pass text_column=... to pick the text"
        )
    value = row[text_column]
    if isinstance(value, (str, bytes)):
        yield value
    elif isinstance(value, (list, tuple)):  # a batch of rows, as datasets gives them
        for j, element in enumerate(value):
            if isinstance(element, (str, bytes)):
                yield element
            else:
                _reject(f"{where}[{text_column!r}][{j}]", element, text_column, rejected, what)
    else:
        _reject(f"{where}[{text_column!r}]", value, text_column, rejected, what)


def _reject(
    where: str, item: object, text_column: str, rejected: dict[str, int] | None, what: str
) -> None:
    if rejected is not None:
        _count(rejected, type(item).__name__)
        return
    hint = (
        " (on_bad_item='skip' skips such items and counts them in the loss ledger)"
        if what == TRAINING else ""
    )
    raise TypeError(
        f"{where} of {what} is {type(item).__name__}; expected str, bytes, "
        f"a list of those, or a dict row with a {text_column!r} column{hint}"
    )


def _count(rejected: dict[str, int], key: str) -> None:
    rejected[key] = rejected.get(key, 0) + 1


def text_column_only(dataset: Any, text_column: str) -> Any:
    """The dataset reduced to its text column, as plain Python values whatever its format
    (numpy, pandas, arrow, torch): other columns are never read, so a wide dataset costs
    no more than its text."""
    columns = dataset.column_names
    if columns is not None:
        if text_column not in columns:
            raise KeyError(
                f"the dataset has no {text_column!r} column (it has {columns}); "
                "pass text_column=... to pick the text"
            )
        dataset = dataset.select_columns([text_column])
    return dataset.with_format(None)


def _dataset_documents(
    dataset: Any, text_column: str, buffer_size: int, rejected: dict[str, int] | None,
    what: str,
) -> Iterator[str | bytes]:
    """The documents of `dataset` (its text column only), `buffer_size` rows a batch. A
    column of Arrow strings is read as the UTF-8 bytes Arrow holds (`arrow_text.py`); a
    null is refused (or skipped) where it stands, as a None value would be."""
    arrow = _arrow_text(dataset, text_column)
    batches = (dataset.with_format("arrow") if arrow else dataset).iter(batch_size=buffer_size)
    for b, batch in enumerate(batches):
        if arrow:
            batch = {text_column: utf8_values(batch.column(text_column))}
        yield from _row_documents(batch, text_column, f"dataset batch {b}", rejected, what)


def _arrow_text(dataset: Any, text_column: str) -> bool:
    """Whether the dataset declares its text column as Arrow strings (a streamed one may
    not know its features: then its rows are read as Python values)."""
    features = getattr(dataset, "features", None)
    feature = features.get(text_column) if features else None
    return getattr(feature, "dtype", None) in ("string", "large_string")
