"""bytebpe.observe: training metrics over HTTP, and structlog setup."""

from __future__ import annotations

import io
import json
import logging
import threading
import urllib.request

import pytest

pytest.importorskip("prometheus_client")
pytest.importorskip("structlog")

from bytebpe.observe import TRAINING_METRICS, TrainingMetrics, configure_logging, get_logger
from prometheus_client.parser import text_string_to_metric_families


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_training_metrics_are_served_on_loopback_with_their_values() -> None:
    with TrainingMetrics(port=0) as m:
        assert m.port and m.port > 0
        assert m._server.server_address[0] == "127.0.0.1"
        m.started(target_vocab_size=4096)
        m.phase("counting")
        threads = [threading.Thread(target=lambda: [m.counted(documents=1, bytes=10)
                                                     for _ in range(1000)]) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        m.phase("merging")
        m.merged(merges=3, vocab_size=259)
        m.merged(merges=2, vocab_size=261)
        m.checkpoint()
        m.ledger({"invalid_utf8_bytes": {"truncated": 2, "stray_continuation": 5},
                  "lone_surrogates": 1, "unmatched_bytes": 0, "pieces_cut": 4,
                  "rejected_items": {"int": 3}, "dropped_word_mass": 7, "dropped_bytes": 70,
                  "documents": 4000, "bytes": 40000})
        s = scrape(m.port)
    assert s[("bytebpe_training_documents_total", ())] == 4000
    assert s[("bytebpe_training_bytes_total", ())] == 40000
    assert s[("bytebpe_training_merges_total", ())] == 5
    assert s[("bytebpe_training_vocab_size", ())] == 261
    assert s[("bytebpe_training_target_vocab_size", ())] == 4096
    assert s[("bytebpe_training_phase", (("phase", "merging"),))] == 1
    assert s[("bytebpe_training_phase", (("phase", "counting"),))] == 0
    assert s[("bytebpe_training_checkpoints_total", ())] == 1
    assert s[("bytebpe_training_last_checkpoint_timestamp_seconds", ())] > 1.6e9
    assert s[("bytebpe_training_invalid_utf8_bytes_total", (("kind", "truncated"),))] == 2
    assert s[("bytebpe_training_invalid_utf8_bytes_total",
              (("kind", "stray_continuation"),))] == 5
    assert s[("bytebpe_training_rejected_items_total", (("type", "int"),))] == 3
    assert s[("bytebpe_training_lone_surrogates_total", ())] == 1
    assert s[("bytebpe_training_pieces_cut_total", ())] == 4
    assert s[("bytebpe_training_dropped_word_mass_total", ())] == 7
    assert s[("bytebpe_training_dropped_bytes_total", ())] == 70
    names = {name for name, _ in s}
    for family in TRAINING_METRICS:
        assert any(n == family or n.startswith(family + "_") for n in names), family


def test_resumed_totals_and_closing_frees_the_port() -> None:
    m = TrainingMetrics(port=0)
    port = m.port
    m.set_counted(documents=10, bytes=100)
    m.counted(documents=1, bytes=1)
    m.set_merged(merges=50, vocab_size=306)
    s = scrape(port)
    assert s[("bytebpe_training_documents_total", ())] == 11
    assert s[("bytebpe_training_bytes_total", ())] == 101
    assert s[("bytebpe_training_merges_total", ())] == 50
    m.close()
    with pytest.raises(OSError):
        scrape(port)
    with pytest.raises(ValueError, match="phase"):
        m.phase("thinking")


def test_without_a_port_nothing_listens_and_the_registry_still_collects() -> None:
    from prometheus_client import generate_latest

    m = TrainingMetrics()
    assert m.port is None
    m.merged(merges=1, vocab_size=257)
    assert b"bytebpe_training_merges_total 1.0" in generate_latest(m.registry)


def test_json_logs_when_not_a_terminal_plain_on_one() -> None:
    stream = io.StringIO()
    try:
        configure_logging(stream=stream)  # a StringIO is not a tty: JSON
        get_logger("bytebpe.train").info("train.checkpoint", merges=12, phase="merging")
        logging.getLogger("some.server").warning("plain stdlib %s", "record")
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
        assert lines[0]["event"] == "train.checkpoint" and lines[0]["merges"] == 12
        assert lines[0]["level"] == "info" and lines[0]["logger"] == "bytebpe.train"
        assert lines[0]["timestamp"].endswith("Z")
        assert lines[1]["event"] == "plain stdlib record" and lines[1]["level"] == "warning"

        stream = io.StringIO()
        configure_logging(stream=stream, json=False)
        get_logger("bytebpe.train").info("train.end", merges=99)
        text = stream.getvalue()
        assert "train.end" in text and "merges=99" in text and not text.startswith("{")
        assert len([h for h in logging.getLogger().handlers if h.get_name() == "bytebpe"]) == 1
    finally:
        root = logging.getLogger()
        for h in [h for h in root.handlers if h.get_name() == "bytebpe"]:
            root.removeHandler(h)
