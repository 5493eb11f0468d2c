"""The service's Prometheus metrics (prometheus_client), correct with several workers.

With `PROMETHEUS_MULTIPROC_DIR` set before this module is imported (`bytebpe serve` sets
it for its workers), every worker writes its samples to files there and `/metrics`
aggregates them: counters and histograms are summed, in-flight requests are the sum of
the live workers, and the per-worker vocabulary gauges keep a `pid` label (so a
dashboard can show the oldest and newest version serving).
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                   5.0, 10.0)

REQUESTS = Counter("bytebpe_http_requests_total", "HTTP requests answered, by route and status",
                   ["route", "method", "status"])
LATENCY = Histogram("bytebpe_http_request_duration_seconds",
                    "Time from receiving a request to sending its response, by route",
                    ["route"], buckets=LATENCY_BUCKETS)
IN_FLIGHT = Gauge("bytebpe_http_requests_in_flight", "Requests being handled now",
                  multiprocess_mode="livesum")
INPUT_BYTES = Counter("bytebpe_input_bytes_total",
                      "UTF-8 bytes of text received for encoding, by route", ["route"])
OUTPUT_TOKENS = Counter("bytebpe_output_tokens_total",
                        "Token ids returned or counted, by route", ["route"])
DECODED_TOKENS = Counter("bytebpe_decoded_tokens_total", "Token ids received for decoding")
DECODED_BYTES = Counter("bytebpe_decoded_bytes_total", "Bytes of text produced by decoding")
RELOADS = Counter("bytebpe_reloads_total",
                  "Vocabulary reloads by result (success, unchanged, failure)", ["result"])
RELOAD_SECONDS = Histogram("bytebpe_reload_duration_seconds",
                           "Time to load and verify a vocabulary, off the request path",
                           buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
PINNED = Counter("bytebpe_pinned_requests_total",
                 "Requests naming a vocabulary version, by outcome "
                 "(current, earlier, unavailable)", ["outcome"])
VOCAB_MERGES = Gauge("bytebpe_vocab_merges", "Merged tokens of the vocabulary serving",
                     multiprocess_mode="liveall")
VOCAB_SIZE = Gauge("bytebpe_vocab_size", "Tokens of the vocabulary serving (specials included)",
                   multiprocess_mode="liveall")
VOCAB_INFO = Gauge("bytebpe_vocab_version_info",
                   "1 for each vocabulary version some worker is serving", ["version"],
                   multiprocess_mode="livemax")
LAST_RELOAD = Gauge("bytebpe_vocab_loaded_timestamp_seconds",
                    "Unix time the vocabulary serving was loaded", multiprocess_mode="livemax")

EXPORTED = (
    "bytebpe_http_requests_total", "bytebpe_http_request_duration_seconds",
    "bytebpe_http_requests_in_flight", "bytebpe_input_bytes_total",
    "bytebpe_output_tokens_total", "bytebpe_decoded_tokens_total",
    "bytebpe_decoded_bytes_total", "bytebpe_reloads_total", "bytebpe_reload_duration_seconds",
    "bytebpe_pinned_requests_total", "bytebpe_vocab_merges", "bytebpe_vocab_size",
    "bytebpe_vocab_version_info", "bytebpe_vocab_loaded_timestamp_seconds",
)
"""Every metric family the service exports (the dashboard test checks its queries)."""

for _result in ("success", "unchanged", "failure"):
    RELOADS.labels(_result)
INPUT_BYTES_BY_ROUTE = {route: INPUT_BYTES.labels(route) for route in ("tokenize", "count")}
OUTPUT_TOKENS_BY_ROUTE = {route: OUTPUT_TOKENS.labels(route) for route in ("tokenize", "count")}
for _outcome in ("current", "earlier", "unavailable"):
    PINNED.labels(_outcome)

_serving_version: list[str] = []


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def set_serving(version: str, merges: int, vocab_size: int, loaded_at: float) -> None:
    """Publishes the vocabulary this worker serves now."""
    if _serving_version and _serving_version[0] != version:
        VOCAB_INFO.labels(_serving_version[0]).set(0)
    _serving_version[:] = [version]
    VOCAB_INFO.labels(version).set(1)
    VOCAB_MERGES.set(merges)
    VOCAB_SIZE.set(vocab_size)
    LAST_RELOAD.set(loaded_at)


def exposition() -> tuple[bytes, str]:
    """The text exposition of all workers' metrics, and its content type."""
    if multiprocess_dir():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def worker_exit() -> None:
    """Drops this worker's live gauges (call when a worker stops)."""
    if multiprocess_dir():
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
