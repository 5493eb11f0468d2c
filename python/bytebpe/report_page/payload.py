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
    import numpy as np

    try:
        v = np.asarray(values if hasattr(values, "__len__") else list(values), dtype=np.int64)
    except OverflowError:  # a count of 2**63 or more: the plain loop below
        v = None
    if v is not None:
        if len(v) == 0:
            return b""
        if int(v.min()) < 0:
            raise ValueError(f"varint column holds {int(v.min())} < 0")
        # Vectorized: 7 bits per byte, the high bit set on all but a value's last byte.
        u = v.astype(np.uint64)
        nbytes = np.ones(len(u), dtype=np.int64)
        for k in range(1, 10):
            nbytes += u >= (np.uint64(1) << np.uint64(7 * k))
        ends = np.cumsum(nbytes)
        out = np.zeros(int(ends[-1]), dtype=np.uint8)
        starts = ends - nbytes
        for k in range(int(nbytes.max())):
            sel = nbytes > k
            byte = (u[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)
            more = (nbytes[sel] > k + 1).astype(np.uint64) << np.uint64(7)
            out[starts[sel] + k] = (byte | more).astype(np.uint8)
        return out.tobytes()
    buf = bytearray()
    for x in values:
        x = int(x)
        if x < 0:
            raise ValueError(f"varint column holds {x} < 0")
        while x >= 0x80:
            buf.append((x & 0x7F) | 0x80)
            x >>= 7
        buf.append(x)
    return bytes(buf)


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
        data = varints([int(v) + shift for v in values] if shift else values)
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
