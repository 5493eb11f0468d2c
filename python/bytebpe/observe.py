"""Observability shared by training and the service: structlog setup, training metrics.

Needs the `serve` (or `observe`) extra: `pip install 'bytebpe[observe]'` brings
prometheus_client and structlog.

    from bytebpe.observe import TrainingMetrics, configure_logging, get_logger

    configure_logging()                      # JSON lines when stderr is not a terminal
    log = get_logger("bytebpe.train")
    with TrainingMetrics(port=9100) as m:    # serves /metrics on 127.0.0.1:9100
        m.started(target_vocab_size=32768)
        m.phase("counting")
        m.counted(documents=1000, bytes=4_000_000)      # increments, per batch
        m.phase("merging")
        m.merged(merges=1, vocab_size=257)              # increments + current size
        m.checkpoint()
        m.ledger(tok.loss_report()["training"])         # totals, any time
        m.phase("done")
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

PHASES = ("starting", "counting", "merging", "done", "failed")

# Ledger fields that are plain totals -> (metric name, help).
_LEDGER_TOTALS = {
    "lone_surrogates": ("bytebpe_training_lone_surrogates_total",
                        "Lone surrogates seen in training text"),
    "unmatched_bytes": ("bytebpe_training_unmatched_bytes_total",
                        "Bytes the pattern did not match (still encoded)"),
    "pieces_cut": ("bytebpe_training_pieces_cut_total",
                   "Pieces cut by the maximum token length"),
    "dropped_word_mass": ("bytebpe_training_dropped_word_mass_total",
                          "Word occurrences dropped to stay inside the memory budget"),
    "dropped_bytes": ("bytebpe_training_dropped_bytes_total",
                      "Bytes of words dropped to stay inside the memory budget"),
}

TRAINING_METRICS = (
    "bytebpe_training_documents_total", "bytebpe_training_bytes_total",
    "bytebpe_training_merges_total", "bytebpe_training_vocab_size",
    "bytebpe_training_target_vocab_size", "bytebpe_training_phase",
    "bytebpe_training_checkpoints_total", "bytebpe_training_last_checkpoint_timestamp_seconds",
    "bytebpe_training_start_timestamp_seconds", "bytebpe_training_invalid_utf8_bytes_total",
    "bytebpe_training_rejected_items_total",
    *(name for name, _ in _LEDGER_TOTALS.values()),
)
"""Every metric family `TrainingMetrics` exports (the dashboard test checks its queries)."""


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{module} is needed for metrics and structured logs: "
            "pip install 'bytebpe[observe]'"
        ) from None


# ==================================================================== logging


def configure_logging(*, json: bool | None = None, level: str | int = "info",
                      stream: TextIO | None = None) -> None:
    """Sets up structlog: JSON lines (one object per event, with an ISO timestamp, the
    level and the logger name) when `stream` (stderr by default) is not a terminal or
    `json=True`; plain readable lines on a terminal. Standard-library `logging` records
    (e.g. a server's) go through the same renderer."""
    structlog = _require("structlog")
    stream = stream or sys.stderr
    if json is None:
        json = not (hasattr(stream, "isatty") and stream.isatty())
    if isinstance(level, str):
        level = logging.getLevelName(level.upper())
    shared = [
        structlog.contextvars.merge_contextvars,
        # Fields a standard-library record carries in `extra` (training's events do).
        structlog.stdlib.ExtraAdder(),
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer = (structlog.processors.JSONRenderer() if json
                else structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=[*shared, structlog.processors.StackInfoRenderer(),
                    structlog.processors.format_exc_info,
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    *([structlog.processors.format_exc_info] if json else []), renderer],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.set_name("bytebpe")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "bytebpe"]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)


def get_logger(name: str = "bytebpe") -> Any:
    """A structlog logger: `log.info("event", key=value, ...)`."""
    return _require("structlog").get_logger(name)


# ==================================================================== training metrics


class TrainingMetrics:
    """What a training run is doing, for Prometheus.

    Methods are cheap (a lock and an addition) and safe from any thread. The values are
    read at scrape time by a collector on this object's own registry, so counters can
    also be set from totals (`set_counted`, `ledger`) when a run resumes. With `port`
    (0 picks a free one; see `.port`), an HTTP server on `host` (127.0.0.1 by default)
    serves `/metrics` until `close()`.
    """

    def __init__(self, port: int | None = None, *, host: str = "127.0.0.1") -> None:
        prometheus_client = _require("prometheus_client")
        self._lock = threading.Lock()
        self._documents = 0
        self._bytes = 0
        self._merges = 0
        self._vocab_size = 0
        self._target = 0
        self._phase = "starting"
        self._checkpoints = 0
        self._last_checkpoint = 0.0
        self._start = time.time()
        self._ledger: dict[str, Any] = {}
        self.registry = prometheus_client.CollectorRegistry()
        self.registry.register(_TrainingCollector(self))
        self.port: int | None = None
        self._server: Any = None
        self._thread: Any = None
        if port is not None:
            self._server, self._thread = prometheus_client.start_http_server(
                port, addr=host, registry=self.registry)
            self.port = self._server.server_address[1]

    # ------------------------------------------------------------ updates
    def started(self, *, target_vocab_size: int) -> None:
        with self._lock:
            self._target = target_vocab_size
            self._start = time.time()

    def phase(self, name: str) -> None:
        if name not in PHASES:
            raise ValueError(f"phase={name!r}; choose one of {', '.join(PHASES)}")
        with self._lock:
            self._phase = name

    def counted(self, *, documents: int = 0, bytes: int = 0) -> None:
        """Adds documents and bytes counted since the last call."""
        with self._lock:
            self._documents += documents
            self._bytes += bytes

    def set_counted(self, *, documents: int, bytes: int) -> None:
        """Sets the totals (a resumed run starts from the store's progress)."""
        with self._lock:
            self._documents = documents
            self._bytes = bytes

    def merged(self, *, merges: int = 1, vocab_size: int | None = None) -> None:
        """Adds merges made since the last call; `vocab_size` is the size now."""
        with self._lock:
            self._merges += merges
            if vocab_size is not None:
                self._vocab_size = vocab_size

    def set_merged(self, *, merges: int, vocab_size: int) -> None:
        """Sets the totals (a resumed run replays its merge log)."""
        with self._lock:
            self._merges = merges
            self._vocab_size = vocab_size

    def checkpoint(self) -> None:
        with self._lock:
            self._checkpoints += 1
            self._last_checkpoint = time.time()

    def ledger(self, training: Mapping[str, Any]) -> None:
        """The training loss ledger's totals (`tok.loss_report()["training"]`, or the
        same shape from the pipeline's checkpoint)."""
        with self._lock:
            self._ledger = dict(training)

    # ------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def __enter__(self) -> TrainingMetrics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "documents": self._documents, "bytes": self._bytes, "merges": self._merges,
                "vocab_size": self._vocab_size, "target": self._target, "phase": self._phase,
                "checkpoints": self._checkpoints, "last_checkpoint": self._last_checkpoint,
                "start": self._start, "ledger": dict(self._ledger),
            }


