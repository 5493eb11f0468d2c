"""Every kind of training input behind one protocol, `Source`: in-memory iterables and
datasets, files (plain text, JSON Lines, Parquet; gzip, zstd, xz or bzip2), binary
streams.

The run pipeline (`run.py`) only asks a source to read past documents already counted
(`skip`) and to count more (`count`); how the documents are found is this module's job.
Files are found by one path expansion (`expand_paths`: globs, `**` recursive) for
training, `read_files` and the CLI alike. Plain text and JSON Lines are read, decompressed
and split by the Rust side (`_bytebpe.DocumentReader`) with the GIL released; Parquet is
read with pyarrow (`parquet.py`); a binary stream is read here and fed to a Rust reader.
Whatever the chunking, the counts, ledger and fingerprint are those of whole documents.
"""

from __future__ import annotations

import glob
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from bytebpe import documents
from bytebpe._bytebpe import DocumentReader, WordCounter
from bytebpe.checks import check_choice, check_int, check_str, printable_path
from bytebpe.parquet import ParquetSource

DEFAULT_CHUNK_SIZE = 1 << 20
# Bytes counted per call into Rust: progress and checkpoints happen between calls (a
# call into Rust is one batch of an iterable: `documents.BATCH_BYTES`).
CALL_BYTES = 64 << 20
# Dataset rows read at once under a memory limit (rows are held as Python objects).
DATASET_ROWS = 256
DOCUMENT_MODES = ("lines", "files", "separator")
BAD_ITEM_MODES = ("error", "skip")
# Compression a name claims, by extension (the Rust reader goes by the file's magic bytes
# and refuses a name its bytes contradict); here it only tells what is inside
# (`rows.jsonl.xz` is JSON Lines) and how pyarrow opens a compressed Parquet file.
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".xz": "xz", ".bz2": "bz2"}


class Source(Protocol):
    """One input of a training run."""

    @property
    def name(self) -> str: ...

    @property
    def one_shot(self) -> bool:
        """True when the input cannot be read again from its start (a generator)."""

    @property
    def total(self) -> int | None:
        """The number of documents, when known (for progress)."""

    @property
    def total_bytes(self) -> int | None:
        """The bytes of its documents, when known before reading (a plain text file's
        size; for progress)."""

    @property
    def rejected(self) -> dict[str, int]:
        """Items skipped as not text, by type (`on_bad_item="skip"`)."""

    def skip(self, counter: WordCounter, n: int, seed: int) -> tuple[int, int]:
        """Reads past up to `n` documents: (skipped, fingerprint extended from `seed`)."""

    def count(self, counter: WordCounter, max_bytes: int) -> bool:
        """Counts about `max_bytes` more (at least one batch); True once exhausted."""


# ==================== In-memory iterables and datasets


class IterableSource:
    """Documents of any iterable or `datasets` dataset (see `documents.py`)."""

    def __init__(
        self, data: object, *, text_column: str, buffer_size: int, skip_bad_items: bool,
        memory_limited: bool,
    ) -> None:
        # Files read as Python documents are named by their paths in warnings.
        self.name = repr(data) if isinstance(data, FileDocuments) else "the training data"
        self.one_shot = documents.is_one_shot(data)
        self.total = len(data) if isinstance(data, Sized) else None
        self.total_bytes = None
        self.rejected: dict[str, int] = {}
        self.buffer_size = buffer_size
        # A dataset is read `buffer_size` rows at a time; under a memory limit fewer,
        # since rows are held as Python objects before batching by bytes.
        rows = min(buffer_size, DATASET_ROWS) if memory_limited else buffer_size
        tally = self.rejected if skip_bad_items else None
        self._docs = documents.iter_documents(data, text_column, rows, tally)
        self._batches: Iterator[list[str | bytes]] | None = None

    def skip(self, counter: WordCounter, n: int, seed: int) -> tuple[int, int]:
        # Items skipped here were tallied when first counted (the store has them).
        tallied = dict(self.rejected)
        fingerprint, seen = seed, 0
        while seen < n:
            batch = [doc for _, doc in zip(range(min(self.buffer_size, n - seen)), self._docs)]
            if not batch:
                break
            fingerprint = WordCounter.fingerprint_of(batch, fingerprint)
            seen += len(batch)
        self.rejected.clear()
        self.rejected.update(tallied)
        return seen, fingerprint

    def count(self, counter: WordCounter, max_bytes: int) -> bool:
        if self._batches is None:
            # Under a memory limit the budget sets how much input a batch may hold.
            limit = min(max_bytes, counter.batch_bytes or documents.BATCH_BYTES)
            self._batches = documents.batches(self._docs, self.buffer_size, limit)
        batch = next(self._batches, None)
        if batch is None:
            return True
        first = counter.documents
        try:
            counter.add_batch(batch, first)
        except UnicodeEncodeError:
            raise documents.surrogate_error(batch, first, documents.TRAINING_ADVICE) from None
        return False


