"""The tokenizer file: one self-describing JSON document.

    {"format": "bytebpe-tokenizer", "version": 1, "pattern": str,
     "special_tokens": [[text, id], ...], "tokens": [base64 of each token's bytes, by id],
     "merges": [[left, right, token, count], ...], "vocab_size": int,
     "ledger": the training loss ledger or null,
     "sha256": hex digest of the fields above}

A trained tokenizer has a merge log; it is the source of truth (replayed and checked
against "tokens", and it keeps each merge's count). An imported one (tiktoken, Hugging
Face) has only "tokens"; one extended from an imported tokenizer has "tokens" and the log
of its new tokens. A special token's id among the merged ones (kept by a warm start) is
an empty token. The digest catches edits and truncation. The same state
pickles tokenizers, and `from_store` reads a run store's merge log the same way.
`write_atomic` is the package's one atomic file writer (the interop files use it too).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError
from bytebpe.checks import check_writable_file
from bytebpe.errors import ArgumentError
from bytebpe.fields import MAX_COUNT, MAX_ID, At, parse_json, reading
from bytebpe.ledger import read_training_ledger
from bytebpe.store import StoredRun

MergeEntry = tuple[int, int, int, int]

FORMAT = "bytebpe-tokenizer"
VERSION = 1

Loaded = tuple[CoreTokenizer, "dict[str, Any] | None"]


def to_state(core: CoreTokenizer, ledger: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "pattern": core.pattern,
        "special_tokens": [list(t) for t in core.special_tokens],
        "tokens": [base64.b64encode(t).decode("ascii") for t in core.tokens()],
        "merges": [list(m) for m in core.merges()],
        "vocab_size": core.vocab_size,
        "ledger": ledger,
    }


def check_header(obj: Any, where: str, fmt: str, version: int, what: str) -> dict[str, Any]:
    """Refuses a JSON document that is not `fmt` at `version` (a foreign or newer file)."""
    if not isinstance(obj, dict) or obj.get("format") != fmt:
        raise CorruptTokenizerError(f"{where} is not a {what}")
    if obj.get("version") != version:
        raise CorruptTokenizerError(
            f"{where} has format version {obj.get('version')!r}; this bytebpe reads "
            f"version {version} (upgrade bytebpe)"
        )
    return obj


class State(NamedTuple):
    """A tokenizer file's fields, each checked for its type and range."""

    pattern: str
    special_tokens: list[tuple[str, int]]
    tokens: list[bytes]
    merges: list[MergeEntry]
    vocab_size: int
    ledger: dict[str, Any] | None


def read_state(state: Any, where: str) -> State:
    """The fields of `to_state` output; CorruptTokenizerError naming the field otherwise."""
    top = At(where)
    obj = check_header(state, where, FORMAT, VERSION, "bytebpe tokenizer")
    pattern, at = top.field(obj, "pattern")
    pattern = at.string(pattern)
    value, at = top.field(obj, "special_tokens")
    specials = [_special(entry, at.item(i)) for i, entry in enumerate(at.array(value))]
    value, at = top.field(obj, "tokens")
    tokens = [_token(entry, at, i) for i, entry in enumerate(at.array(value))]
    value, at = top.field(obj, "merges")
    merges = [_merge(entry, at, i) for i, entry in enumerate(at.array(value))]
    value, at = top.field(obj, "vocab_size")
    vocab_size = at.integer(value, MAX_ID + 1)
    ledger = read_training_ledger(obj.get("ledger"), top.key("ledger"))
    return State(pattern, specials, tokens, merges, vocab_size, ledger)


def _special(entry: Any, at: At) -> tuple[str, int]:
    pair = at.array(entry)
    if len(pair) != 2:
        raise at.error(f"expected [text, id], got {len(pair)} items")
    return at.item(0).string(pair[0]), at.item(1).integer(pair[1])


# Tokens and merges are most of a file: each is checked on a fast path first, and an
# `At` (its path) is made only to word an error.


def _token(entry: Any, at: At, i: int) -> bytes:
    """tokens[i]: base64 of the token's bytes."""
    if type(entry) is str:
        try:
            return base64.b64decode(entry, validate=True)
        except (binascii.Error, ValueError):
            raise at.item(i).error(f"{entry[:60]!r} is not base64") from None
    raise at.item(i).expected("a string", entry)


