"""UTF-8 facts the report needs, computed the way the Rust ledger computes them.

`invalid_spans` finds the bytes that are not valid UTF-8 and names their kind exactly as
`src/ledger.rs` does (so the eval sets' figures read like the training ledger's), and
`split_characters` finds, vectorized over a whole eval set, the characters whose bytes the
tokenizer spread over more than one token (byte fallback).
"""

from __future__ import annotations

from typing import Any

KINDS = ("stray_continuation", "never_valid", "truncated", "overlong", "surrogate", "too_large")


def _classify(data: bytes, at: int) -> tuple[str, int]:
    """The kind of the invalid sequence starting at `at` and how many bytes it spans (the
    lead byte plus the continuation bytes that follow it, up to the sequence length)."""
    lead = data[at]
    if 0x80 <= lead <= 0xBF:
        return "stray_continuation", 1
    if lead in (0xC0, 0xC1) or lead >= 0xF5:
        return "never_valid", 1
    needed = 2 if lead <= 0xDF else 3 if lead <= 0xEF else 4
    follow = 0
    while follow < needed - 1 and at + 1 + follow < len(data) and 0x80 <= data[at + 1 + follow] <= 0xBF:
        follow += 1
    second = data[at + 1] if at + 1 < len(data) else 0
    if (lead == 0xE0 and 0x80 <= second <= 0x9F) or (lead == 0xF0 and 0x80 <= second <= 0x8F):
        kind = "overlong"
    elif lead == 0xED and 0xA0 <= second <= 0xBF:
        kind = "surrogate"
    elif lead == 0xF4 and 0x90 <= second <= 0xBF:
        kind = "too_large"
    else:
        kind = "truncated"
    return kind, 1 + follow


def invalid_spans(data: bytes) -> list[tuple[str, int, int]]:
    """(kind, start, length) of every invalid UTF-8 sequence in `data`, in order."""
    spans: list[tuple[str, int, int]] = []
    at = 0
    while at < len(data):
        try:
            data[at:].decode("utf-8")
            break
        except UnicodeDecodeError as e:
            bad = at + e.start
        kind, length = _classify(data, bad)
        spans.append((kind, bad, length))
        at = bad + length
    return spans


def split_characters(
    data: Any, starts: Any, invalid_mask: Any, block_starts: Any, block_index: Any
) -> dict[str, Any]:
    """Characters of `data` (a uint8 array) that token boundaries (`starts`, the first byte
    offset of every token) cut, and every character's block.

    Returns {"split_leads": offsets of the first byte of each cut character,
    "split_blocks": block index of each, "split_bytes": per byte value, how many bytes of
    cut characters had it, "block_chars": characters per block index (all valid ones)}.
    """
    import numpy as np

    is_cont = (data & 0xC0) == 0x80
    valid_cont = is_cont & ~invalid_mask
    cut = starts[valid_cont[starts]] if len(starts) else starts
    # The lead byte of each cut character is 1 to 3 bytes before the cut.
    leads = np.full(len(cut), -1, dtype=np.int64)
    for back in (1, 2, 3):
        cand = cut - back
        ok = (leads < 0) & (cand >= 0)
        ok[ok] = ~is_cont[cand[ok]]
        leads[ok] = cand[ok]
    leads = np.unique(leads[leads >= 0])
    cps = _code_points(data, leads)
    split_blocks = np.asarray(block_index)[np.searchsorted(block_starts, cps, "right") - 1]
    lengths = _lengths(data[leads])
    split_bytes = np.zeros(256, dtype=np.int64)
    for k in range(4):
        sel = lengths > k
        split_bytes += np.bincount(data[leads[sel] + k], minlength=256)
    # Every valid character, by block: ASCII in one go, the rest decoded.
    valid_lead = ~is_cont & ~invalid_mask
    ascii_count = int(np.count_nonzero(data < 0x80))
    wide = np.flatnonzero(valid_lead & (data >= 0xC0))
    per_cp = np.bincount(_code_points(data, wide), minlength=0x110000)
    per_cp[0] += ascii_count  # Basic Latin: the ASCII bytes, counted in one go
    per_range = np.add.reduceat(per_cp, np.asarray(block_starts)[np.asarray(block_starts) < len(per_cp)])
    block_chars = np.bincount(np.asarray(block_index)[: len(per_range)], weights=per_range,
                              minlength=max(block_index) + 1).astype(np.int64)
    return {
        "split_leads": leads,
        "split_blocks": split_blocks,
        "split_bytes": split_bytes,
        "block_chars": block_chars,
    }


def _lengths(lead: Any) -> Any:
    import numpy as np

    return np.where(lead < 0x80, 1, np.where(lead < 0xE0, 2, np.where(lead < 0xF0, 3, 4)))


def _code_points(data: Any, leads: Any) -> Any:
    """Code points of the valid characters starting at `leads` (each length decoded apart,
    in 32-bit arithmetic)."""
    import numpy as np

    lead = data[leads]
    out = lead.astype(np.uint32)
    for length, mask, lo, hi in ((2, 0x1F, 0xC0, 0xE0), (3, 0x0F, 0xE0, 0xF0), (4, 0x07, 0xF0, 0x100)):
        sel = np.flatnonzero((lead >= lo) & (lead < hi))
        if not len(sel):
            continue
        at = leads[sel]
        cp = data[at].astype(np.uint32) & mask
        for k in range(1, length):
            cp = (cp << 6) | (data[at + k].astype(np.uint32) & 0x3F)
        out[sel] = cp
    return out
