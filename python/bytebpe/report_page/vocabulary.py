"""Figures about the vocabulary itself: composition (lengths, blocks, digits, whitespace,
code operators) and health (unreachable, not UTF-8 alone, unused, intermediate-only)."""

from __future__ import annotations

import string
import unicodedata
from collections import Counter
from typing import Any

from bytebpe.report_page.unicode_blocks import block_of
from bytebpe.report_page.vocab import Vocab

KINDS = ("word", "digits", "whitespace", "operator", "mixed", "partial UTF-8")
EXAMPLES = 24


def kind_of(data: bytes) -> tuple[str, str]:
    """(kind, Unicode block) of a token: the block of its first character that is not
    whitespace (of its first character if all are)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "partial UTF-8", "partial UTF-8"
    core = text.lstrip(" ")
    first = next((c for c in text if not c.isspace()), text[:1])
    block = block_of(ord(first)) if first else "Basic Latin"
    if text.isspace():
        return "whitespace", block
    if core.isdigit():
        return "digits", block
    if core.isascii() and not core.strip(string.punctuation):
        return "operator", block
    if core.isalpha() or all(unicodedata.category(c)[0] in "LM" for c in core):
        return "word", block
    return "mixed", block


def composition(vocab: Vocab) -> dict[str, Any]:
    """Counts over the merged tokens (longer than one byte; the 256 bytes are the same in
    every vocabulary), with the earliest examples of each group."""
    lengths: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    blocks: Counter[str] = Counter()
    digits_len: Counter[int] = Counter()
    kind_examples: dict[str, list[int]] = {k: [] for k in KINDS}
    block_examples: dict[str, list[int]] = {}
    whitespace: Counter[str] = Counter()
    operators: list[int] = []
    for t in vocab.merged_ids:
        data = vocab.tokens[t]
        lengths[len(data)] += 1
        kind, block = kind_of(data)
        kinds[kind] += 1
        blocks[block] += 1
        if len(kind_examples[kind]) < EXAMPLES:
            kind_examples[kind].append(t)
        ex = block_examples.setdefault(block, [])
        if len(ex) < EXAMPLES:
            ex.append(t)
        if kind == "digits":
            digits_len[len(data.decode().lstrip(" "))] += 1
        elif kind == "whitespace":
            text = data.decode()
            whitespace["newlines" if "\n" in text or "\r" in text
                       else "tabs" if "\t" in text
                       else "spaces" if set(text) == {" "} else "other"] += 1
        elif kind == "operator":
            operators.append(t)
    return {
        "lengths": sorted(lengths.items()),
        "kinds": [[k, kinds[k]] for k in KINDS],
        "kind_examples": kind_examples,
        "blocks": blocks.most_common(),
        "block_examples": block_examples,
        "digits_by_length": sorted(digits_len.items()),
        "whitespace": whitespace.most_common(),
        "operators": operators,
    }


def health(vocab: Vocab, usage: Any | None) -> dict[str, Any]:
    """Token ids in each health group. `usage` sums the eval sets' token counts (None when
    there are no eval sets)."""
    not_utf8 = []
    merged = vocab.merged_ids
    for t in merged:
        data = vocab.tokens[t]
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            not_utf8.append(t)
    unused = (
        [t for t in merged if usage[t] == 0]
        if usage is not None else None
    )
    unused_bytes = (
        [t for t in vocab.byte_ids if usage[t] == 0] if usage is not None else None
    )
    return {
        "problems": vocab.problems,
        "unreachable": vocab.unreachable,
        "not_utf8": not_utf8,
        "unused": unused,
        "unused_bytes": unused_bytes,
        "intermediate": intermediate_only(vocab),
    }


def residual_counts(vocab: Vocab) -> list[int] | None:
    """How many occurrences of each token were left in the training words after the last
    merge: made by merges producing it, consumed by merges using it (twice for a pair of
    itself). Exact from the merge log's counts, except that a pair of a token with itself
    counts overlapping occurrences ("aaa" has two) while merging takes one of them, so a
    token in such a pair may show fewer than it kept. None without a merge log."""
    if not vocab.has_counts:
        return None
    left = [0] * vocab.size
    for a, b, t, c in vocab.merges:
        if t < vocab.size:
            left[t] += c
        if a < vocab.size:
            left[a] -= c
        if b < vocab.size:
            left[b] -= c
    return left


def intermediate_only(vocab: Vocab) -> list[int] | None:
    """Merged tokens every training occurrence of which was merged on into a longer token
    (residual count <= 0): steps on the way, never a token of the training text."""
    left = residual_counts(vocab)
    if left is None:
        return None
    made = {t for _, _, t, _ in vocab.merges}
    return [t for t in vocab.merged_ids if t in made and left[t] <= 0]