def iterable_source(
    data: object, text_column: object, buffer_size: object, on_bad_item: object,
    memory_limited: bool,
) -> IterableSource:
    """An `IterableSource` from `train_from_iterator`'s arguments, checked."""
    return IterableSource(
        data, text_column=check_str("text_column", text_column),
        buffer_size=check_int("buffer_size", buffer_size, minimum=1),
        skip_bad_items=check_choice("on_bad_item", on_bad_item, BAD_ITEM_MODES) == "skip",
        memory_limited=memory_limited,
    )


# ==================== Files and streams read by the Rust side


@dataclass(frozen=True)
class ReadOptions:
    """How plain text is split into documents, and how files are read."""

    documents: str = "lines"
    separator: bytes | None = None
    text_column: str = "text"
    chunk_size: int = DEFAULT_CHUNK_SIZE
    num_threads: int | None = None

    def reader(
        self, path: str | None, name: str, kind: str, cuts: bool, hold_bytes: int | None = None,
    ) -> DocumentReader:
        """A Rust reader of one file (`path`) or of fed chunks (`path=None`); under a
        memory limit it holds at most `hold_bytes` of one document at once."""
        jsonl = kind == "jsonl"
        return DocumentReader(
            path, printable_path(name), "lines" if jsonl else self.documents,
            None if jsonl else self.separator,
            self.text_column if jsonl else None, cuts, self.chunk_size, self.num_threads,
            hold_bytes,
        )


def read_options(
    documents: object, separator: object, text_column: object, chunk_size: object,
    num_threads: int | None,
) -> ReadOptions:
    """`ReadOptions` from `train_from_files`' or `train_from_stream`'s arguments, checked."""
    return ReadOptions(
        documents=str(documents),
        separator=check_documents(documents, separator),
        text_column=check_str("text_column", text_column),
        chunk_size=check_int("chunk_size", chunk_size, minimum=1),
        num_threads=num_threads,
    )


def check_documents(documents: object, separator: object) -> bytes | None:
    """Validates `documents`/`separator`; returns the separator as bytes."""
    check_choice("documents", documents, DOCUMENT_MODES)
    if documents != "separator":
        if separator is not None:
            raise ValueError('separator=... is given, but documents is not "separator"')
        return None
    if isinstance(separator, str):
        separator = separator.encode("utf-8")
    if not isinstance(separator, bytes):
        raise TypeError(
            f'documents="separator" needs separator= as str or bytes, not '
            f"{type(separator).__name__}"
        )
    if not separator:
        raise ValueError("separator is empty; give the text between documents")
    return separator


