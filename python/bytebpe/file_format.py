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
import contextlib
import errno
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError
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


def check_header(obj: Any, where: str, fmt: str, version: int, what: str) -> None:
    """Refuses a JSON document that is not `fmt` at `version` (a foreign or newer file)."""
    if not isinstance(obj, dict) or obj.get("format") != fmt:
        raise CorruptTokenizerError(f"{where} is not a {what}")
    if obj.get("version") != version:
        raise CorruptTokenizerError(
            f"{where} has format version {obj.get('version')!r}; this bytebpe reads "
            f"version {version} (upgrade bytebpe)"
        )


def from_state(state: Any, where: str, vocab_size: int | None = None) -> Loaded:
    """Rebuilds a tokenizer from `to_state` output; `where` names the source in errors.
    With `vocab_size`, only the first merges (or the lowest ids) are kept."""
    check_header(state, where, FORMAT, VERSION, "bytebpe tokenizer")
    try:
        specials = [str(t) for t, _ in state["special_tokens"]]
        tokens = [base64.b64decode(t, validate=True) for t in state["tokens"]]
        merges = [_merge(m) for m in state["merges"]]
        if vocab_size is None:
            ids = [tuple(t) for t in state["special_tokens"]]
            core = _build(state["pattern"], merges, tokens, ids)
            if core.vocab_size != state.get("vocab_size"):
                raise CorruptTokenizerError(
                    f"it says vocab_size={state.get('vocab_size')!r} but holds {core.vocab_size}"
                )
        else:
            # A vocab_size this file cannot be cut to is the argument's fault, not the file's.
            _check_cut(tokens, specials, vocab_size)
            core = truncated(state["pattern"], merges, tokens, specials, vocab_size)
    except _CutError as e:
        raise ValueError(f"{where}: {e}") from None
    except CorruptTokenizerError as e:
        raise CorruptTokenizerError(f"{where}: {e}") from None
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise CorruptTokenizerError(f"{where} has a malformed field: {e!r}") from None
    return core, state.get("ledger")


def _merge(entry: Any) -> MergeEntry:
    """One merge-log entry of a file: four integers (checked by the core)."""
    left, right, token, count = entry
    return (left, right, token, count)


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


class _CutError(ValueError):
    """A `vocab_size` a tokenizer cannot be cut to (the caller's argument is wrong)."""


def _check_cut(tokens: list[bytes], specials: list[str], vocab_size: int) -> None:
    """Raises `_CutError` (a ValueError) when `vocab_size` cannot cut this tokenizer."""
    if vocab_size - len(specials) < 256:
        raise _CutError(
            f"vocab_size={vocab_size} is too small: it must be at least {256 + len(specials)} "
            f"(256 bytes and {len(specials)} special tokens)"
        )
    if any(not t for t in tokens):
        raise _CutError(
            "this tokenizer keeps special-token ids among its merged tokens (it was "
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
    try:
        if "start_state" in stored.meta:
            core = _extended_from_store(stored, where, vocab_size)
        elif vocab_size is None:
            n_tokens = 256 + len({m[2] for m in stored.merges})
            core = CoreTokenizer.from_merges(
                pattern, stored.merges, _specials_after(n_tokens, specials)
            )
        else:
            core = truncated(pattern, stored.merges, [], specials, vocab_size)
    except (CorruptTokenizerError, ValueError) as e:
        raise type(e)(f"{where}: {e}") from None
    ledger = stored.ledger.get("training", stored.ledger.get("counting"))
    return core, ledger


def _extended_from_store(stored: StoredRun, where: str, vocab_size: int | None) -> CoreTokenizer:
    """A warm-started run: the tokenizer it started from, plus the stored merges."""
    start, _ = from_state(json.loads(stored.meta["start_state"]), f"{where} (its start)")
    known = {t for t, _ in start.special_tokens}
    new_specials = [t for t in stored.special_tokens if t not in known]
    merges: Sequence[MergeEntry] = stored.merges
    if vocab_size is not None:
        floor = start.vocab_size + len(new_specials)
        if vocab_size < floor:
            raise ValueError(
                f"vocab_size={vocab_size} is smaller than the tokenizer this run extends "
                f"({floor} tokens with the special tokens)"
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
    tmp = f"{os.fspath(path)}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise OSError(e.errno, f"cannot write {os.fspath(path)!r}: {e.strerror}") from None


def check_writable_file(path: str | os.PathLike[str]) -> None:
    """Raises OSError naming `path` unless a file can be written there: its directory
    exists and `path` is not a directory. Called before long work that ends in a write."""
    name = os.fspath(path)
    if os.path.isdir(name):
        raise IsADirectoryError(errno.EISDIR, f"{name!r} is a directory; give a file path")
    parent = os.path.dirname(os.path.abspath(name))
    if not os.path.isdir(parent):
        raise FileNotFoundError(
            errno.ENOENT, f"cannot write {name!r}: its directory {parent!r} does not exist"
        )
    if not os.access(parent, os.W_OK):
        raise PermissionError(
            errno.EACCES, f"cannot write {name!r}: its directory {parent!r} is not writable"
        )


def load(path: str | os.PathLike[str], vocab_size: int | None = None) -> Loaded:
    where = repr(os.fspath(path))
    with open(path, "rb") as f:
        raw = f.read()
    if not raw:
        raise CorruptTokenizerError(f"{where} is empty (a run store that is being created?)")
    try:
        state = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptTokenizerError(
            f"{where} is not a bytebpe tokenizer file (not valid JSON: {e})"
        ) from None
    is_ours = isinstance(state, dict) and state.get("format") == FORMAT
    if is_ours and state.get("sha256") != _digest(state):
        raise CorruptTokenizerError(
            f"{where} fails its checksum: the file was modified or damaged"
        )
    return from_state(state, where, vocab_size)
