"""Training on files and binary streams, read in chunks with bounded memory.

Plain text and JSON Lines (optionally `.gz`/`.zst`) are read, decompressed and split by
the Rust side (`_bytebpe.DocumentReader`), one batch ahead of counting, with the GIL
released. Parquet is read here in record batches with pyarrow. A binary stream is read
with `.read(chunk_size)` here and fed to a reader. Whatever the chunking, the counts,
the ledger and the fingerprint are those of the whole documents (see docs/design.md,
"Files and streams").
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from bytebpe import _bytebpe, store, training
from bytebpe.progress import ProgressBar

DEFAULT_CHUNK_SIZE = 1 << 20
# Bytes counted per call into Rust: progress, checkpoints and Ctrl-C happen between calls.
CALL_BYTES = 16 << 20
PARQUET_BATCH_ROWS = 4096
DOCUMENT_MODES = ("lines", "files", "separator")
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


class Source(Protocol):
    name: str

    def skip(self, n: int, seed: int) -> tuple[int, int]:
        """Reads past up to `n` documents: (skipped, fingerprint extended from `seed`)."""

    def count(self, counter: _bytebpe.WordCounter, max_bytes: int) -> bool:
        """Counts about `max_bytes` more; True once the source is exhausted."""


def expand_paths(paths_or_globs: Any) -> list[str]:
    """Files in order: each glob's matches sorted; a missing file is an error now, not
    after hours of counting the files before it."""
    if isinstance(paths_or_globs, (str, os.PathLike)):
        specs = [os.fspath(paths_or_globs)]
    elif isinstance(paths_or_globs, Iterable) and not isinstance(paths_or_globs, bytes):
        specs = [os.fspath(p) for p in paths_or_globs]
    else:
        raise TypeError(
            f"paths_or_globs must be a path, a glob or a list of them, not "
            f"{type(paths_or_globs).__name__}"
        )
    if not specs:
        raise ValueError("paths_or_globs is empty: give at least one file or glob")
    paths: list[str] = []
    for spec in specs:
        if glob.has_magic(spec):
            matches = sorted(glob.glob(spec, recursive=True))
            if not matches:
                raise FileNotFoundError(f"no file matches {spec!r}")
            paths.extend(matches)
        elif not os.path.exists(spec):
            raise FileNotFoundError(f"{spec}: no such file")
        else:
            paths.append(spec)
    return paths


def file_format(path: str) -> tuple[str, str | None]:
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


def check_documents(documents: object, separator: object) -> bytes | None:
    """Validates `documents`/`separator`; returns the separator as bytes."""
    training.check_choice("documents", documents, DOCUMENT_MODES)
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


def file_sources(
    paths: list[str],
    *,
    documents: str,
    separator: bytes | None,
    text_column: str,
    chunk_size: int,
    cuts: bool,
    num_threads: int | None,
) -> Iterator[Source]:
    """One source per file, opened when reached (so only one file is open at a time)."""
    for path in paths:
        kind, compression = file_format(path)
        if kind == "parquet":
            yield ParquetSource(path, compression, text_column)
        else:
            reader = _bytebpe.DocumentReader(
                path, path, "lines" if kind == "jsonl" else documents,
                None if kind == "jsonl" else separator,
                text_column if kind == "jsonl" else None, cuts, chunk_size, num_threads,
            )
            yield ReaderSource(reader)


class ReaderSource:
    """A file read by the Rust side."""

    def __init__(self, reader: _bytebpe.DocumentReader) -> None:
        self.reader = reader
        self.name = reader.name

    def skip(self, n: int, seed: int) -> tuple[int, int]:
        return self.reader.skip(n, seed)

    def count(self, counter: _bytebpe.WordCounter, max_bytes: int) -> bool:
        return counter.count_from(self.reader, max_bytes)


class StreamSource:
    """A binary stream, read here in chunks and fed to a Rust reader."""

    def __init__(self, stream: Any, reader: _bytebpe.DocumentReader, chunk_size: int) -> None:
        if not callable(getattr(stream, "read", None)):
            raise TypeError(f"expected a readable binary stream, got {type(stream).__name__}")
        self.stream = stream
        # read1 returns what has arrived (a pipe or socket need not fill a whole chunk
        # before counting starts); plain read otherwise.
        self._read = getattr(stream, "read1", stream.read)
        self.reader = reader
        self.name = reader.name
        self.chunk_size = chunk_size

    def _feed(self) -> int:
        """Feeds one chunk (or the end); returns its size."""
        data = self._read(self.chunk_size)
        if data is None:  # a non-blocking stream with nothing to read yet
            time.sleep(0.01)
            return 0
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"{self.name}: read() returned {type(data).__name__}; open the stream in "
                "binary mode (e.g. sys.stdin.buffer, open(path, 'rb'))"
            )
        if data:
            self.reader.feed(bytes(data))
        else:
            self.reader.finish()
        return len(data)

    def skip(self, n: int, seed: int) -> tuple[int, int]:
        skipped, fingerprint = self.reader.skip(n, seed)
        while skipped < n and not self.reader.exhausted:
            self._feed()
            more, fingerprint = self.reader.skip(n - skipped, fingerprint)
            skipped += more
        return skipped, fingerprint

    def count(self, counter: _bytebpe.WordCounter, max_bytes: int) -> bool:
        fed = 0
        while fed < max_bytes and not self.reader.exhausted:
            fed += self._feed()
            if counter.count_from(self.reader, max_bytes):
                return True
        return self.reader.exhausted


class ParquetSource:
    """A Parquet file's text column, read in record batches with pyarrow."""

    def __init__(self, path: str, compression: str | None, column: str) -> None:
        self.name = path
        self.path = path
        self.compression = compression
        self.column = column
        self._batches: Iterator[list[str | bytes]] | None = None
        self._carry: list[str | bytes] = []
        self._row = 0

    def _open(self) -> Iterator[list[str | bytes]]:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError(
                f"{self.path}: reading Parquet needs pyarrow: pip install 'bytebpe[parquet]'"
            ) from None
        spool = None
        try:
            if self.compression is None:
                parquet = pq.ParquetFile(self.path)
            else:
                # Parquet needs random access: decompress to a temporary file first.
                spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed when read, in _read)
                with pa.input_stream(self.path, compression=self.compression) as f:
                    shutil.copyfileobj(f, spool, 1 << 20)
                spool.seek(0)
                parquet = pq.ParquetFile(spool)
        except (pa.ArrowException, OSError) as e:
            if spool is not None:
                spool.close()
            if isinstance(e, (FileNotFoundError, PermissionError, IsADirectoryError)):
                raise
            raise _bytebpe.InputError(f"{self.path}: not a readable Parquet file ({e})") from None
        try:
            self._check_column(parquet, pa)
        except BaseException:
            if spool is not None:
                spool.close()
            raise
        return self._read(parquet, pa, spool)

    def _check_column(self, parquet: Any, pa: Any) -> None:
        names = parquet.schema_arrow.names
        if self.column not in names:
            raise _bytebpe.InputError(
                f"{self.path}: no {self.column!r} column (it has {names}); pass "
                "text_column=... to pick the text"
            )
        kind = parquet.schema_arrow.field(self.column).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            raise _bytebpe.InputError(
                f"{self.path}: the {self.column!r} column holds {kind}, not text"
            )

    def _read(self, parquet: Any, pa: Any, spool: Any) -> Iterator[list[str | bytes]]:
        try:
            for batch in parquet.iter_batches(
                batch_size=PARQUET_BATCH_ROWS, columns=[self.column]
            ):
                values = batch.column(0).to_pylist()
                if None in values:
                    row = self._row + values.index(None)
                    raise _bytebpe.InputError(
                        f"{self.path}, row {row}: the {self.column!r} column is null"
                    )
                self._row += len(values)
                yield values
        except pa.ArrowException as e:
            raise _bytebpe.InputError(f"{self.path}: reading failed ({e})") from None
        finally:
            if spool is not None:
                spool.close()

    def _next(self) -> list[str | bytes] | None:
        if self._carry:
            batch, self._carry = self._carry, []
            return batch
        if self._batches is None:
            self._batches = self._open()
        return next(self._batches, None)

    def skip(self, n: int, seed: int) -> tuple[int, int]:
        skipped, fingerprint = 0, seed
        while skipped < n:
            batch = self._next()
            if batch is None:
                break
            taken, self._carry = batch[: n - skipped], batch[n - skipped :]
            fingerprint = _bytebpe.WordCounter.fingerprint_of(taken, fingerprint)
            skipped += len(taken)
        return skipped, fingerprint

    def count(self, counter: _bytebpe.WordCounter, max_bytes: int) -> bool:
        counted = 0
        while counted < max_bytes:
            batch = self._next()
            if batch is None:
                return True
            counter.add_batch(batch, counter.documents)
            counted += sum(map(len, batch))
        return False


