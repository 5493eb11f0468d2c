"""Reading documents from files and standard input."""

from __future__ import annotations

import glob
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
) -> FileDocuments:
    """The documents of files, globs, or "-" (standard input), in order.

    `.jsonl`/`.ndjson` files give the `text_column` field of each row, `.parquet` files
    the `text_column` column; other files give one document per line (line ending kept)
    or, with `documents="files"`, one per file, as bytes, so invalid UTF-8 reaches the
    tokenizer intact. `.gz` and `.zst`/`.zstd` files are decompressed. Files are read by
    the same Rust reader as `Tokenizer.train_from_files`, so errors name the file and line
    alike (to train on files, `Tokenizer.train_from_files` is faster: documents never
    become Python objects).
    The result can be iterated again (the files are reopened), so a training run over
    files resumes its counting after a crash; standard input can be read only once.
    """
    if documents not in ("lines", "files"):
        raise ValueError(f"documents={documents!r}; choose 'lines' or 'files'")
    specs = (
        [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else list(map(os.fspath, paths))
    )
    return FileDocuments(specs, documents, text_column)


class FileDocuments:
    """Re-iterable documents of files (see `read_files`)."""

    def __init__(self, specs: list[str], documents: str, text_column: str) -> None:
        self.specs = specs
        self.documents = documents
        self.text_column = text_column

    def __repr__(self) -> str:
        return f"read_files({self.specs!r}, documents={self.documents!r})"

    def __iter__(self) -> Iterator[str | bytes]:
        for spec in self.specs:
            if spec == "-":
                yield from _read_stream(
                    sys.stdin.buffer, self.documents, "<stdin>", self.text_column, False
                )
                continue
            matches = sorted(glob.glob(spec)) if glob.has_magic(spec) else [spec]
            if not matches:
                raise FileNotFoundError(f"no file matches {spec!r}")
            for path in matches:
                yield from _read_file(path, self.documents, self.text_column)


def _read_file(path: str, documents: str, text_column: str) -> Iterator[str | bytes]:
    from bytebpe import _bytebpe, files

    kind, compression = files.file_format(path)
    if kind == "parquet":
        source = files.ParquetSource(path, compression, text_column)
        while (batch := source._next()) is not None:
            yield from batch
        return
    jsonl = kind == "jsonl"
    reader = _bytebpe.DocumentReader(
        path, path, "lines" if jsonl else documents, None, text_column if jsonl else None,
        False, files.DEFAULT_CHUNK_SIZE,
    )
    while not reader.exhausted:
        yield from reader.next_documents()


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
