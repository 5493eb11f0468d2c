"""benches/phases_one.py counts a corpus in the batches training makes of it, so its
counting figure is training's counting."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent.parent / "benches"
sys.path.insert(0, str(BENCHES))

import phases_one  # noqa: E402


class Recorder:
    """Stands in for the core's WordCounter: the batches it is given, and where each starts."""

    def __init__(self, *args):
        self.batches: list[tuple[int, int]] = []

    def add_batch(self, batch, first_index):
        self.batches.append((len(batch), first_index))


def test_counting_batches_end_at_the_byte_limit_or_the_document_limit(monkeypatch):
    monkeypatch.setattr(phases_one._bytebpe, "WordCounter", Recorder)
    # By size: a batch ends once it holds batch_bytes.
    texts = ["abcd", "efgh", "ijkl", "m" * 20, "n"]
    counted = phases_one.count(texts, "cl100k", batch_bytes=10)
    assert counted.batches == [(3, 0), (1, 3), (1, 4)]
    # By count: 8,192 documents a batch (train_from_iterator's buffer_size).
    counted = phases_one.count(["x"] * 8200, "cl100k")
    assert counted.batches == [(8192, 0), (8, 8192)]
