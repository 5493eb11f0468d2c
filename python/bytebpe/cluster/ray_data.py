"""The little the cluster path needs from Ray itself: importing it (with the advice to
install `bytebpe[ray]`), checking a dataset, running with order kept and progress bars
as asked, and turning a failed Ray task into an error that says what failed."""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator
from typing import Any

from bytebpe.errors import BlockError, ClusterError, InputError

INSTALL = "pip install 'bytebpe[ray]'"


def require_ray() -> Any:
    """The `ray` module, or an ImportError that says how to get it."""
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise ImportError(
            f"the cluster path (train_from_ray, encode_ray) needs Ray Data, which is not "
            f"installed ({e}); install it with {INSTALL}"
        ) from None
    return ray


def check_dataset(ray: Any, dataset: object, entry: str) -> Any:
    if not isinstance(dataset, ray.data.Dataset):
        raise TypeError(
            f"{entry} takes a ray.data.Dataset (e.g. ray.data.read_parquet(...), "
            f"read_json(...), read_text(...) or from_huggingface(...)), not "
            f"{type(dataset).__name__}; for an iterable use the single-machine entry point"
        )
    return dataset


def map_batches(dataset: Any, fn: Any, retries: dict[str, int], **kwargs: Any) -> Any:
    """`dataset.map_batches(fn, ...)` with Ray `remote` retry options, which Ray Data
    2.60 takes only through its deprecated `**ray_remote_args` (it has no keyword for
    them yet): its deprecation warning is ours to silence, not the user's to see."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        return dataset.map_batches(fn, **kwargs, **retries)


@contextlib.contextmanager
def ordered(ray: Any, dataset: Any, progress: bool) -> Iterator[None]:
    """Runs with Ray Data keeping block order (results are joined in input order) and
    with its progress bars on or off; the caller's settings come back afterwards."""
    contexts = {id(c): c for c in (ray.data.DataContext.get_current(), dataset.context)}
    saved = [(c, c.execution_options.preserve_order, c.enable_progress_bars)
             for c in contexts.values()]
    for c, _, _ in saved:
        c.execution_options.preserve_order = True
        c.enable_progress_bars = progress
    try:
        yield
    finally:
        for c, order, bars in saved:
            c.execution_options.preserve_order = order
            c.enable_progress_bars = bars


def task_error(ray: Any, error: BaseException, what: str, max_retries: int) -> BaseException:
    """The error to raise for a failed Ray Data execution: a bad row as our own
    `BlockError` (its message names the row), a worker that kept dying as a
    `ClusterError`, anything else as it came."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, InputError):
            return BlockError(_message(str(cause)))
        if isinstance(cause, (ray.exceptions.WorkerCrashedError,
                              ray.exceptions.NodeDiedError,
                              ray.exceptions.OwnerDiedError)):
            return ClusterError(
                f"{what} failed: its Ray worker process died on every attempt "
                f"(max_retries={max_retries}); the worker's log (ray logs, or "
                f"/tmp/ray/session_latest/logs) says why, often memory. Nothing was "
                "counted twice; with store=..., the blocks already counted are kept"
            )
        cause = cause.__cause__ or cause.__context__
    text = str(error)
    if "WorkerCrashedError" in text or "worker died" in text.lower():
        return ClusterError(
            f"{what} failed: its Ray worker process died on every attempt "
            f"(max_retries={max_retries}): {text.splitlines()[0] if text else error!r}"
        )
    if "BlockError: " in text:
        return BlockError(_message(text))
    return error


def _message(text: str) -> str:
    """A `BlockError`'s own message out of a Ray traceback (or the text as it is)."""
    found = re.search(r"BlockError: (.*)", text)
    return found.group(1).strip() if found else text