def train_sources(
    sources: Iterable[Source], s: training.Settings, *, restart_counting: bool
) -> tuple[_bytebpe.CoreTokenizer, dict[str, Any]]:
    """Counts the sources in order (resuming a stored run by skipping the documents it
    counted, checked by fingerprint), then merges."""
    counter = training._new_counter(s, False)
    with training._open_run(s) as run:
        stored = run.stored if run else None
        if stored is not None and stored.counting_finished:
            training._restore(counter, stored)  # the input is not read again
        else:
            skip = 0
            if stored is not None and stored.documents and not restart_counting:
                training._restore(counter, stored)
                skip = stored.documents
            _count(counter, sources, skip, s, run)
        return training._merge_and_finish(counter, s, run, None)


def _count(
    counter: _bytebpe.WordCounter,
    sources: Iterable[Source],
    skip: int,
    s: training.Settings,
    run: store.OpenRun | None,
) -> None:
    started = last_checkpoint = time.perf_counter()
    fingerprint = _bytebpe.WordCounter.fingerprint_of([])
    skip_total = skip
    with ProgressBar(s.progress, desc="counting", unit="doc", initial=counter.documents) as bar:
        for source in sources:
            if skip:
                skipped, fingerprint = source.skip(skip, fingerprint)
                skip -= skipped
                if skip:
                    continue
                if run and fingerprint != run.stored.fingerprint:
                    raise _input_differs(run, skip_total)
            done = False
            try:
                while not done:
                    before = counter.documents
                    done = source.count(counter, CALL_BYTES)
                    bar.update(counter.documents - before)
                    now = time.perf_counter()
                    mb = counter.bytes / 1e6
                    bar.set_postfix_str(f"{mb:,.1f} MB, {mb / max(now - started, 1e-9):,.1f} MB/s")
                    due = run and now - last_checkpoint >= run.store.checkpoint_every
                    if due and not counter.in_document:
                        run.checkpoint_counting(counter, finished=False)  # type: ignore[union-attr]
                        last_checkpoint = time.perf_counter()
            except (Exception, KeyboardInterrupt):
                # Keep what was counted (up to the last whole document): after the input
                # is fixed, the same call resumes from here.
                if run and not counter.in_document:
                    run.checkpoint_counting(counter, finished=False)
                raise
    if skip:
        raise _input_differs(run, skip_total)  # type: ignore[arg-type]
    if run:
        run.checkpoint_counting(counter, finished=True)


def _input_differs(run: store.OpenRun, n: int) -> store.StoreError:
    return store.StoreError(
        f"the input differs from the one the run store {run.where} was counting (its first "
        f"{n:,} documents do not match); pass the same files to resume, or use another "
        "store path"
    )
