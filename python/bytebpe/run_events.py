"""What a training run tells the world while it runs: log records on the `bytebpe.train`
logger (structured when `bytebpe.observe.configure_logging` is set up: JSON lines off a
terminal), and, with `metrics_port=`, Prometheus metrics served on 127.0.0.1.

Events: `train.start`, `train.resume`, `train.phase` (counting, merging), `train.checkpoint`,
`train.warning`, `train.end` (with the loss ledger), `train.failed`. Fields ride on each
record's `extra`, so plain `logging` shows the event name and structlog shows them all.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bytebpe.observe import TrainingMetrics

log = logging.getLogger("bytebpe.train")


class RunEvents:
    """The events of one run; every method is cheap (called between batches)."""

    def __init__(self, *, vocab_size: int, metrics_port: int | None, store: str | None) -> None:
        self.metrics = TrainingMetrics(metrics_port) if metrics_port is not None else None
        self._store = store
        self.emit("train.start", vocab_size=vocab_size, store=store,
                   metrics_port=self.metrics.port if self.metrics else None)
        if self.metrics:
            self.metrics.started(target_vocab_size=vocab_size)

    def emit(self, event: str, level: int = logging.INFO, **fields: Any) -> None:
        """Logs `event` with `fields` (in the record's `extra`)."""
        log.log(level, event, extra=fields)

    def resumed(self, *, documents: int, bytes: int, counting_finished: bool) -> None:
        self.emit("train.resume", documents=documents, bytes=bytes,
                   counting_finished=counting_finished, store=self._store)
        if self.metrics:
            self.metrics.set_counted(documents=documents, bytes=bytes)

    def phase(self, name: str) -> None:
        self.emit("train.phase", phase=name)
        if self.metrics:
            self.metrics.phase(name)

    def counted(self, *, documents: int, bytes: int) -> None:
        """Documents and bytes counted since the last call."""
        if self.metrics:
            self.metrics.counted(documents=documents, bytes=bytes)

    def checkpoint(self, *, documents: int, bytes: int, finished: bool) -> None:
        self.emit("train.checkpoint", documents=documents, bytes=bytes, finished=finished)
        if self.metrics:
            self.metrics.checkpoint()

    def merged(self, *, merges: int, vocab_size: int) -> None:
        """Totals so far: merges made (replayed ones included) and the vocabulary size."""
        if self.metrics:
            self.metrics.set_merged(merges=merges, vocab_size=vocab_size)

    def warned(self, text: str) -> None:
        self.emit("train.warning", logging.WARNING, text=text)

    def finished(self, *, vocab_size: int, ledger: Mapping[str, Any]) -> None:
        self.emit("train.end", vocab_size=vocab_size, ledger=dict(ledger))
        if self.metrics:
            self.metrics.ledger(ledger)
            self.metrics.merged(merges=0, vocab_size=vocab_size)
            self.metrics.phase("done")

    def failed(self, error: BaseException) -> None:
        self.emit("train.failed", logging.ERROR, error=f"{type(error).__name__}: {error}")
        if self.metrics:
            self.metrics.phase("failed")

    def close(self) -> None:
        if self.metrics:
            self.metrics.close()
