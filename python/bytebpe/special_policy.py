"""tiktoken's rules for special-token text in `encode`: text equal to a special token is
an error unless the caller allows it (then it becomes the special token's id) or leaves it
out of `disallowed_special` (then it is encoded as ordinary text)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import NamedTuple


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
    allowed = frozenset(specials) if allowed_special == "all" else frozenset(allowed_special)
    disallowed = (
        frozenset(specials) - allowed if disallowed_special == "all"
        else frozenset(disallowed_special)
    )
    return SpecialPolicy(allowed, disallowed)


def check(text: str, disallowed: frozenset[str], where: str = "the text") -> None:
    """Raises ValueError when `text` (named `where`) holds a disallowed special token."""
    for token in disallowed:
        if token in text:
            raise ValueError(
                f"{where} contains the special token {token!r}. To encode it as the "
                f"special token, pass allowed_special={{{token!r}}} (or 'all'); to "
                f"encode it as ordinary text, pass disallowed_special=() or leave "
                f"{token!r} out of disallowed_special."
            )
