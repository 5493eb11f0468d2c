"""Byte pair merging in pure Python, step by step, for what the native encoder does not
expose: the order of merges inside one token.

Encoding merges, in each piece, the adjacent pair whose concatenated bytes have the lowest
rank (the leftmost on a tie) until no pair is a token (tiktoken's rule, DESIGN.md 2.3).
Two facts make the report's figures cheap and exact:

- A token T of the full encoding of a piece is built by merges inside its own span only,
  in the order they would have when encoding T's bytes alone (pairs across spans never win).
- Encoding with the first N ranks only (a prefix of the merge log) runs the same steps and
  stops at the first step whose rank is >= N.

So if T's own merge process has steps of ranks r_1, r_2, ..., with running maxima
m_i = max(r_1..r_i), then under the first N tokens T's span encodes as
len(T) - #{i : m_i < N} tokens. Summing over the tokens of the full encoding, weighted by
how often each is used, gives bytes per token at every vocabulary size from one encoding.

The one exception is the whole-piece shortcut: a piece whose bytes are a token becomes
that token even if merging would not reach it (an unreachable token; `verify()` lists
them). Such a token can only appear as a whole piece, so under N > its rank it is one
token, below that its truncated merge process.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Stands for "not a token" among pair ranks (above every rank).
NONE = 1 << 62


def merge_steps(
    data: bytes, ranks: Mapping[bytes, int], max_steps: int | None = None
) -> tuple[list[bytes], list[int]]:
    """Runs the merge process on `data` alone (no whole-piece shortcut): the final parts
    and the rank of each merge, in order. `max_steps` stops it early."""
    parts = [data[i : i + 1] for i in range(len(data))]
    steps: list[int] = []
    get = ranks.get
    # pair_rank[i]: rank of parts[i] + parts[i + 1], or NONE; min() and index() find the
    # lowest, leftmost first, at C speed.
    pair_rank = [get(data[i : i + 2], NONE) for i in range(len(data) - 1)]
    limit = len(data) if max_steps is None else max_steps
    while pair_rank and len(steps) < limit:
        best = min(pair_rank)
        if best == NONE:
            break
        at = pair_rank.index(best)
        steps.append(best)
        parts[at] += parts[at + 1]
        del parts[at + 1]
        del pair_rank[at]
        if at > 0:
            pair_rank[at - 1] = get(parts[at - 1] + parts[at], NONE)
        if at < len(pair_rank):
            pair_rank[at] = get(parts[at] + parts[at + 1], NONE)
    return parts, steps


def running_max(steps: list[int]) -> list[int]:
    out, m = [], -1
    for r in steps:
        m = max(m, r)
        out.append(m)
    return out
