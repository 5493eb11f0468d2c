"""Seed merges: tokens made before training so numbers, indentation and operators are
tokenized the way the user fixes, whatever the corpus says.

`seed_merges` takes a preset name ("digits", "whitespace", "code", or several joined by
commas) or a list of literal strings. Each seed must be one piece of the pattern (cl100k
and o200k split digits into groups of at most three, so "1234" can never be a token).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

_OPERATORS = (
    "==", "!=", "<=", ">=", "->", "=>", "::", "&&", "||", "++", "--", "+=", "-=", "*=",
    "/=", "%=", "|=", "&=", "^=", "**", "//", "<<", ">>", "===", "!==", "...", ":=", "/*",
    "*/", "#!", "<<=", ">>=", "?.", "??", "();", "){", "[]", "{}", "()",
)

SEED_PRESETS: dict[str, list[str]] = {
    # Every 2- and 3-digit group, so numbers split the same way wherever they occur.
    "digits": [f"{n:02d}" for n in range(100)] + [f"{n:03d}" for n in range(1000)],
    # Runs of spaces (indentation), tabs and blank lines.
    "whitespace": [" " * n for n in range(2, 17)]
    + ["\t" * n for n in range(2, 5)]
    + ["\n" * n for n in range(2, 5)]
    + ["\r\n"],
    "code": list(_OPERATORS),
}


# The longest seed (the core refuses longer ones with the same wording).
MAX_SEED_BYTES = 1024


def resolve(seed_merges: object) -> list[bytes]:
    """The seed strings as bytes: a preset name (or names joined by commas) or a list."""
    if seed_merges is None:
        return []
    if isinstance(seed_merges, str):
        names = [n.strip() for n in seed_merges.split(",") if n.strip()]
        unknown = [n for n in names if n not in SEED_PRESETS]
        if unknown or not names:
            raise ValueError(
                f"seed_merges={seed_merges!r} names no preset; choose from "
                f"{sorted(SEED_PRESETS)} (joined by commas), or pass a list of strings"
            )
        return [s.encode("utf-8") for n in names for s in SEED_PRESETS[n]]
    if not isinstance(seed_merges, Sequence):
        raise TypeError(
            "seed_merges must be a preset name or a list of strings, not "
            f"{type(seed_merges).__name__}"
        )
    out = []
    for i, seed in enumerate(seed_merges):
        if isinstance(seed, str):
            data = seed.encode("utf-8", "surrogatepass")
        elif isinstance(seed, bytes):
            data = seed
        else:
            raise TypeError(f"seed_merges[{i}] is {type(seed).__name__}, expected str or bytes")
        if len(data) < 2:
            raise ValueError(
                f"seed_merges[{i}] {seed!r} is shorter than two bytes, so it needs no merge"
            )
        out.append(data)
    return out


def check_room(
    seeds: list[bytes], n_tokens: int, room: int, encode: Callable[[bytes], list[int]]
) -> None:
    """Refuses seeds that cannot fit in `room` mergeable tokens (`n_tokens` exist), before
    any is built: each distinct seed that is not a token yet makes at least one token (its
    own), so their number is a lower bound of what the seeds add."""
    free = room - n_tokens
    if len(seeds) <= free:  # the common case: nothing to look up
        return
    distinct = {s for s in seeds if len(s) <= MAX_SEED_BYTES}
    needed = sum(1 for s in distinct if len(encode(s)) > 1)
    if needed > free:
        raise ValueError(
            f"seed_merges hold {needed} distinct seeds that are not tokens yet, and each "
            f"makes a token, but vocab_size leaves room for {max(free, 0)} new tokens "
            f"({n_tokens} exist); raise vocab_size or pass fewer seeds"
        )
