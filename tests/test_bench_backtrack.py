"""benches/backtrack_work.py's backtracking encoder gives the ids bytebpe gives, and
counts its work: on pieces of runs (ties between equal pairs) and of mixed letters."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import bytebpe

BENCHES = Path(__file__).resolve().parent.parent / "benches"
sys.path.insert(0, str(BENCHES))

from backtrack_work import Backtracking  # noqa: E402


def test_backtracking_gives_bytebpe_ids():
    rng = random.Random(3)
    words = ["".join(rng.choice("abcab ") for _ in range(rng.randint(2, 12))) for _ in range(400)]
    docs = [" ".join(words[rng.randrange(len(words))] for _ in range(60)) for _ in range(200)]
    docs += ["aaaaaaaaaaab abababab " * 20, "bbbbbb aaaaaa cccc " * 20]
    tok = bytebpe.Tokenizer.train_from_iterator(docs, 600, progress=False)
    coder = Backtracking(tok)
    pieces = [p.encode() for p in ["a" * n for n in range(1, 40)] + words]
    pieces += [bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 30))) for _ in range(500)]
    for piece in pieces:
        assert coder.encode(piece) == tok.encode_bytes(piece), piece
    # The runs and the random pieces make it step back and check boundaries.
    assert coder.backtracks > 0 and coder.checks > len(pieces) and coder.trie_steps > 0
