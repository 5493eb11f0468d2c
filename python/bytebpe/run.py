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
from bytebpe.run_events import RunEvents
from bytebpe.sources import CALL_BYTES, Source

Trained = tuple[CoreTokenizer, dict[str, Any]]


# A source whose bytes are at least this share of invalid UTF-8 gets a warning: it is
# probably binary, compressed in a format that was not recognised, or not UTF-8 text.
INVALID_UTF8_SHARE = 0.05
# ... once it has this many bytes (a few stray bytes in a tiny input are not a pattern).
INVALID_UTF8_MIN_BYTES = 256

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
    with _observed(opts) as events, _open_run(opts) as run:
        stored = run.stored if run else None
        rejected = _Rejected(stored.ledger.get("rejected_items", {}) if stored else {})
        if stored is not None and stored.counting_finished:
            assert run is not None
            _check_finished_input(counter, sources, run, events)
            _restore(counter, stored, events)  # the input is not counted again
        else:
            skip = 0
            if stored is not None and stored.documents and not restart_counting:
                _restore(counter, stored, events)
                skip = stored.documents
            else:
                rejected = _Rejected({})
            _count(counter, sources, skip, opts, run, rejected, events)
        return _merge_and_finish(counter, opts, run, rejected.total(), events)


def train_counts(counts: Mapping[Any, Any], opts: Options) -> Trained:
    """Trains on pre-counted words (word -> count), optionally in a run store."""
    chunks = word_count_chunks(counts)
    counter = _new_counter(opts, False)
    with _observed(opts) as events, _open_run(opts) as run:
        if run and run.stored.counting_finished:
            _restore(counter, run.stored, events)
        else:
            events.phase("counting")
            for chunk in chunks:
                counter.add_counts(chunk)
            if run:
                run.checkpoint_counting(counter, finished=True)
        return _merge_and_finish(counter, opts, run, {}, events)


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
    with _observed(opts) as events, _open_run(opts) as run:
        if run and run.stored.counting_finished:
            _restore(counter, run.stored, events)
            rejected = dict(run.stored.ledger.get("rejected_items", {}))
        else:
            events.phase("counting")
            counted = count(run)
            counter.restore(counted.snapshot, counted.ledger, counted.fingerprint)
            rejected = dict(counted.rejected)
            events.counted(documents=counter.documents, bytes=counter.bytes)
            events.emit("train.counted", documents=counter.documents, bytes=counter.bytes,
                        distinct_words=counter.distinct_words)
            if run:
                run.set_ledger("rejected_items", rejected)
                run.checkpoint_counting(counter, finished=True)
                run.drop_blocks()  # their sum is the checkpoint now
        return _merge_and_finish(counter, opts, run, rejected, events)


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
        start = json.dumps(file_format.to_state(opts.start), sort_keys=True)
    config = store.RunConfig(
        pattern=opts.start.pattern if opts.start else resolve_pattern(opts.pattern),
        special_tokens=list(opts.special_tokens),
        min_frequency=opts.min_frequency,
        max_token_length=opts.max_token_length,
        start=hashlib.sha256(start.encode()).hexdigest() if start else "",
        memory_limit=opts.memory_limit,
    )
    run = store.OpenRun(opts.store, config, opts.vocab_size, start)
    try:
        yield run
    finally:
        run.close()


@contextlib.contextmanager
def _observed(opts: Options) -> Iterator[RunEvents]:
    """The run's logs and metrics, with a failure logged as such."""
    events = RunEvents(
        vocab_size=opts.vocab_size, metrics_port=opts.metrics_port,
        store=opts.store.path if opts.store else None,
    )
    try:
        yield events
    except BaseException as e:
        events.failed(e)
        raise
    finally:
        events.close()


def _restore(counter: WordCounter, stored: store.StoredRun, events: RunEvents) -> None:
    # The store checked that a counting row comes with its snapshot and ledger.
    assert stored.snapshot is not None and stored.fingerprint is not None
    try:
        counter.restore(stored.snapshot, stored.ledger["counting"], stored.fingerprint)
    except (TypeError, ValueError, KeyError, OverflowError) as e:  # ValueError: Corrupt...
        raise CorruptTokenizerError(f"the run store {stored.where}: {e}") from None
    events.resumed(documents=counter.documents, bytes=counter.bytes,
                   counting_finished=stored.counting_finished)


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
    events: RunEvents,
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
            events.checkpoint(documents=counter.documents, bytes=counter.bytes, finished=finished)

    events.phase("counting")

    # Files of known size show progress in bytes against their total; other inputs in
    # documents (against a dataset's length when known).
    sources = list(sources)
    sizes = [source.total_bytes for source in sources]
    by_size = bool(sources) and None not in sizes
    progress = (
        dict(unit="B", unit_scale=True, total=sum(n or 0 for n in sizes), initial=counter.bytes)
        if by_size else dict(unit="doc", initial=counter.documents)
    )
    with ProgressBar(opts.progress, desc="counting", **progress) as bar:
        for source in sources:
            if skip and source.one_shot:
                raise _one_shot_error(run, skip_total)
            if source.total is not None and not by_size:
                bar.set_total(source.total)
            if skip:
                skipped, fingerprint = source.skip(counter, skip, fingerprint)
                skip -= skipped
                if skip:
                    continue
                if run and fingerprint != run.stored.fingerprint:
                    raise _input_differs(run, skip_total)
            rejected.sources.append(source.rejected)
            seen_before = _invalid_and_total(counter)
            done = False
            try:
                while not done:
                    before, before_bytes = counter.documents, counter.bytes
                    done = source.count(counter, CALL_BYTES)
                    bar.update((counter.bytes - before_bytes) if by_size
                               else (counter.documents - before))
                    events.counted(documents=counter.documents - before,
                                   bytes=counter.bytes - before_bytes)
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
            _warn_if_not_text(source, counter, seen_before)
    if skip:
        raise _input_differs(run, skip_total)
    checkpoint(finished=True)
    events.emit("train.counted", documents=counter.documents, bytes=counter.bytes,
                distinct_words=counter.distinct_words,
                seconds=round(time.perf_counter() - started, 3))


