"""Encoding a Ray dataset on a cluster, with the same core encoder as every other path.

`encode_ray` maps each block through `_Encoder`, a callable class that Ray builds once
per worker from the tokenizer's state (pickled once per worker, never retrained):

- by default the result is the dataset with a `tokens` column (a list of ids per row)
  beside the input's columns;
- with `output_dir`, each block is written as a shard, `shard-NNNNN.bin` (the ids back
  to back, uint16 or uint32, nanoGPT's layout) plus `shard-NNNNN.idx` (int64 token
  offsets of its documents, one more than its documents), and `index.json` lists the
  shards in input order with their first document and first token. The shards
  concatenated are exactly the file `Tokenizer.encode_to_file` writes for the same
  documents in the same order. `output_dir` must be a filesystem every worker and the
  driver see (on one machine, any directory; on a cluster, a shared mount).
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any, Protocol

from bytebpe import arrays, file_format
from bytebpe._bytebpe import CoreTokenizer
from bytebpe.checks import check_int, check_str
from bytebpe.cluster.blocks import block_documents
from bytebpe.cluster.ray_data import (
    check_dataset,
    map_batches,
    ordered,
    require_ray,
    task_error,
)
from bytebpe.progress import ProgressBar

INDEX = "index.json"


class Encodes(Protocol):
    """A tokenizer (`bytebpe.Tokenizer`), typed by its shape so this module stays below
    `tokenizer.py`."""

    @property
    def _core(self) -> CoreTokenizer: ...


class _Encoder:
    """Encodes blocks (pyarrow Tables) on a worker; built once per worker."""

    def __init__(
        self, state: dict[str, Any], text_column: str, itemsize: int, eot: int | None,
        column: str, output_dir: str | None,
    ) -> None:
        self.core, _ = file_format.from_state(state, "the tokenizer shipped to a worker")
        self.text_column = text_column
        self.itemsize = itemsize
        self.eot = eot
        self.column = column
        self.output_dir = output_dir

    def __call__(self, batch: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        docs, _ = block_documents(batch, self.text_column, False, False, "encoding")
        flat, offsets = self.core.encode_batch_flat(docs, self.itemsize, self.eot, 1)
        ids = np.frombuffer(flat, dtype=np.uint16 if self.itemsize == 2 else np.uint32)
        starts = np.frombuffer(offsets, dtype=np.int64)
        if self.output_dir is None:
            tokens = pa.LargeListArray.from_arrays(pa.array(starts), pa.array(ids))
            return batch.append_column(self.column, tokens)
        name = f"part-{uuid.uuid4().hex}"
        base = os.path.join(self.output_dir, name)
        _write(base + ".bin", flat)
        _write(base + ".idx", offsets)
        return pa.table({"part": [name], "documents": [len(docs)], "tokens": [len(ids)]})


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def encode_ray(
    dataset: object,
    tokenizer: Encodes,
    *,
    text_column: str = "text",
    column: str = "tokens",
    output_dir: str | os.PathLike[str] | None = None,
    dtype: object = None,
    eot: str | int | None = None,
    concurrency: int | None = None,
    max_retries: int = 3,
    progress: bool = True,
) -> Any:
    """Encodes a `ray.data.Dataset` on the cluster (see the module docs). Without
    `output_dir`, returns the dataset with a `column` of token ids per row (lazy, as
    Ray datasets are); with it, writes the shards and returns the index (also saved as
    `index.json`). `eot` (a special token or id) follows every document; `dtype` is
    uint16 or uint32 (default: the smallest that holds every id). `concurrency` caps
    the number of encoding workers."""
    ray = require_ray()
    check_dataset(ray, dataset, "encode_ray")
    core = getattr(tokenizer, "_core", None)
    if not isinstance(core, CoreTokenizer):
        raise TypeError(f"tokenizer must be a bytebpe Tokenizer, not {type(tokenizer).__name__}")
    _, itemsize = arrays.itemsize_for(core.vocab_size, dtype)
    eot_token = arrays.eot_id(core.vocab_size, dict(core.special_tokens), eot)
    check_str("text_column", text_column)
    check_str("column", column)
    retries = check_int("max_retries", max_retries, minimum=0)
    # Absolute: workers do not share the driver's working directory.
    out = os.path.abspath(output_dir) if output_dir is not None else None
    if out is not None:
        os.makedirs(out, exist_ok=True)
    args = (file_format.to_state(core), text_column, itemsize, eot_token, column, out)
    mapped = map_batches(
        dataset, _Encoder, {"max_task_retries": retries}, fn_constructor_args=args,
        batch_size=None, batch_format="pyarrow", zero_copy_batch=True,
        concurrency=concurrency or (1, _pool(ray)), num_cpus=1,
    )
    if out is None:
        return mapped
    with ordered(ray, dataset, progress):
        try:
            return _write_index(list(_parts(mapped, progress)), out, itemsize)
        except Exception as e:
            raise task_error(ray, e, "encoding a block of the dataset", retries) from e


def _pool(ray: Any) -> int:
    """Encoding workers: one per CPU of the cluster."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _parts(mapped: Any, progress: bool) -> Any:
    with ProgressBar(progress, desc="encoding blocks", unit="block") as bar:
        for row in mapped.iter_rows():
            bar.update(1)
            yield row


def _write_index(parts: list[dict[str, Any]], out: str, itemsize: int) -> dict[str, Any]:
    """Names the parts `shard-NNNNN` in input order and writes `index.json`."""
    shards = []
    first_document = first_token = 0
    for k, part in enumerate(parts):
        name = f"shard-{k:05d}"
        for ext in (".bin", ".idx"):
            os.replace(os.path.join(out, part["part"] + ext), os.path.join(out, name + ext))
        shards.append({
            "bin": name + ".bin", "idx": name + ".idx", "documents": part["documents"],
            "tokens": part["tokens"], "first_document": first_document,
            "first_token": first_token,
        })
        first_document += part["documents"]
        first_token += part["tokens"]
    index = {
        "format": "bytebpe-shards", "version": 1,
        "dtype": "uint16" if itemsize == 2 else "uint32",
        "documents": first_document, "tokens": first_token, "shards": shards,
    }
    tmp = os.path.join(out, INDEX + ".tmp")
    with open(tmp, "w") as f:
        json.dump(index, f, indent=1)
    os.replace(tmp, os.path.join(out, INDEX))
    return index
