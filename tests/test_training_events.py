"""What a training run tells while it runs: events on the `bytebpe.train` logger and,
with `metrics_port`, Prometheus metrics on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import socket
import urllib.request

import pytest
from bytebpe import RunStore, Tokenizer, TrainingWarning
from bytebpe.cli import main
from bytebpe.sample import sample_documents

prometheus_parser = pytest.importorskip("prometheus_client.parser")

DOCS = sample_documents()[:200]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    out = {}
    for family in prometheus_parser.text_string_to_metric_families(text):
        for sample in family.samples:
            key = sample.name + "".join(f"{{{k}={v}}}" for k, v in sorted(sample.labels.items()))
            out[key] = sample.value
    return out


def _events(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "bytebpe.train"]


def test_metrics_are_served_while_training_and_stop_after(tmp_path):
    port = _free_port()
    seen: list[dict[str, float]] = []

    def documents():
        for i, doc in enumerate(DOCS):
            if i == 150:  # counting is under way: 100+ documents are in (batches of 50)
                seen.append(_scrape(port))
            yield doc

    tok = Tokenizer.train_from_iterator(
        documents(), 600, buffer_size=50, metrics_port=port, progress=False,
        store=RunStore(tmp_path / "run.sqlite", checkpoint_every=0),
    )
    during = seen[0]
    assert during["bytebpe_training_documents_total"] >= 100
    assert during["bytebpe_training_bytes_total"] > 0
    assert during["bytebpe_training_target_vocab_size"] == 600
    assert during["bytebpe_training_checkpoints_total"] >= 1
    assert during["bytebpe_training_merges_total"] == 0
    with pytest.raises(OSError):  # the server is gone with the run
        _scrape(port)
    assert tok.vocab_size == 600


def test_events_tell_the_run_in_order(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="bytebpe.train")
    path = tmp_path / "run.sqlite"
    tok = Tokenizer.train_from_iterator(DOCS, 500, store=path, progress=False)
    events = _events(caplog)
    names = [r.getMessage() for r in events]
    assert names[0] == "train.start" and names[-1] == "train.end"
    assert names.index("train.phase") < names.index("train.checkpoint")
    phases = [r.phase for r in events if r.getMessage() == "train.phase"]
    assert phases == ["counting", "merging"]
    end = events[-1]
    assert end.vocab_size == tok.vocab_size
    assert end.ledger == tok.loss_report()["training"]
    assert events[0].store == str(path)
    # Again with the same store: counting is restored, not redone.
    caplog.clear()
    Tokenizer.train_from_iterator(DOCS, 520, store=path, progress=False)
    names = [r.getMessage() for r in _events(caplog)]
    assert "train.resume" in names
    assert [r.phase for r in _events(caplog) if r.getMessage() == "train.phase"] == ["merging"]


def test_warnings_and_failures_are_events_too(caplog):
    caplog.set_level(logging.INFO, logger="bytebpe.train")
    with pytest.warns(TrainingWarning, match="stopped at"):
        Tokenizer.train_from_iterator(["ab ab ab"], 5000, progress=False)
    warned = [r for r in _events(caplog) if r.getMessage() == "train.warning"]
    assert len(warned) == 1 and "stopped at" in warned[0].text
    assert warned[0].levelno == logging.WARNING
    caplog.clear()
    with pytest.raises(TypeError):
        Tokenizer.train_from_iterator(["fine", 3], 300, progress=False)
    failed = [r for r in _events(caplog) if r.getMessage() == "train.failed"]
    assert len(failed) == 1 and "TypeError" in failed[0].error


@pytest.mark.parametrize(("port", "error"), [(-1, ValueError), (70000, ValueError), ("80", TypeError)])
def test_bad_metrics_port(port, error):
    with pytest.raises(error, match="metrics_port"):
        Tokenizer.train_from_iterator(DOCS, 300, metrics_port=port, progress=False)


def test_cli_logs_json_lines_off_a_terminal(tmp_path, capsys):
    pytest.importorskip("structlog")
    out = tmp_path / "tok.json"
    assert main(["train", "--sample", "--vocab-size", "400", "-o", str(out), "--no-progress",
                 "--log-level", "info", "--metrics-port", "0"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    events = [line["event"] for line in lines if line.get("logger") == "bytebpe.train"]
    assert events[0] == "train.start" and events[-1] == "train.end"
    end = next(line for line in lines if line.get("event") == "train.end")
    assert end["vocab_size"] == 400
    assert end["ledger"]["documents"] > 0
    assert isinstance(lines[0]["metrics_port"], int) and lines[0]["metrics_port"] > 0
