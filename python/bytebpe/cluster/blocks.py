"""What runs on the workers: one block of a Ray dataset -> its documents -> its partial
counts, and consecutive partials -> one. Plain functions of their input (no Ray import,
no state), so a task Ray retries after its worker died gives the same row again and
nothing is counted twice or lost.

A partial is one row: the block's word-count snapshot (the Rust counter's own format, a
few bytes per distinct word), its counting ledger with document numbers from 0, its
joinable fingerprint, and its sizes. Partials of consecutive blocks are joined in order
(`combine_partials`), so the result is the same for any tree of consecutive blocks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bytebpe import documents
from bytebpe._bytebpe import (
    WordCounter,
    join_fingerprints,
    merge_ledgers,
    merge_snapshots,
    sequence_fingerprint,
)
from bytebpe.arrow_text import utf8_values
from bytebpe.errors import BlockError

# Documents handed to the counter per call (bounded by bytes too, see documents.batches).
COUNT_BATCH = 8192
# The columns of a partial row.
PARTIAL_COLUMNS = (
    "key", "rows", "documents", "bytes", "fingerprint", "ledger", "rejected", "snapshot",
    "reused", "counted", "shipped", "seconds",
)


@dataclass(frozen=True)
class CountConfig:
    """What a worker needs to count a block: the counter's settings and the input's
    shape. Pickled into each task (small)."""

    pattern: str
    special_tokens: tuple[str, ...]
    max_token_length: int | None
    surrogatepass: bool
    text_column: str
    skip_bad_items: bool
    # Keys of blocks a run store already holds: such a block is not counted again.
    done: frozenset[str] = field(default_factory=frozenset)


def block_documents(
    batch: Any, text_column: str, skip_bad_items: bool, surrogatepass: bool, action: str
) -> tuple[list[str | bytes], dict[str, int]]:
    """The documents of a block (a pyarrow Table), in row order, and the rows rejected
    by type. A bad row is a `BlockError` naming it, unless `skip_bad_items`."""
    if text_column not in batch.column_names:
        raise BlockError(
            f"a block of the dataset has no {text_column!r} column (it has "
            f"{batch.column_names}); pass text_column=... to pick the text"
        )
    docs: list[str | bytes] = []
    rejected: dict[str, int] = {}
    # Arrow strings come as their UTF-8 bytes (valid UTF-8, so no surrogate to check).
    for row, value in enumerate(utf8_values(batch.column(text_column))):
        if isinstance(value, str):
            if surrogatepass:
                value = value.encode("utf-8", "surrogatepass")
            elif not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise BlockError(
                        f"{where(batch, row)} contains a lone surrogate at character "
                        f"{e.start}, which is not valid text; {_advice(action)}"
                    ) from None
            docs.append(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            docs.append(bytes(value))
        elif skip_bad_items:
            name = type(value).__name__
            rejected[name] = rejected.get(name, 0) + 1
        else:
            raise BlockError(
                f"{where(batch, row)} has {type(value).__name__} in {text_column!r}, "
                f"expected str or bytes"
                + (" (on_bad_item='skip' skips such rows and counts them in the loss ledger)"
                   if action == "training" else "")
            )
    return docs, rejected


def where(batch: Any, row: int) -> str:
    """Names row `row` of a block for an error: its position, and its file when the
    dataset was read with `include_paths=True`."""
    text = f"row {row} of a block of {batch.num_rows} rows"
    if "path" in batch.column_names:
        text += f" (read from {batch.column('path')[row].as_py()})"
    return text


def _advice(action: str) -> str:
    if action == "training":
        return 'pass surrogates="surrogatepass" to keep it reversibly, or clean the text'
    return "encode it with 'surrogatepass' to keep it reversibly, or clean the text"


def block_key(docs: list[str | bytes], rows: int) -> tuple[str, int, int]:
    """(key, fingerprint, bytes) of a block's documents: the key names the block by its
    content, so a resumed run finds it whatever the partitioning around it."""
    fingerprint = sequence_fingerprint(docs)
    size = sum(len(d.encode("utf-8")) if isinstance(d, str) else len(d) for d in docs)
    return f"{fingerprint:016x}-{rows}-{len(docs)}-{size}", fingerprint, size


def count_block(batch: Any, cfg: CountConfig) -> dict[str, list[Any]]:
    """Counts one block (a pyarrow Table): its partial as a one-row batch. A block whose
    key is in `cfg.done` is not counted: the row says so (`reused`), and the driver
    takes the stored partial instead."""
    docs, rejected = block_documents(
        batch, cfg.text_column, cfg.skip_bad_items, cfg.surrogatepass, "training"
    )
    key, fingerprint, size = block_key(docs, batch.num_rows)
    if key in cfg.done:
        return _row(key=key, rows=batch.num_rows, documents=len(docs), bytes=size,
                    fingerprint=fingerprint, ledger="{}", rejected="{}", snapshot=b"",
                    reused=True, counted=0, seconds=0.0)
    started = time.perf_counter()
    counter = WordCounter(cfg.pattern, list(cfg.special_tokens), 1, cfg.surrogatepass,
                          cfg.max_token_length, None)
    first = 0
    for part in documents.batches(iter(docs), COUNT_BATCH):
        counter.add_batch(part, first)
        first += len(part)
    return _row(key=key, rows=batch.num_rows, documents=len(docs), bytes=size,
                fingerprint=fingerprint, ledger=json.dumps(counter.ledger()),
                rejected=json.dumps(rejected), snapshot=counter.snapshot(), reused=False,
                counted=1, seconds=time.perf_counter() - started)


def _row(**values: Any) -> dict[str, list[Any]]:
    values["shipped"] = len(values["snapshot"]) + len(values["ledger"])
    return {name: [values[name]] for name in PARTIAL_COLUMNS}


def partial_rows(batch: Any) -> Iterator[dict[str, Any]]:
    """The rows of a batch of partials (a pyarrow Table), in order."""
    yield from batch.to_pylist()


def combine_partials(batch: Any) -> dict[str, list[Any]]:
    """Joins consecutive partials (a pyarrow Table of partial rows, in input order) into
    one: snapshots summed, ledgers joined in order, fingerprints joined."""
    rows = list(partial_rows(batch))
    rejected: dict[str, int] = {}
    for row in rows:
        for name, n in json.loads(row["rejected"]).items():
            rejected[name] = rejected.get(name, 0) + n
    ledger = json.dumps(merge_ledgers([json.loads(r["ledger"]) for r in rows]))
    snapshot = merge_snapshots([r["snapshot"] for r in rows])
    out = _row(
        key="", rows=sum(r["rows"] for r in rows), documents=sum(r["documents"] for r in rows),
        bytes=sum(r["bytes"] for r in rows),
        fingerprint=join_fingerprints([(r["fingerprint"], r["documents"]) for r in rows]),
        ledger=ledger, rejected=json.dumps(rejected), snapshot=snapshot, reused=False,
        counted=sum(r["counted"] for r in rows), seconds=sum(r["seconds"] for r in rows),
    )
    out["shipped"] = [out["shipped"][0] + sum(r["shipped"] for r in rows)]
    return out
