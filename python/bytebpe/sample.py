"""The small sample corpus shipped with bytebpe (see data/SOURCES.md for sources and licences).

English prose, source code (Python, C, Go, C++), text in ~30 languages/scripts and a short
emoji/whitespace stress document, split into "train" and "heldout" documents.  Rebuilt by
tools/build_sample.py.
"""
from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

__all__ = ["KINDS", "SAMPLE_PATH", "SPLITS", "sample_documents", "sample_records"]

# A plain path next to this module: maturin installs python/bytebpe/ (data included) unzipped.
SAMPLE_PATH: Path = Path(__file__).resolve().parent / "data" / "sample.jsonl.gz"

SPLITS = ("train", "heldout")
KINDS = ("english", "code", "multilingual", "emoji")


@functools.lru_cache(maxsize=1)
def _load() -> tuple[dict[str, Any], ...]:
    with gzip.open(SAMPLE_PATH, "rt", encoding="utf-8") as f:
        # Split on "\n" only: str.splitlines() would also break at U+2028 inside the JSON text.
        return tuple(json.loads(line) for line in f.read().split("\n") if line)


def _check(name: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        choices = ", ".join(map(repr, allowed))
        raise ValueError(f"{name} must be one of {choices} or None, got {value!r}")


def sample_records(*, split: str | None = "train",
                   kind: str | None = None) -> list[dict[str, Any]]:
    """Records {"text", "src", "kind", "lang", "licence", "split"}, in file order.

    ``split=None`` and ``kind=None`` mean "all".  The dicts are copies, so callers may
    modify them without affecting later calls.
    """
    _check("split", split, SPLITS)
    _check("kind", kind, KINDS)
    return [dict(r) for r in _load()
            if (split is None or r["split"] == split) and (kind is None or r["kind"] == kind)]


def sample_documents(*, split: str | None = "train", kind: str | None = None) -> list[str]:
    """The texts of :func:`sample_records` (default: all kinds of the training split)."""
    return [r["text"] for r in sample_records(split=split, kind=kind)]
