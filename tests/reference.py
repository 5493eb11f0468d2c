"""The test oracle: a slow, obviously correct byte-level BPE trainer and encoder.

Every fast path in bytebpe must match this file exactly, merge for merge (ids and counts)
and id for id. It follows the contract in docs/design.md literally and is written to be read, not to be
fast: each training step recounts every pair of every word. It also spells out which words
a run under a memory limit keeps (`BudgetRun`, at the end). Only the stdlib and the `regex`
module are used.

Regex semantics: bytebpe splits text with the Rust `fancy-regex` crate (regex-syntax
0.8.12, Unicode 16.0 tables); this file uses the Python `regex` module (never `re`). What
was checked, for every code point, against regex-syntax's tables (\\p{L}, \\p{N}, \\p{Lu},
\\p{Ll}, \\p{Lt}, \\p{Lm}, \\p{Lo}, \\p{M}, \\s, \\d, \\w), and on bytebpe itself:

* `\\s` / `\\S`: the `regex` module's `\\s` is exactly the Unicode White_Space property,
  like Rust's. (Python's `re` also matches U+001C..U+001F; that is why `re` is not used.)
* `(?i:...)`: both use simple case folding; e.g. `(?i:'s)` matches "'\u017f" in both.
* `$`: Python's `$` also matches before a final "\\n"; Rust's `$` (without the `m` flag)
  only at the very end. `to_python_pattern` rewrites `$` (and Rust's `\\z`) to `\\Z`. It
  refuses patterns that use the `m` flag or nested classes rather than guess.
* find-iter: after an empty match at p, fancy-regex resumes the search one character
  further on, so a non-empty match starting at p is never found (Python's `finditer` would
  find it). `_find_matches` implements the Rust rule with a plain `search` loop.
* Unicode version: NOT bridged. `regex` 2026.5.9 uses Unicode 17.0, Rust uses 16.0. They
  differ on the ~4,700 code points first assigned in Unicode 17.0 (for \\p{L}, \\p{N},
  \\p{M}, \\d, \\w ...) and on U+0295, which is Ll in 16.0 and Lo in 17.0 (this changes o200k
  splits, e.g. "\u0295Ab"). The `regex` module has no Age property to subtract them with.
  Tests must keep their text inside `is_unicode_stable` (see below).
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

import regex

# tiktoken's `pat_str` strings, copied from tiktoken_ext/openai_public.py.
GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n/]*"""
    r"""|\s*[\r\n]+"""
    r"""|\s+(?!\S)"""
    r"""|\s+"""
)
BUILTIN_PATTERNS = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}

# Code points on which the `regex` module and Rust's regex-syntax disagree although both
# consider them assigned (found by comparing all code points; see the module docstring).
UNICODE_CATEGORY_CHANGED = frozenset({0x0295})
# The Unicode version of bytebpe's regex tables (regex-syntax 0.8.12).
RUST_UNICODE_VERSION = (16, 0)

Merge = tuple  # (left_id, right_id, token_id, count)


def is_unicode_stable(ch: str) -> bool:
    """True for characters on which Rust (Unicode 16.0) and `regex` (17.0) agree.

    Conservative: the character must be assigned in this Python's `unicodedata` (14.0 on
    Python 3.11; test_reference.py checks it is not newer than RUST_UNICODE_VERSION) and
    not be one of the few code points whose category changed later.
    """
    cp = ord(ch)
    if 0xD800 <= cp <= 0xDFFF or cp in UNICODE_CATEGORY_CHANGED:
        return False
    return unicodedata.category(ch) != "Cn"


def resolve_pattern(pattern: str) -> str:
    """A built-in name's regex, or the argument itself."""
    return BUILTIN_PATTERNS.get(pattern, pattern)


