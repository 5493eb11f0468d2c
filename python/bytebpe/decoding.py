"""Decoding, as a base class of `Tokenizer` (`Decoding`): ids (lists of int, NumPy
integer arrays, batches of either) back to bytes and text, with invalid UTF-8 replaced,
ignored or refused and counted in the loss ledger, and a streaming decoder for
generation. Arrays reach the native tokenizer as packed integers (`checks.packed_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from bytebpe import _bytebpe
from bytebpe.checks import (
    check_errors,
    check_threads,
    check_token_ids,
    packed_batch,
    packed_ids,
    token_batch,
    token_list,
    token_lists,
)
from bytebpe.decoder import StreamingDecoder
from bytebpe.errors import UnknownTokenError
from bytebpe.ledger import DecodeLedger

__all__ = ["DecodeErrors", "Decoding"]

DecodeErrors = Literal["strict", "replace", "ignore"]


class Decoding:
    """`decode`, `decode_bytes`, `decode_batch`, `decode_bytes_batch` and `decoder` over
    `_core` (the native tokenizer); what was replaced or not found goes to `_ledger`."""

    __slots__ = ()
    _core: _bytebpe.CoreTokenizer
    _ledger: DecodeLedger

    def decode_bytes(self, tokens: Sequence[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of `tokens` (special tokens give their text, or nothing with
        `skip_special_tokens=True`)."""
        packed = packed_ids(tokens)
        if packed is not None:
            try:
                data = self._core.decode_packed(*packed, skip_special_tokens)
            except UnknownTokenError:
                data = None  # the list path below names the id and its place
            if data is not None:
                return data
        tokens = token_list(tokens)
        try:
            return self._core.decode_bytes(tokens, skip_special_tokens)
        except (TypeError, OverflowError, UnknownTokenError):
            self._ledger.add("unknown_ids", 1)
            check_token_ids(tokens)
            raise

    def _text(self, data: bytes, errors: str) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            if errors == "strict":
                raise
        self._ledger.add(f"bytes_{errors}d", _bytebpe.count_invalid_utf8(data))
        return data.decode("utf-8", errors)

    def decode(
        self,
        tokens: Sequence[int],
        errors: DecodeErrors = "replace",
        *,
        skip_special_tokens: bool = False,
    ) -> str:
        """The text of `tokens`. Bytes that are not valid UTF-8 become U+FFFD by default
        (`errors="replace"`, as tiktoken; each is counted in `loss_report()`), "ignore"
        drops them, "strict" raises. `skip_special_tokens=True` leaves special tokens out,
        as Hugging Face."""
        check_errors(errors)
        return self._text(self.decode_bytes(tokens, skip_special_tokens=skip_special_tokens),
                          errors)

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        errors: DecodeErrors = "replace",
        skip_special_tokens: bool = False,
        num_threads: int | None = None,
    ) -> list[str]:
        """Decodes many token sequences in parallel (`errors` and `skip_special_tokens`
        as in `decode`): lists of int, or 1-D NumPy integer arrays of one dtype, or the
        rows of a 2-D array, which are read as packed integers. A bad id is named with
        its item and position."""
        check_errors(errors)
        decoded = self.decode_bytes_batch(
            batch, num_threads=num_threads, skip_special_tokens=skip_special_tokens
        )
        return [self._text(data, errors) for data in decoded]

    def decode_bytes_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        num_threads: int | None = None,
        skip_special_tokens: bool = False,
    ) -> list[bytes]:
        """The bytes of many token sequences, decoded in parallel (tiktoken's name; the
        sequences as `decode_batch` takes them)."""
        num_threads = check_threads(num_threads)
        items = token_batch(batch)
        decoded = self._decode_packed_batch(items, num_threads, skip_special_tokens)
        if decoded is not None:
            return decoded
        lists = token_lists(items)
        try:
            return self._core.decode_bytes_batch(lists, num_threads, skip_special_tokens)
        except (TypeError, OverflowError, UnknownTokenError):
            for i, tokens in enumerate(lists):
                try:
                    self.decode_bytes(tokens)
                except (TypeError, UnknownTokenError) as e:
                    raise type(e)(f"batch[{i}]: {e}") from None
            raise

    def _decode_packed_batch(
        self, batch: list[Any], num_threads: int | None, skip_special: bool
    ) -> list[bytes] | None:
        """`decode_batch`'s bytes read packed (`packed_batch`); None for the list path,
        which also names a bad id and its place."""
        packed = packed_batch(batch)
        if packed is None:
            return None
        try:
            return self._core.decode_packed_batch(*packed, num_threads, skip_special)
        except UnknownTokenError:
            return None

    def decoder(self, errors: DecodeErrors = "replace") -> StreamingDecoder:
        """A decoder for token-by-token generation: `feed(ids)` returns only complete
        characters, `flush()` the rest, so a character split across tokens is never
        garbled."""
        check_errors(errors)
        return StreamingDecoder(self.decode_bytes, self._text, errors)
