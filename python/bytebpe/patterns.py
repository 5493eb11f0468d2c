"""The built-in pre-tokenization patterns: their names, their resolved regexes, and the
name of a resolved regex. The regexes themselves live in the native core
(`resolve_pattern`); this module is the one Python list of them."""

from __future__ import annotations

import functools

from bytebpe._bytebpe import resolve_pattern

__all__ = ["BUILTIN_NAMES", "builtin_sources", "pattern_name"]

BUILTIN_NAMES = ("gpt2", "cl100k", "o200k")


@functools.lru_cache(maxsize=1)
def builtin_sources() -> tuple[str, ...]:
    """The regexes of the built-in patterns, in the order of `BUILTIN_NAMES`."""
    return tuple(resolve_pattern(name) for name in BUILTIN_NAMES)


def pattern_name(pattern: str) -> str | None:
    """The built-in name ("gpt2", "cl100k", "o200k") of a resolved regex, or None."""
    for name, source in zip(BUILTIN_NAMES, builtin_sources()):
        if source == pattern:
            return name
    return None