class _TrainingCollector:
    def __init__(self, metrics: TrainingMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        s = self.metrics.snapshot()
        yield CounterMetricFamily("bytebpe_training_documents", "Documents counted",
                                  value=s["documents"])
        yield CounterMetricFamily("bytebpe_training_bytes", "Bytes of input counted",
                                  value=s["bytes"])
        yield CounterMetricFamily("bytebpe_training_merges", "Merges made (rate: merge rate)",
                                  value=s["merges"])
        yield GaugeMetricFamily("bytebpe_training_vocab_size", "Vocabulary size now",
                                value=s["vocab_size"])
        yield GaugeMetricFamily("bytebpe_training_target_vocab_size", "Vocabulary size asked for",
                                value=s["target"])
        phase = GaugeMetricFamily("bytebpe_training_phase", "1 for the phase the run is in",
                                  labels=["phase"])
        for name in PHASES:
            phase.add_metric([name], 1.0 if name == s["phase"] else 0.0)
        yield phase
        yield CounterMetricFamily("bytebpe_training_checkpoints", "Checkpoints committed",
                                  value=s["checkpoints"])
        yield GaugeMetricFamily("bytebpe_training_last_checkpoint_timestamp_seconds",
                                "Unix time of the last checkpoint", value=s["last_checkpoint"])
        yield GaugeMetricFamily("bytebpe_training_start_timestamp_seconds",
                                "Unix time the run started", value=s["start"])
        ledger = s["ledger"]
        invalid = CounterMetricFamily("bytebpe_training_invalid_utf8_bytes",
                                      "Invalid UTF-8 bytes in training input, by kind",
                                      labels=["kind"])
        for kind, count in sorted(dict(ledger.get("invalid_utf8_bytes") or {}).items()):
            invalid.add_metric([str(kind)], float(count))
        yield invalid
        rejected = CounterMetricFamily("bytebpe_training_rejected_items",
                                       "Input items rejected, by type", labels=["type"])
        for kind, count in sorted(dict(ledger.get("rejected_items") or {}).items()):
            rejected.add_metric([str(kind)], float(count))
        yield rejected
        for key, (name, doc) in _LEDGER_TOTALS.items():
            yield CounterMetricFamily(name.removesuffix("_total"), doc,
                                      value=float(ledger.get(key) or 0))

