"""Training options: the keywords every training entry point shares, written and checked
once.

`TrainingOptions` (a TypedDict) types the keywords of `Tokenizer.train_*` through
`**options: Unpack[TrainingOptions]`, so signatures stay short and type checkers still see
each keyword; `resolve` checks them and returns one frozen `Options`, which the run
pipeline reads. `OPTIONS_DOC` is appended to each entry point's docstring by
`documented`, so `help()` shows every option in one place.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict, TypeVar

from bytebpe import seeds
from bytebpe._bytebpe import MEMORY_RESERVED, MIN_MEMORY_LIMIT, CoreTokenizer, resolve_pattern
from bytebpe.checks import check_int, check_optional_int, check_threads
from bytebpe.store import RunStore

DEFAULT_PATTERN = "cl100k"


class Extendable(Protocol):
    """A tokenizer training can extend (a `bytebpe.Tokenizer`). Typed by its shape so this
    module stays below `tokenizer.py`."""

    @property
    def _core(self) -> CoreTokenizer: ...


class SharedOptions(TypedDict, total=False):
    """The options of every training entry point, phases included."""

    pattern: str | None
    special_tokens: Sequence[str]
    min_frequency: int
    num_threads: int | None
    max_token_length: int | None
    base: Extendable | None
    seed_merges: str | Sequence[str | bytes] | None
    memory_limit: int | str | None
    progress: bool
    metrics_port: int | None


class TrainingOptions(SharedOptions, total=False):
    """`SharedOptions` plus the run store of a single run."""

    store: str | os.PathLike[str] | RunStore | None


OPTIONS_DOC = """
Options shared by every training entry point (keyword-only):

- `pattern`: "gpt2", "cl100k" (the default), "o200k" (tiktoken's regexes) or any regex;
  with `base`, the base's pattern.
- `special_tokens`: texts that get the last ids; their occurrences in training text are
  cut out, not learned.
- `min_frequency` (default 2): training stops when no pair occurs this often.
- `num_threads`: parallelism (never changes the result), 1 to 1024 (default: all cores).
- `max_token_length`: cut pieces longer than this many bytes (counted in the loss
  ledger), so no token is longer.
- `store`: a path or a `RunStore`: the run is kept in an SQLite file, and calling again
  with the same store resumes after a crash, ending with exactly the merges of an
  uninterrupted run.
- `base`: a Tokenizer to extend: every existing id stays, the documents are segmented by
  the base's own rank-ordered BPE, and new merges are appended until `vocab_size`. New ids
  skip the base's special-token ids; new special tokens come after every id.
- `seed_merges`: a preset ("digits", "whitespace", "code", joined by commas) or a list of
  strings made into tokens before any counted merge.
- `memory_limit`: bytes, or a string like "2GB", "1.5GiB", "500MB" (at least 64 MiB):
  bounds the peak resident memory of the whole process to the limit plus 16 MiB, counting
  48 MiB for the interpreter and libraries. Word counts stay exact while they fit; past
  that the rarest words are dropped at fixed points of the input (inside a long document
  too) and counted in `loss_report()`. The result depends on the limit and the document
  order only. A document a reader cannot cut within the budget, or a word longer than it
  allows, raises `InputError`; README.md says exactly what is bounded.
- `progress` (default True): progress bars (tqdm, notebook-aware).
- `metrics_port`: serve Prometheus metrics of the run (documents and bytes counted,
  merges, vocabulary size, checkpoints, the loss ledger) on 127.0.0.1 at this port while
  it trains (0 picks a free port); needs `bytebpe[observe]`. Events are logged on the
  `bytebpe.train` logger either way.
"""

SHARED_KEYS = frozenset(SharedOptions.__annotations__)
TRAINING_KEYS = SHARED_KEYS | {"store"}

F = TypeVar("F", bound=Callable[..., object])


def documented(method: F) -> F:
    """Appends the shared options to `method`'s docstring."""
    method.__doc__ = (method.__doc__ or "").rstrip() + "\n" + OPTIONS_DOC
    return method


@dataclass(frozen=True)
class Options:
    """Checked training options, as the run pipeline reads them."""

    vocab_size: int
    # As given: a built-in name or a regex (the store keeps the resolved source).
    pattern: str
    special_tokens: tuple[str, ...]
    min_frequency: int
    num_threads: int | None
    max_token_length: int | None
    memory_limit: int | None
    store: RunStore | None
    # Where Prometheus metrics are served while training (0: a free port), or None.
    metrics_port: int | None
    # What training extends (a warm start, seed merges), or None to start from the bytes.
    start: CoreTokenizer | None
    progress: bool


def resolve(
    vocab_size: object, options: Mapping[str, object], *, entry: str, allowed: Iterable[str]
) -> Options:
    """Checks the keywords `entry` (a method name, for errors) was called with."""
    check_keys(options, entry=entry, allowed=allowed)
    return build(vocab_size, start_of(options.get("base")), options)


def check_keys(options: Mapping[str, object], *, entry: str, allowed: Iterable[str]) -> None:
    """Refuses a keyword `entry` does not take, as Python would for a named parameter."""
    allowed = set(allowed)
    for key in options:
        if key not in allowed:
            raise TypeError(f"{entry}() got an unexpected keyword argument {key!r}")


def build(vocab_size: object, start: CoreTokenizer | None, options: Mapping[str, object]) -> Options:
    """`Options` from checked values; `start` is the native tokenizer to extend."""
    pattern = options.get("pattern")
    specials = special_tokens_of(options.get("special_tokens", ()))
    if start is not None:
        if pattern is None:
            pattern = start.pattern
        elif isinstance(pattern, str) and resolve_pattern(pattern) != start.pattern:
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
    size = check_int("vocab_size", vocab_size, minimum=256 + len(specials), why=(
        f"it counts the 256 byte tokens and the {len(specials)} special tokens"
    ))
    if pattern is None:
        pattern = DEFAULT_PATTERN
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a name or a regex), not {type(pattern).__name__}")
    return Options(
        vocab_size=size,
        pattern=pattern,
        special_tokens=tuple(specials),
        min_frequency=check_int("min_frequency", options.get("min_frequency", 2), minimum=1),
        num_threads=check_threads(options.get("num_threads")),
        max_token_length=check_optional_int(
            "max_token_length", options.get("max_token_length"), minimum=1
        ),
        memory_limit=parse_memory_limit(options.get("memory_limit")),
        store=store_of(options.get("store")),
        metrics_port=_port(options.get("metrics_port")),
        start=with_seeds(start, pattern, options.get("seed_merges"), size - len(specials)),
        progress=bool(options.get("progress", True)),
    )


