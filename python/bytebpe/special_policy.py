"""tiktoken's rules for special-token text in `encode`: text equal to a special token is
an error unless the caller allows it (then it becomes the special token's id) or leaves it
out of `disallowed_special` (then it is encoded as ordinary text)."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Literal, NamedTuple


class SpecialPolicy(NamedTuple):
    """What one call allows: the same for every text it encodes."""

    # Special tokens encoded as their ids.
    allowed: frozenset[str]
    # Special tokens whose text is an error.
    disallowed: frozenset[str]


def policy(
    specials: Mapping[str, int],
    allowed_special: str | Collection[str],
    disallowed_special: str | Collection[str],
) -> SpecialPolicy:
    """The rules of one call. Each argument is "all" or a collection of special-token
    strings, as in tiktoken; any other string (a token passed bare, "ALL", "none") is an
    error rather than a set of its characters."""
    everything = frozenset(specials)
    allowed = resolve(argument("allowed_special", allowed_special), everything)
    disallowed = resolve(argument("disallowed_special", disallowed_special), everything - allowed)
    return SpecialPolicy(allowed, disallowed)


def argument(name: str, value: object) -> Literal["all"] | frozenset[str]:
    """An `allowed_special` / `disallowed_special` value checked: "all", or the special
    tokens of a collection of str (the service parses its JSON fields with this too).
    Each error message starts with the field it is about (`name` or `name[i]`)."""
    if isinstance(value, str):
        if value == "all":
            return "all"
        raise ValueError(
            f"{name}={value!r}: pass 'all' or a collection of special tokens, e.g. "
            f"{name}={{{value!r}}} for this one token, or {name}=() for none"
        )
    if isinstance(value, (bytes, bytearray, memoryview)) or not isinstance(value, Collection):
        raise TypeError(
            f"{name} must be 'all' or a collection of str (a set, list or tuple), "
            f"not {type(value).__name__}"
        )
    for i, token in enumerate(value):
        if not isinstance(token, str):
            kind = type(token).__name__
            if isinstance(value, Sequence):
                raise TypeError(f"{name}[{i}] must be a special token (a str), not {kind} "
                                f"({token!r})")
            raise TypeError(f"{name} must hold special tokens as str, not {kind} ({token!r})")
    return frozenset(value)


def resolve(value: Literal["all"] | frozenset[str], everything: frozenset[str]) -> frozenset[str]:
    """The tokens a checked argument names ("all": `everything`)."""
    return everything if value == "all" else value


def check(text: str, disallowed: frozenset[str], where: str = "the text") -> None:
    """Raises ValueError when `text` (named `where`) holds a disallowed special token,
    naming the first one in the text."""
    token = first_in(text, disallowed)
    if token is not None:
        raise ValueError(
            f"{where} contains the special token {token!r}. To encode it as the "
            f"special token, pass allowed_special={{{token!r}}} (or 'all'); to "
            f"encode it as ordinary text, pass disallowed_special=() or leave "
            f"{token!r} out of disallowed_special."
        )


def first_in(text: str, tokens: frozenset[str]) -> str | None:
    """The token of `tokens` that occurs first in `text` (the longest, where several
    start at one place), or None. One token is a substring search; more are one pass of
    a regex of all of them: a search per token cost a pass over the text each, 1.2 s on
    20 MB for a vocabulary with 256 special tokens, against 12 ms."""
    if len(tokens) <= 1:
        return next((t for t in tokens if t in text), None)
    match = _alternation(tokens).search(text)
    return None if match is None else match.group()


@functools.lru_cache(maxsize=64)
def _alternation(tokens: frozenset[str]) -> re.Pattern[str]:
    # Longest first: Python's regex takes the first alternative that matches at a place.
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return re.compile("|".join(map(re.escape, ordered)))
