"""Vocabulary versions: a short name for exactly the ids a tokenizer gives.

A version is ``"<merges>-<hash>"``: the number of merged tokens (non-special tokens past
the first 256) and the first 16 hex digits of a SHA-256 over the pattern, the special
tokens and every non-special token's bytes in id order. Two tokenizers with the same
version encode every input to the same ids (encoding merges by rank of the merged bytes,
so the bytes in id order, the pattern and the special tokens decide it all).

The hash is taken over a prefix: the pattern and the special tokens' texts first, then
the tokens by id, and last the special tokens' ids (which come right after the merged
tokens, so they move as a store grows). So the versions of a growing run store are
prefixes of one another, and `prefix_version(tok, n)` names the tokenizer of its first
`n` merges, which a store gives back as
`Tokenizer.load(store, vocab_size=vocab_size_for(tok, n))`.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from bytebpe import Tokenizer

BYTE_TOKENS = 256
HASH_DIGITS = 16


class Version(NamedTuple):
    merges: int
    """Merged tokens: non-special tokens beyond the 256 byte tokens."""
    sha256: str
    """Full hex digest over pattern, special tokens and the tokens' bytes (id order)."""

    @property
    def name(self) -> str:
        return f"{self.merges}-{self.sha256[:HASH_DIGITS]}"


def parse(name: str) -> tuple[int, str]:
    """`"<merges>-<hash>"` -> (merges, hash prefix); ValueError naming what is wrong."""
    count, sep, digest = name.partition("-")
    if not sep or not count.isdigit() or len(digest) != HASH_DIGITS or not all(
        c in "0123456789abcdef" for c in digest
    ):
        raise ValueError(
            f"version {name!r} is not of the form '<merges>-<{HASH_DIGITS} hex digits>'"
        )
    return int(count), digest


def _ordered_tokens(tok: Tokenizer) -> list[bytes]:
    ranks = tok.mergeable_ranks()
    return [token for token, _ in sorted(ranks.items(), key=lambda item: item[1])]


def _specials(tok: Tokenizer) -> list[tuple[str, int]]:
    return sorted(tok.special_tokens.items(), key=lambda item: item[1])


def _header(tok: Tokenizer) -> bytes:
    lines = [b"bytebpe-vocab-v1", tok.pattern.encode("utf-8", "surrogatepass")]
    lines += [text.encode("utf-8", "surrogatepass") for text, _ in _specials(tok)]
    return b"".join(f"{len(line)}:".encode() + line for line in lines) + b"\n"


def _prefix_special_ids(tok: Tokenizer, n_tokens: int, merges: int) -> list[int]:
    """The special tokens' ids in the tokenizer of the first `merges` merged tokens. A run
    store (like every trained tokenizer) puts them right after the merged tokens, so they
    move as the store grows; special tokens kept among the merged ids (a warm start from
    a base with special tokens) keep their ids."""
    ids = [token_id for _, token_id in _specials(tok)]
    if ids == list(range(n_tokens, n_tokens + len(ids))):
        return list(range(BYTE_TOKENS + merges, BYTE_TOKENS + merges + len(ids)))
    return ids


def prefix_version(tok: Tokenizer, merges: int | None = None) -> Version:
    """The version of `tok`'s first `merges` merged tokens (all of them by default)."""
    tokens = _ordered_tokens(tok)
    total = max(len(tokens) - BYTE_TOKENS, 0)
    merges = total if merges is None else merges
    if not 0 <= merges <= total:
        raise ValueError(f"merges={merges} is outside 0..{total}")
    digest = hashlib.sha256(_header(tok))
    for token in tokens[: BYTE_TOKENS + merges]:
        digest.update(len(token).to_bytes(4, "little"))
        digest.update(token)
    special_ids = _prefix_special_ids(tok, len(tokens), merges)
    digest.update(b"specials:" + ",".join(map(str, special_ids)).encode())
    return Version(merges, digest.hexdigest())


def vocabulary_version(tok: Tokenizer) -> Version:
    """The version of the whole tokenizer."""
    return prefix_version(tok)


def vocab_size_for(tok: Tokenizer, merges: int) -> int:
    """The `vocab_size` that `Tokenizer.load(store, vocab_size=...)` needs to give the
    first `merges` merged tokens of `tok` (special tokens are counted in vocab_size)."""
    return BYTE_TOKENS + merges + len(tok.special_tokens)
