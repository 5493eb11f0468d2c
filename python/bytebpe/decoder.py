"""Incremental decoding for generation: text comes out one whole character at a time, so
a character whose bytes are split across tokens is never garbled."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from bytebpe._bytebpe import incomplete_utf8_tail


class StreamingDecoder:
    """Made by `Tokenizer.decoder()`: `feed(ids)` returns only complete characters,
    `flush()` the rest."""

    def __init__(
        self,
        decode_bytes: Callable[[Sequence[int]], bytes],
        to_text: Callable[[bytes, str], str],
        errors: str,
    ) -> None:
        self._decode_bytes = decode_bytes
        # Bytes to text under `errors`, booking replaced or ignored bytes in the ledger.
        self._to_text = to_text
        self._errors = errors
        self._pending = b""  # the start of a character whose other bytes are still to come

    def feed(self, tokens: int | Sequence[int]) -> str:
        """Adds tokens; returns the text of every character they complete."""
        if not isinstance(tokens, Iterable):  # one id: an int or a NumPy integer
            tokens = [tokens]
        data = self._pending + self._decode_bytes(tokens)
        keep = incomplete_utf8_tail(data)
        self._pending = data[len(data) - keep :]
        return self._to_text(data[: len(data) - keep], self._errors)

    def flush(self) -> str:
        """Ends the stream: returns what is left (an unfinished character raises under
        "strict", becomes U+FFFD under "replace", disappears under "ignore")."""
        data, self._pending = self._pending, b""
        return self._to_text(data, self._errors)
