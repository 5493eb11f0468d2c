"""Reading documents from files and standard input."""

from __future__ import annotations

import glob
import gzip
import io
import json
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Literal


def read_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    documents: Literal["lines", "files"] = "lines",
    text_column: str = "text",
) -> Iterator[str | bytes]:
    """Yields the documents of files, globs, or "-" (standard input), in order.

    `.jsonl`/`.ndjson` files give the `text_column` field of each row; other files give
    one document per line (line ending kept) or, with `documents="files"`, one per file,
    as bytes, so invalid UTF-8 reaches the tokenizer intact. `.gz` files are decompressed.
    """
    if documents not in ("lines", "files"):
        raise ValueError(f"documents={documents!r}; choose 'lines' or 'files'")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for spec in map(os.fspath, paths):
        if spec == "-":
            yield from _read_stream(sys.stdin.buffer, documents, "<stdin>", text_column, False)
            continue
        matches = sorted(glob.glob(spec)) if glob.has_magic(spec) else [spec]
        if not matches:
            raise FileNotFoundError(f"no file matches {spec!r}")
        for path in matches:
            opener = gzip.open if path.endswith(".gz") else open
            jsonl = path.removesuffix(".gz").endswith((".jsonl", ".ndjson"))
            with opener(path, "rb") as f:
                yield from _read_stream(f, documents, path, text_column, jsonl)


def _read_stream(
    f: io.BufferedIOBase, documents: str, name: str, text_column: str, jsonl: bool
) -> Iterator[str | bytes]:
    if jsonl:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{name}, line {number}: not JSON ({e.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get(text_column), str):
                raise ValueError(f"{name}, line {number}: no {text_column!r} text field")
            yield row[text_column]
    elif documents == "files":
        yield f.read()
    else:
        yield from (line for line in f if line)
