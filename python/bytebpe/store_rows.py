"""The run store's rows: the schema, the checksum each row carries, the checks of each
value read, and the token bytes a merge log builds.

Every row has a `sum` column, the CRC-32 of its fields (each tagged with its type and
length, after the table's name, so a value moved to another key or field does not
match). The merge log and the snapshot's chunks are chains: a row's sum also covers the
sum of the row before it, so a prefix read at any moment is verifiable and a changed,
missing or reordered row is found where it is. CRC-32 catches every flip of one bit and
every run of damage up to 32 bits long in a row (wider damage but for a 2**-32 chance);
it guards against damage, not against someone who recomputes it, as the tokenizer file's
sha256 does.

Values are checked before their sum (type, range, JSON), so a message names the field
when it can; a value of the right kind that does not match its sum names the row.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
import zlib
from collections.abc import Iterable
from typing import Any, TypeGuard

from bytebpe.errors import CorruptTokenizerError

FORMAT = "bytebpe-run"
# 2: a checksum on every row (version 1 had none and is not read: `store_read`).
VERSION = 2

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE counting (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    documents INTEGER NOT NULL, bytes INTEGER NOT NULL,
    fingerprint TEXT NOT NULL, finished INTEGER NOT NULL, updated REAL NOT NULL,
    snapshot_sum INTEGER NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE snapshot (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE merges (
    rank INTEGER PRIMARY KEY, left_id INTEGER NOT NULL, right_id INTEGER NOT NULL,
    token_id INTEGER NOT NULL, token BLOB NOT NULL, count NOT NULL,
    phase INTEGER NOT NULL, time REAL NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE ledger (name TEXT PRIMARY KEY, value TEXT NOT NULL, sum INTEGER NOT NULL);
CREATE TABLE blocks (
    key TEXT PRIMARY KEY, documents INTEGER NOT NULL, bytes INTEGER NOT NULL,
    partial TEXT NOT NULL, snapshot BLOB NOT NULL, sum INTEGER NOT NULL);
"""
TABLES = ("meta", "counting", "snapshot", "merges", "ledger", "blocks")
# The meta keys every store has (`start_state` too when `start` is set; `merges` when
# `complete` is "1").
META_KEYS = (
    "format", "version", "pattern", "special_tokens", "min_frequency", "max_token_length",
    "start", "memory_limit", "vocab_size", "complete",
)

U32 = 2**32
U64 = 2**64
I64 = 2**63

_LENGTH = struct.Struct("<cQ")
_FLOAT = struct.Struct("<d")
# A merge row as its sum covers it: rank, left, right, token, count, phase, time, the
# length of the token's bytes (`merge_sum`; the store's reader inlines it).
MERGE_ROW = struct.Struct("<QIIIQQdQ")
_CHUNK = struct.Struct("<QQ")
_pack_merge, _crc32 = MERGE_ROW.pack, zlib.crc32  # bound once: merge_sum runs per merge


def damaged(where: str, row: str, what: str) -> CorruptTokenizerError:
    """The error for a store row that fails a check: `row` names the table and row."""
    return CorruptTokenizerError(
        f"the run store {where} is damaged: {row}: {what}. Its contents cannot be trusted; "
        "delete it (or use another store path) and train again"
    )


# ---- sums


def row_sum(table: str, *fields: object) -> int:
    """The sum of one row of `table` (meta, counting, ledger, blocks)."""
    crc = zlib.crc32(table.encode())
    for value in fields:
        if isinstance(value, (bytes, memoryview)):
            tag, body = b"b", value
        elif isinstance(value, str):
            tag, body = b"s", value.encode("utf-8", "surrogatepass")
        elif isinstance(value, int):
            tag, body = b"i", str(value).encode()
        elif isinstance(value, float):
            tag, body = b"f", _FLOAT.pack(value)
        else:
            raise TypeError(f"no sum for a {type(value).__name__}")
        crc = zlib.crc32(body, zlib.crc32(_LENGTH.pack(tag, len(body)), crc))
    return crc


def merge_sum(
    before: int, rank: int, left: int, right: int, token: int, data: bytes, count: int,
    phase: int, time: float,
) -> int:
    """A merge row's sum, chained to the sum of the row before (0 before the first)."""
    return _crc32(data, _crc32(_pack_merge(rank, left, right, token, count, phase, time,
                                           len(data)), before))


def chunk_sum(before: int, chunk: int, data: bytes | memoryview) -> int:
    """A snapshot chunk's sum, chained to the chunk before (0 before the first)."""
    return zlib.crc32(data, zlib.crc32(_CHUNK.pack(chunk, len(data)), before))


def count_value(count: int) -> int | str:
    """A u64 as stored: SQLite integers are signed 64-bit, so larger ones are text."""
    return count if count < I64 else str(count)


# ---- checks of values read


