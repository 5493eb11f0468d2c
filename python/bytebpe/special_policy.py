"""tiktoken's rules for special-token text in `encode`: text equal to a special token is
an error unless the caller allows it (then it becomes the special token's id) or leaves it
out of `disallowed_special` (then it is encoded as ordinary text)."""

from __future__ import annotations

from collections.abc import Collection, Mapping


def allowed_in(
    text: str,
    specials: Mapping[str, int],
    allowed_special: str | Collection[str],
    disallowed_special: str | Collection[str],
    where: str = "the text",
) -> set[str]:
    """The special tokens to encode as such in `text`; raises ValueError when `text`
    (named `where`) holds a disallowed one."""
    allowed = set(specials) if allowed_special == "all" else set(allowed_special)
    disallowed = (
        set(specials) - allowed if disallowed_special == "all" else set(disallowed_special)
    )
    for token in disallowed:
        if token in text:
            raise ValueError(
                f"{where} contains the special token {token!r}. To encode it as the "
                f"special token, pass allowed_special={{{token!r}}} (or 'all'); to "
                f"encode it as ordinary text, pass disallowed_special=() or leave "
                f"{token!r} out of disallowed_special."
            )
    return allowed
