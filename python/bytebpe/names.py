"""The names tiktoken and Hugging Face users type from habit, as a base class of
`Tokenizer` (`FamiliarNames`): tiktoken's (`n_vocab`, `eot_token`,
`encode_single_token`, `decode_tokens_bytes`, `decode_with_offsets`, ...; an id is a
tiktoken rank) and Hugging Face's (`len()`, `get_vocab`, `token_to_id`, `id_to_token`,
tokens as byte-level strings, an `Encoding` with tokens and character offsets). Each is a
few lines over the native tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bytebpe._bytebpe import CoreTokenizer
from bytebpe.checks import check_str, check_token_id, check_token_ids, integer, token_list
from bytebpe.interop.bytemap import bytes_to_unicode, unicode_to_bytes

__all__ = ["EOT", "Encoding", "FamiliarNames", "char_spans", "encoding_of"]

EOT = "<|endoftext|>"


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


def token_string(specials: dict[int, str], token: int, data: bytes) -> str:
    """A token (whose bytes are `data`) as `get_vocab()` names it."""
    special = specials.get(token)
    return special if special is not None else bytes_to_unicode(data)


def vocab(core: CoreTokenizer) -> dict[str, int]:
    """Every token's string -> id (Hugging Face's `get_vocab()`: byte-level strings for
    ordinary tokens, the text of special tokens), the same strings `tokenizer.json`
    exports."""
    out = {bytes_to_unicode(data): rank for data, rank in core.mergeable_ranks().items()}
    out.update(dict(core.special_tokens))
    return out


def id_to_token(core: CoreTokenizer, token: int) -> str | None:
    """The string of a token id, or None when no token has it, as Hugging Face."""
    value = integer(token)
    if value is None or not 0 <= value < core.vocab_size:
        return None
    specials = {i: t for t, i in core.special_tokens}
    return token_string(specials, value, core.token_bytes(value))


# Every byte that does not continue a UTF-8 character: `piece.translate(None, LEADS)`
# leaves a piece's continuation bytes, so counting its characters runs at C speed.
LEADS = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


def started_chars(piece: bytes) -> int:
    """How many characters start in `piece` (its bytes that are not continuations)."""
    return len(piece) - len(piece.translate(None, LEADS))


def char_spans(text: str, pieces: Sequence[bytes]) -> list[tuple[int, int]]:
    """The character span of each of `pieces` (whose bytes are `text` in UTF-8): from the
    character its first byte is in to the one its last byte is in (an empty piece: the
    character at its place, or the end)."""
    data = text.encode("utf-8", "surrogatepass")
    spans = []
    position = 0  # the piece's first byte
    before = 0  # characters started before it
    for piece in pieces:
        # The character its first byte is in: the last one started, when it continues one.
        start = before - (position < len(data) and 0x80 <= data[position] < 0xC0)
        started = started_chars(piece)
        end = before + started if piece else start
        spans.append((start, end) if position < len(data) else (len(text), len(text)))
        position += len(piece)
        before += started
    return spans


def encoding_of(core: CoreTokenizer, text: str, ids: list[int]) -> Encoding:
    """The `Encoding` of `text`, encoded as `ids`."""
    specials = {i: t for t, i in core.special_tokens}
    pieces = core.tokens_bytes(ids)
    strings: dict[int, str] = {}  # a token's string, made once per call (tokens repeat)
    tokens = []
    for token, piece in zip(ids, pieces):
        string = strings.get(token)
        if string is None:
            string = strings[token] = token_string(specials, token, piece)
        tokens.append(string)
    return Encoding(ids=ids, tokens=tokens, offsets=char_spans(text, pieces))


def decode_with_offsets(pieces: Sequence[bytes]) -> tuple[str, list[int]]:
    """tiktoken's `decode_with_offsets`: the text and, for each token, the index of the
    character it starts in (a token starting inside a character gets that character's
    index). Raises UnicodeDecodeError on bytes that are not valid UTF-8, as tiktoken."""
    offsets = []
    text_len = 0
    for piece in pieces:
        offsets.append(max(0, text_len - (0x80 <= piece[0] < 0xC0)))
        text_len += started_chars(piece)
    return b"".join(pieces).decode("utf-8", errors="strict"), offsets


class FamiliarNames:
    """tiktoken's and Hugging Face's names over `_core` (the native tokenizer)."""

    __slots__ = ("_ranks",)
    _core: CoreTokenizer
    _special_ids: dict[str, int]
    _ranks: dict[bytes, int] | None  # token bytes -> id, made on first use

    # ---- tiktoken's (an id is a tiktoken rank)

    @property
    def n_vocab(self) -> int:
        """tiktoken's name for `vocab_size` (the largest id + 1)."""
        return self._core.vocab_size

    @property
    def max_token_value(self) -> int:
        """The largest id (special tokens included), as tiktoken."""
        return self._core.vocab_size - 1

    @property
    def eot_token(self) -> int:
        """The id of the special token "<|endoftext|>"; KeyError when there is none."""
        if EOT not in self._special_ids:
            raise KeyError(
                f"this tokenizer has no {EOT!r} special token (it has "
                f"{sorted(self._special_ids)}); train with special_tokens=[{EOT!r}]"
            )
        return self._special_ids[EOT]

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts, as tiktoken."""
        return set(self._special_ids)

    def is_special_token(self, token: int) -> bool:
        """True when `token` is the id of a special token."""
        return check_token_id(token, 0) in self._special_ids.values()

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text (or bytes) is exactly `text_or_bytes`, special
        tokens included; KeyError when no token is, as tiktoken.

        >>> tok.encode_single_token(" the")   # doctest: +SKIP
        262
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_ids:
                return self._special_ids[text_or_bytes]
            data = text_or_bytes.encode("utf-8", "surrogatepass")
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(text_or_bytes)
        else:
            raise TypeError(
                f"encode_single_token takes str or bytes, not {type(text_or_bytes).__name__}"
            )
        token = self._lookup().get(data)
        if token is None:
            raise KeyError(text_or_bytes)
        return token

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, as tiktoken (a special token gives its text)."""
        return self._core.token_bytes(check_token_id(token, 0))

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, as tiktoken."""
        tokens = token_list(tokens)
        try:
            return self._core.tokens_bytes(tokens)
        except (TypeError, OverflowError):
            check_token_ids(tokens)  # names the id and its place
            raise

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and the index of the character each token starts in, as tiktoken
        (bytes that are not valid UTF-8 raise UnicodeDecodeError)."""
        return decode_with_offsets(self.decode_tokens_bytes(tokens))

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every token but the special ones, sorted, as tiktoken."""
        return sorted(self._core.mergeable_ranks())

    def _lookup(self) -> dict[bytes, int]:
        """Token bytes -> id, made on first use (the tokenizer is immutable)."""
        if self._ranks is None:
            self._ranks = self._core.mergeable_ranks()
        return self._ranks

    # ---- Hugging Face's (tokens as byte-level strings)

    def __len__(self) -> int:
        """`vocab_size`, as `len()` of a Hugging Face tokenizer (special tokens included)."""
        return self._core.vocab_size

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """`vocab_size`, as Hugging Face's; with `with_added_tokens=False`, without the
        special tokens (an exported `tokenizer.json` holds them as added tokens)."""
        return self._core.vocab_size - (0 if with_added_tokens else len(self._special_ids))

    def get_vocab(self) -> dict[str, int]:
        """Token string -> id for every token, special tokens included, in the strings of
        an exported `tokenizer.json` (GPT-2's byte-level alphabet: a space is "Ġ")."""
        return vocab(self._core)

    def token_to_id(self, token: str) -> int | None:
        """The id of a token string (as `get_vocab()` writes it), or None."""
        token = check_str("token", token)
        if token in self._special_ids:
            return self._special_ids[token]
        data = unicode_to_bytes(token)
        return None if data is None else self._lookup().get(data)

    def id_to_token(self, id: int) -> str | None:
        """The string of a token id (as `get_vocab()` writes it), or None."""
        return id_to_token(self._core, id)
