"""Counting a Ray dataset on a cluster, for the one run pipeline (`run.train_counted`).

1. Each block is counted by a Ray Data task (`blocks.count_block`, the Rust counter with
   the GIL released): its partial is the word-count snapshot of the block plus its
   ledger (document numbers from 0) and joinable fingerprint.
2. Partials are joined in a tree of Ray Data tasks, `fan_in` consecutive partials at a
   time, in input order (`blocks.combine_partials`): each level is one `map_batches`
   over the level below, until one partial is left. No actor holds the whole table
   while it grows, and only the final partial reaches the driver.
3. The driver restores it into a counter and runs the merge loop once (`run.py`).

Every join is exact (u64 sums) and associative, and document numbers are shifted by the
documents before each block, so the counts, ledger and merges are those of the single
machine on the same documents in the same order, whatever the blocks.

With a run store, the driver takes each counted block's partial as it finishes (in
order) and records it in the store before joining; a driver restarted after a crash
gives the workers the keys of the recorded blocks, and those blocks are read (for their
key) but not counted again.
"""

from __future__ import annotations

import json
from typing import Any

from bytebpe import store
from bytebpe._bytebpe import join_fingerprints, merge_ledgers, merge_snapshots
from bytebpe.cluster import blocks
from bytebpe.cluster.ray_data import (
    check_dataset,
    map_batches,
    ordered,
    require_ray,
    task_error,
)
from bytebpe.options import Options
from bytebpe.progress import ProgressBar
from bytebpe.run import Counted

# The statistics of the last cluster count in this process (for benchmarks and tests):
# blocks, blocks counted and reused, documents, input bytes, bytes of partials shipped,
# seconds the workers spent counting (summed over tasks).
LAST_COUNT: dict[str, float] = {}


def count_dataset(
    dataset: object,
    opts: Options,
    run: store.OpenRun | None,
    *,
    text_column: str,
    surrogatepass: bool,
    skip_bad_items: bool,
    fan_in: int,
    max_retries: int,
) -> Counted:
    """Counts `dataset` on the cluster (recording blocks in `run`); returns the sum."""
    ray = require_ray()
    check_dataset(ray, dataset, "train_from_ray")
    done = run.counted_blocks() if run else {}
    cfg = blocks.CountConfig(
        pattern=opts.start.pattern if opts.start else opts.pattern,
        special_tokens=opts.special_tokens, max_token_length=opts.max_token_length,
        surrogatepass=surrogatepass, text_column=text_column, skip_bad_items=skip_bad_items,
        done=frozenset(done),
    )
    retries = {"max_retries": max_retries}
    with ordered(ray, dataset, opts.progress):
        try:
            leaves = map_batches(
                dataset, blocks.count_block, retries, fn_kwargs={"cfg": cfg},
                batch_size=None, batch_format="pyarrow", zero_copy_batch=True, num_cpus=1,
            )
            level = (_record(ray, leaves, run, done, opts.progress) if run
                     else leaves.materialize())
            n = leaves_n = level.count()
            while n > 1:
                level = map_batches(
                    level, blocks.combine_partials, retries, batch_size=fan_in,
                    batch_format="pyarrow", num_cpus=1,
                ).materialize()
                n = level.count()
            final = level.take_all()
        except Exception as e:
            raise task_error(ray, e, "counting a block of the dataset", max_retries) from e
    return _counted(final[0] if final else None, leaves_n)


def _record(
    ray: Any, leaves: Any, run: store.OpenRun, done: dict[str, Any], progress: bool
) -> Any:
    """Takes the counted blocks in order, records the new ones in the run store and
    puts back the stored partial of each block counted before; returns them as a
    dataset of one partial per block."""
    rows = []
    with ProgressBar(progress, desc="counting blocks", unit="block") as bar:
        for row in leaves.iter_rows():
            if row["reused"]:
                partial, snapshot = done[row["key"]]
                row = {**partial, "snapshot": snapshot, "reused": True, "counted": 0}
            else:
                partial = {k: v for k, v in row.items() if k not in ("snapshot", "reused")}
                run.add_block(row["key"], partial, row["snapshot"])
            rows.append(row)
            bar.update(1)
            bar.set_postfix_str(f"{sum(r['bytes'] for r in rows) / 1e6:,.1f} MB")
    if not rows:
        return ray.data.from_items([])
    return ray.data.from_items(rows, override_num_blocks=len(rows))


def _counted(final: dict[str, Any] | None, leaves: int) -> Counted:
    LAST_COUNT.clear()
    if final is None:  # an empty dataset
        LAST_COUNT.update(blocks=0, counted=0, reused=0, documents=0, bytes=0, shipped=0,
                          seconds=0.0)
        return Counted(merge_snapshots([]), merge_ledgers([]), join_fingerprints([]), {})
    LAST_COUNT.update(
        blocks=leaves, counted=final["counted"], reused=leaves - final["counted"],
        documents=final["documents"], bytes=final["bytes"], shipped=final["shipped"],
        seconds=final["seconds"],
    )
    return Counted(
        snapshot=final["snapshot"], ledger=json.loads(final["ledger"]),
        fingerprint=final["fingerprint"], rejected=json.loads(final["rejected"]),
    )