class ReaderSource:
    """A file read by the Rust side, opened when first read."""

    one_shot = False
    total = None

    def __init__(self, path: str, kind: str, read: ReadOptions, size: int | None = None) -> None:
        self.name = path
        self.total_bytes = size
        self.rejected: dict[str, int] = {}
        self._kind = kind
        self._read = read
        self._reader: DocumentReader | None = None

    def _open(self, counter: WordCounter) -> DocumentReader:
        if self._reader is None:
            self._reader = self._read.reader(
                self.name, self.name, self._kind, counter.cuts_allowed, counter.hold_bytes
            )
        return self._reader

    def skip(self, counter: WordCounter, n: int, seed: int) -> tuple[int, int]:
        return self._open(counter).skip(n, seed)

    def count(self, counter: WordCounter, max_bytes: int) -> bool:
        return counter.count_from(self._open(counter), max_bytes)


class StreamSource:
    """A binary stream, read here in chunks and fed to a Rust reader. It can be streamed
    again to resume (the counted documents are read past and checked)."""

    one_shot = False
    total = None
    total_bytes = None

    def __init__(self, stream: BinaryIO, name: str, kind: str, read: ReadOptions) -> None:
        if not callable(getattr(stream, "read", None)):
            raise TypeError(f"expected a readable binary stream, got {type(stream).__name__}")
        self.name = name
        self.rejected: dict[str, int] = {}
        # read1 returns what has arrived (a pipe or socket need not fill a whole chunk
        # before counting starts); plain read otherwise.
        self._read_chunk = getattr(stream, "read1", stream.read)
        self._kind = kind
        self._read = read
        self._reader: DocumentReader | None = None

    def _open(self, counter: WordCounter) -> DocumentReader:
        if self._reader is None:
            self._reader = self._read.reader(
                None, self.name, self._kind, counter.cuts_allowed, counter.hold_bytes
            )
        return self._reader

    def _feed(self, reader: DocumentReader) -> int:
        """Feeds one chunk (or the end); returns its size."""
        data = self._read_chunk(self._read.chunk_size)
        if data is None:  # a non-blocking stream with nothing to read yet
            time.sleep(0.01)
            return 0
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"{self.name}: read() returned {type(data).__name__}; open the stream in "
                "binary mode (e.g. sys.stdin.buffer, open(path, 'rb'))"
            )
        if data:
            reader.feed(bytes(data))
        else:
            reader.finish()
        return len(data)

    def skip(self, counter: WordCounter, n: int, seed: int) -> tuple[int, int]:
        reader = self._open(counter)
        skipped, fingerprint = reader.skip(n, seed)
        while skipped < n and not reader.exhausted:
            self._feed(reader)
            more, fingerprint = reader.skip(n - skipped, fingerprint)
            skipped += more
        return skipped, fingerprint

    def count(self, counter: WordCounter, max_bytes: int) -> bool:
        reader = self._open(counter)
        fed = 0
        while fed < max_bytes and not reader.exhausted:
            fed += self._feed(reader)
            if counter.count_from(reader, max_bytes):
                return True
        return reader.exhausted


# ==================== Finding files


