"""Eval sets: reading them, and every figure measured by encoding them.

One encoding per eval set (the native batch encoder, GIL released) gives everything:
bytes per token, tokens per word, Renyi efficiency, which tokens are used, the
compression at every smaller vocabulary size (see bpe.py), and where characters were cut
into bytes (see utf8.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from bytebpe.report_page import DEFAULT_MAX_BYTES, unicode_blocks, utf8
from bytebpe.report_page.vocab import Vocab
from bytebpe.sample import sample_records
from bytebpe.sources import read_files

#: Renyi efficiency's order, as recommended by Zouhar et al. (2023) and used by the
#: tokenization-scorer package.
RENYI_ALPHA = 2.5
SAMPLE_BYTES = 900
EXAMPLES = 8


@dataclass
class EvalSet:
    name: str
    docs: list[str | bytes]
    source: str
    truncated: bool = False


def read_eval(name: str, paths: str | Iterable[str], max_bytes: int = DEFAULT_MAX_BYTES) -> EvalSet:
    """The documents of `paths` (files or globs, as `bytebpe.read_files` reads them),
    up to `max_bytes` of text."""
    specs = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    docs: list[str | bytes] = []
    total = 0
    truncated = False
    for doc in read_files(specs):
        if total >= max_bytes:
            truncated = True
            break
        docs.append(doc)
        total += len(doc) if isinstance(doc, bytes) else len(doc.encode("utf-8", "surrogatepass"))
    return EvalSet(name, docs, ", ".join(map(str, specs)), truncated)


def bundled_sample() -> list[EvalSet]:
    """The held-out split of the sample corpus shipped with bytebpe, one set per kind."""
    sets: dict[str, list[str | bytes]] = {}
    for row in sample_records(split="heldout"):
        sets.setdefault(row["kind"], []).append(row["text"])
    return [EvalSet(k, v, "bundled sample (held out)") for k, v in sets.items()]


def as_encodable(doc: str | bytes) -> str | bytes:
    """A document as the encoder takes it: str when it is valid UTF-8, else its bytes (a
    str with lone surrogates becomes the bytes "surrogatepass" writes, as training does)."""
    if isinstance(doc, bytes):
        try:
            return doc.decode("utf-8")
        except UnicodeDecodeError:
            return doc
    try:
        doc.encode("utf-8")
        return doc
    except UnicodeEncodeError:
        return doc.encode("utf-8", "surrogatepass")


def renyi_efficiency(counts: Any, alpha: float = RENYI_ALPHA) -> float | None:
    """Renyi entropy of order `alpha` of the token distribution, over log2 of the number
    of distinct tokens used (tokenization-scorer's "renyi" metric with its default
    vocabulary size, the observed one)."""
    import numpy as np

    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    if len(c) < 2:
        return None
    p = c / c.sum()
    return float((1.0 / (1.0 - alpha)) * np.log2(np.sum(p**alpha)) / np.log2(len(c)))


@dataclass
class EvalResult:
    name: str
    source: str
    truncated: bool
    documents: int
    n_bytes: int
    chars: int
    words: int
    tokens: int
    usage: Any  # numpy int64 per token id
    renyi: float | None
    invalid: dict[str, int]
    invalid_bytes: Any  # per byte value
    split_bytes: Any  # per byte value
    split_chars: int
    block_chars: Any  # per block index
    block_split: Any  # per block index
    examples: list[dict[str, Any]]
    sample: bytes
    baseline: dict[str, Any] | None = None
    growth: list[float] = field(default_factory=list)

    @property
    def bytes_per_token(self) -> float | None:
        return self.n_bytes / self.tokens if self.tokens else None

    @property
    def tokens_per_word(self) -> float | None:
        return self.tokens / self.words if self.words else None


def encode(tok: Any, es: EvalSet) -> tuple[list[str | bytes], Any]:
    """The set's documents as encoded, and their tokens in one flat array (the native
    batch encoder: all cores, GIL released)."""
    import numpy as np

    docs = [as_encodable(d) for d in es.docs]
    if not docs:
        return docs, np.zeros(0, np.uint32)
    return docs, tok.encode_batch_numpy(docs, dtype=np.uint32)[0]


def measure(tok: Any, vocab: Vocab, es: EvalSet,
            encoded: tuple[list[str | bytes], Any] | None = None) -> EvalResult:
    """Every figure of one eval set, from its encoding (`encode`, done here if not given)."""
    import numpy as np

    docs, flat = encoded if encoded is not None else encode(tok, es)
    raw = [d.encode("utf-8") if isinstance(d, str) else d for d in docs]
    data_bytes = b"".join(raw)
    data = np.frombuffer(data_bytes, dtype=np.uint8)
    chars = 0
    words = 0
    for d in docs:
        text = d if isinstance(d, str) else d.decode("utf-8", "replace")
        chars += len(text)
        words += len(text.split())
    usage = np.bincount(flat, minlength=tok.vocab_size).astype(np.int64)

    # Invalid UTF-8 (only in documents kept as bytes), by kind and byte value.
    invalid = dict.fromkeys(utf8.KINDS, 0)
    invalid_bytes = np.zeros(256, dtype=np.int64)
    invalid_mask = np.zeros(len(data), dtype=bool)
    examples: list[dict[str, Any]] = []
    per_kind: dict[str, int] = {}
    offset = 0
    for number, (d, r) in enumerate(zip(docs, raw)):
        if isinstance(d, bytes):
            for kind, start, length in utf8.invalid_spans(r):
                invalid[kind] += length
                invalid_mask[offset + start : offset + start + length] = True
                invalid_bytes += np.bincount(data[offset + start : offset + start + length],
                                             minlength=256)
                if per_kind.get(kind, 0) < EXAMPLES:
                    per_kind[kind] = per_kind.get(kind, 0) + 1
                    examples.append({"kind": kind, "document": number, "offset": start,
                                     "context": r[max(0, start - 12) : start + length + 12].hex(),
                                     "at": min(start, 12), "length": length})
        offset += len(r)

    # Token boundaries over the concatenated bytes, then the characters they cut.
    lengths = np.array([len(t) for t in vocab.tokens] + [0] * (tok.vocab_size - vocab.size),
                       dtype=np.int64)
    ends = np.cumsum(lengths[flat]) if len(flat) else np.zeros(0, np.int64)
    if len(ends) and ends[-1] != len(data):
        raise AssertionError(f"eval set {es.name!r}: tokens cover {ends[-1]} bytes of {len(data)}")
    starts = ends - lengths[flat] if len(flat) else ends
    block_starts, block_index = _block_table()
    cut = utf8.split_characters(data, starts, invalid_mask, block_starts, block_index)
    nblocks = len(unicode_blocks.NAMES)
    block_chars = np.zeros(nblocks, np.int64)
    block_chars[: len(cut["block_chars"])] += cut["block_chars"]
    block_split = np.bincount(cut["split_blocks"], minlength=nblocks)
    seen_chars: set[bytes] = set()
    for lead in cut["split_leads"][: EXAMPLES * 200].tolist():
        if len(seen_chars) == EXAMPLES:
            break
        char = data_bytes[lead : lead + int(utf8._lengths(np.array([data[lead]]))[0])]
        if char in seen_chars:
            continue  # the first examples of distinct characters
        seen_chars.add(char)
        first = int(np.searchsorted(ends, lead, "right"))
        last = int(np.searchsorted(ends, lead + len(char) - 1, "right"))
        examples.append({"kind": "split_character", "char": char.decode("utf-8", "replace"),
                         "tokens": [int(t) for t in flat[first : last + 1]]})
    return EvalResult(
        name=es.name, source=es.source, truncated=es.truncated, documents=len(docs),
        n_bytes=len(data), chars=chars, words=words, tokens=len(flat), usage=usage,
        renyi=renyi_efficiency(usage), invalid=invalid, invalid_bytes=invalid_bytes,
        split_bytes=cut["split_bytes"], split_chars=len(cut["split_leads"]),
        block_chars=block_chars, block_split=block_split, examples=examples,
        sample=_sample(raw),
    )


def _block_table() -> tuple[Any, Any]:
    import numpy as np

    starts, index = unicode_blocks.index_table()
    return np.array(starts, dtype=np.int64), np.array(index, dtype=np.int64)


def _sample(raw: list[bytes]) -> bytes:
    """The first SAMPLE_BYTES or so of the set, cut after a newline or space (or at a
    character boundary), bytes exact (invalid UTF-8 included)."""
    out = b""
    for r in raw:
        out += r
        if len(out) > SAMPLE_BYTES:
            break
    if len(out) <= SAMPLE_BYTES:
        return out
    for sep in (b"\n", b" "):
        at = out.rfind(sep, 0, SAMPLE_BYTES)
        if at > SAMPLE_BYTES // 2:
            return out[: at + 1]
    cut = SAMPLE_BYTES
    while cut > 0 and 0x80 <= out[cut] <= 0xBF:
        cut -= 1
    return out[:cut]


def growth_curve(vocab: Vocab, results: list[EvalResult], sizes: list[int]) -> None:
    """Bytes per token of each eval set under the first N tokens, for N in `sizes`
    (exact, from the one full encoding; bpe.py explains why), into each result.growth."""
    import numpy as np

    unreachable = set(vocab.unreachable)
    used = np.zeros(vocab.size, dtype=bool)
    for r in results:
        used |= r.usage[: vocab.size] > 0
    tok_ids: list[int] = []
    thresholds: list[int] = []
    mult: list[int] = []
    for t in np.flatnonzero(used).tolist():
        maxima = list(accumulate(vocab.steps(t), max))
        if t in unreachable:
            # Only ever a whole piece: under N > t the shortcut makes it one token.
            maxima = [m for m in maxima if m < t]
            rest = len(vocab.tokens[t]) - len(maxima) - 1
            if rest > 0:
                tok_ids.append(t)
                thresholds.append(t)
                mult.append(rest)
        tok_ids.extend([t] * len(maxima))
        thresholds.extend(maxima)
        mult.extend([1] * len(maxima))
    tok_arr = np.array(tok_ids, dtype=np.int64)
    thr = np.array(thresholds, dtype=np.int64)
    mul = np.array(mult, dtype=np.int64)
    order = np.argsort(thr, kind="stable")
    tok_arr, thr, mul = tok_arr[order], thr[order], mul[order]
    lengths = np.array([len(t) for t in vocab.tokens], dtype=np.int64)
    at = np.searchsorted(thr, np.array(sizes, dtype=np.int64), "left")
    for r in results:
        u = r.usage[: vocab.size]
        base = int(np.dot(u, lengths))  # every token as its bytes
        saved = np.concatenate([[0], np.cumsum(u[tok_arr] * mul)])
        counts = base - saved[at]
        r.growth = [r.n_bytes / int(c) for c in counts] if r.tokens else []


def growth_sizes(n: int, points: int = 48) -> list[int]:
    """Vocabulary sizes from 256 to n, evenly spaced on a log scale, n included."""
    import numpy as np

    if n <= 256:
        return [n]
    xs = np.unique(np.round(np.geomspace(256, n, points)).astype(np.int64))
    return [int(x) for x in xs]
