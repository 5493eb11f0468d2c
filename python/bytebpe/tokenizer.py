"""The public `Tokenizer`: encoding, saving, loading, imports; its bases bring the rest:
the training entry points (`training.Training`), decoding (`decoding.Decoding`), the
exports to tiktoken and Hugging Face (`exports.Exports`), and tiktoken's and Hugging
Face's names (`names.FamiliarNames`).

Each method is a few lines over the layers below: `options` and `sources` check what the
caller gave, `run` trains, `interop` converts, `loading` recognises files, and the native
tokenizer encodes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from bytebpe import (
    _bytebpe,
    arrays,
    documents,
    encode_file,
    file_format,
    interop,
    loading,
    patterns,
    report_page,
    special_policy,
)
from bytebpe.checks import (
    check_optional_int,
    check_str,
    check_text,
    check_text_type,
    check_threads,
    check_token_id,
)
from bytebpe.decoder import StreamingDecoder
from bytebpe.decoding import Decoding
from bytebpe.documents import TrainingData
from bytebpe.errors import TrainingWarning
from bytebpe.exports import Exports
from bytebpe.ledger import DecodeLedger, LossReport
from bytebpe.names import Encoding, FamiliarNames, encoding_of
from bytebpe.training import Training

# The default `allowed_special`: known by identity, so a call with the defaults skips
# working out its rules again.
NO_SPECIALS: frozenset[str] = frozenset()

if TYPE_CHECKING:
    import numpy as np
    import tiktoken
    from numpy.typing import NDArray

__all__ = [
    "Encoding", "Merge", "StreamingDecoder", "Tokenizer", "TrainingWarning", "encode_to_file",
]

T = TypeVar("T")


class Merge(NamedTuple):
    """One training step: `left` and `right` joined into `token`, seen `count` times."""

    left: int
    right: int
    token: int
    count: int  # type: ignore[assignment]  # shadows tuple.count, as in the file format


class Tokenizer(Training, Decoding, Exports, FamiliarNames):
    """A byte-level BPE tokenizer. Immutable: safe to share between threads.

    Ids 0..255 are the bytes, merged tokens follow in training order, special tokens come
    last; an id equals its tiktoken rank.
    """

    __slots__ = ("_core", "_default_rules", "_key", "_ledger", "_special_ids")

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
        # The rules of a call with the default arguments, worked out once: most calls
        # use them, and working them out costs more than encoding a short text.
        self._default_rules = special_policy.policy(self._special_ids, NO_SPECIALS, "all")
        self._ledger = DecodeLedger(ledger)
        self._ranks = None  # token bytes -> id, made when needed (`FamiliarNames`)
        self._key: tuple[object, ...] | None = None  # what equality and hash compare

    @classmethod
    def _trained(cls, trained: tuple[_bytebpe.CoreTokenizer, dict[str, Any]]) -> Tokenizer:
        return cls(*trained)

    # ==================== Properties

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex (built-in names resolved to tiktoken's `pat_str`)."""
        return self._core.pattern

    @property
    def pattern_name(self) -> str | None:
        """The built-in name of the pattern ("gpt2", "cl100k", "o200k"), or None."""
        return patterns.pattern_name(self.pattern)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token text -> id."""
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
        """The bytes of one token (a special token gives its text)."""
        return self._core.token_bytes(check_token_id(token, 0))

    def verify(self) -> list[str]:
        """Checks the vocabulary's invariants; returns the problems (empty when sound).

        Always true by construction: all 256 bytes are tokens, no byte string twice, ids
        contiguous. Checked here: every token is reachable (encoding its own bytes by
        merge rank, without the whole-piece shortcut, gives exactly that token).
        """
        return self._core.verify()

    # ==================== Hugging Face's encoding with offsets

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> Encoding:
        """`encode` with each token's string and character span, as Hugging Face's
        `Encoding` (`.ids`, `.tokens`, `.offsets`).

        >>> enc = tok.encode_with_offsets("hello world")   # doctest: +SKIP
        >>> enc.tokens, enc.offsets                          # doctest: +SKIP
        (['hello', 'Ġworld'], [(0, 5), (5, 11)])
        """
        ids = self.encode(text, allowed_special=allowed_special,
                          disallowed_special=disallowed_special)
        return encoding_of(self._core, text, ids)

    # ==================== Encoding

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encodes text; special tokens follow tiktoken's rules.

        Text equal to a special token raises ValueError unless the token is in
        `allowed_special` (then it becomes its id) or left out of `disallowed_special`
        (then it is encoded as ordinary text).
        """
        return self._encode_checked(text, allowed_special, disallowed_special, self._core.encode)

    def _encode_checked(
        self,
        text: str,
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
        encode: Callable[[str, set[str] | None], T],
    ) -> T:
        """`encode(text, allowed)` (a core call; `allowed`: the special tokens to encode as
        their ids, None for none) once `text` passes the special-token rules."""
        rules = self._rules(allowed_special, disallowed_special)
        special_policy.check(check_text_type(text), rules.disallowed)
        try:
            return encode(text, set(rules.allowed) if rules.allowed else None)
        except UnicodeEncodeError:
            check_text(text)  # raises its message; the core refused a lone surrogate
            raise

    def _rules(
        self,
        allowed_special: Literal["all"] | Collection[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> special_policy.SpecialPolicy:
        if allowed_special is NO_SPECIALS and isinstance(disallowed_special, str) and disallowed_special == "all":
            return self._default_rules
        return special_policy.policy(self._special_ids, allowed_special, disallowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes text, treating special-token text as ordinary text."""
        # As `_checked`: the core reads the text as UTF-8 once and refuses a lone
        # surrogate; only then is it scanned for check_text's message. The core also
        # refuses anything but a str (TypeError), and only then is check_text_type asked
        # for its message: a call of a few microseconds pays for no check it can skip.
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            check_text(text)
            raise
        except TypeError:
            check_text_type(text)
            raise

    def encode_bytes(self, data: bytes) -> list[int]:
        """Encodes any bytes; invalid UTF-8 becomes byte tokens, so decoding gives it back."""
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"encode_bytes takes bytes, not {type(data).__name__}")
        return self._core.encode_bytes(data)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> NDArray[np.uint32]:
        """`encode` into a uint32 NumPy array, as tiktoken."""
        import numpy as np  # an optional dependency, needed only here

        # The ids come as bytes: a list of ints first would cost as much as encoding.
        data = self._encode_checked(text, allowed_special, disallowed_special,
                                    self._core.encode_u32)
        return np.frombuffer(data, dtype=np.uint32)

    def encode_ordinary_batch(
        self, texts: Sequence[str], *, num_threads: int | None = None
    ) -> list[list[int]]:
        """Encodes many texts in parallel (GIL released), special-token text as ordinary
        text."""
        texts = self._texts("encode_ordinary_batch", texts)
        threads = check_threads(num_threads)
        return self._checked(texts, lambda: self._core.encode_batch(texts, threads))

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: Literal["all"] | Collection[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """Encodes many texts in parallel, each exactly as `encode` (tiktoken's rules:
        a disallowed special token's text raises ValueError naming the text)."""
        texts = self._texts("encode_batch", texts)
        threads = check_threads(num_threads)
        rules = self._rules(allowed_special, disallowed_special)
        if rules.disallowed:
            for i, text in enumerate(texts):
                special_policy.check(text, rules.disallowed, where=f"texts[{i}]")
        allowed = set(rules.allowed) if rules.allowed else None
        return self._checked(texts, lambda: self._core.encode_batch(texts, threads, allowed))

    @staticmethod
    def _texts(method: str, texts: Sequence[str]) -> list[str]:
        if isinstance(texts, str):
            raise TypeError(f"{method} takes a list of str; for one text use encode()")
        if not isinstance(texts, Iterable):
            raise TypeError(f"{method} takes a list of str, not {type(texts).__name__}")
        texts = list(texts)
        for i, text in enumerate(texts):
            check_text_type(text, f"texts[{i}]")
        return texts

    @staticmethod
    def _checked(texts: list[str], encode: Callable[[], list[list[int]]]) -> list[list[int]]:
        """`encode()`, with check_text's message for a text that is not valid text. The
        core reads every text as UTF-8 (CPython keeps that copy) and refuses a lone
        surrogate, so the texts are scanned in Python only after one was refused, not
        copied to UTF-8 twice on every call."""
        try:
            return encode()
        except UnicodeEncodeError:
            for i, text in enumerate(texts):
                check_text(text, f"texts[{i}]")
            raise

    def encode_batch_numpy(
        self,
        texts: TrainingData,
        *,
        dtype: object = None,
        eot: str | int | None = None,
        text_column: str = "text",
        num_threads: int | None = None,
    ) -> tuple[NDArray[np.unsignedinteger[Any]], NDArray[np.int64]]:
        """Encodes many texts (or bytes, or a dataset's `text_column`) into one flat
        NumPy array plus int64 offsets: document `i` is `tokens[offsets[i]:offsets[i + 1]]`.
        No Python lists are built.

        `dtype` defaults to uint16 when every id fits, else uint32; `eot` (a special
        token or id) is appended after every document.
        """
        import numpy as np  # an optional dependency, needed only here

        name, itemsize = arrays.itemsize_for(self.vocab_size, dtype)
        eot_token = arrays.eot_id(self.vocab_size, self._special_ids, eot)
        threads = check_threads(num_threads)
        docs = list(documents.iter_documents(texts, check_str("text_column", text_column),
                                             8192, what=documents.ENCODING))
        flat, offsets = encode_file.flat_tokens(self._core, docs, itemsize, eot_token, threads)
        return np.frombuffer(flat, dtype=name), np.frombuffer(offsets, dtype=np.int64)

    def encode_to_file(
        self,
        documents: TrainingData,
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

    # ==================== Import from tiktoken and Hugging Face

    @classmethod
    def from_tiktoken(
        cls,
        source: tiktoken.Encoding | str | os.PathLike[str],
        *,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> Tokenizer:
        """From a `tiktoken.Encoding`, or a `.tiktoken` ranks file (its sidecar gives
        the pattern and special tokens; else pass them)."""
        return cls(interop.tiktoken.from_tiktoken(source, pattern, special_tokens))

    @classmethod
    def from_huggingface(cls, source: Any) -> Tokenizer:
        """From a byte-level BPE `tokenizer.json` path (or a directory holding one), its
        JSON text, or a `tokenizers.Tokenizer`."""
        return cls(interop.huggingface_import.from_huggingface(source))

    # ==================== The loss ledger

    def loss_report(self) -> LossReport:
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
        compression and fairness on `eval` (a file or glob, a list of documents, or
        {name: files, a glob or documents}; the bundled held-out sample by default),
        composition, health and losses, compared with `baseline` when given. Shows
        inline in Jupyter; `.save(path)` writes the page (self-contained, no network).
        Needs numpy (`bytebpe[report]`)."""
        return report_page.build_report(
            self, eval, baseline, max_eval_bytes=max_eval_bytes, title=title
        )

    # ==================== Saving and loading

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes a self-describing file: merges, pattern, special tokens, format version,
        and the training ledger."""
        file_format.save(self._core, path, self._ledger.training)

    @classmethod
    def load(
        cls,
        path: str | bytes | os.PathLike[str] | os.PathLike[bytes],
        *,
        vocab_size: int | None = None,
        pattern: str | None = None,
    ) -> Tokenizer:
        """Reads any tokenizer file, recognised by its content: a file written by `save`,
        a run store (also while a run is still writing it), a Hugging Face
        `tokenizer.json` (or a directory holding one), or a tiktoken `.tiktoken` ranks
        file (its sidecar gives the pattern, else pass `pattern`). `vocab_size` takes the
        tokenizer of the first merges of a bytebpe file or store (special tokens included
        in the count). The file is read once, so a pipe or `/dev/stdin` works (a FIFO
        waits for its writer, as `open()` does). A foreign or damaged file raises
        CorruptTokenizerError naming the file and the field; a missing or unreadable one,
        OSError."""
        check_optional_int("vocab_size", vocab_size, minimum=256)
        return cls(*loading.load_any(path, vocab_size=vocab_size, pattern=pattern))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Hugging Face's name for `load`: a `tokenizer.json`, or any file `load` reads."""
        return cls.load(path)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_from_state, (file_format.to_state(self._core, self._ledger.training),))

    def _identity(self) -> tuple[object, ...]:
        """What decides every encoding: pattern, special tokens, token bytes by id."""
        if self._key is None:
            self._key = (self.pattern, tuple(sorted(self._special_ids.items())),
                         tuple(self._core.tokens()))
        return self._key

    def __eq__(self, other: object) -> bool:
        """Equal when they encode the same: same pattern, special tokens and token bytes
        for every id (how a tokenizer was made, or its training log, does not matter, so a
        tokenizer round-tripped through tiktoken equals itself)."""
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self is other or self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        pattern = self.pattern_name or self.pattern
        return (
            f"Tokenizer(vocab_size={self.vocab_size}, pattern={pattern!r}, "
            f"special_tokens={list(self._special_ids)})"
        )


def encode_to_file(
    tokenizer: Tokenizer,
    documents: TrainingData,
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
