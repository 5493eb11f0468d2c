"""The report's data, packed compactly into the HTML page.

One blob: a little-endian u32 header length, the header (JSON: the small figures, and
where each column is), then the columns: lists of non-negative integers as unsigned LEB128
varints (token parts, merge counts, usage counts...). The blob is zlib-compressed and
base64-encoded into a <script> element; the page inflates it with the browser's own
DecompressionStream("deflate"), so no library is needed and nothing is fetched.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterable
from typing import Any


def varints(values: Iterable[int]) -> bytes:
    """Unsigned LEB128 of each value (negative values are refused)."""
    out = bytearray()
    for v in values:
        v = int(v)
        if v < 0:
            raise ValueError(f"varint column holds {v} < 0")
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


def read_varints(data: bytes) -> list[int]:
    """The inverse of `varints` (for tests)."""
    out, v, shift = [], 0, 0
    for b in data:
        v |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
        else:
            out.append(v)
            v, shift = 0, 0
    return out


class Packer:
    def __init__(self) -> None:
        self.header: dict[str, Any] = {"columns": {}}
        self.chunks: list[bytes] = []
        self.size = 0

    def column(self, name: str, values: Iterable[int], *, shift: int = 0) -> None:
        """A list of integers >= -shift, stored as value + shift (so -1 fits with shift=1)."""
        data = varints(int(v) + shift for v in values)
        self.header["columns"][name] = [self.size, len(data), shift]
        self.chunks.append(data)
        self.size += len(data)

    def raw(self, name: str, data: bytes) -> None:
        self.header["columns"][name] = [self.size, len(data), None]
        self.chunks.append(data)
        self.size += len(data)

    def pack(self, figures: dict[str, Any]) -> str:
        head = json.dumps({**figures, **self.header}, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")
        blob = struct.pack("<I", len(head)) + head + b"".join(self.chunks)
        return base64.b64encode(zlib.compress(blob, 6)).decode("ascii")


def unpack(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, {column: list of ints or bytes}) from `Packer.pack` output (for tests)."""
    blob = zlib.decompress(base64.b64decode(text))
    (n,) = struct.unpack_from("<I", blob)
    header = json.loads(blob[4 : 4 + n])
    body = blob[4 + n :]
    cols: dict[str, Any] = {}
    for name, (off, length, shift) in header["columns"].items():
        part = body[off : off + length]
        cols[name] = part if shift is None else [v - shift for v in read_varints(part)]
    return header, cols