class RowChecker:
    """Checks the values of one row, naming the store, the row and the field."""

    def __init__(self, where: str, row: str) -> None:
        self.where = where
        self.row = row

    def fail(self, what: str) -> CorruptTokenizerError:
        return damaged(self.where, self.row, what)

    def integer(self, field: str, value: object, end: int = I64) -> int:
        """An integer in [0, end)."""
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < end:
            raise self.fail(f"{field} is {_shown(value)}, not an integer in [0, {end})")
        return value

    def u64(self, field: str, value: object) -> int:
        """A u64 as `count_value` stores it: an integer, or decimal text from 2**63."""
        value = _decoded(value)
        if _decimal(value):
            if I64 <= int(value) < U64:
                return int(value)
        elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value < I64:
            return value
        raise self.fail(f"{field} is {_shown(value)}, not a count in [0, 2**64)")

    def u64_text(self, field: str, value: object) -> int:
        """A u64 stored as decimal text."""
        value = _decoded(value)
        if _decimal(value) and int(value) < U64:
            return int(value)
        raise self.fail(f"{field} is {_shown(value)}, not a number in [0, 2**64)")

    def real(self, field: str, value: object) -> float:
        if not isinstance(value, float) or not math.isfinite(value):
            raise self.fail(f"{field} is {_shown(value)}, not a time")
        return value

    def blob(self, field: str, value: object) -> bytes:
        if not isinstance(value, bytes):
            raise self.fail(f"{field} is {_shown(value)}, not bytes")
        return value

    def text(self, field: str, value: object) -> str:
        """Text (read as bytes, so that text which is not UTF-8 is named here)."""
        value = _decoded(value)
        if not isinstance(value, str):
            raise self.fail(f"{field} is {_shown(value)}, not UTF-8 text")
        return value

    def parsed(self, field: str, value: object) -> Any:
        text = self.text(field, value)
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as e:
            raise self.fail(f"{field} is not valid JSON ({_reason(e)})") from None

    def sum(self, stored: object, computed: int, fields: str) -> None:
        if stored != computed:
            raise self.fail(
                f"it does not match its checksum (one of {fields}, or the checksum, was "
                "changed)"
            )


def shown(value: object) -> str:
    """A key or number as a message names it (text read as bytes shown as text)."""
    return repr(_decoded(value))


def _decoded(value: object) -> object:
    """Bytes as text when they are UTF-8 (a reader's TEXT comes as bytes), else as is."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def _decimal(value: object) -> TypeGuard[str]:
    """Decimal digits short enough for a u64 (int() of a long string is slow, or refused)."""
    return isinstance(value, str) and 0 < len(value) <= 20 and value.isascii() and value.isdigit()


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _reason(e: BaseException) -> str:
    return "nested too deeply" if isinstance(e, RecursionError) else str(e)


# ---- token bytes


class TokenTable:
    """Token bytes by id as a merge log grows: each merge's bytes are its parts' bytes
    joined, and its token is the next new id (skipping the special ids a warm start
    reserves) or an existing token with those bytes."""

    def __init__(self, tokens: list[bytes], reserved: Iterable[int] = ()) -> None:
        self.tokens = tokens
        self.reserved = frozenset(reserved)

    @classmethod
    def of_start(cls, state: str | None, check: RowChecker) -> TokenTable:
        """The table before the first merge: the 256 bytes, or the tokens of a warm
        start's tokenizer state (its file format as JSON; b"" at a special id)."""
        if state is None:
            return cls([bytes([b]) for b in range(256)])
        start = check.parsed("start_state", state)
        try:
            tokens = [base64.b64decode(t, validate=True) for t in start["tokens"]]
            reserved = [int(i) for _, i in start["special_tokens"]]
        except (TypeError, KeyError, ValueError, binascii.Error) as e:
            raise check.fail(f"start_state is not a tokenizer's state ({e})") from None
        return cls(tokens, reserved)

    def __len__(self) -> int:
        return len(self.tokens)

    def join(self, left: int, right: int, token: int) -> bytes | str:
        """The bytes of the merge (left, right) -> token, appended to the table; or what
        is wrong with it (the table unchanged)."""
        tokens = self.tokens
        n = len(tokens)
        parts = (tokens[left], tokens[right]) if left < n and right < n else (b"", b"")
        if not (parts[0] and parts[1]):  # b"": past the end, or a special token's id
            return f"it joins ids {left} and {right}, but only {n} tokens exist before it"
        data = parts[0] + parts[1]
        if token == n:
            tokens.append(data)
        elif token < n:
            if tokens[token] != data:
                return f"token_id {token} is another token than its parts joined"
        elif all(i in self.reserved for i in range(n, token)):
            tokens.extend([b""] * (token - n))
            tokens.append(data)
        else:
            return f"token_id {token} skips ids; the next new id is {n}"
        return data
