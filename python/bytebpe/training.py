"""The training entry points of `Tokenizer` (`Tokenizer.train_from_iterator`,
`train_from_files`, `train_from_stream`, `train_from_counts`, `train_phases`,
`train_from_ray`), as a base class. Each checks its own keywords, asks `options` for the shared ones, wraps its input
in `sources` and calls the one pipeline, `run.train` (phases: once per phase).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from bytebpe import _bytebpe, cluster, options, run, sources
from bytebpe import phases as phases_module
from bytebpe.checks import check_choice, check_int, check_str
from bytebpe.documents import TrainingData
from bytebpe.options import Extendable, TrainingOptions
from bytebpe.phases import Phase

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

__all__ = ["SURROGATE_MODES", "Training"]

SURROGATE_MODES = ("error", "surrogatepass")


class Training:
    """The `train_*` class methods; `_trained` makes the public class from a result."""

    __slots__ = ()

    @classmethod
    def _trained(cls, trained: tuple[_bytebpe.CoreTokenizer, dict[str, Any]]) -> Self:
        raise NotImplementedError

    @classmethod
    @options.documented
    def train_from_iterator(
        cls,
        iterable: TrainingData,
        vocab_size: int,
        *,
        text_column: str = "text",
        buffer_size: int = 8192,
        surrogates: Literal["error", "surrogatepass"] = "error",
        on_bad_item: Literal["error", "skip"] = "error",
        restart_counting: bool = False,
        **opts: Unpack[TrainingOptions],
    ) -> Self:
        """Trains on documents from any iterable.

        Items may be `str`, `bytes` (any bytes; invalid UTF-8 is kept byte by byte), lists
        of those (batches), or dict rows whose `text_column` holds the text; a
        `datasets.Dataset` or `IterableDataset` can be passed directly. Training stops at
        `vocab_size` tokens (special tokens included) or when no pair occurs
        `min_frequency` times. `buffer_size` documents are counted per batch (never
        changes the result).

        A `str` with lone surrogates is refused unless `surrogates="surrogatepass"`, which
        keeps them as their surrogatepass bytes (decode with
        `decode_bytes(...).decode("utf-8", "surrogatepass")`). An item of another type is a
        TypeError unless `on_bad_item="skip"`, which skips it and counts it in the loss
        ledger.

        With `store`, calling again resumes an interrupted run: after counting finished,
        without counting again (the data is read once more, without counting, to check
        it is what the store counted: other data is a StoreError; a one-shot iterator
        cannot be checked and gets a TrainingWarning); during counting, by reading past
        the documents already counted (checked to be the same). `restart_counting=True`
        allows counting from scratch when an interrupted count cannot be resumed (a
        one-shot iterator).
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_iterator",
                                   allowed=options.TRAINING_KEYS)
        source = sources.iterable_source(
            iterable, text_column, buffer_size, on_bad_item, resolved.memory_limit is not None
        )
        check_choice("surrogates", surrogates, SURROGATE_MODES)
        return cls._trained(run.train([source], resolved, restart_counting=restart_counting,
                              surrogatepass=surrogates == "surrogatepass"))

    @classmethod
    @options.documented
    def train_from_files(
        cls,
        paths_or_globs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        vocab_size: int,
        *,
        documents: Literal["lines", "files", "separator"] = "lines",
        separator: str | bytes | None = None,
        text_column: str = "text",
        chunk_size: int = sources.DEFAULT_CHUNK_SIZE,
        restart_counting: bool = False,
        **opts: Unpack[TrainingOptions],
    ) -> Self:
        """Trains on files, read in chunks with bounded memory.

        Each path may be a glob (matches in sorted order; `**` matches any depth). By
        extension: `.jsonl` / `.ndjson` give the `text_column` field of each line,
        `.parquet` the `text_column` column of each row, anything else is plain text (any
        bytes; invalid UTF-8 is kept and counted in the loss ledger, and a file that is
        mostly not UTF-8 gets a TrainingWarning). Any of them may be compressed with gzip,
        zstd, xz or bzip2, recognised by the file's first bytes: a file named `.gz` (or
        `.zst`, `.xz`, `.bz2`) that does not hold that format, and an archive or a
        compression bytebpe does not read (zip, 7z, lz4), are errors naming the file. Plain text is split into documents by
        `documents`: "lines" (one per line, the line ending kept), "files" (one per file)
        or "separator" (the text between occurrences of `separator`, which is not part of
        the documents; an empty last document is dropped).

        The result is exactly that of `train_from_iterator` on the same documents:
        `chunk_size` (bytes read at a time, and the size past which a long document is
        cut at a safe point; see docs/design.md) never changes it. Under a custom regex
        `pattern`, or with a special token containing a newline, a long document is held
        whole in memory instead of being cut; under `memory_limit`, a document held past
        the budget's bound with no end and no safe cut raises `InputError` naming it.

        A missing or unreadable file, a JSON line that is not an object with a string
        `text_column`, a Parquet file without the column, or a compressed file cut short
        raises an error naming the file (and the line or offset). With `store`, what was
        counted before the error is kept: fix the file and call again to resume.
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_files",
                                   allowed=options.TRAINING_KEYS)
        read = sources.read_options(documents, separator, text_column, chunk_size, resolved.num_threads)
        paths = sources.expand_paths(paths_or_globs)
        return cls._trained(run.train(sources.file_sources(paths, read), resolved,
                              restart_counting=restart_counting))

    @classmethod
    @options.documented
    def train_from_stream(
        cls,
        stream: BinaryIO,
        vocab_size: int,
        *,
        documents: Literal["lines", "files", "separator"] = "lines",
        separator: str | bytes | None = None,
        format: Literal["text", "jsonl"] = "text",
        text_column: str = "text",
        chunk_size: int = sources.DEFAULT_CHUNK_SIZE,
        name: str = "<stream>",
        restart_counting: bool = False,
        **opts: Unpack[TrainingOptions],
    ) -> Self:
        """Trains on a readable binary stream (a pipe, `sys.stdin.buffer`,
        `socket.makefile("rb")`, an open file), read with `.read(chunk_size)` until it
        ends.

        The result equals `train_from_files` on a file holding the same bytes, with the
        same `documents`/`separator` (or, with `format="jsonl"`, one JSON object per
        line with a `text_column` string). `name` names the stream in errors. With
        `store`, an interrupted count resumes when the same bytes are streamed again
        (the counted documents are read past and checked).
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_stream",
                                   allowed=options.TRAINING_KEYS)
        read = sources.read_options(documents, separator, text_column, chunk_size, resolved.num_threads)
        kind = check_choice("format", format, ("text", "jsonl"))
        source = sources.StreamSource(stream, check_str("name", name), kind, read)
        return cls._trained(run.train([source], resolved, restart_counting=restart_counting))

    @classmethod
    @options.documented
    def train_from_counts(
        cls,
        counts: Mapping[str | bytes, int],
        vocab_size: int,
        **opts: Unpack[TrainingOptions],
    ) -> Self:
        """Trains on pre-counted words (each key is one word, not split further).

        Counts are ints in [0, 2**64). `pattern` is stored for encoding later. With a
        `memory_limit`, the mapping itself is the caller's memory, and pruning depends on
        the mapping's order.
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_counts",
                                   allowed=options.TRAINING_KEYS)
        return cls._trained(run.train_counts(counts, resolved))

    @classmethod
    @options.documented
    def train_from_ray(
        cls,
        dataset: Any,
        vocab_size: int,
        *,
        text_column: str = "text",
        surrogates: Literal["error", "surrogatepass"] = "error",
        on_bad_item: Literal["error", "skip"] = "error",
        fan_in: int = 8,
        max_retries: int = 3,
        **opts: Unpack[TrainingOptions],
    ) -> Self:
        """Trains on a `ray.data.Dataset` (`pip install 'bytebpe[ray]'`): its blocks are
        counted on the cluster, the partial counts joined exactly in a tree of `fan_in`
        at a time, and the merges made once here. The merges and the loss ledger equal
        `train_from_iterator`'s on the same documents in the same order, for any
        partitioning. `text_column`, `surrogates` and `on_bad_item` are as there; a task
        whose worker dies is retried `max_retries` times, then raises `ClusterError`; a
        bad row raises `BlockError` naming it. With `store`, a driver that crashed
        resumes without counting the recorded blocks again. Under `memory_limit` the
        exact total is pruned once before merging (docs/design.md, "The cluster path").
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_ray",
                                   allowed=options.TRAINING_KEYS)
        return cls._trained(cluster.train(
            dataset, resolved, text_column=check_str("text_column", text_column),
            surrogatepass=check_choice("surrogates", surrogates, SURROGATE_MODES) == "surrogatepass",
            skip_bad_items=check_choice("on_bad_item", on_bad_item, sources.BAD_ITEM_MODES) == "skip",
            fan_in=check_int("fan_in", fan_in, minimum=2),
            max_retries=check_int("max_retries", max_retries, minimum=0),
        ))

    @classmethod
    @options.documented
    def train_phases(
        cls,
        phases: Sequence[Phase],
        *,
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        min_frequency: int = 2,
        num_threads: int | None = None,
        max_token_length: int | None = None,
        base: Extendable | None = None,
        seed_merges: str | Sequence[str | bytes] | None = None,
        memory_limit: int | str | None = None,
        progress: bool = True,
        store: str | os.PathLike[str] | None = None,
        buffer_size: int = 8192,
        surrogates: Literal["error", "surrogatepass"] = "error",
        on_bad_item: Literal["error", "skip"] = "error",
        restart_counting: bool = False,
    ) -> Self:
        """Trains in phases, each extending the result of the one before with its own
        data and number of merges (e.g. English, then code, then multilingual text), so
        the largest corpus does not take the whole vocabulary.

        `phases` is a list of `bytebpe.Phase(data, merges)`. Seeds and special tokens come
        first; ids never move from one phase to the next. With `store` (a directory), each
        phase is its own run store (`phase-1.sqlite`, ...): calling again resumes, and a
        finished phase is not counted again (its data is only checked, as in
        `train_from_iterator`). `buffer_size`, `surrogates`, `on_bad_item` and
        `restart_counting` are those of `train_from_iterator`; the other keywords are the
        shared options below (`store` here is a directory).

        >>> tok = Tokenizer.train_phases(                              # doctest: +SKIP
        ...     [Phase(english, merges=20000), Phase(code, merges=12000)],
        ...     special_tokens=["<|endoftext|>"], store="runs/")
        """
        opts = options.SharedOptions(
            pattern=pattern, special_tokens=special_tokens, min_frequency=min_frequency,
            num_threads=num_threads, max_token_length=max_token_length, base=base,
            seed_merges=seed_merges, memory_limit=memory_limit, progress=progress,
        )
        check_int("buffer_size", buffer_size, minimum=1)
        check_choice("surrogates", surrogates, SURROGATE_MODES)
        check_choice("on_bad_item", on_bad_item, sources.BAD_ITEM_MODES)
        return cls._trained(phases_module.train_phases(
            phases, opts, store=store, buffer_size=buffer_size,
            surrogatepass=surrogates == "surrogatepass", skip_bad_items=on_bad_item == "skip",
            restart_counting=restart_counting,
        ))
