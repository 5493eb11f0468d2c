"""The tokenizer file: one self-describing JSON document.

    {"format": "bytebpe-tokenizer", "version": 1, "pattern": str,
     "special_tokens": [[text, id], ...], "tokens": [base64 of each token's bytes, by id],
     "merges": [[left, right, token, count], ...], "vocab_size": int,
     "sha256": hex digest of the fields above}

A trained tokenizer has a merge log; it is the source of truth (replayed and checked
against "tokens", and it keeps each merge's count). An imported one (tiktoken, Hugging
Face) has only "tokens". The digest catches edits and truncation.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError

FORMAT = "bytebpe-tokenizer"
VERSION = 1


def to_state(core: CoreTokenizer) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "pattern": core.pattern,
        "special_tokens": [list(t) for t in core.special_tokens],
        "tokens": [base64.b64encode(t).decode("ascii") for t in core.tokens()],
        "merges": [list(m) for m in core.merges()],
        "vocab_size": core.vocab_size,
    }


def from_state(state: Any, where: str) -> CoreTokenizer:
    """Rebuilds a tokenizer from `to_state` output; `where` names the source in errors."""
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CorruptTokenizerError(f"{where} is not a bytebpe tokenizer")
    if state.get("version") != VERSION:
        raise CorruptTokenizerError(
            f"{where} has format version {state.get('version')!r}; this bytebpe reads "
            f"version {VERSION} (upgrade bytebpe)"
        )
    try:
        specials = [tuple(t) for t in state["special_tokens"]]
        tokens = [base64.b64decode(t, validate=True) for t in state["tokens"]]
        if state["merges"]:
            core = CoreTokenizer.from_merges(
                state["pattern"], [tuple(m) for m in state["merges"]], specials
            )
            if core.tokens() != tokens:
                raise CorruptTokenizerError("its tokens differ from what its merges make")
        else:
            core = CoreTokenizer.from_ranks(
                state["pattern"], [(t, i) for i, t in enumerate(tokens)], specials
            )
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        if isinstance(e, CorruptTokenizerError):
            raise CorruptTokenizerError(f"{where}: {e}") from None
        raise CorruptTokenizerError(f"{where} has a malformed field: {e!r}") from None
    if core.vocab_size != state.get("vocab_size"):
        raise CorruptTokenizerError(
            f"{where} says vocab_size={state.get('vocab_size')!r} but its merges give "
            f"{core.vocab_size}"
        )
    return core


def _digest(state: dict[str, Any]) -> str:
    body = {k: v for k, v in state.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def save(core: CoreTokenizer, path: str | os.PathLike[str]) -> None:
    """Writes atomically: a crash mid-write never leaves a half file at `path`."""
    state = to_state(core)
    state["sha256"] = _digest(state)
    tmp = f"{os.fspath(path)}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, separators=(",", ":"), ensure_ascii=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load(path: str | os.PathLike[str]) -> CoreTokenizer:
    where = repr(os.fspath(path))
    with open(path, "rb") as f:
        raw = f.read()
    try:
        state = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptTokenizerError(
            f"{where} is not a bytebpe tokenizer file (not valid JSON: {e})"
        ) from None
    if isinstance(state, dict) and state.get("format") == FORMAT:
        if state.get("sha256") != _digest(state):
            raise CorruptTokenizerError(
                f"{where} fails its checksum: the file was modified or damaged"
            )
    return from_state(state, where)
