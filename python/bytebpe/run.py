"""The one training pipeline: open the run store, restore what it holds, read past the
documents already counted, count the rest with progress and checkpoints, merge, warn.

Every training entry point ends here: `train` for documents from any `Source`,
`train_counts` for pre-counted words, and `train_counted` for counts a cluster made
(`bytebpe.cluster`: word-count snapshots of blocks, summed exactly). The Rust side counts each batch in parallel with
the GIL released and runs the merge loop detached; this module feeds it. The merges
depend only on the documents, never on batching, chunking or where a run was resumed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bytebpe import file_format, store
from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError, WordCounter, resolve_pattern
from bytebpe.errors import StoreError, TrainingWarning
from bytebpe.options import Options
from bytebpe.progress import ProgressBar
from bytebpe.sources import CALL_BYTES, Source

Trained = tuple[CoreTokenizer, dict[str, Any]]

# Pre-counted words are checked and handed over this many at a time, so no copy of the
# whole mapping is made.
COUNTS_CHUNK = 65536


def train(
    sources: Iterable[Source],
    opts: Options,
    *,
    restart_counting: bool = False,
    surrogatepass: bool = False,
) -> Trained:
    """Counts the sources in order (resuming a stored run by reading past the documents it
    counted, checked by fingerprint), then merges. Returns the native tokenizer and its
    training ledger."""
    counter = _new_counter(opts, surrogatepass)
    with _open_run(opts) as run:
        stored = run.stored if run else None
        rejected = _Rejected(stored.ledger.get("rejected_items", {}) if stored else {})
        if stored is not None and stored.counting_finished:
            _restore(counter, stored)  # the input is not read again
        else:
            skip = 0
            if stored is not None and stored.documents and not restart_counting:
                _restore(counter, stored)
                skip = stored.documents
            else:
                rejected = _Rejected({})
            _count(counter, sources, skip, opts, run, rejected)
        return _merge_and_finish(counter, opts, run, rejected.total())


def train_counts(counts: Mapping[Any, Any], opts: Options) -> Trained:
    """Trains on pre-counted words (word -> count), optionally in a run store."""
    chunks = word_count_chunks(counts)
    counter = _new_counter(opts, False)
    with _open_run(opts) as run:
        if run and run.stored.counting_finished:
            _restore(counter, run.stored)
        else:
            for chunk in chunks:
                counter.add_counts(chunk)
            if run:
                run.checkpoint_counting(counter, finished=True)
        return _merge_and_finish(counter, opts, run, {})


@dataclass(frozen=True)
class Counted:
    """Counts made outside this process: the word-count snapshot of the whole input (the
    counter's own format), its counting ledger and fingerprint, and the items rejected
    as not text."""

    snapshot: bytes
    ledger: dict[str, Any]
    fingerprint: int
    rejected: dict[str, int]


def train_counted(count: Callable[[store.OpenRun | None], Counted], opts: Options) -> Trained:
    """Trains on counts made elsewhere: `count(run)` counts (with the open run store, or
    None, to record its progress there) and returns them; they are restored into a
    counter and merged as any other run. A store whose counting finished is restored
    without calling `count`."""
    counter = _new_counter(opts, False)
    with _open_run(opts) as run:
        if run and run.stored.counting_finished:
            _restore(counter, run.stored)
            rejected = dict(run.stored.ledger.get("rejected_items", {}))
        else:
            counted = count(run)
            counter.restore(counted.snapshot, counted.ledger, counted.fingerprint)
            rejected = dict(counted.rejected)
            if run:
                run.set_ledger("rejected_items", rejected)
                run.checkpoint_counting(counter, finished=True)
                run.drop_blocks()  # their sum is the checkpoint now
        return _merge_and_finish(counter, opts, run, rejected)


# ==================== Opening and restoring


def _new_counter(opts: Options, surrogatepass: bool) -> WordCounter:
    return WordCounter(
        opts.pattern, list(opts.special_tokens), opts.num_threads, surrogatepass,
        opts.max_token_length, opts.memory_limit,
    )


@contextlib.contextmanager
def _open_run(opts: Options) -> Iterator[store.OpenRun | None]:
    """The store opened (and locked) for this run, or None without one."""
    if opts.store is None:
        yield None
        return
    start = None
    if opts.start is not None:
        state = json.dumps(file_format.to_state(opts.start), sort_keys=True)
        start = (state, opts.start.tokens())
    config = store.RunConfig(
        pattern=opts.start.pattern if opts.start else resolve_pattern(opts.pattern),
        special_tokens=list(opts.special_tokens),
        min_frequency=opts.min_frequency,
        max_token_length=opts.max_token_length,
        start=hashlib.sha256(start[0].encode()).hexdigest() if start else "",
        memory_limit=opts.memory_limit,
    )
    run = store.OpenRun(opts.store, config, opts.vocab_size, start)
    try:
        yield run
    finally:
        run.close()


def _restore(counter: WordCounter, stored: store.StoredRun) -> None:
    if stored.snapshot is None or "counting" not in stored.ledger or stored.fingerprint is None:
        raise CorruptTokenizerError("the run store has counting progress but no snapshot")
    counter.restore(stored.snapshot, stored.ledger["counting"], stored.fingerprint)


class _Rejected:
    """Items skipped as not text: those the store had, plus each source's since."""

    def __init__(self, stored: dict[str, int]) -> None:
        self.stored = dict(stored)
        self.sources: list[dict[str, int]] = []

    def total(self) -> dict[str, int]:
        out = dict(self.stored)
        for tally in self.sources:
            for key, n in tally.items():
                out[key] = out.get(key, 0) + n
        return out


# ==================== Counting


def _count(
    counter: WordCounter,
    sources: Iterable[Source],
    skip: int,
    opts: Options,
    run: store.OpenRun | None,
    rejected: _Rejected,
) -> None:
    """Reads past `skip` documents, then counts: progress per call into Rust, a store
    checkpoint when due (and before an error or Ctrl-C propagates, so a second call
    resumes from there)."""
    started = last_checkpoint = time.perf_counter()
    fingerprint = WordCounter.fingerprint_of([])
    skip_total = skip

    def checkpoint(finished: bool) -> None:
        if run and not counter.in_document:
            run.set_ledger("rejected_items", rejected.total())
            run.checkpoint_counting(counter, finished=finished)

    with ProgressBar(opts.progress, desc="counting", unit="doc",
                     initial=counter.documents) as bar:
        for source in sources:
            if skip and source.one_shot:
                raise _one_shot_error(run, skip_total)
            if source.total is not None:
                bar.set_total(source.total)
            if skip:
                skipped, fingerprint = source.skip(counter, skip, fingerprint)
                skip -= skipped
                if skip:
                    continue
                if run and fingerprint != run.stored.fingerprint:
                    raise _input_differs(run, skip_total)
            rejected.sources.append(source.rejected)
            done = False
            try:
                while not done:
                    before = counter.documents
                    done = source.count(counter, CALL_BYTES)
                    bar.update(counter.documents - before)
                    now = time.perf_counter()
                    mb = counter.bytes / 1e6
                    bar.set_postfix_str(f"{mb:,.1f} MB, {mb / max(now - started, 1e-9):,.1f} MB/s")
                    if run and now - last_checkpoint >= run.store.checkpoint_every:
                        checkpoint(finished=False)
                        last_checkpoint = time.perf_counter()
            except (Exception, KeyboardInterrupt):
                # Keep what was counted (up to the last whole document): after the input
                # is fixed, the same call resumes from here.
                checkpoint(finished=False)
                raise
    if skip:
        raise _input_differs(run, skip_total)
    checkpoint(finished=True)


def _one_shot_error(run: store.OpenRun | None, n: int) -> StoreError:
    where = run.where if run else "?"
    return StoreError(
        f"the run store {where} holds a run interrupted while counting, after {n:,} "
        "documents, and the input is a one-shot iterator that cannot be read again from "
        "the start: pass the same data as a list, dataset or files to resume, or pass "
        "restart_counting=True to count from scratch"
    )


def _input_differs(run: store.OpenRun | None, n: int) -> StoreError:
    where = run.where if run else "?"
    return StoreError(
        f"the input differs from the one the run store {where} was counting (its first "
        f"{n:,} documents do not match); pass the same data to resume, or use another "
        "store path"
    )


# ==================== Merging


def _merge_and_finish(
    counter: WordCounter, opts: Options, run: store.OpenRun | None, rejected: dict[str, int]
) -> Trained:
    """Merges, then seals the run: the training ledger (taken before the counter is
    consumed by training) goes into the store with the last merges. Under a memory limit
    the table is first pruned to fit the merge loop (booked in that ledger; a resumed run
    restores the snapshot from before this step and prunes it the same way)."""
    counter.fit_merge_budget()
    ledger: dict[str, Any] = dict(counter.ledger())
    ledger["rejected_items"] = dict(rejected)
    core = _merge(counter, opts, run, pruned=ledger["dropped_word_mass"] > 0)
    if run:
        run.set_ledger("training", ledger)
        run.finish()
    return core, ledger


def _merge(
    counter: WordCounter, opts: Options, run: store.OpenRun | None, pruned: bool
) -> CoreTokenizer:
    """Runs the merge loop (GIL released, Ctrl-C aware), replaying a stored log first,
    and warns when it stops short of `vocab_size`."""
    n_special = len(opts.special_tokens)
    start_tokens = opts.start.n_mergeable if opts.start else 256
    target = opts.vocab_size - start_tokens - n_special
    first_new = len(opts.start.tokens()) if opts.start else 256
    replay = file_format.fitting_prefix(run.stored.merges, target, first_new) if run else []
    empty = counter.distinct_words == 0
    with ProgressBar(opts.progress, desc="merging", unit="merge", total=target) as bar:

        def report(created: int, new_merges: list[tuple[int, int, int, int]]) -> None:
            bar.update_to(created)
            if run:
                run.add_merges(new_merges)

        core = counter.train(opts.vocab_size, opts.min_frequency, replay, report, opts.start)
    if empty:
        what = (
            "no tokens were added to the tokenizer it extends" if opts.start
            else "the tokenizer has only the 256 byte tokens"
            + (" and the special tokens" if n_special else "")
        )
        warnings.warn(f"the training data was empty: {what}", TrainingWarning, stacklevel=_caller())
    elif core.vocab_size < opts.vocab_size:
        warnings.warn(
            f"training stopped at vocab_size={core.vocab_size}, short of the requested "
            f"{opts.vocab_size}: no remaining pair occurs at least min_frequency="
            f"{opts.min_frequency} times"
            + (" (memory_limit dropped rare words; see loss_report())" if pruned else ""),
            TrainingWarning,
            stacklevel=_caller(),
        )
    return core


def _caller() -> int:
    """The stack level of the first frame outside bytebpe, so a warning points at the
    user's call whichever entry point it came through."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("bytebpe."):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


# ==================== Pre-counted words


def word_count_chunks(counts: object) -> Iterator[list[tuple[bytes, int]]]:
    """Checks a word -> count mapping, then returns its (word bytes, count) pairs in
    chunks. Every word is checked before any is counted (a first pass that keeps nothing),
    so a bad entry is an error before a run store is touched."""
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping of word -> count, not {type(counts).__name__}")
    for _ in _count_chunks(counts):
        pass
    return _count_chunks(counts)


def _count_chunks(counts: Mapping[Any, Any]) -> Iterator[list[tuple[bytes, int]]]:
    items: list[tuple[bytes, int]] = []
    for word, count in counts.items():
        if isinstance(word, str):
            try:
                data = word.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ValueError(
                    f"word {word!r} contains a lone surrogate at character {e.start}; "
                    "pass it as bytes instead"
                ) from None
        elif isinstance(word, bytes):
            data = word
        else:
            raise TypeError(f"word {word!r} is {type(word).__name__}, expected str or bytes")
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"the count of word {word!r} is {type(count).__name__}, expected int")
        if not 0 <= count < 2**64:
            raise ValueError(f"the count of word {word!r} is {count}; counts must be in [0, 2**64)")
        items.append((data, count))
        if len(items) >= COUNTS_CHUNK:
            yield items
            items = []
    if items:
        yield items