def _invalid_and_total(counter: WordCounter) -> tuple[int, int]:
    ledger: dict[str, Any] = counter.ledger()
    return sum(ledger["invalid_utf8_bytes"].values()), counter.bytes


def _warn_if_not_text(source: Source, counter: WordCounter, before: tuple[int, int]) -> None:
    """Warns when a large share of what `source` gave was not valid UTF-8 (the bytes are
    still trained on, reversibly, and counted in the loss ledger)."""
    invalid, total = (now - then for now, then in zip(_invalid_and_total(counter), before))
    if total >= INVALID_UTF8_MIN_BYTES and invalid >= INVALID_UTF8_SHARE * total:
        warnings.warn(
            f"{source.name}: {invalid:,} of its {total:,} bytes ({invalid / total:.0%}) are "
            "not valid UTF-8; they are trained on as byte tokens (see loss_report()). Is it "
            "binary, compressed in a format bytebpe does not read, or in another encoding?",
            TrainingWarning, stacklevel=_caller(),
        )


def _check_finished_input(
    counter: WordCounter, sources: Iterable[Source], run: store.OpenRun, events: RunEvents
) -> None:
    """A finished run is reused only for the input it counted: where the input can be
    read again, it is read (not counted) and its fingerprint and document count compared
    with the store's; a one-shot input cannot be checked, so a warning says so."""
    stored = run.stored
    sources = list(sources)
    if any(source.one_shot for source in sources):
        warnings.warn(
            f"the run store {run.where} holds a finished run ({stored.documents:,} "
            "documents); its tokenizer is returned without reading the input, which is a "
            "one-shot iterator and cannot be checked against it. If the data differs, use "
            "another store path",
            TrainingWarning, stacklevel=_caller(),
        )
        return
    fingerprint = WordCounter.fingerprint_of([])
    remaining, seen = stored.documents, 0
    for source in sources:
        skipped, fingerprint = source.skip(counter, remaining + 1, fingerprint)
        remaining -= skipped
        seen += skipped
    if seen != stored.documents or fingerprint != stored.fingerprint:
        differs = (
            "it has more documents" if seen > stored.documents
            else f"it has {seen:,} documents" if seen < stored.documents
            else "its documents differ"
        )
        raise StoreError(
            f"the run store {run.where} holds a finished run on other data: it counted "
            f"{stored.documents:,} documents, and this input differs ({differs}). Use "
            f"another store path to train on this data, or Tokenizer.load({run.where}) for "
            "the finished tokenizer"
        )
    events.emit("train.input_checked", store=run.store.path, documents=seen)


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
    counter: WordCounter, opts: Options, run: store.OpenRun | None, rejected: dict[str, int],
    events: RunEvents,
) -> Trained:
    """Merges, then seals the run: the training ledger (taken before the counter is
    consumed by training) goes into the store with the last merges. Under a memory limit
    the table is first pruned to fit the merge loop (booked in that ledger; a resumed run
    restores the snapshot from before this step and prunes it the same way)."""
    counter.fit_merge_budget()
    ledger: dict[str, Any] = dict(counter.ledger())
    ledger["rejected_items"] = dict(rejected)
    core = _merge(counter, opts, run, ledger["dropped_word_mass"] > 0, events)
    if run:
        run.set_ledger("training", ledger)
        run.finish()
    events.finished(vocab_size=core.vocab_size, ledger=ledger)
    return core, ledger


def _merge(
    counter: WordCounter, opts: Options, run: store.OpenRun | None, pruned: bool,
    events: RunEvents,
) -> CoreTokenizer:
    """Runs the merge loop (GIL released, Ctrl-C aware), replaying a stored log first,
    and warns when it stops short of `vocab_size`."""
    n_special = len(opts.special_tokens)
    start_tokens = opts.start.n_mergeable if opts.start else 256
    target = opts.vocab_size - start_tokens - n_special
    first_new = len(opts.start.tokens()) if opts.start else 256
    replay = file_format.fitting_prefix(run.stored.merges, target, first_new) if run else []
    empty = counter.distinct_words == 0
    events.phase("merging")
    with ProgressBar(opts.progress, desc="merging", unit="merge", total=target) as bar:

        def report(created: int, new_merges: list[tuple[int, int, int, int]]) -> None:
            bar.update_to(created)
            events.merged(merges=created, vocab_size=start_tokens + created + n_special)
            if run:
                run.add_merges(new_merges)

        core = counter.train(opts.vocab_size, opts.min_frequency, replay, report, opts.start)
    if empty:
        what = (
            "no tokens were added to the tokenizer it extends" if opts.start
            else "the tokenizer has only the 256 byte tokens"
            + (" and the special tokens" if n_special else "")
        )
        _warn(f"the training data was empty: {what}", events)
    elif core.vocab_size < opts.vocab_size:
        _warn(
            f"training stopped at vocab_size={core.vocab_size}, short of the requested "
            f"{opts.vocab_size}: no remaining pair occurs at least min_frequency="
            f"{opts.min_frequency} times"
            + (" (memory_limit dropped rare words; see loss_report())" if pruned else ""),
            events,
        )
    return core


def _warn(text: str, events: RunEvents) -> None:
    events.warned(text)
    warnings.warn(text, TrainingWarning, stacklevel=_caller())


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