def to_python_pattern(pattern: str) -> str:
    """Rewrites a Rust (fancy-regex) pattern so that Python's `regex` matches the same.

    Only `$` and `\\z` outside character classes change (to `\\Z`, the very end).
    """
    if regex.search(r"\(\?[a-zA-Z-]*m", pattern):
        raise ValueError("the oracle does not support the multi-line flag")
    out = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escape = pattern[i : i + 2]
            out.append(r"\Z" if escape == r"\z" and not in_class else escape)
            i += 2
        elif in_class:
            if c == "[":
                raise ValueError("the oracle does not support nested character classes")
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
        elif c == "[":
            # "[" opens a class; a "]" right after "[" or "[^" is a literal.
            in_class = True
            start = i
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":
                i += 1
            out.append(pattern[start:i])
        elif c == "$":
            out.append(r"\Z")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _find_matches(compiled: regex.Pattern, text: str) -> list[tuple[int, int]]:
    """Spans of the non-empty matches, found like fancy-regex's `find_iter`."""
    spans = []
    pos = 0
    while pos <= len(text):
        m = compiled.search(text, pos)
        if m is None:
            break
        start, end = m.span()
        if start == end:
            pos = end + 1  # an empty match: produces nothing, search one character further
        else:
            spans.append((start, end))
            pos = end
    return spans


def split_text(compiled: regex.Pattern, text: str) -> list[bytes]:
    """Pieces of valid text: every non-empty match, and every maximal gap between them."""
    pieces = []
    covered = 0
    for start, end in _find_matches(compiled, text):
        if start > covered:
            pieces.append(text[covered:start].encode("utf-8"))
        pieces.append(text[start:end].encode("utf-8"))
        covered = end
    if covered < len(text):
        pieces.append(text[covered:].encode("utf-8"))
    return pieces


def split_bytes(compiled: regex.Pattern, data: bytes) -> list[bytes]:
    """Pieces of a byte string: each invalid byte alone, valid runs split as text.

    "surrogateescape" turns each byte that is not part of well-formed UTF-8 into its own
    lone surrogate U+DC80..U+DCFF, and nothing else becomes a surrogate.
    """
    try:
        return split_text(compiled, data.decode("utf-8"))  # valid throughout: one run
    except UnicodeDecodeError:
        pass
    pieces = []
    run = []  # characters of the current valid run
    for ch in data.decode("utf-8", errors="surrogateescape"):
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            pieces.extend(split_text(compiled, "".join(run)))
            run = []
            pieces.append(bytes([ord(ch) - 0xDC00]))
        else:
            run.append(ch)
    pieces.extend(split_text(compiled, "".join(run)))
    return pieces


def split_special(data: bytes, special_tokens: Sequence[str]) -> list[bytes]:
    """The segments between special tokens (longest first at one position, no overlap)."""
    specials = [s.encode("utf-8") for s in special_tokens]
    if not specials:
        return [data]
    segments = []
    start = 0
    i = 0
    while i < len(data):
        found = [s for s in specials if data.startswith(s, i)]
        if found:
            segments.append(data[start:i])
            i += max(len(s) for s in found)
            start = i
        else:
            i += 1
    segments.append(data[start:])
    return segments


def to_bytes(doc: str | bytes, surrogates: str = "error") -> bytes:
    if isinstance(doc, bytes):
        return doc
    if surrogates == "error":
        return doc.encode("utf-8")
    if surrogates == "surrogatepass":
        return doc.encode("utf-8", errors="surrogatepass")
    raise ValueError(f"surrogates={surrogates!r} is not modelled by the oracle")


def cut_piece(piece: bytes, max_token_length: int | None) -> list[bytes]:
    """`max_token_length`: a piece longer than that many bytes is cut into parts of at most
    that many, left to right. Each cut goes before the last byte within reach that is not a
    UTF-8 continuation byte (10xxxxxx), so characters stay whole; when every byte within
    reach is a continuation byte, the cut goes at exactly `max_token_length` bytes."""
    if max_token_length is None or len(piece) <= max_token_length:
        return [piece]
    parts = []
    while len(piece) > max_token_length:
        starts = [i for i in range(1, max_token_length + 1) if not 0x80 <= piece[i] <= 0xBF]
        cut = starts[-1] if starts else max_token_length
        parts.append(piece[:cut])
        piece = piece[cut:]
    parts.append(piece)
    return parts


