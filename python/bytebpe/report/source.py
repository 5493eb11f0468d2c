"""Opening what the report is about: a tokenizer file, a run store (also while training
writes it), a tiktoken or Hugging Face tokenizer, or a Tokenizer object; and what is known
of how it was trained."""

from __future__ import annotations

import datetime
import os
from typing import Any

from bytebpe import loading, store
from bytebpe.tokenizer import Tokenizer


def open_tokenizer(source: object) -> tuple[Tokenizer, dict[str, Any]]:
    """(Tokenizer, facts about its origin) for a path, "tiktoken:NAME", or a Tokenizer."""
    if isinstance(source, Tokenizer):
        return source, {"kind": "Tokenizer object"}
    if isinstance(source, str) and source.startswith("tiktoken:") and not os.path.exists(source):
        import tiktoken  # optional; fetches the encoding's ranks once (tiktoken caches them)

        name = source.split(":", 1)[1]
        return Tokenizer.from_tiktoken(tiktoken.get_encoding(name)), {
            "kind": "tiktoken encoding", "name": name}
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(
            f"a report is of a Tokenizer or a path to a tokenizer, not {type(source).__name__}"
        )
    path = os.fspath(source)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no tokenizer at {path!r}")
    info: dict[str, Any] = {
        "path": os.path.abspath(path),
        "file_bytes": os.path.getsize(path),
        "modified": _when(os.path.getmtime(path)),
    }
    file = loading.read(path)  # once: the path may be a pipe
    tok = Tokenizer(*loading.build(file))
    info["kind"] = _KIND_NAMES[file.kind]
    if file.kind == "store":
        info.update(_store_facts(path))
    return tok, info


_KIND_NAMES = {"store": "run store", "tiktoken": "tiktoken ranks file",
               "huggingface": "Hugging Face tokenizer.json", "bytebpe": "bytebpe tokenizer file"}


def _when(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC")


def _store_facts(path: str) -> dict[str, Any]:
    """Settings, counting progress and merge timing of a run store."""
    run = store.read(path, with_snapshot=False)
    meta = dict(run.meta)
    facts: dict[str, Any] = {
        "settings": {k: v for k, v in meta.items()
                     if k not in ("format", "version", "pattern", "special_tokens")},
        "complete": meta.get("complete") == "1",
        "counting": {"documents": run.documents, "bytes": run.bytes,
                     "finished": run.counting_finished},
        "merges_logged": len(run.merges),
    }
    if run.merge_times is not None:
        first, last = run.merge_times
        facts.update(first_merge=_when(first), last_merge=_when(last),
                     merge_seconds=round(last - first, 3))
        if run.counting_updated is not None:
            facts["counting_updated"] = _when(run.counting_updated)
    return facts
