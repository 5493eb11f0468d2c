"""What the report knows about a tokenizer's vocabulary: each token's bytes, how it was
built (its two parts and the count at merge time, from the merge log; derived by merging
for imported tokenizers, which have no log), and what the native checks say about it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bytebpe.report_page.bpe import merge_steps

_UNREACHABLE = re.compile(r"^token (\d+) .*unreachable")


@dataclass
class Vocab:
    tokens: list[bytes]
    """Bytes of every ordinary token, by id (b"" at an id a special token holds)."""
    ranks: dict[bytes, int]
    special: dict[str, int]
    left: list[int]
    """Left part of each token (-1 for the byte tokens and tokens with no split)."""
    right: list[int]
    count: list[int]
    """Count of the pair when it was merged (-1 when unknown: imported or derived)."""
    merge_rank: list[int]
    """Position in the merge log of the merge that made the token (-1 if none)."""
    derived: list[bool]
    """True where the parts were found by merging the token's bytes, not read from a log."""
    merges: list[tuple[int, int, int, int]]
    """The merge log (left, right, token, count), duplicates included."""
    problems: list[str]
    """verify()'s messages."""
    unreachable: list[int]
    _steps: dict[int, list[int]] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def merged_ids(self) -> list[int]:
        """Ids of the tokens longer than one byte (256 and up, unless an imported
        vocabulary numbers its bytes otherwise)."""
        return [t for t in range(len(self.tokens)) if len(self.tokens[t]) > 1]

    @property
    def byte_ids(self) -> list[int]:
        return [t for t in range(len(self.tokens)) if len(self.tokens[t]) == 1]

    @property
    def has_counts(self) -> bool:
        return bool(self.merges)

    def precompute_steps(self) -> None:
        """Fills the merge steps of every merged token (run in a thread while the native
        encoder, which releases the GIL, measures the eval sets)."""
        ranks, steps = self.ranks, self._steps
        for t in self.merged_ids:
            if t not in steps:
                steps[t] = merge_steps(self.tokens[t], ranks)[1]

    def steps(self, token: int) -> list[int]:
        """Ranks of the merges that encoding the token's bytes alone makes, in order."""
        got = self._steps.get(token)
        if got is None:
            got = merge_steps(self.tokens[token], self.ranks)[1]
            self._steps[token] = got
        return got


def read_vocab(tok: Any) -> Vocab:
    ranks: dict[bytes, int] = tok.mergeable_ranks()
    special = dict(tok.special_tokens)
    size = max([*ranks.values(), -1]) + 1
    tokens = [b""] * size
    for data, i in ranks.items():
        tokens[i] = data
    left = [-1] * size
    right = [-1] * size
    count = [-1] * size
    merge_rank = [-1] * size
    derived = [False] * size
    merges = [(m.left, m.right, m.token, int(m.count)) for m in tok.merges()]
    for k, (a, b, t, c) in enumerate(merges):
        if t < size and merge_rank[t] < 0 and left[t] < 0:
            left[t], right[t], count[t], merge_rank[t] = a, b, c, k
    problems = list(tok.verify())
    unreachable = sorted(
        int(m.group(1)) for m in map(_UNREACHABLE.match, problems) if m is not None
    )
    vocab = Vocab(tokens, ranks, special, left, right, count, merge_rank, derived, merges,
                  problems, unreachable)
    # Tokens with no merge in the log (imported, or the base of an extended tokenizer):
    # the last merge encoding their bytes makes, else any split into two earlier tokens.
    for t in vocab.merged_ids:
        if left[t] >= 0:
            continue
        data = tokens[t]
        parts, steps = merge_steps(data, ranks)
        vocab._steps[t] = steps
        split = None
        if len(parts) == 1 and len(data) > 1:
            split = _last_split(data, steps, ranks)
        if split is None:
            candidates = [
                (max(ranks[data[:i]], ranks[data[i:]]), i)
                for i in range(1, len(data))
                if data[:i] in ranks and data[i:] in ranks
            ]
            split = min(candidates)[1] if candidates else None
        if split is not None:
            left[t], right[t], derived[t] = ranks[data[:split]], ranks[data[split:]], True
    return vocab


def _last_split(data: bytes, steps: list[int], ranks: dict[bytes, int]) -> int | None:
    """Where the final merge of `data`'s merge process joins its two parts: replay all but
    the last step and read the boundary."""
    parts, _ = merge_steps(data, ranks, max_steps=len(steps) - 1)
    return len(parts[0]) if len(parts) == 2 else None
