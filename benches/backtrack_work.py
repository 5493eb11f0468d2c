"""Would a backtracking encoder do less work than merging rank by rank? Counted, not timed.

Issue 15 asks to consider the encoder of GitHub's `bpe` crate: take the longest token at
the current byte (a walk down a trie of the vocabulary), keep it if BPE would keep that
token boundary next to the previous token (a check that unwinds both tokens' merges and
looks up the pair across the boundary at each step), else try the next shorter prefix,
and step back when none fits. This script runs that algorithm in Python on the pieces
that encoding merges (every piece of 3 or more bytes that is not a whole token, of the
held-out documents of an `encode_one.py --mode prepare` directory), checks its ids
against bytebpe's, and counts its trie steps and pair-table lookups beside what merging
rank by rank does on the same pieces (one merge per byte the piece loses, each two
pair-table lookups, after one byte-pair read per adjacent pair of bytes).

    python benches/backtrack_work.py /tmp/en [--sample 20000]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import bytebpe
from bytebpe import _bytebpe
from encode_one import load_texts_json


class Backtracking:
    """The bpe crate's backtracking encoder over one vocabulary, counting its work."""

    def __init__(self, tok: bytebpe.Tokenizer) -> None:
        self.ranks: dict[bytes, int] = tok.mergeable_ranks()
        self.tokens = {i: b for b, i in self.ranks.items()}
        # Each token's split (a byte is its own) and the pair table, from the merges.
        self.split = {i: (i, i) for b, i in self.ranks.items() if len(b) == 1}
        self.pair: dict[tuple[int, int], int] = {}
        for m in tok.merges():
            self.split[m.token] = (m.left, m.right)
            self.pair[m.left, m.right] = m.token
        self.prefixes = {b[:j] for b in self.ranks for j in range(1, len(b) + 1)}
        self.trie_steps = self.checks = self.lookups = self.backtracks = 0

    def valid_pair(self, left: int, right: int) -> bool:
        """Whether BPE keeps the boundary between `left` and `right` (ranks are ids in
        merge order; ties go to the leftmost merge, as in tiktoken)."""
        self.checks += 1
        limit = 1 << 40
        while True:
            self.lookups += 1
            joined = self.pair.get((left, right))
            if joined is not None and joined < limit:
                return False
            if left > right:
                limit, left = left, self.split[left][1]
                if left == limit:
                    limit, right = right + 1, self.split[right][0]
                    if right + 1 == limit:
                        return True
            else:
                limit, right = right + 1, self.split[right][0]
                if right + 1 == limit:
                    limit, left = left, self.split[left][1]
                    if left == limit:
                        return True

    def longest(self, text: bytes, pos: int) -> int | None:
        best, end = None, pos + 1
        while end <= len(text) and text[pos:end] in self.prefixes:
            self.trie_steps += 1
            best = self.ranks.get(text[pos:end], best)
            end += 1
        return best

    def shorter(self, token: int) -> int | None:
        b = self.tokens[token]
        return next((self.ranks[b[:j]] for j in range(len(b) - 1, 0, -1) if b[:j] in self.ranks), None)

    def encode(self, text: bytes) -> list[int]:
        out: list[int] = []
        pos = 0
        reachable = [True] * (len(text) + 1)
        candidate = self.longest(text, 0)
        while candidate is not None:
            token, last = candidate, (out[-1] if out else None)
            while True:
                end = pos + len(self.tokens[token])
                if reachable[end] and (last is None or self.valid_pair(last, token)):
                    out.append(token)
                    pos = end
                    candidate = self.longest(text, pos) if pos < len(text) else None
                    break
                shorter = self.shorter(token)
                if shorter is not None:
                    token = shorter
                    continue
                # No prefix fits after `last`: give `last` up and try its shorter ones.
                assert last is not None, "a single byte always fits at the start"
                self.backtracks += 1
                reachable[pos] = False
                out.pop()
                pos -= len(self.tokens[last])
                candidate = last
                break
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path, help="a directory made by encode_one.py --mode prepare")
    ap.add_argument("--sample", type=int, default=20_000, help="pieces drawn (seeded)")
    args = ap.parse_args()
    tok = bytebpe.Tokenizer.load(args.dir / "tok.bbpe")
    coder = Backtracking(tok)
    pieces = [
        p
        for text in load_texts_json(args.dir)
        for p in _bytebpe._split(tok.pattern, text, False)
        if len(p) >= 3 and p not in coder.ranks
    ]
    sample = random.Random(1).sample(pieces, min(args.sample, len(pieces)))
    differ = merges = byte_pairs = 0
    for piece in sample:
        want = tok.encode_bytes(piece)
        differ += coder.encode(piece) != want
        merges += len(piece) - len(want)
        byte_pairs += len(piece) - 1
    n = len(sample)
    print(f"{n:,} of {len(pieces):,} non-token pieces, {sum(map(len, sample)) / n:.1f} bytes "
          f"on average; ids differing from bytebpe's: {differ}")
    print(f"merging rank by rank, a piece: {merges / n:.2f} merges ({2 * merges / n:.2f} "
          f"pair lookups), {byte_pairs / n:.2f} byte-pair reads")
    print(f"backtracking, a piece: {coder.trie_steps / n:.2f} trie steps, {coder.checks / n:.2f} "
          f"boundary checks ({coder.lookups / n:.2f} pair lookups), "
          f"{coder.backtracks / n:.3f} steps back")


if __name__ == "__main__":
    main()
