"""Running a training: count documents (or take counts), then merge, optionally inside a
run store that makes both phases durable and resumable.

The Rust side counts each batch in parallel with the GIL released and runs the merge loop
detached; this module feeds it, reports progress, checkpoints, and warns when a run ends
short of what was asked. The merges depend only on the documents, never on batching.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bytebpe import _bytebpe, documents, file_format, seeds, store
from bytebpe.progress import ProgressBar

SURROGATE_MODES = ("error", "surrogatepass")
BAD_ITEM_MODES = ("error", "skip")
# Dataset rows read at once under a memory limit.
DATASET_ROWS = 256


class TrainingWarning(UserWarning):
    """Training finished, but not quite as asked (empty data, stopped early)."""


@dataclass
class Settings:
    """Validated settings shared by the training entry points."""

    vocab_size: int
    special_tokens: list[str]
    pattern: str
    min_frequency: int
    num_threads: int | None
    max_token_length: int | None
    progress: bool
    store: store.RunStore | None
    # What training extends (a warm start, seed merges), or None to start from the bytes.
    start: _bytebpe.CoreTokenizer | None = None
    memory_limit: int | None = None


def check_config(
    vocab_size: object,
    special_tokens: object,
    min_frequency: object,
    num_threads: object,
    buffer_size: object = 1,
) -> list[str]:
    """Validates the settings every entry point shares; returns the special tokens."""
    if isinstance(special_tokens, (str, bytes)) or not isinstance(special_tokens, Iterable):
        raise TypeError(
            f"special_tokens must be a list of str, not {type(special_tokens).__name__}"
        )
    specials = list(special_tokens)
    for i, token in enumerate(specials):
        if not isinstance(token, str):
            raise TypeError(f"special_tokens[{i}] is {type(token).__name__}, expected str")
        if not token:
            raise ValueError(f"special_tokens[{i}] is empty; special tokens need text")
        if token in specials[:i]:
            raise ValueError(f"special_tokens[{i}] {token!r} is given more than once")
    check_int("vocab_size", vocab_size, minimum=256 + len(specials), why=(
        f"it counts the 256 byte tokens and the {len(specials)} special tokens"
    ))
    check_int("min_frequency", min_frequency, minimum=1)
    if num_threads is not None:
        check_int("num_threads", num_threads, minimum=1)
    check_int("buffer_size", buffer_size, minimum=1)
    return specials


def settings(
    vocab_size: object,
    *,
    pattern: object,
    special_tokens: object,
    min_frequency: object,
    num_threads: object,
    max_token_length: object,
    progress: object,
    store_arg: object,
    buffer_size: object = 1,
    base: object = None,
    seed_merges: object = None,
    memory_limit: object = None,
) -> Settings:
    specials = check_config(vocab_size, special_tokens, min_frequency, num_threads, buffer_size)
    start = start_of(base)
    if start is not None:
        if pattern is None:
            pattern = start.pattern
        elif isinstance(pattern, str) and _bytebpe.resolve_pattern(pattern) != start.pattern:
            raise ValueError(
                f"pattern={pattern!r} differs from the pattern of the tokenizer to extend; a "
                "warm start keeps its pattern (leave pattern out)"
            )
        known = [t for t, _ in start.special_tokens]
        specials = known + [t for t in specials if t not in known]
        floor = start.n_mergeable + len(specials)
        if isinstance(vocab_size, int) and vocab_size < floor:
            raise ValueError(
                f"vocab_size={vocab_size} is smaller than the tokenizer to extend ({floor} "
                "tokens with the special tokens); a warm start only adds tokens"
            )
    if pattern is None:
        pattern = "cl100k"
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a name or a regex), not {type(pattern).__name__}")
    start = with_seeds(start, pattern, seed_merges)
    if max_token_length is not None:
        check_int("max_token_length", max_token_length, minimum=1)
    if store_arg is not None and not isinstance(store_arg, store.RunStore):
        if not isinstance(store_arg, (str, os.PathLike)):
            raise TypeError(f"store must be a path or a RunStore, not {type(store_arg).__name__}")
        store_arg = store.RunStore(store_arg)
    return Settings(
        vocab_size=vocab_size,  # type: ignore[arg-type]
        special_tokens=specials,
        pattern=pattern,
        min_frequency=min_frequency,  # type: ignore[arg-type]
        num_threads=num_threads,  # type: ignore[arg-type]
        max_token_length=max_token_length,  # type: ignore[arg-type]
        progress=bool(progress),
        store=store_arg,  # type: ignore[arg-type]
        start=start,
        memory_limit=parse_memory_limit(memory_limit),
    )


def with_seeds(
    start: _bytebpe.CoreTokenizer | None, pattern: str, seed_merges: object
) -> _bytebpe.CoreTokenizer | None:
    """`start` (None: the 256 bytes under `pattern`) with tokens for `seed_merges` made
    first; `start` itself when there are no seeds."""
    seed_bytes = seeds.resolve(seed_merges)
    if not seed_bytes:
        return start
    if start is None:
        start = _bytebpe.CoreTokenizer.from_merges(pattern, [], [])
    return start.with_seeds(seed_bytes)


def start_of(base: object) -> _bytebpe.CoreTokenizer | None:
    """The native tokenizer of `base` (a `Tokenizer` to extend), or None."""
    if base is None:
        return None
    core = getattr(base, "_core", None)
    if not isinstance(core, _bytebpe.CoreTokenizer):
        raise TypeError(
            f"base must be a bytebpe Tokenizer, not {type(base).__name__}; load one with "
            "Tokenizer.load(path), Tokenizer.from_tiktoken(path, pattern=...) or "
            "Tokenizer.from_huggingface(path)"
        )
    return core


_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")


def parse_memory_limit(value: object) -> int | None:
    """`memory_limit` as bytes: None, an int of bytes, or a string such as "2GB",
    "1.5GiB", "500MB" (decimal kB/MB/GB/TB and binary KiB/MiB/GiB/TiB, any case)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            f"memory_limit must be an int (bytes) or a string like '2GB' or '1.5GiB', "
            f"not {type(value).__name__}"
        )
    if isinstance(value, str):
        match = _SIZE.fullmatch(value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise ValueError(
                f"memory_limit={value!r} is not a size: write a number and a unit, like "
                "'2GB', '1.5GiB' or '500MB' (units: B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            )
        number = match.group(1)
        whole, _, frac = number.partition(".")
        # Exact decimal arithmetic: '1.5GiB' is 1610612736 bytes, not a float's guess.
        scale = _UNITS[unit]
        limit = int(whole or 0) * scale + int(frac or 0) * scale // 10 ** len(frac)
    else:
        limit = value
    minimum = _bytebpe.MIN_MEMORY_LIMIT
    if limit < minimum:
        raise ValueError(
            f"memory_limit={value!r} ({limit:,} bytes) is too small: it must be at least "
            f"{minimum:,} bytes (64 MiB), of which {_bytebpe.MEMORY_RESERVED:,} bytes "
            "(48 MiB) are left to the Python interpreter and libraries"
        )
    if limit >= 2**64:
        raise ValueError(f"memory_limit={value!r} is too large: at most 2**64-1 bytes")
    return limit


def check_int(name: str, value: object, *, minimum: int, why: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        because = f" ({why})" if why else ""
        raise ValueError(f"{name}={value} is too small: it must be at least {minimum}{because}")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}={value!r}; choose one of {choices}")


# ==================== Entry points


def train_documents(
    data: Any,
    s: Settings,
    *,
    buffer_size: int,
    text_column: str,
    surrogatepass: bool,
    skip_bad_items: bool,
    restart_counting: bool,
) -> tuple[_bytebpe.CoreTokenizer, dict[str, Any]]:
    """Counts the documents of `data` (resuming a stored run where it can), then merges."""
    counter = _new_counter(s, surrogatepass)
    rejected: dict[str, int] | None = {} if skip_bad_items else None
    with _open_run(s) as run:
        stored = run.stored if run else None
        if stored is not None and stored.counting_finished:
            _restore(counter, stored)  # the corpus is not read again
            rejected = stored.ledger.get("rejected_items", rejected)
        else:
            skip = 0
            if stored is not None and stored.documents and not restart_counting:
                if documents.is_one_shot(data):
                    raise store.StoreError(
                        f"the run store {run.where} holds a run interrupted while counting, "
                        f"after {stored.documents:,} documents, and the input is a one-shot "
                        "iterator that cannot be read again from the start: pass the same "
                        "data as a list, dataset or files to resume, or pass "
                        "restart_counting=True to count from scratch"
                    )
                _restore(counter, stored)
                rejected = stored.ledger.get("rejected_items", rejected)
                skip = stored.documents
            # A dataset is read `buffer_size` rows at a time; under a memory limit fewer,
            # since rows are held as Python objects before batching by bytes.
            rows = buffer_size if s.memory_limit is None else min(buffer_size, DATASET_ROWS)
            docs = documents.iter_documents(data, text_column, rows, rejected)
            if skip:
                _skip_counted(docs, skip, stored, buffer_size, run.where)
            total = len(data) if hasattr(data, "__len__") else None
            _count(counter, docs, buffer_size, total, s, run, rejected)
        return _merge_and_finish(counter, s, run, rejected)


def train_counts(counts: Mapping, s: Settings) -> tuple[_bytebpe.CoreTokenizer, dict[str, Any]]:
    """Trains on pre-counted words, optionally in a run store."""
    chunks = word_count_chunks(counts)
    counter = _new_counter(s, False)
    with _open_run(s) as run:
        if run and run.stored.counting_finished:
            _restore(counter, run.stored)
        else:
            for chunk in chunks:
                counter.add_counts(chunk)
            if run:
                run.checkpoint_counting(counter, finished=True)
        return _merge_and_finish(counter, s, run, None)


# ==================== Phases


def _new_counter(s: Settings, surrogatepass: bool) -> _bytebpe.WordCounter:
    return _bytebpe.WordCounter(
        s.pattern, s.special_tokens, s.num_threads, surrogatepass, s.max_token_length,
        s.memory_limit,
    )


@contextlib.contextmanager
def _open_run(s: Settings) -> Iterator[store.OpenRun | None]:
    """The store opened (and locked) for this run, or None without one."""
    if s.store is None:
        yield None
        return
    start = None
    if s.start is not None:
        state = json.dumps(file_format.to_state(s.start), sort_keys=True)
        start = (state, s.start.tokens())
    config = store.RunConfig(
        pattern=_bytebpe.resolve_pattern(s.pattern),
        special_tokens=s.special_tokens,
        min_frequency=s.min_frequency,
        max_token_length=s.max_token_length,
        start=hashlib.sha256(start[0].encode()).hexdigest() if start else "",
        memory_limit=s.memory_limit,
    )
    run = store.OpenRun(s.store, config, s.vocab_size, start)
    try:
        yield run
    finally:
        run.close()


def _restore(counter: _bytebpe.WordCounter, stored: store.StoredRun) -> None:
    if stored.snapshot is None or "counting" not in stored.ledger:
        raise _bytebpe.CorruptTokenizerError("the run store has counting progress but no snapshot")
    counter.restore(stored.snapshot, stored.ledger["counting"], stored.fingerprint)


def _skip_counted(
    docs: Iterator[str | bytes], n: int, stored: store.StoredRun, buffer_size: int, where: str
) -> None:
    """Reads past the `n` documents a stored run already counted, checking they are the
    same documents (by fingerprint)."""
    fingerprint = _bytebpe.WordCounter.fingerprint_of([])
    seen = 0
    while seen < n:
        batch = [doc for _, doc in zip(range(min(buffer_size, n - seen)), docs)]
        if not batch:
            break
        fingerprint = _bytebpe.WordCounter.fingerprint_of(batch, fingerprint)
        seen += len(batch)
    if seen < n or fingerprint != stored.fingerprint:
        raise store.StoreError(
            f"the input differs from the one the run store {where} was counting (its first "
            f"{n:,} documents do not match); pass the same data to resume, or use another "
            "store path"
        )


def _count(
    counter: _bytebpe.WordCounter,
    docs: Iterator[str | bytes],
    buffer_size: int,
    total: int | None,
    s: Settings,
    run: store.OpenRun | None,
    rejected: dict[str, int] | None,
) -> None:
    """Counts `docs` in batches: progress per batch, a store checkpoint when due."""
    started = last_checkpoint = time.perf_counter()
    first = counter.documents
    # Under a memory limit the budget sets how much input a batch may hold.
    batch_bytes = counter.batch_bytes or documents.BATCH_BYTES
    with ProgressBar(s.progress, desc="counting", unit="doc", total=total, initial=first) as bar:
        for batch in documents.batches(docs, buffer_size, batch_bytes):
            counter.add_batch(batch, first)
            first += len(batch)
            bar.update(len(batch))
            now = time.perf_counter()
            mb = counter.bytes / 1e6
            bar.set_postfix_str(f"{mb:,.1f} MB, {mb / max(now - started, 1e-9):,.1f} MB/s")
            if run and now - last_checkpoint >= run.store.checkpoint_every:
                if rejected is not None:
                    run.set_ledger("rejected_items", rejected)
                run.checkpoint_counting(counter, finished=False)
                last_checkpoint = time.perf_counter()
    if run:
        if rejected is not None:
            run.set_ledger("rejected_items", rejected)
        run.checkpoint_counting(counter, finished=True)


def _merge_and_finish(
    counter: _bytebpe.WordCounter,
    s: Settings,
    run: store.OpenRun | None,
    rejected: dict[str, int] | None,
) -> tuple[_bytebpe.CoreTokenizer, dict[str, Any]]:
    """Merges, then seals the run: the training ledger (taken before the counter is
    consumed by training) goes into the store with the last merges. Under a memory limit
    the table is first pruned to fit the merge loop (booked in that ledger; a resumed run
    restores the snapshot from before this step and prunes it the same way)."""
    counter.fit_merge_budget()
    ledger = _training_ledger(counter, rejected)
    core = _merge(counter, s, run, pruned=ledger["dropped_word_mass"] > 0)
    if run:
        run.set_ledger("training", ledger)
        run.finish()
    return core, ledger


def _merge(
    counter: _bytebpe.WordCounter, s: Settings, run: store.OpenRun | None, pruned: bool
) -> _bytebpe.CoreTokenizer:
    """Runs the merge loop (GIL released, Ctrl-C aware), replaying a stored log first,
    and warns when it stops short of `vocab_size`."""
    n_special = len(s.special_tokens)
    start_tokens = s.start.n_mergeable if s.start else 256
    target = s.vocab_size - start_tokens - n_special
    first_new = len(s.start.tokens()) if s.start else 256
    replay = file_format.fitting_prefix(run.stored.merges, target, first_new) if run else []
    empty = counter.distinct_words == 0
    with ProgressBar(s.progress, desc="merging", unit="merge", total=target) as bar:

        def report(created: int, new_merges: list[tuple[int, int, int, int]]) -> None:
            bar.update_to(created)
            if run:
                run.add_merges(new_merges)

        core = counter.train(s.vocab_size, s.min_frequency, replay, report, s.start)
    if empty:
        warnings.warn(
            (
                "the training data was empty: no tokens were added to the tokenizer it extends"
                if s.start
                else "the training data was empty: the tokenizer has only the 256 byte tokens"
                + (" and the special tokens" if n_special else "")
            ),
            TrainingWarning,
            stacklevel=5,
        )
    elif core.vocab_size < s.vocab_size:
        warnings.warn(
            f"training stopped at vocab_size={core.vocab_size}, short of the requested "
            f"{s.vocab_size}: no remaining pair occurs at least min_frequency="
            f"{s.min_frequency} times"
            + (" (memory_limit dropped rare words; see loss_report())" if pruned else ""),
            TrainingWarning,
            stacklevel=5,
        )
    return core


def _training_ledger(
    counter: _bytebpe.WordCounter, rejected: dict[str, int] | None
) -> dict[str, Any]:
    ledger = dict(counter.ledger())
    ledger["rejected_items"] = dict(rejected or {})
    return ledger


# Pre-counted words are checked and handed over this many at a time, so no copy of the
# whole mapping is made.
COUNTS_CHUNK = 65536


def word_count_chunks(counts: Mapping) -> Iterator[list[tuple[bytes, int]]]:
    """Checks a word -> count mapping, then returns its (word bytes, count) pairs in
    chunks. Every word is checked before any is counted (a first pass that keeps nothing),
    so a bad entry is an error before a run store is touched."""
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping of word -> count, not {type(counts).__name__}")
    for _ in _count_chunks(counts):
        pass
    return _count_chunks(counts)


def _count_chunks(counts: Mapping) -> Iterator[list[tuple[bytes, int]]]:
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
