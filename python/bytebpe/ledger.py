"""The loss ledger a tokenizer carries: what training saw and could not keep as ordinary
text (from the Rust counter), and what decoding replaced, ignored or could not find.

Decode counters are shared by every thread using the tokenizer, so they sit behind a lock.
"""

from __future__ import annotations

import copy
import threading
from typing import Any, TypedDict

from bytebpe.fields import MAX_COUNT, At

DECODE_KEYS = ("bytes_replaced", "bytes_ignored", "unknown_ids")


class InvalidUtf8Example(TypedDict):
    """Where one invalid UTF-8 sequence was seen."""

    kind: str
    document: int
    offset: int


class TrainingLedger(TypedDict, total=False):
    """What training saw (`Tokenizer.loss_report()["training"]`)."""

    documents: int
    bytes: int
    invalid_utf8_bytes: dict[str, int]
    invalid_utf8_examples: list[InvalidUtf8Example]
    lone_surrogates: int
    unmatched_bytes: int
    pieces_cut: int
    rejected_items: dict[str, int]
    dropped_word_mass: int
    dropped_bytes: int


class DecodeCounts(TypedDict):
    """What decoding with this tokenizer replaced, ignored or could not find."""

    bytes_replaced: int
    bytes_ignored: int
    unknown_ids: int


class LossReport(TypedDict):
    """`Tokenizer.loss_report()`: `training` is None for a tokenizer that was imported
    (or saved before ledgers were kept)."""

    training: TrainingLedger | None
    decode: DecodeCounts


_COUNTS = ("documents", "bytes", "lone_surrogates", "unmatched_bytes", "pieces_cut",
           "dropped_word_mass", "dropped_bytes")
_COUNTS_BY_KIND = ("invalid_utf8_bytes", "rejected_items")


def read_training_ledger(value: object, at: At) -> dict[str, Any] | None:
    """A training ledger read from a file (`at` is its place): null, or an object whose
    known fields have their types (a damaged one would break `loss_report` later)."""
    if value is None:
        return None
    ledger = at.obj(value)
    for key in ("documents", "bytes"):  # every report shows them
        at.field(ledger, key)
    for key in _COUNTS:
        if key in ledger:
            at.key(key).integer(ledger[key], MAX_COUNT)
    for key in _COUNTS_BY_KIND:
        if key in ledger:
            where = at.key(key)
            for kind, count in where.obj(ledger[key]).items():
                where.key(kind).integer(count, MAX_COUNT)
    if "invalid_utf8_examples" in ledger:
        where = at.key("invalid_utf8_examples")
        for i, example in enumerate(where.array(ledger["invalid_utf8_examples"])):
            item = where.item(i)
            fields = item.obj(example)
            item.key("kind").string(item.field(fields, "kind")[0])
            for key in ("document", "offset"):
                item.key(key).integer(item.field(fields, key)[0], MAX_COUNT)
    return ledger


class DecodeLedger:
    def __init__(self, training: dict[str, Any] | None) -> None:
        self.training = copy.deepcopy(training) if training is not None else None
        self._decode = dict.fromkeys(DECODE_KEYS, 0)
        self._lock = threading.Lock()

    def add(self, key: str, n: int) -> None:
        with self._lock:
            self._decode[key] += n

    def report(self) -> LossReport:
        with self._lock:
            decode = DecodeCounts(
                bytes_replaced=self._decode["bytes_replaced"],
                bytes_ignored=self._decode["bytes_ignored"],
                unknown_ids=self._decode["unknown_ids"],
            )
        training: TrainingLedger | None = copy.deepcopy(self.training)  # type: ignore[assignment]
        return LossReport(training=training, decode=decode)


def is_clean(report: LossReport | dict[str, Any]) -> bool:
    """True when nothing was lost or altered: every count in the ledger (other than the
    documents and bytes seen) is zero."""
    training = report.get("training") or {}
    lossy = [
        sum(training.get("invalid_utf8_bytes", {}).values()),
        training.get("lone_surrogates", 0),
        training.get("unmatched_bytes", 0),
        training.get("pieces_cut", 0),
        sum(training.get("rejected_items", {}).values()),
        training.get("dropped_word_mass", 0),
        training.get("dropped_bytes", 0),
        *report.get("decode", {}).values(),
    ]
    return not any(lossy)


def format_report(report: LossReport | dict[str, Any]) -> str:
    """A human-readable rendering of `Tokenizer.loss_report()`."""
    lines = []
    training = report.get("training")
    if training is None:
        lines.append("training: not recorded (tokenizer imported or from an older file)")
    else:
        lines.append(
            f"training: {training['documents']:,} documents, {training['bytes']:,} bytes"
        )
        invalid = training.get("invalid_utf8_bytes", {})
        total = sum(invalid.values())
        detail = ", ".join(f"{k} {v:,}" for k, v in invalid.items() if v)
        lines.append(f"  invalid UTF-8 bytes (kept as byte tokens): {total:,}"
                     + (f" ({detail})" if detail else ""))
        for e in training.get("invalid_utf8_examples", [])[:10]:
            lines.append(f"    e.g. {e['kind']} at document {e['document']}, byte {e['offset']}")
        lines.append(f"  lone surrogates (kept as bytes): {training.get('lone_surrogates', 0):,}")
        lines.append(f"  bytes the pattern did not match (kept as pieces): "
                     f"{training.get('unmatched_bytes', 0):,}")
        lines.append(f"  pieces cut by max_token_length: {training.get('pieces_cut', 0):,}")
        rejected = training.get("rejected_items", {})
        lines.append(f"  items rejected: {sum(rejected.values()):,}"
                     + (f" ({', '.join(f'{k} {v:,}' for k, v in rejected.items())})"
                        if rejected else ""))
        lines.append(f"  word mass dropped by a memory budget: "
                     f"{training.get('dropped_word_mass', 0):,} "
                     f"({training.get('dropped_bytes', 0):,} bytes)")
    decode = report.get("decode", {})
    lines.append(
        "decode: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in decode.items())
    )
    lines.append("clean: yes" if is_clean(report) else "clean: no (see above)")
    return "\n".join(lines)
