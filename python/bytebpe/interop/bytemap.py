"""GPT-2's byte <-> unicode mapping: the printable characters Hugging Face's byte-level
vocabularies write token bytes as."""

from __future__ import annotations

import functools

__all__ = ["bytes_to_unicode", "unicode_to_bytes"]


@functools.lru_cache(maxsize=1)
def _byte_maps() -> tuple[dict[int, str], dict[int, int]]:
    """(byte -> mapped char, as a str.translate table over latin-1 text;
    mapped char -> byte, as a str.translate table)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    forward = {b: c for b, c in chars.items()}
    inverse = {ord(c): b for b, c in chars.items()}
    return forward, inverse


def bytes_to_unicode(token: bytes) -> str:
    """A token's bytes as the string Hugging Face's byte-level vocabularies use."""
    return token.decode("latin-1").translate(_byte_maps()[0])


def unicode_to_bytes(text: str) -> bytes | None:
    """The inverse of `bytes_to_unicode`; None when `text` has a character outside the
    byte-level alphabet."""
    inverse = _byte_maps()[1]
    if any(ord(c) not in inverse for c in text):
        return None
    return text.translate(inverse).encode("latin-1")