def pretokenize(
    doc: str | bytes,
    pattern: str,
    special_tokens: Sequence[str] = (),
    surrogates: str = "error",
    max_token_length: int | None = None,
) -> list[bytes]:
    """The pieces of one document (special-token occurrences produce no piece), each cut
    to `max_token_length` bytes if given."""
    compiled = regex.compile(to_python_pattern(resolve_pattern(pattern)))
    pieces = []
    for segment in split_special(to_bytes(doc, surrogates), special_tokens):
        for piece in split_bytes(compiled, segment):
            pieces.extend(cut_piece(piece, max_token_length))
    return pieces


def count_words(
    docs: Iterable[str | bytes],
    pattern: str = "cl100k",
    special_tokens: Sequence[str] = (),
    surrogates: str = "error",
    max_token_length: int | None = None,
) -> dict[bytes, int]:
    counts: Counter[bytes] = Counter()
    for doc in docs:
        counts.update(pretokenize(doc, pattern, special_tokens, surrogates, max_token_length))
    return dict(counts)


def train(
    docs: Iterable[str | bytes],
    vocab_size: int,
    *,
    pattern: str = "cl100k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    surrogates: str = "error",
    max_token_length: int | None = None,
) -> list[Merge]:
    words = count_words(docs, pattern, special_tokens, surrogates, max_token_length)
    return train_counts(
        words, vocab_size, special_tokens=special_tokens, min_frequency=min_frequency
    )


def train_counts(
    word_counts: Mapping[str | bytes, int],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    start: Sequence[bytes] | None = None,
    reserved: Sequence[int] = (),
) -> list[Merge]:
    """The merge list: (left_id, right_id, token_id, count) per step, in order.

    A warm start passes `start`, the token bytes by id it extends (b"" at a special
    token's id), and `reserved`, the ids new tokens skip; words are first segmented by
    tiktoken's merge under `start`. `special_tokens` then counts every special token."""
    if vocab_size < 256 + len(special_tokens):
        raise ValueError("vocab_size must leave room for the 256 bytes and special tokens")
    vocab = list(start) if start else [bytes([b]) for b in range(256)]  # id -> token bytes
    ids = {token: i for i, token in enumerate(vocab) if token}  # token bytes -> id
    # Each word is a list of token ids; equal words are added up.
    words: Counter[tuple[int, ...]] = Counter()
    for word, count in word_counts.items():
        if isinstance(word, str):
            word = word.encode("utf-8")
        if count:
            words[tuple(encode_piece(ids, word) if start else word)] += count
    merges = []
    while len(ids) + len(special_tokens) < vocab_size:
        pair_counts: Counter[tuple[int, int]] = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pair_counts[pair] += count
        if not pair_counts:
            break
        # The highest count; among equal counts the smallest (left bytes, right bytes).
        top = max(pair_counts.values())
        if top < min_frequency:
            break
        tied = [pair for pair, count in pair_counts.items() if count == top]
        best = min(tied, key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
        token = vocab[best[0]] + vocab[best[1]]
        if token not in ids:
            while len(vocab) in reserved:
                vocab.append(b"")
            ids[token] = len(vocab)
            vocab.append(token)
        merges.append((best[0], best[1], ids[token], top))
        words = _merge_everywhere(words, best, ids[token])
    return merges


def _merge_everywhere(
    words: Counter[tuple[int, ...]], pair: tuple[int, int], new_id: int
) -> Counter[tuple[int, ...]]:
    """Replaces `pair` by `new_id` in every word, left to right, without overlap."""
    merged: Counter[tuple[int, ...]] = Counter()
    for word, count in words.items():
        merged[_merge_word(word, pair, new_id)] += count
    return merged


def _merge_word(word: tuple[int, ...], pair: tuple[int, int], new_id: int) -> tuple[int, ...]:
    if pair[0] not in word:  # a shortcut, only for speed
        return word
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def ranks_from_merges(merges: Iterable[Merge]) -> dict[bytes, int]:
    """tiktoken-style mergeable ranks (bytes -> id) of a merge list."""
    vocab = {i: bytes([i]) for i in range(256)}
    for left, right, token_id, _count in merges:
        vocab[token_id] = vocab[left] + vocab[right]
    return {token: i for i, token in vocab.items()}


def encode_piece(ranks: Mapping[bytes, int], piece: bytes) -> list[int]:
    """tiktoken's byte-pair merge of one piece."""
    if piece in ranks:
        return [ranks[piece]]
    parts = [bytes([b]) for b in piece]
    while True:
        best = None  # (rank, index); the lowest rank, leftmost among equals
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[part] for part in parts]


