"""Opening what the report is about: a tokenizer file, a run store (also while training
writes it), a tiktoken or Hugging Face tokenizer, or a Tokenizer object; and what is known
of how it was trained."""

from __future__ import annotations

import datetime
import json
import os
from typing import Any

from bytebpe import store
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
    if store.is_store_file(path):
        tok = Tokenizer.load(path)
        info.update(kind="run store", **_store_facts(path))
        return tok, info
    if path.endswith(".tiktoken"):
        info["kind"] = "tiktoken ranks file"
        return Tokenizer.from_tiktoken(path), info
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.lstrip().startswith(b"{") and b'"bytebpe-tokenizer"' not in head:
        try:
            with open(path, encoding="utf-8") as f:
                obj = json.load(f)
        except (ValueError, UnicodeDecodeError):
            obj = None
        if isinstance(obj, dict) and "model" in obj and obj.get("format") != "bytebpe-tokenizer":
            info["kind"] = "Hugging Face tokenizer.json"
            return Tokenizer.from_huggingface(path), info
    info["kind"] = "bytebpe tokenizer file"
    return Tokenizer.load(path), info


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
