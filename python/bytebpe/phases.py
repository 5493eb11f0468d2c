"""Multi-phase training: each phase extends the previous result with its own data and
number of new tokens, so the largest corpus does not take the whole vocabulary."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bytebpe import training

if TYPE_CHECKING:
    from bytebpe.tokenizer import Tokenizer


@dataclass(frozen=True)
class Phase:
    """One phase: its documents (anything `train_from_iterator` takes) and the number
    of merges (new tokens) it adds."""

    data: Any
    merges: int
    text_column: str = "text"


def phase_store(directory: str | os.PathLike[str], number: int) -> str:
    """The run store of phase `number` (from 1) inside a phases store directory."""
    return os.path.join(os.fspath(directory), f"phase-{number}.sqlite")


def train_phases(
    cls: type[Tokenizer],
    phases: Sequence[Phase],
    *,
    base: Tokenizer | None,
    seed_merges: object,
    special_tokens: Sequence[str],
    pattern: str | None,
    store: str | os.PathLike[str] | None,
    **options: Any,
) -> Tokenizer:
    """Runs the phases in order; see `Tokenizer.train_phases`."""
    if isinstance(phases, (str, bytes)) or not isinstance(phases, Sequence) or not phases:
        raise TypeError("phases must be a non-empty list of bytebpe.Phase")
    for i, phase in enumerate(phases):
        if not isinstance(phase, Phase):
            raise TypeError(f"phases[{i}] is {type(phase).__name__}, expected bytebpe.Phase")
        training.check_int(f"phases[{i}].merges", phase.merges, minimum=1)
    if store is not None:
        if not isinstance(store, (str, os.PathLike)):
            raise TypeError(f"store must be a directory path, not {type(store).__name__}")
        if os.path.exists(store) and not os.path.isdir(store):
            raise ValueError(f"store {os.fspath(store)!r} must be a directory (one run per phase)")
        os.makedirs(store, exist_ok=True)
    # Seeds go first, so phase 1 counts its merges on top of them.
    start = training.with_seeds(training.start_of(base), pattern or "cl100k", seed_merges)
    current = cls(start) if start is not None else None
    for number, phase in enumerate(phases, 1):
        known = set(current.special_tokens) if current is not None else set()
        new_specials = [t for t in special_tokens if t not in known] if number == 1 else []
        size = current.vocab_size if current is not None else 256
        current = cls.train_from_iterator(
            phase.data,
            size + len(new_specials) + phase.merges,
            base=current,
            pattern=pattern if number == 1 else None,
            special_tokens=new_specials,
            text_column=phase.text_column,
            store=phase_store(store, number) if store is not None else None,
            **options,
        )
    assert current is not None
    return current
