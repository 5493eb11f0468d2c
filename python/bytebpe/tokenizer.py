"""The public `Tokenizer`: training entry points, encoding, decoding, saving."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any, BinaryIO, Literal, NamedTuple

from bytebpe import _bytebpe, documents, file_format, files, interop, patterns, store, training
from bytebpe import phases as phases_module
from bytebpe._bytebpe import UnknownTokenError
from bytebpe.ledger import DecodeLedger
from bytebpe.phases import Phase
from bytebpe.store import RunStore
from bytebpe.training import TrainingWarning

__all__ = ["Merge", "StreamingDecoder", "Tokenizer", "TrainingWarning"]

class Merge(NamedTuple):
    """One training step: `left` and `right` joined into `token`, seen `count` times."""

    left: int
    right: int
    token: int
    count: int


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
    def train_from_iterator(
        cls,
        iterable: Any,
        vocab_size: int,
        *,
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        min_frequency: int = 2,
        num_threads: int | None = None,
        buffer_size: int = 8192,
        text_column: str = "text",
        surrogates: Literal["error", "surrogatepass"] = "error",
        on_bad_item: Literal["error", "skip"] = "error",
        max_token_length: int | None = None,
        store: str | os.PathLike[str] | RunStore | None = None,
        restart_counting: bool = False,
        base: Tokenizer | None = None,
        seed_merges: str | Sequence[str | bytes] | None = None,
        memory_limit: int | str | None = None,
        progress: bool = True,
    ) -> Tokenizer:
        """Trains on documents from any iterable.

        Items may be `str`, `bytes` (any bytes; invalid UTF-8 is kept byte by byte), lists
        of those (batches), or dict rows whose `text_column` holds the text; a
        `datasets.Dataset` or `IterableDataset` can be passed directly. `pattern` is a
        built-in name ("gpt2", "cl100k", "o200k") or any regex (default "cl100k", or the
        pattern of `base`). Training stops at
        `vocab_size` tokens (special tokens included) or when no pair occurs
        `min_frequency` times.

        A `str` with lone surrogates is refused unless `surrogates="surrogatepass"`, which
        keeps them as their surrogatepass bytes (decode with
        `decode_bytes(...).decode("utf-8", "surrogatepass")`). An item of another type is a
        TypeError unless `on_bad_item="skip"`, which skips it and counts it in the loss
        ledger. `max_token_length` (bytes) cuts longer pieces so no token is longer.

        With `store` (a path or a `RunStore`), the run is kept in an SQLite file: counting
        checkpoints and merges are committed as they are made, and calling again with the
        same store resumes after a crash, ending with exactly the merges of an
        uninterrupted run. `restart_counting=True` allows counting from scratch when an
        interrupted count cannot be resumed (a one-shot iterator).

        With `base` (a Tokenizer: trained, or loaded from a bytebpe file, a tiktoken ranks
        file or a `tokenizer.json`), training extends it: every existing id stays, the
        documents are segmented by `base`'s own rank-ordered BPE, and new merges are
        appended until `vocab_size` (counting `base`'s tokens). New ids skip `base`'s
        special-token ids; new special tokens come after every id. `seed_merges` (a preset:
        "digits", "whitespace", "code", joined by commas; or a list of strings) makes those
        tokens first, before any counted merge (see `bytebpe.seeds`).

        `memory_limit` (bytes, or a string like "2GB", "1.5GiB", "500MB"; at least 64 MiB)
        bounds the peak resident memory of the whole process to the limit plus 16 MiB,
        counting 48 MiB for the interpreter and libraries (memory the caller holds beyond
        that, such as a list of all documents, is not bytebpe's to bound: stream the
        input). Word counts stay exact while they fit; past that the rarest words are
        dropped at fixed points of the input, and what was dropped is counted in
        `loss_report()` (`dropped_word_mass`, `dropped_bytes`).
        Below the limit the merges are exactly those of a run without one. The result
        depends on the limit and the order of the documents, never on batching or threads.
        """
        s = training.settings(
            vocab_size, pattern=pattern, special_tokens=special_tokens,
            min_frequency=min_frequency, num_threads=num_threads,
            max_token_length=max_token_length, progress=progress, store_arg=store,
            buffer_size=buffer_size, base=base, seed_merges=seed_merges,
            memory_limit=memory_limit,
        )
        training.check_choice("surrogates", surrogates, training.SURROGATE_MODES)
        training.check_choice("on_bad_item", on_bad_item, training.BAD_ITEM_MODES)
        core, ledger = training.train_documents(
            iterable, s, buffer_size=buffer_size, text_column=text_column,
            surrogatepass=surrogates == "surrogatepass", skip_bad_items=on_bad_item == "skip",
            restart_counting=restart_counting,
        )
        return cls(core, ledger)

    @classmethod
    def train_from_files(
        cls,
        paths_or_globs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        vocab_size: int,
        *,
        documents: Literal["lines", "files", "separator"] = "lines",
        separator: str | bytes | None = None,
        text_column: str = "text",
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        min_frequency: int = 2,
        num_threads: int | None = None,
        max_token_length: int | None = None,
        store: str | os.PathLike[str] | RunStore | None = None,
        restart_counting: bool = False,
        base: Tokenizer | None = None,
        seed_merges: str | Sequence[str | bytes] | None = None,
        memory_limit: int | str | None = None,
        chunk_size: int = files.DEFAULT_CHUNK_SIZE,
        progress: bool = True,
    ) -> Tokenizer:
        """Trains on files, read in chunks with bounded memory.

        Each path may be a glob (matches in sorted order). By extension: `.jsonl` /
        `.ndjson` give the `text_column` field of each line, `.parquet` the `text_column`
        column of each row, anything else is plain text (any bytes; invalid UTF-8 is kept
        and counted in the loss ledger). Any of them may be compressed: `.gz` or
        `.zst`/`.zstd`. Plain text is split into documents by `documents`: "lines" (one
        per line, the line ending kept), "files" (one per file) or "separator" (the text
        between occurrences of `separator`, which is not part of the documents; an empty
        last document is dropped).

        The result is exactly that of `train_from_iterator` on the same documents:
        `chunk_size` (bytes read at a time, and the size past which a long document is
        cut at a safe point; see docs/design.md) never changes it. Under a custom regex
        `pattern`, or with a special token containing a newline, a long document is held
        whole in memory instead of being cut.

        A missing or unreadable file, a JSON line that is not an object with a string
        `text_column`, a Parquet file without the column, or a compressed file cut short
        raises an error naming the file (and the line or offset). With `store`, what was
        counted before the error is kept: fix the file and call again to resume.
        Other options are those of `train_from_iterator`.
        """
        s = training.settings(
            vocab_size, pattern=pattern, special_tokens=special_tokens,
            min_frequency=min_frequency, num_threads=num_threads,
            max_token_length=max_token_length, progress=progress, store_arg=store,
            base=base, seed_merges=seed_merges, memory_limit=memory_limit,
        )
        sep = files.check_documents(documents, separator)
        training.check_int("chunk_size", chunk_size, minimum=1)
        paths = files.expand_paths(paths_or_globs)
        cuts = _bytebpe.WordCounter(s.pattern, s.special_tokens).cuts_allowed
        sources = files.file_sources(
            paths, documents=documents, separator=sep, text_column=text_column,
            chunk_size=chunk_size, cuts=cuts, num_threads=num_threads,
        )
        core, ledger = files.train_sources(sources, s, restart_counting=restart_counting)
        return cls(core, ledger)

    @classmethod
    def train_from_stream(
        cls,
        stream: BinaryIO,
        vocab_size: int,
        *,
        documents: Literal["lines", "files", "separator"] = "lines",
        separator: str | bytes | None = None,
        format: Literal["text", "jsonl"] = "text",
        text_column: str = "text",
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        min_frequency: int = 2,
        num_threads: int | None = None,
        max_token_length: int | None = None,
        store: str | os.PathLike[str] | RunStore | None = None,
        restart_counting: bool = False,
        base: Tokenizer | None = None,
        seed_merges: str | Sequence[str | bytes] | None = None,
        memory_limit: int | str | None = None,
        chunk_size: int = files.DEFAULT_CHUNK_SIZE,
        name: str = "<stream>",
        progress: bool = True,
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
        s = training.settings(
            vocab_size, pattern=pattern, special_tokens=special_tokens,
            min_frequency=min_frequency, num_threads=num_threads,
            max_token_length=max_token_length, progress=progress, store_arg=store,
            base=base, seed_merges=seed_merges, memory_limit=memory_limit,
        )
        sep = files.check_documents(documents, separator)
        training.check_choice("format", format, ("text", "jsonl"))
        training.check_int("chunk_size", chunk_size, minimum=1)
        jsonl = format == "jsonl"
        cuts = _bytebpe.WordCounter(s.pattern, s.special_tokens).cuts_allowed
        reader = _bytebpe.DocumentReader(
            None, name, "lines" if jsonl else documents, None if jsonl else sep,
            text_column if jsonl else None, cuts, chunk_size, num_threads,
        )
        source = files.StreamSource(stream, reader, chunk_size)
        core, ledger = files.train_sources([source], s, restart_counting=restart_counting)
        return cls(core, ledger)

    @classmethod
    def train_from_counts(
        cls,
        counts: Mapping[str | bytes, int],
        vocab_size: int,
        *,
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        min_frequency: int = 2,
        num_threads: int | None = None,
        max_token_length: int | None = None,
        store: str | os.PathLike[str] | RunStore | None = None,
        base: Tokenizer | None = None,
        seed_merges: str | Sequence[str | bytes] | None = None,
        memory_limit: int | str | None = None,
        progress: bool = True,
    ) -> Tokenizer:
        """Trains on pre-counted words (each key is one word, not split further).

        Counts are ints in [0, 2**64). `pattern` is stored for encoding later. `store`,
        `base`, `seed_merges` and `memory_limit` work as in `train_from_iterator` (the
        mapping itself is the caller's memory; with a limit, pruning depends on the
        mapping's order).
        """
        s = training.settings(
            vocab_size, pattern=pattern, special_tokens=special_tokens,
            min_frequency=min_frequency, num_threads=num_threads,
            max_token_length=max_token_length, progress=progress, store_arg=store,
            base=base, seed_merges=seed_merges, memory_limit=memory_limit,
        )
        core, ledger = training.train_counts(counts, s)
        return cls(core, ledger)

    @classmethod
    def train_phases(
        cls,
        phases: Sequence[Phase],
        *,
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        base: Tokenizer | None = None,
        seed_merges: str | Sequence[str | bytes] | None = None,
        memory_limit: int | str | None = None,
        store: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> Tokenizer:
        """Trains in phases, each extending the result of the one before with its own
        data and number of merges (e.g. English, then code, then multilingual text), so
        the largest corpus does not take the whole vocabulary.

        `phases` is a list of `bytebpe.Phase(data, merges)`. Seeds and special tokens come
        first; ids never move from one phase to the next. With `store` (a directory), each
        phase is its own run store (`phase-1.sqlite`, ...): calling again resumes, and a
        finished phase is not read again. Other options (min_frequency, num_threads,
        buffer_size, max_token_length, progress, ...) are those of `train_from_iterator`.
        """
        return phases_module.train_phases(
            cls, phases, base=base, seed_merges=seed_merges, memory_limit=memory_limit,
            special_tokens=special_tokens,
            pattern=pattern, store=store, **options,
        )

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
        return self._core.token_bytes(_check_id(token, 0))

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
        _check_text(text)
        allowed = set(self._special_ids) if allowed_special == "all" else set(allowed_special)
        if disallowed_special == "all":
            disallowed = set(self._special_ids) - allowed
        else:
            disallowed = set(disallowed_special)
        for token in disallowed:
            if token in text:
                raise ValueError(
                    f"the text contains the special token {token!r}. To encode it as the "
                    f"special token, pass allowed_special={{{token!r}}} (or 'all'); to "
                    f"encode it as ordinary text, pass disallowed_special=() or leave "
                    f"{token!r} out of disallowed_special."
                )
        if not allowed:
            return self.encode_ordinary(text)
        return _call(self._core.encode, text, allowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text, treating special-token text as ordinary text."""
        _check_text(text)
        return _call(self._core.encode_ordinary, text)

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
            _check_text(text, f"texts[{i}]")
        if num_threads is not None:
            training.check_int("num_threads", num_threads, minimum=1)
        return _call(self._core.encode_ordinary_batch, texts, num_threads)

    def encode_batch_numpy(
        self,
        texts: Sequence[str | bytes],
        *,
        dtype: Any = None,
        eot: str | int | None = None,
        num_threads: int | None = None,
    ) -> tuple[Any, Any]:
        """Encodes many texts (or bytes) into one flat NumPy array plus int64 offsets:
        document `i` is `tokens[offsets[i]:offsets[i + 1]]`. No Python lists are built.

        `dtype` defaults to uint16 when every id fits, else uint32; `eot` (a special
        token or id) is appended after every document.
        """
        import numpy as np

        from bytebpe import encode_file

        name, itemsize = encode_file.itemsize_for(self, dtype)
        eot_token = encode_file.eot_id(self, eot)
        docs = list(documents.iter_documents(texts, "text", len(texts) or 1))
        try:
            flat, offsets = self._core.encode_batch_flat(docs, itemsize, eot_token, num_threads)
        except UnicodeEncodeError:
            raise documents.surrogate_error(docs, 0) from None
        return np.frombuffer(flat, dtype=name), np.frombuffer(offsets, dtype=np.int64)

    # ==================== Decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of `tokens` (special tokens give their text)."""
        tokens = _as_token_list(tokens)
        try:
            return self._core.decode_bytes(tokens)
        except (TypeError, OverflowError, UnknownTokenError):
            self._ledger.add("unknown_ids", 1)
            for position, token in enumerate(tokens):
                _check_id(token, position)
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
        _check_errors(errors)
        lists = [_as_token_list(tokens) for tokens in batch]
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
        _check_errors(errors)
        return StreamingDecoder(self, errors)

    def decode(
        self, tokens: Sequence[int], errors: Literal["strict", "replace", "ignore"] = "strict"
    ) -> str:
        """The text of `tokens`. Bytes that are not valid UTF-8 raise by default
        (`errors="strict"`); "replace" puts U+FFFD in their place, "ignore" drops them."""
        _check_errors(errors)
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
        if vocab_size is not None:
            training.check_config(vocab_size, (), 1, None)
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


class StreamingDecoder:
    """Incremental decoding for generation; see `Tokenizer.decoder`."""

    def __init__(self, tokenizer: Tokenizer, errors: str) -> None:
        self._tokenizer = tokenizer
        self._errors = errors
        self._pending = b""  # the start of a character whose other bytes are still to come

    def feed(self, tokens: int | Sequence[int]) -> str:
        """Adds tokens; returns the text of every character they complete."""
        if isinstance(tokens, int):
            tokens = [tokens]
        data = self._pending + self._tokenizer.decode_bytes(tokens)
        keep = _bytebpe.incomplete_utf8_tail(data)
        self._pending = data[len(data) - keep :]
        return self._tokenizer._text(data[: len(data) - keep], self._errors)

    def flush(self) -> str:
        """Ends the stream: returns what is left (an unfinished character raises under
        "strict", becomes U+FFFD under "replace", disappears under "ignore")."""
        data, self._pending = self._pending, b""
        return self._tokenizer._text(data, self._errors)


def _from_state(state: dict[str, Any]) -> Tokenizer:
    return Tokenizer(*file_format.from_state(state, "pickled tokenizer"))


def _call(method: Any, text: Any, *args: Any) -> Any:
    try:
        return method(text, *args)
    except UnicodeEncodeError as e:  # only reachable through a list of texts
        raise ValueError(f"text contains a lone surrogate: {e}") from None


def _check_text(text: object, name: str = "text") -> None:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, not {type(text).__name__} (use encode_bytes for bytes)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"{name} contains a lone surrogate at character {e.start}, which is not valid text; "
            "encode text.encode('utf-8', 'surrogatepass') with encode_bytes to keep it "
            "reversibly"
        ) from None


def _check_errors(errors: object) -> None:
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors={errors!r}; choose 'strict', 'replace' or 'ignore'")


def _as_token_list(tokens: Any) -> Any:
    """NumPy integer arrays become lists; other arrays are refused by dtype."""
    dtype = getattr(tokens, "dtype", None)
    if dtype is not None and hasattr(tokens, "tolist"):
        if dtype.kind not in "iu":
            raise TypeError(f"token arrays must have an integer dtype, not {dtype}")
        return tokens.tolist()
    return tokens


def _check_id(token: object, position: int) -> int:
    if isinstance(token, bool) or not isinstance(token, int):
        raise TypeError(f"token at position {position} is {type(token).__name__}, expected int")
    if not 0 <= token < 2**32:
        raise UnknownTokenError(f"unknown token id {token} at position {position}")
    return token