def _merge(entry: Any, at: At, i: int) -> MergeEntry:
    """merges[i]: left, right and token ids, and the merge's count (ids are checked
    against each other by the core)."""
    if type(entry) is list and len(entry) == 4:
        left, right, token, count = entry
        if (type(left) is int and type(right) is int and type(token) is int
                and type(count) is int and 0 <= left <= MAX_ID and 0 <= right <= MAX_ID
                and 0 <= token <= MAX_ID and 0 <= count <= MAX_COUNT):
            return (left, right, token, count)
    place = at.item(i)
    items = place.array(entry)
    if len(items) != 4:
        raise place.error(f"expected 4 integers [left, right, token, count], got {len(items)}")
    left, right, token = (place.item(k).integer(items[k]) for k in range(3))
    return (left, right, token, place.item(3).integer(items[3], MAX_COUNT))


def from_state(state: Any, where: str, vocab_size: int | None = None) -> Loaded:
    """Rebuilds a tokenizer from `to_state` output; `where` names the source in errors.
    With `vocab_size`, only the first merges (or the lowest ids) are kept."""
    with reading(where):
        fields = read_state(state, where)
        specials = [text for text, _ in fields.special_tokens]
        if vocab_size is None:
            core = _build(fields.pattern, fields.merges, fields.tokens, fields.special_tokens)
            if core.vocab_size != fields.vocab_size:
                raise CorruptTokenizerError(
                    f"{where}: vocab_size: it says {fields.vocab_size} but the file holds "
                    f"{core.vocab_size} tokens"
                )
        else:
            # A vocab_size this file cannot be cut to is the argument's fault, not the file's.
            _check_cut(fields.tokens, specials, vocab_size, where)
            core = truncated(fields.pattern, fields.merges, fields.tokens, specials, vocab_size)
    return core, fields.ledger


def _build(
    pattern: str,
    merges: list[MergeEntry],
    tokens: list[bytes],
    specials: list[tuple[str, int]],
) -> CoreTokenizer:
    if merges and full_log(merges, tokens):
        core = CoreTokenizer.from_merges(pattern, merges, specials)
        if core.tokens() != tokens:
            raise CorruptTokenizerError("its tokens differ from what its merges make")
        return core
    if merges:  # extended from an imported tokenizer: the log covers the new tokens only
        return CoreTokenizer.from_tokens(pattern, tokens, merges, specials)
    ranks = [(t, i) for i, t in enumerate(tokens) if t]
    return CoreTokenizer.from_ranks(pattern, ranks, specials)


def full_log(merges: Sequence[MergeEntry], tokens: list[bytes]) -> bool:
    """Whether the merge log made every token but the 256 bytes: the tokens it names, in
    the order they first appear, are every non-empty id from 256 up (empty tokens are the
    ids of special tokens among the merged ones; a later merge naming a token already
    made reused its id). Counting the distinct tokens is not enough: a log extending an
    imported vocabulary may reuse one of the imported ids (an unreachable token)."""
    made = list(dict.fromkeys(m[2] for m in merges))
    return made == [i for i, t in enumerate(tokens) if t and i >= 256]


def fitting_prefix(
    merges: Sequence[MergeEntry], new_tokens: int, first_new: int = 256
) -> Sequence[MergeEntry]:
    """The longest prefix of a merge log that creates at most `new_tokens` tokens; ids
    from `first_new` on are new the first time they appear."""
    created = 0
    seen: set[int] = set()
    for i, (_, _, token, _) in enumerate(merges):
        if token >= first_new and token not in seen:
            if created == new_tokens:
                return merges[:i]
            seen.add(token)
            created += 1
    return merges


def _specials_after(n_tokens: int, specials: list[str]) -> list[tuple[str, int]]:
    return [(t, n_tokens + i) for i, t in enumerate(specials)]


def _check_cut(
    tokens: list[bytes], specials: list[str], vocab_size: int, where: str | None = None
) -> None:
    """Raises `ArgumentError` (a ValueError) when `vocab_size` cannot cut this tokenizer."""
    named = f"{where}: " if where else ""
    if vocab_size - len(specials) < 256:
        raise ArgumentError(
            f"{named}vocab_size={vocab_size} is too small: it must be at least {256 + len(specials)} "
            f"(256 bytes and {len(specials)} special tokens)"
        )
    if any(not t for t in tokens):
        raise ArgumentError(
            f"{named}this tokenizer keeps special-token ids among its merged tokens (it was "
            "extended), so it cannot be cut to a smaller vocab_size"
        )