def _port(value: object) -> int | None:
    port = check_optional_int("metrics_port", value, minimum=0)
    if port is not None and port > 65535:
        raise ValueError(f"metrics_port={port} is not a TCP port (0-65535)")
    return port


def special_tokens_of(special_tokens: object) -> list[str]:
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
    return specials


def store_of(store: object) -> RunStore | None:
    if store is None or isinstance(store, RunStore):
        return store
    if not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"store must be a path or a RunStore, not {type(store).__name__}")
    return RunStore(store)


def start_of(base: object) -> CoreTokenizer | None:
    """The native tokenizer of `base` (a `Tokenizer` to extend), or None."""
    if base is None:
        return None
    core = getattr(base, "_core", None)
    if not isinstance(core, CoreTokenizer):
        raise TypeError(
            f"base must be a bytebpe Tokenizer, not {type(base).__name__}; load one with "
            "Tokenizer.load(path), Tokenizer.from_tiktoken(path, pattern=...) or "
            "Tokenizer.from_huggingface(path)"
        )
    return core


def with_seeds(
    start: CoreTokenizer | None, pattern: str, seed_merges: object, room: int | None = None
) -> CoreTokenizer | None:
    """`start` (None: the 256 bytes under `pattern`) with tokens for `seed_merges` made
    first; `start` itself when there are no seeds. With `room` (the mergeable tokens
    `vocab_size` allows), seeds that cannot fit are refused before any is built."""
    seed_bytes = seeds.resolve(seed_merges)
    if not seed_bytes:
        return start
    if start is None:
        start = CoreTokenizer.from_merges(pattern, [], [])
    if room is not None:
        seeds.check_room(seed_bytes, start.n_mergeable, room, start.encode_bytes)
    return start.with_seeds(seed_bytes)


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
        whole, _, frac = match.group(1).partition(".")
        # Exact decimal arithmetic: '1.5GiB' is 1610612736 bytes, not a float's guess.
        scale = _UNITS[unit]
        limit: int = int(whole or 0) * scale + int(frac or 0) * scale // 10 ** len(frac)
    else:
        limit = value
    if limit < MIN_MEMORY_LIMIT:
        raise ValueError(
            f"memory_limit={value!r} ({limit:,} bytes) is too small: it must be at least "
            f"{MIN_MEMORY_LIMIT:,} bytes (64 MiB), of which {MEMORY_RESERVED:,} bytes "
            "(48 MiB) are left to the Python interpreter and libraries"
        )
    if limit >= 2**64:
        raise ValueError(f"memory_limit={value!r} is too large: at most 2**64-1 bytes")
    return limit
