"""The public `Tokenizer`: training entry points, encoding, decoding, saving, interop.

Each method is a few lines over the layers below: `options` and `sources` check what the
caller gave, `run` trains, `interop` converts, and the native tokenizer encodes.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, NamedTuple

from bytebpe import (
    _bytebpe,
    arrays,
    cluster,
    documents,
    encode_file,
    file_format,
    interop,
    options,
    patterns,
    report_page,
    run,
    sources,
    special_policy,
    store,
)
from bytebpe import phases as phases_module
from bytebpe.checks import (
    check_choice,
    check_errors,
    check_int,
    check_optional_int,
    check_str,
    check_text,
    check_token_id,
    token_list,
)
from bytebpe.decoder import StreamingDecoder
from bytebpe.errors import TrainingWarning, UnknownTokenError
from bytebpe.ledger import DecodeLedger
from bytebpe.options import SharedOptions, TrainingOptions
from bytebpe.phases import Phase

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from typing_extensions import Unpack

__all__ = ["Merge", "StreamingDecoder", "Tokenizer", "TrainingWarning", "encode_to_file"]

SURROGATE_MODES = ("error", "surrogatepass")


class Merge(NamedTuple):
    """One training step: `left` and `right` joined into `token`, seen `count` times."""

    left: int
    right: int
    token: int
    count: int  # type: ignore[assignment]  # shadows tuple.count, as in the file format


class Tokenizer:
    """A byte-level BPE tokenizer. Immutable: safe to share between threads.

    Ids 0..255 are the bytes, merged tokens follow in training order, special tokens come
    last; an id equals its tiktoken rank.
    """

    __slots__ = ("_core", "_ledger", "_special_ids")

    def __init__(
        self, core: _bytebpe.CoreTokenizer, ledger: dict[str, Any] | None = None
    ) -> None:
        if not isinstance(core, _bytebpe.CoreTokenizer):
            raise TypeError(
                "Tokenizer is built by Tokenizer.train_from_iterator(...), "
                "Tokenizer.train_from_counts(...) or Tokenizer.load(path)"
            )
        self._core = core
        self._special_ids: dict[str, int] = dict(core.special_tokens)
        self._ledger = DecodeLedger(ledger)

    # ==================== Training

    @classmethod
    @options.documented
    def train_from_iterator(
        cls,
        iterable: Iterable[object],
        vocab_size: int,
        *,
        text_column: str = "text",
        buffer_size: int = 8192,
        surrogates: Literal["error", "surrogatepass"] = "error",
        on_bad_item: Literal["error", "skip"] = "error",
        restart_counting: bool = False,
        **opts: Unpack[TrainingOptions],
    ) -> Tokenizer:
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
        without reading the data again; during counting, by reading past the documents
        already counted (checked to be the same). `restart_counting=True` allows counting
        from scratch when an interrupted count cannot be resumed (a one-shot iterator).
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_iterator",
                                   allowed=options.TRAINING_KEYS)
        source = sources.iterable_source(
            iterable, text_column, buffer_size, on_bad_item, resolved.memory_limit is not None
        )
        check_choice("surrogates", surrogates, SURROGATE_MODES)
        return cls(*run.train([source], resolved, restart_counting=restart_counting,
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
    ) -> Tokenizer:
        """Trains on files, read in chunks with bounded memory.

        Each path may be a glob (matches in sorted order; `**` matches any depth). By
        extension: `.jsonl` / `.ndjson` give the `text_column` field of each line,
        `.parquet` the `text_column` column of each row, anything else is plain text (any
        bytes; invalid UTF-8 is kept and counted in the loss ledger). Any of them may be
        compressed: `.gz` or `.zst`/`.zstd`. Plain text is split into documents by
        `documents`: "lines" (one per line, the line ending kept), "files" (one per file)
        or "separator" (the text between occurrences of `separator`, which is not part of
        the documents; an empty last document is dropped).

        The result is exactly that of `train_from_iterator` on the same documents:
        `chunk_size` (bytes read at a time, and the size past which a long document is
        cut at a safe point; see docs/design.md) never changes it. Under a custom regex
        `pattern`, or with a special token containing a newline, a long document is held
        whole in memory instead of being cut.

        A missing or unreadable file, a JSON line that is not an object with a string
        `text_column`, a Parquet file without the column, or a compressed file cut short
        raises an error naming the file (and the line or offset). With `store`, what was
        counted before the error is kept: fix the file and call again to resume.
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_files",
                                   allowed=options.TRAINING_KEYS)
        read = sources.read_options(documents, separator, text_column, chunk_size, resolved.num_threads)
        paths = sources.expand_paths(paths_or_globs)
        return cls(*run.train(sources.file_sources(paths, read), resolved,
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
    ) -> Tokenizer:
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
        return cls(*run.train([source], resolved, restart_counting=restart_counting))

    @classmethod
    @options.documented
    def train_from_counts(
        cls,
        counts: Mapping[str | bytes, int],
        vocab_size: int,
        **opts: Unpack[TrainingOptions],
    ) -> Tokenizer:
        """Trains on pre-counted words (each key is one word, not split further).

        Counts are ints in [0, 2**64). `pattern` is stored for encoding later. With a
        `memory_limit`, the mapping itself is the caller's memory, and pruning depends on
        the mapping's order.
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_counts",
                                   allowed=options.TRAINING_KEYS)
        return cls(*run.train_counts(counts, resolved))

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
    ) -> Tokenizer:
        """Trains on a `ray.data.Dataset` (`pip install 'bytebpe[ray]'`): its blocks are
        counted on the cluster, the partial counts joined exactly in a tree of `fan_in`
        at a time, and the merges made once here. The merges and the loss ledger equal
        `train_from_iterator`'s on the same documents in the same order, for any
        partitioning. `text_column`, `surrogates` and `on_bad_item` are as there; a task
        whose worker dies is retried `max_retries` times. With `store`, a driver that
        crashed resumes without counting the recorded blocks again. Under
        `memory_limit` the exact total is pruned once before merging (docs/design.md,
        "The cluster path").
        """
        resolved = options.resolve(vocab_size, opts, entry="train_from_ray",
                                   allowed=options.TRAINING_KEYS)
        return cls(*cluster.train(
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
        store: str | os.PathLike[str] | None = None,
        buffer_size: int = 8192,
        surrogates: Literal["error", "surrogatepass"] = "error",
        on_bad_item: Literal["error", "skip"] = "error",
        restart_counting: bool = False,
        **opts: Unpack[SharedOptions],
    ) -> Tokenizer:
        """Trains in phases, each extending the result of the one before with its own
        data and number of merges (e.g. English, then code, then multilingual text), so
        the largest corpus does not take the whole vocabulary.

        `phases` is a list of `bytebpe.Phase(data, merges)`. Seeds and special tokens come
        first; ids never move from one phase to the next. With `store` (a directory), each
        phase is its own run store (`phase-1.sqlite`, ...): calling again resumes, and a
        finished phase is not read again. `buffer_size`, `surrogates`, `on_bad_item` and
        `restart_counting` are those of `train_from_iterator`.
        """
        options.check_keys(opts, entry="train_phases", allowed=options.SHARED_KEYS)
        check_int("buffer_size", buffer_size, minimum=1)
        check_choice("surrogates", surrogates, SURROGATE_MODES)
        check_choice("on_bad_item", on_bad_item, sources.BAD_ITEM_MODES)
        return cls(*phases_module.train_phases(
            phases, opts, store=store, buffer_size=buffer_size,
            surrogatepass=surrogates == "surrogatepass", skip_bad_items=on_bad_item == "skip",
            restart_counting=restart_counting,
        ))

    # ==================== Properties

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex (built-in names resolved to tiktoken's `pat_str`)."""
        return self._core.pattern

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_ids)

    @property
    def vocab_size(self) -> int:
        """All tokens: 256 bytes + merged tokens + special tokens."""
        return self._core.vocab_size

    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> id for every non-special token (tiktoken's `mergeable_ranks`)."""
        return self._core.mergeable_ranks()

    def merges(self) -> list[Merge]:
        """The training log: every merge in order, with its count."""
        return [Merge(*m) for m in self._core.merges()]

    def token_bytes(self, token: int) -> bytes:
        return self._core.token_bytes(check_token_id(token, 0))

    def verify(self) -> list[str]:
        """Checks the vocabulary's invariants; returns the problems (empty when sound).

        Always true by construction: all 256 bytes are tokens, no byte string twice, ids
        contiguous. Checked here: every token is reachable (encoding its own bytes by
        merge rank, without the whole-piece shortcut, gives exactly that token).
        """
        return self._core.verify()

    # ==================== Encoding

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encodes text; special tokens follow tiktoken's rules.

        Text equal to a special token raises ValueError unless the token is in
        `allowed_special` (then it becomes its id) or left out of `disallowed_special`
        (then it is encoded as ordinary text).
        """
        allowed = special_policy.allowed_in(
            check_text(text), self._special_ids, allowed_special, disallowed_special
        )
        if not allowed:
            return self._core.encode_ordinary(text)
        return self._core.encode(text, allowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text, treating special-token text as ordinary text."""
        return self._core.encode_ordinary(check_text(text))

    def encode_bytes(self, data: bytes) -> list[int]:
        """Encodes any bytes; invalid UTF-8 becomes byte tokens, so decoding gives it back."""
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"encode_bytes takes bytes, not {type(data).__name__}")
        return self._core.encode_bytes(data)

    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """Encodes many texts in parallel (ordinary encoding), GIL released."""
        if isinstance(texts, str):
            raise TypeError("encode_batch takes a list of str; for one text use encode()")
        texts = list(texts)
        for i, text in enumerate(texts):
            check_text(text, f"texts[{i}]")
        threads = check_optional_int("num_threads", num_threads, minimum=1)
        return self._core.encode_ordinary_batch(texts, threads)

    def encode_batch_numpy(
        self,
        texts: Sequence[str | bytes],
        *,
        dtype: object = None,
        eot: str | int | None = None,
        num_threads: int | None = None,
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """Encodes many texts (or bytes) into one flat NumPy array plus int64 offsets:
        document `i` is `tokens[offsets[i]:offsets[i + 1]]`. No Python lists are built.

        `dtype` defaults to uint16 when every id fits, else uint32; `eot` (a special
        token or id) is appended after every document.
        """
        import numpy as np  # an optional dependency, needed only here

        name, itemsize = arrays.itemsize_for(self.vocab_size, dtype)
        eot_token = arrays.eot_id(self.vocab_size, self._special_ids, eot)
        threads = check_optional_int("num_threads", num_threads, minimum=1)
        docs = list(documents.iter_documents(texts, "text", len(texts) or 1))
        flat, offsets = encode_file.flat_tokens(self._core, docs, itemsize, eot_token, threads)
        return np.frombuffer(flat, dtype=name), np.frombuffer(offsets, dtype=np.int64)

    def encode_to_file(
        self,
        documents: object,
        path: str | os.PathLike[str],
        *,
        dtype: object = None,
        eot: str | int | None = None,
        text_column: str = "text",
        batch_size: int = 1024,
        num_threads: int | None = None,
        progress: bool = True,
    ) -> int:
        """Encodes `documents` (anything `train_from_iterator` accepts, or
        `bytebpe.read_files(...)`) into a flat token file at `path` (nanoGPT's `.bin`:
        ids back to back, uint16 or uint32); returns the token count.

        `eot` (a special token's text or an id) is written after every document. The file
        appears only when complete (written to a temporary name, then renamed).
        """
        return encode_file.write_token_file(
            self._core, documents, path, dtype=dtype, eot=eot, text_column=text_column,
            batch_size=batch_size, num_threads=num_threads, progress=progress,
        )

    # ==================== Decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of `tokens` (special tokens give their text)."""
        tokens = token_list(tokens)
        try:
            return self._core.decode_bytes(tokens)
        except (TypeError, OverflowError, UnknownTokenError):
            self._ledger.add("unknown_ids", 1)
            for position, token in enumerate(tokens):
                check_token_id(token, position)
            raise

    def _text(self, data: bytes, errors: str) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            if errors == "strict":
                raise
        self._ledger.add(f"bytes_{errors}d", _bytebpe.count_invalid_utf8(data))
        return data.decode("utf-8", errors)

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        errors: Literal["strict", "replace", "ignore"] = "strict",
        num_threads: int | None = None,
    ) -> list[str]:
        """Decodes many token lists in parallel."""
        check_errors(errors)
        lists = [token_list(tokens) for tokens in batch]
        try:
            decoded = self._core.decode_bytes_batch(lists, num_threads)
        except (TypeError, OverflowError, UnknownTokenError):
            for tokens in lists:
                self.decode_bytes(tokens)
            raise
        return [self._text(data, errors) for data in decoded]

    def decoder(self, errors: Literal["strict", "replace", "ignore"] = "strict") -> StreamingDecoder:
        """A decoder for token-by-token generation: `feed(ids)` returns only complete
        characters, `flush()` the rest, so a character split across tokens is never
        garbled."""
        check_errors(errors)
        return StreamingDecoder(self.decode_bytes, self._text, errors)

    def decode(
        self, tokens: Sequence[int], errors: Literal["strict", "replace", "ignore"] = "strict"
    ) -> str:
        """The text of `tokens`. Bytes that are not valid UTF-8 raise by default
        (`errors="strict"`); "replace" puts U+FFFD in their place, "ignore" drops them."""
        check_errors(errors)
        return self._text(self.decode_bytes(tokens), errors)

    # ==================== Interop

    def to_tiktoken(self, name: str = "bytebpe") -> Any:
        """A `tiktoken.Encoding` with identical ids (needs tiktoken installed)."""
        return interop.tiktoken.to_tiktoken(self._core, name)

    def save_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Writes the `.tiktoken` ranks file plus a `<path>.json` sidecar holding what the
        format cannot (pattern, special tokens) and the ranks file's hash."""
        interop.tiktoken.save_tiktoken(self._core, path)

    @classmethod
    def from_tiktoken(
        cls,
        source: Any,
        *,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Tokenizer:
        """From a `tiktoken.Encoding`, or a `.tiktoken` ranks file (its sidecar gives
        the pattern and special tokens; else pass them)."""
        return cls(interop.tiktoken.from_tiktoken(source, pattern, special_tokens))

    def to_huggingface(self) -> Any:
        """A `tokenizers.Tokenizer` with identical ids (needs tokenizers installed)."""
        return interop.huggingface.to_huggingface(self._core)

    def save_huggingface(self, path: str | os.PathLike[str]) -> None:
        """Writes a `tokenizer.json` (also loadable by transformers'
        `PreTrainedTokenizerFast(tokenizer_file=...)`)."""
        interop.huggingface.save_huggingface(self._core, path)

    @classmethod
    def from_huggingface(cls, source: Any) -> Tokenizer:
        """From a byte-level BPE `tokenizer.json` path, its JSON text, or a
        `tokenizers.Tokenizer`."""
        return cls(interop.huggingface_import.from_huggingface(source))

    # ==================== The loss ledger

    def loss_report(self) -> dict[str, Any]:
        """What training saw and could not keep as ordinary text (invalid UTF-8 by kind
        with the first offsets, lone surrogates, unmatched bytes, cut pieces, rejected
        items, dropped word mass), and what decoding with this tokenizer replaced,
        ignored or could not find. A clean run shows zeros."""
        return self._ledger.report()

    def report(
        self,
        eval: report_page.EvalSpec = None,  # the name report users know (shadows the builtin)
        baseline: Tokenizer | None = None,
        *,
        max_eval_bytes: int = report_page.DEFAULT_MAX_BYTES,
        title: str | None = None,
    ) -> report_page.Report:
        """An interactive HTML report of this tokenizer: its merge tree, growth,
        compression and fairness on `eval` sets ({name: files, a glob or documents}; the
        bundled held-out sample by default), composition, health and losses, compared
        with `baseline` when given. Shows inline in Jupyter; `.save(path)` writes the
        page (self-contained, no network). Needs numpy (`bytebpe[report]`)."""
        return report_page.build_report(
            self, eval, baseline, max_eval_bytes=max_eval_bytes, title=title
        )

    # ==================== Saving and loading

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes a self-describing file: merges, pattern, special tokens, format version,
        and the training ledger."""
        file_format.save(self._core, path, self._ledger.training)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, vocab_size: int | None = None) -> Tokenizer:
        """Reads a tokenizer file written by `save`, or a run store (also while a run is
        still writing it). `vocab_size` takes the tokenizer of the first merges only
        (special tokens included in the count). A foreign or damaged file raises
        CorruptTokenizerError."""
        check_optional_int("vocab_size", vocab_size, minimum=256)
        if store.is_store_file(path):
            core, ledger = file_format.from_store(store.read(path, with_snapshot=False),
                                                  repr(os.fspath(path)), vocab_size)
        else:
            core, ledger = file_format.load(path, vocab_size)
        return cls(core, ledger)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_from_state, (file_format.to_state(self._core, self._ledger.training),))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return file_format.to_state(self._core) == file_format.to_state(other._core)

    __hash__ = None  # type: ignore[assignment]

    @property
    def pattern_name(self) -> str | None:
        """The built-in name of the pattern ("gpt2", "cl100k", "o200k"), or None."""
        return patterns.pattern_name(self.pattern)

    def __repr__(self) -> str:
        pattern = self.pattern_name or self.pattern
        return (
            f"Tokenizer(vocab_size={self.vocab_size}, pattern={pattern!r}, "
            f"special_tokens={list(self._special_ids)})"
        )


def encode_to_file(
    tokenizer: Tokenizer,
    documents: object,
    path: str | os.PathLike[str],
    *,
    dtype: object = None,
    eot: str | int | None = None,
    text_column: str = "text",
    batch_size: int = 1024,
    num_threads: int | None = None,
    progress: bool = True,
) -> int:
    """`tokenizer.encode_to_file(documents, path, ...)`: see `Tokenizer.encode_to_file`."""
    return tokenizer.encode_to_file(
        documents, path, dtype=dtype, eot=eot, text_column=text_column,
        batch_size=batch_size, num_threads=num_threads, progress=progress,
    )


def _from_state(state: dict[str, Any]) -> Tokenizer:
    return Tokenizer(*file_format.from_state(state, "pickled tokenizer"))