PieceEncoder = Callable[[bytes], list[int]]


def encode_bytes(
    ranks: Mapping[bytes, int], pattern: str, data: bytes, piece_encoder: PieceEncoder | None = None
) -> list[int]:
    """The oracle's pieces, each encoded by `encode_piece` (or by `piece_encoder`: another
    implementation of the same merge, for pieces too long for this quadratic one)."""
    ids = []
    for piece in pretokenize(data, pattern):
        ids.extend(piece_encoder(piece) if piece_encoder else encode_piece(ranks, piece))
    return ids


def encode_ordinary(
    ranks: Mapping[bytes, int], pattern: str, text: str, piece_encoder: PieceEncoder | None = None
) -> list[int]:
    return encode_bytes(ranks, pattern, text.encode("utf-8"), piece_encoder)


# --- the memory budget: which words a limited run keeps ---------------------------------------
#
# docs/design.md, "Memory budget", spelled out literally: the limit's split, the documented
# per-word estimates, the checkpoints, and the pruning rule with its tie buckets. Training
# on the words `budget_words` keeps must give a limited run's merges.

MIB = 1 << 20
_M64 = (1 << 64) - 1


def _malloc_chunk(n: int) -> int:
    """glibc's chunk for n bytes: n + 8 rounded up to 16, at least 32 (0 for nothing)."""
    return 0 if n == 0 else max(32, -(-(n + 8) // 16) * 16)


def _varint_len(n: int) -> int:
    """Bytes of n as a LEB128 varint (at least 1)."""
    return max(1, -(-n.bit_length() // 7))


@functools.cache
def table_entry_cost(length: int) -> int:
    """A counting-table word of `length` bytes: 46 bytes of slot (16 at load 7/20); a word
    of over 7 bytes adds its varint length and bytes in the arena, times 3/2 (the arena
    grows by half), rounded up."""
    if length <= 7:
        return 46
    return 46 + -(-3 * (length + _varint_len(length)) // 2)


@functools.cache
def merge_entry_cost(length: int) -> int:
    """A merge-loop word: the larger of its cost while the table is handed over and its
    cost in the loop (train/budget.rs spells out each term)."""
    sorted_list = 24 + length
    arena = 20 + 4 * length
    ids = 32 + _malloc_chunk(4 * length)
    hand_over = max(table_entry_cost(length) + sorted_list, sorted_list + arena,
                    sorted_list + ids, ids + arena)
    pairs = max(length - 1, 0)
    share = 0 if pairs == 0 else 131 if pairs == 1 else 131 * 6 // 5
    long = 110 * length if length >= 256 else 0
    return max(hand_over, arena + 16 * pairs + share + long)


def tie_bucket(word: bytes) -> int:
    """The top 8 bits of FNV-1a (64-bit) of the word, finished by splitmix64."""
    h = 0xCBF29CE484222325
    for b in word:
        h = ((h ^ b) * 0x100000001B3) & _M64
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & _M64
    return (h ^ (h >> 31)) >> 56


class Pruned(NamedTuple):
    """What one pruning dropped, and where it cut."""

    mass: int  # occurrences dropped
    covered: int  # bytes they covered (count x length)
    threshold: int  # t: words counted fewer times all went
    kept_buckets: int  # k: words counted t times stayed in tie buckets 0..k-1


def prune(
    table: dict[bytes, int], target: int, cost: Callable[[int], int]
) -> Pruned | None:
    """Drops the rarest words of `table` (in place) until the summed cost fits `target`;
    None when it fits already.

    The smallest count t such that the words counted more than t times fit; every word
    counted fewer than t times goes; of the words counted exactly t times those in the
    first k of 256 tie buckets stay, k as large as the room left allows."""
    total = sum(cost(len(word)) for word in table)
    if total <= target:
        return None
    by_count: Counter[int] = Counter()
    for word, count in table.items():
        by_count[count] += cost(len(word))
    above = total
    for threshold in sorted(by_count):
        above -= by_count[threshold]
        if above <= target:
            break
    bucket_costs = [0] * 256
    for word, count in table.items():
        if count == threshold:
            bucket_costs[tie_bucket(word)] += cost(len(word))
    k, used = 0, 0
    while k < 256 and used + bucket_costs[k] <= target - above:
        used += bucket_costs[k]
        k += 1
    dropped = [
        word
        for word, count in table.items()
        if count < threshold or (count == threshold and tie_bucket(word) >= k)
    ]
    pruned = Pruned(
        mass=sum(table[word] for word in dropped),
        covered=sum(table[word] * len(word) for word in dropped),
        threshold=threshold,
        kept_buckets=k,
    )
    for word in dropped:
        del table[word]
    return pruned


class BudgetRun:
    """The word table of a run under `memory_limit`: words come in input order, the table
    is pruned at checkpoints, and `finish` prunes for the merge loop."""

    def __init__(self, memory_limit: int) -> None:
        avail = memory_limit - 48 * MIB
        self.checkpoint_every = min(max(avail // 128, 64 << 10), 16 * MIB)
        self.table_high = avail // 8 * 5
        self.table_low = avail // 8 * 3
        self.merge_bytes = avail // 10 * 9
        self.table: dict[bytes, int] = {}
        # Every pruning, in order, and whether it was the merge loop's.
        self.prunings: list[tuple[Pruned, bool]] = []

    def add(self, word: bytes, count: int) -> None:
        if word and count:
            self.table[word] = self.table.get(word, 0) + count

    def checkpoint(self) -> None:
        """Prunes down to the low mark when the table is estimated above the high mark."""
        if sum(table_entry_cost(len(w)) for w in self.table) > self.table_high:
            self._prune(self.table_low, table_entry_cost, for_merging=False)

    def finish(self) -> dict[bytes, int]:
        """Prunes until the merge loop's estimate fits; returns the words trained on."""
        self._prune(self.merge_bytes, merge_entry_cost, for_merging=True)
        return self.table

    def _prune(self, target: int, cost: Callable[[int], int], *, for_merging: bool) -> None:
        pruned = prune(self.table, target, cost)
        if pruned:
            self.prunings.append((pruned, for_merging))

    @property
    def dropped_mass(self) -> int:
        return sum(p.mass for p, _ in self.prunings)

    @property
    def dropped_bytes(self) -> int:
        return sum(p.covered for p, _ in self.prunings)


def budget_counts(word_counts: Mapping[bytes, int], memory_limit: int) -> BudgetRun:
    """Pre-counted words (`train_from_counts`): a checkpoint after each word that takes the
    bytes of words added (lengths, in the mapping's order) past a multiple of
    `checkpoint_every`."""
    run = BudgetRun(memory_limit)
    added = 0
    for word, count in word_counts.items():
        if not (word and count):
            continue
        run.add(word, count)
        before, added = added, added + len(word)
        if added // run.checkpoint_every > before // run.checkpoint_every:
            run.checkpoint()
    run.finish()
    return run


def budget_documents(
    docs: Iterable[str | bytes], memory_limit: int, pattern: str = "cl100k"
) -> BudgetRun:
    """Documents: a checkpoint at the end of each document whose end takes the bytes of
    documents read past a multiple of `checkpoint_every`, and inside a document after each
    word whose bytes reach a multiple of `checkpoint_every` bytes of it (start < multiple
    <= end; the pieces tile the document, no special tokens here)."""
    run = BudgetRun(memory_limit)
    read = 0
    for doc in docs:
        end = 0
        for piece in pretokenize(doc, pattern):
            run.add(piece, 1)
            start, end = end, end + len(piece)
            if end // run.checkpoint_every > start // run.checkpoint_every:
                run.checkpoint()
        before, read = read, read + len(to_bytes(doc))
        if read // run.checkpoint_every > before // run.checkpoint_every:
            run.checkpoint()
    run.finish()
    return run
