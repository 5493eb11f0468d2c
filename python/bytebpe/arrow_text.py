"""Arrow string columns as the UTF-8 bytes Arrow holds. Making a `str` of each value and
having the core read it back as UTF-8 cost more than a tenth of counting the text; a cast
to binary keeps the buffers, so each value becomes a `bytes` copy of its UTF-8 and
nothing is decoded. Bytes train and encode exactly as their text (the same bytes and
fingerprint); where they are not UTF-8 after all, the loss ledger counts them as it does
for any bytes document."""

from __future__ import annotations

from typing import Any


def utf8_values(column: Any) -> list[Any]:
    """A pyarrow (chunked) array's values as Python objects: strings as the bytes of
    their UTF-8, nulls as None, any other type as pyarrow gives it."""
    import pyarrow as pa  # present wherever Arrow data is

    if pa.types.is_string(column.type):
        column = column.cast(pa.binary())
    elif pa.types.is_large_string(column.type):
        column = column.cast(pa.large_binary())
    values: list[Any] = column.to_pylist()
    return values
