"""Reference ids for inputs too long for the oracle's own merge (quadratic in a piece's
length): the oracle's pieces (Python's `regex`), each merged by tiktoken with the same
ranks. tiktoken gets one piece at a time, through a pattern that matches it whole, so its
own regex (which overflows its stack on a million spaces) never splits anything."""

from __future__ import annotations

import reference as R
import tiktoken


def reference_ids(ranks: dict[bytes, int], pattern: str, text: str) -> list[int]:
    whole = tiktoken.Encoding(
        "pieces", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={}
    )
    return R.encode_ordinary(
        ranks, pattern, text, piece_encoder=lambda piece: whole.encode_ordinary(piece.decode())
    )
