"""Token ids seen the way tiktoken and Hugging Face users look at them: tokens as
byte-level strings (`get_vocab`, `id_to_token`), an `Encoding` with tokens and character
offsets, and tiktoken's `decode_with_offsets`. Takes the native tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bytebpe._bytebpe import CoreTokenizer
from bytebpe.interop.bytemap import bytes_to_unicode, unicode_to_bytes

__all__ = ["Encoding", "char_spans", "encoding_of", "id_to_token", "token_to_id", "vocab"]


@dataclass(frozen=True)
class Encoding:
    """One text encoded, as Hugging Face's `Encoding` shows it.

    `ids` are the token ids; `tokens` their strings in the byte-level alphabet of
    `get_vocab()` (GPT-2's: a space is "Ġ"; special tokens are their text); `offsets` the
    `(start, end)` character span of each token in the text (a character split across
    tokens gives each of them its whole span).

    >>> enc = tok.encode_with_offsets("hi there")   # doctest: +SKIP
    >>> enc.tokens, enc.offsets                       # doctest: +SKIP
    (['hi', 'Ġthere'], [(0, 2), (2, 8)])
    """

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]

    def __len__(self) -> int:
        return len(self.ids)


def token_string(core: CoreTokenizer, specials: dict[int, str], token: int) -> str:
    """A token as `get_vocab()` names it."""
    special = specials.get(token)
    return special if special is not None else bytes_to_unicode(core.token_bytes(token))


def vocab(core: CoreTokenizer) -> dict[str, int]:
    """Every token's string -> id (Hugging Face's `get_vocab()`: byte-level strings for
    ordinary tokens, the text of special tokens), the same strings `tokenizer.json`
    exports."""
    out = {bytes_to_unicode(data): rank for data, rank in core.mergeable_ranks().items()}
    out.update(dict(core.special_tokens))
    return out


def token_to_id(core: CoreTokenizer, token: str) -> int | None:
    """The id of a token string (byte-level or special), or None, as Hugging Face."""
    specials = dict(core.special_tokens)
    if token in specials:
        return specials[token]
    data = unicode_to_bytes(token)
    if data is None:
        return None
    return core.mergeable_ranks().get(data)


def id_to_token(core: CoreTokenizer, token: int) -> str | None:
    """The string of a token id, or None when no token has it, as Hugging Face."""
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < core.vocab_size:
        return None
    specials = {i: t for t, i in core.special_tokens}
    return token_string(core, specials, token)


def char_spans(text: str, pieces: Sequence[bytes]) -> list[tuple[int, int]]:
    """The character span of each of `pieces` (whose bytes are `text` in UTF-8)."""
    # char_of[b]: the index of the character holding byte b of the text.
    char_of: list[int] = []
    for i, ch in enumerate(text):
        char_of.extend([i] * len(ch.encode("utf-8", "surrogatepass")))
    spans = []
    position = 0
    for piece in pieces:
        if not piece:
            spans.append((len(text), len(text)) if position >= len(char_of)
                         else (char_of[position], char_of[position]))
            continue
        start = char_of[position]
        end = char_of[position + len(piece) - 1] + 1
        spans.append((start, end))
        position += len(piece)
    return spans


def encoding_of(core: CoreTokenizer, text: str, ids: list[int]) -> Encoding:
    """The `Encoding` of `text`, encoded as `ids`."""
    specials = {i: t for t, i in core.special_tokens}
    pieces = [core.token_bytes(t) for t in ids]
    return Encoding(
        ids=ids,
        tokens=[token_string(core, specials, t) for t in ids],
        offsets=char_spans(text, pieces),
    )


def decode_with_offsets(pieces: Sequence[bytes]) -> tuple[str, list[int]]:
    """tiktoken's `decode_with_offsets`: the text and, for each token, the index of the
    character it starts in (a token starting inside a character gets that character's
    index). Raises UnicodeDecodeError on bytes that are not valid UTF-8, as tiktoken."""
    offsets = []
    text_len = 0
    for piece in pieces:
        offsets.append(max(0, text_len - (0x80 <= piece[0] < 0xC0)))
        text_len += sum(1 for c in piece if not 0x80 <= c < 0xC0)
    return b"".join(pieces).decode("utf-8", errors="strict"), offsets
