"""The cluster path: training and encoding on Ray Data (`pip install 'bytebpe[ray]'`).

`train` counts a `ray.data.Dataset`'s blocks on the cluster, joins the partial counts in
a tree and merges once on the driver through the one run pipeline (`run.train_counted`);
`encode_ray` encodes blocks with the core encoder. Ray is imported only when called.
See "The cluster path" in docs/design.md.
"""

from __future__ import annotations

from bytebpe import run
from bytebpe.cluster.encode import encode_ray
from bytebpe.cluster.train import LAST_COUNT, count_dataset
from bytebpe.errors import BlockError, ClusterError
from bytebpe.options import Options

__all__ = ["LAST_COUNT", "BlockError", "ClusterError", "encode_ray", "train"]


def train(
    dataset: object,
    opts: Options,
    *,
    text_column: str,
    surrogatepass: bool,
    skip_bad_items: bool,
    fan_in: int,
    max_retries: int,
) -> run.Trained:
    """Trains on a Ray dataset: counted on the cluster, merged here (see the module)."""
    return run.train_counted(
        lambda open_run: count_dataset(
            dataset, opts, open_run, text_column=text_column, surrogatepass=surrogatepass,
            skip_bad_items=skip_bad_items, fan_in=fan_in, max_retries=max_retries,
        ),
        opts,
    )