def path_name(path: object) -> str:
    """A path as str: bytes and PathLike decoded as the OS does (a name that is not UTF-8
    keeps its bytes as surrogate escapes, so it still opens)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path (str, bytes or os.PathLike), not {type(path).__name__}")
    return os.fsdecode(path)


def expand_paths(paths_or_globs: object) -> list[str]:
    """Files in order: each glob's matches sorted (`**` matches any depth); a missing
    file is an error now, not after hours of counting the files before it."""
    if isinstance(paths_or_globs, (str, bytes, os.PathLike)):
        specs = [os.fsdecode(paths_or_globs)]
    elif isinstance(paths_or_globs, Iterable):
        specs = [path_name(p) for p in paths_or_globs]
    else:
        raise TypeError(
            f"paths_or_globs must be a path, a glob or a list of them, not "
            f"{type(paths_or_globs).__name__}"
        )
    if not specs:
        raise ValueError("paths_or_globs is empty: give at least one file or glob")
    return [path for spec in specs for path in _expand(spec)]


def _expand(spec: str, *, must_exist: bool = True) -> list[str]:
    """The files of one path or glob. Without `must_exist`, a plain path is left for the
    reader to open (and to name in its error)."""
    if glob.has_magic(spec):
        matches = sorted(glob.glob(spec, recursive=True))
        if not matches:
            raise FileNotFoundError(f"no file matches {printable_path(spec)!r}")
        return matches
    if must_exist and not os.path.exists(spec):
        raise FileNotFoundError(f"{printable_path(spec)}: no such file")
    return [spec]


def file_kind(path: str) -> tuple[str, str | None]:
    """("text" | "jsonl" | "parquet", compression or None), from the file name."""
    base, ext = os.path.splitext(path)
    compression = COMPRESSIONS.get(ext)
    if compression is None:
        base = path
    inner = os.path.splitext(base)[1].lower()
    if inner in (".jsonl", ".ndjson"):
        return "jsonl", compression
    if inner in (".parquet", ".pq"):
        return "parquet", compression
    return "text", compression


def file_sources(paths: list[str], read: ReadOptions) -> Iterator[Source]:
    """One source per file, opened when reached (so only one file is open at a time)."""
    for path in paths:
        kind, compression = file_kind(path)
        if kind == "parquet":
            yield ParquetSource(path, compression, read.text_column, utf8_bytes=True)
        else:
            # Plain text, uncompressed, one document per line: its documents are its bytes.
            plain = kind == "text" and compression is None and read.documents != "separator"
            yield ReaderSource(path, kind, read, _size(path) if plain else None)


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None  # the reader names the file in its error


# ==================== Documents of files, as Python objects


def read_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    documents: str = "lines",
    text_column: str = "text",
) -> FileDocuments:
    """The documents of files, globs, or "-" (standard input), in order.

    `.jsonl`/`.ndjson` files give the `text_column` field of each row, `.parquet` files
    the `text_column` column; other files give one document per line (line ending kept)
    or, with `documents="files"`, one per file, as bytes, so invalid UTF-8 reaches the
    tokenizer intact. Compressed files (gzip, zstd, xz, bzip2) are decompressed, recognised
    by their first bytes whatever their name. Globs match as in
    `Tokenizer.train_from_files` (`**` at any depth), and files are read by the same Rust
    reader, so errors name the file and line alike (to train on files,
    `Tokenizer.train_from_files` is faster: documents never become Python objects).
    The result can be iterated again (the files are reopened), so a training run over
    files resumes its counting after a crash; standard input can be read only once.
    """
    check_choice("documents", documents, ("lines", "files"))
    specs = (
        [os.fsdecode(paths)] if isinstance(paths, (str, bytes, os.PathLike))
        else [path_name(p) for p in paths]
    )
    return FileDocuments(specs, documents, text_column)


class FileDocuments:
    """Re-iterable documents of files (see `read_files`)."""

    def __init__(self, specs: list[str], documents: str, text_column: str) -> None:
        self.specs = specs
        self.documents = documents
        self.text_column = text_column

    def __repr__(self) -> str:
        return f"read_files({self.specs!r}, documents={self.documents!r})"

    def __iter__(self) -> Iterator[str | bytes]:
        read = ReadOptions(documents=self.documents, text_column=self.text_column)
        for spec in self.specs:
            if spec == "-":
                yield from _stdin_documents(self.documents)
                continue
            for path in _expand(spec, must_exist=False):
                kind, compression = file_kind(path)
                if kind == "parquet":
                    yield from ParquetSource(path, compression, self.text_column).documents()
                    continue
                reader = read.reader(path, path, kind, cuts=False)
                while not reader.exhausted:
                    yield from reader.next_documents()


def _stdin_documents(documents: str) -> Iterator[bytes]:
    stdin = sys.stdin.buffer
    if documents == "files":
        yield stdin.read()
    else:
        yield from (line for line in stdin if line)