def truncated(
    pattern: str,
    merges: Sequence[MergeEntry],
    tokens: list[bytes],
    specials: list[str],
    vocab_size: int,
) -> CoreTokenizer:
    """The tokenizer of the first merges (or lowest ids) that make `vocab_size` tokens in
    all; special tokens are included in the count and take the ids right after."""
    _check_cut(tokens, specials, vocab_size)
    keep = vocab_size - len(specials)
    if merges and (not tokens or full_log(merges, tokens)):
        prefix = fitting_prefix(merges, keep - 256)
        n_tokens = 256 + len({m[2] for m in prefix})
        return CoreTokenizer.from_merges(pattern, prefix, _specials_after(n_tokens, specials))
    kept = [(t, i) for i, t in enumerate(tokens[:keep])]
    return CoreTokenizer.from_ranks(pattern, kept, _specials_after(len(kept), specials))


def from_store(stored: StoredRun, where: str, vocab_size: int | None) -> Loaded:
    """The tokenizer of a run store's merge log (any prefix of it is a valid tokenizer)."""
    specials = stored.special_tokens
    pattern = stored.meta["pattern"]
    with reading(where):
        if "start_state" in stored.meta:
            core = _extended_from_store(stored, where, vocab_size)
        elif vocab_size is None:
            n_tokens = 256 + len({m[2] for m in stored.merges})
            core = CoreTokenizer.from_merges(
                pattern, stored.merges, _specials_after(n_tokens, specials)
            )
        else:
            _check_cut([], specials, vocab_size, where)
            core = truncated(pattern, stored.merges, [], specials, vocab_size)
    ledger = stored.ledger.get("training", stored.ledger.get("counting"))
    return core, ledger


def _extended_from_store(stored: StoredRun, where: str, vocab_size: int | None) -> CoreTokenizer:
    """A warm-started run: the tokenizer it started from, plus the stored merges."""
    its_start = f"{where} (its start)"
    state = parse_json(str(stored.meta["start_state"]).encode("utf-8"), its_start,
                       "bytebpe tokenizer")
    start, _ = from_state(state, its_start)
    known = {t for t, _ in start.special_tokens}
    new_specials = [t for t in stored.special_tokens if t not in known]
    merges: Sequence[MergeEntry] = stored.merges
    if vocab_size is not None:
        floor = start.vocab_size + len(new_specials)
        if vocab_size < floor:
            raise ArgumentError(
                f"{where}: vocab_size={vocab_size} is smaller than the tokenizer this run "
                f"extends ({floor} tokens with the special tokens)"
            )
        merges = fitting_prefix(merges, vocab_size - floor, len(start.tokens()))
    return start.extended(merges, new_specials)


def _digest(state: dict[str, Any]) -> str:
    body = {k: v for k, v in state.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def save(core: CoreTokenizer, path: str | os.PathLike[str], ledger: Any = None) -> None:
    """Writes atomically: a crash mid-write never leaves a half file at `path`."""
    state = to_state(core, ledger)
    state["sha256"] = _digest(state)
    text = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    write_atomic(path, text.encode("utf-8"))


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes `data` to `path` through a temporary file and a rename, so a crash mid-write
    never leaves a half file at `path`."""
    check_writable_file(path)
    path = os.fsdecode(path)  # bytes names too (surrogate escapes keep them exact)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise OSError(e.errno, f"cannot write {path!r}: {e.strerror}") from None


def load(path: str | os.PathLike[str], vocab_size: int | None = None) -> Loaded:
    with open(path, "rb") as f:
        raw = f.read()
    return load_bytes(raw, repr(os.fsdecode(path)), vocab_size)


def load_bytes(raw: bytes, where: str, vocab_size: int | None = None) -> Loaded:
    """The tokenizer of a file's bytes (read once: the file may be a pipe); `where` names
    the file in errors."""
    if not raw.strip():
        raise CorruptTokenizerError(f"{where} is empty (a run store that is being created?)")
    state = parse_json(raw, where, "bytebpe tokenizer file")
    with reading(where):
        is_ours = isinstance(state, dict) and state.get("format") == FORMAT
        if is_ours and state.get("sha256") != _digest(state):
            raise CorruptTokenizerError(
                f"{where} fails its checksum: the file was modified or damaged"
            )
        return from_state(state, where, vocab_size)
