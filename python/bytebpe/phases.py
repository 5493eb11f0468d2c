"""Multi-phase training: each phase extends the previous result with its own data and
number of new tokens, so the largest corpus does not take the whole vocabulary. Each
phase is one run of the pipeline (`run.train`), in its own run store when a store
directory is given."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bytebpe import options, run
from bytebpe.checks import check_int
from bytebpe.sources import IterableSource


@dataclass(frozen=True)
class Phase:
    """One phase: its documents (anything `train_from_iterator` takes) and the number
    of merges (new tokens) it adds."""

    data: object
    merges: int
    text_column: str = "text"


def phase_store(directory: str | os.PathLike[str], number: int) -> str:
    """The run store of phase `number` (from 1) inside a phases store directory."""
    return os.path.join(os.fspath(directory), f"phase-{number}.sqlite")


def train_phases(
    phases: Sequence[Phase],
    shared: Mapping[str, object],
    *,
    store: str | os.PathLike[str] | None,
    buffer_size: int,
    surrogatepass: bool,
    skip_bad_items: bool,
    restart_counting: bool,
) -> run.Trained:
    """Runs the phases in order; see `Tokenizer.train_phases`. `shared` holds the
    options every phase takes (`options.SharedOptions`)."""
    _check_phases(phases)
    directory = _store_directory(store)
    specials = options.special_tokens_of(shared.get("special_tokens", ()))
    pattern = shared.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a name or a regex), not {type(pattern).__name__}")
    # Seeds go first, so phase 1 counts its merges on top of them.
    current = options.with_seeds(
        options.start_of(shared.get("base")), pattern or options.DEFAULT_PATTERN,
        shared.get("seed_merges"),
    )
    trained: run.Trained | None = None
    for number, phase in enumerate(phases, 1):
        known = {t for t, _ in current.special_tokens} if current is not None else set()
        new_specials = [t for t in specials if t not in known] if number == 1 else []
        size = current.vocab_size if current is not None else 256
        opts = options.build(
            size + len(new_specials) + phase.merges,
            current,
            {
                **shared,
                "pattern": pattern if number == 1 else None,
                "special_tokens": new_specials,
                "seed_merges": None,
                "store": phase_store(directory, number) if directory is not None else None,
            },
        )
        source = IterableSource(
            phase.data, text_column=phase.text_column, buffer_size=buffer_size,
            skip_bad_items=skip_bad_items, memory_limited=opts.memory_limit is not None,
        )
        trained = run.train(
            [source], opts, restart_counting=restart_counting, surrogatepass=surrogatepass
        )
        current = trained[0]
    assert trained is not None  # phases is not empty
    return trained


def _check_phases(phases: object) -> None:
    if isinstance(phases, (str, bytes)) or not isinstance(phases, Sequence) or not phases:
        raise TypeError("phases must be a non-empty list of bytebpe.Phase")
    for i, phase in enumerate(phases):
        if not isinstance(phase, Phase):
            raise TypeError(f"phases[{i}] is {type(phase).__name__}, expected bytebpe.Phase")
        check_int(f"phases[{i}].merges", phase.merges, minimum=1)


def _store_directory(store: object) -> str | None:
    if store is None:
        return None
    if not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"store must be a directory path, not {type(store).__name__}")
    path = os.fspath(store)
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"store {path!r} must be a directory (one run per phase)")
    os.makedirs(path, exist_ok=True)
    return path
