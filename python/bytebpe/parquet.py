"""Parquet input: a file's text column, read in record batches with pyarrow (the
`bytebpe[parquet]` extra). A compressed Parquet file is spooled to a temporary file first,
since Parquet needs random access."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

from bytebpe._bytebpe import InputError, WordCounter
from bytebpe.arrow_text import utf8_values

PARQUET_BATCH_ROWS = 4096


class ParquetSource:
    """A Parquet file's text column, read in record batches with pyarrow."""

    one_shot = False
    total = None
    total_bytes = None

    def __init__(
        self, path: str, compression: str | None, column: str, *, utf8_bytes: bool = False
    ) -> None:
        """`utf8_bytes`: string values come as the bytes of their UTF-8 (`arrow_text.py`),
        for the core to count or encode; else as `str`, for `read_files`' callers."""
        self.name = path
        self.utf8_bytes = utf8_bytes
        self.rejected: dict[str, int] = {}
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
        spool: Any = None
        try:
            # Opened by Python, so a name that is not UTF-8 opens too (pyarrow's own
            # path handling refuses surrogate escapes).
            if self.compression is None:
                spool = open(self.path, "rb")  # noqa: SIM115 (closed when read, in _read)
            else:
                # Parquet needs random access: decompress to a temporary file first.
                spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed when read, in _read)
                with open(self.path, "rb") as raw, pa.input_stream(
                    raw, compression=self.compression
                ) as f:
                    shutil.copyfileobj(f, spool, 1 << 20)
                spool.seek(0)
            parquet = pq.ParquetFile(spool)
        except (pa.ArrowException, OSError) as e:
            if spool is not None:
                spool.close()
            if isinstance(e, (FileNotFoundError, PermissionError, IsADirectoryError)):
                raise
            raise InputError(f"{self.path}: not a readable Parquet file ({e})") from None
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
            raise InputError(
                f"{self.path}: no {self.column!r} column (it has {names}); pass "
                "text_column=... to pick the text"
            )
        kind = parquet.schema_arrow.field(self.column).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
            raise InputError(
                f"{self.path}: the {self.column!r} column holds {kind}, not text"
            )

    def _read(self, parquet: Any, pa: Any, spool: Any) -> Iterator[list[str | bytes]]:
        try:
            for batch in parquet.iter_batches(
                batch_size=PARQUET_BATCH_ROWS, columns=[self.column]
            ):
                column = batch.column(0)
                values = utf8_values(column) if self.utf8_bytes else column.to_pylist()
                if None in values:
                    row = self._row + values.index(None)
                    raise InputError(
                        f"{self.path}, row {row}: the {self.column!r} column is null"
                    )
                self._row += len(values)
                yield values
        except pa.ArrowException as e:
            raise InputError(f"{self.path}: reading failed ({e})") from None
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

    def documents(self) -> Iterator[str | bytes]:
        """Every value of the text column, in order."""
        while (batch := self._next()) is not None:
            yield from batch

    def skip(self, counter: WordCounter, n: int, seed: int) -> tuple[int, int]:
        skipped, fingerprint = 0, seed
        while skipped < n:
            batch = self._next()
            if batch is None:
                break
            taken, self._carry = batch[: n - skipped], batch[n - skipped :]
            fingerprint = WordCounter.fingerprint_of(taken, fingerprint)
            skipped += len(taken)
        return skipped, fingerprint

    def count(self, counter: WordCounter, max_bytes: int) -> bool:
        counted = 0
        while counted < max_bytes:
            batch = self._next()
            if batch is None:
                return True
            counter.add_batch(batch, counter.documents)
            counted += sum(map(len, batch))
        return False
