"""Every exception and warning bytebpe raises, in one place.

The native module defines the errors its core can raise (each a `ValueError`, so code that
catches `ValueError` keeps working); the facade adds the store's and training's own.
"""

from __future__ import annotations

from bytebpe._bytebpe import CorruptTokenizerError, InputError, PatternError, UnknownTokenError

__all__ = [
    "ArgumentError",
    "BlockError",
    "ClusterError",
    "CorruptTokenizerError",
    "InputError",
    "PatternError",
    "StoreError",
    "TrainingWarning",
    "UnknownTokenError",
]


class ArgumentError(ValueError):
    """An argument that does not fit the file being read (`vocab_size` too small for its
    special tokens, no `pattern` for a bare .tiktoken file): the call's fault, not the
    file's, so it is not a CorruptTokenizerError."""


class StoreError(ValueError):
    """The run store cannot be used as asked (in use, other settings, not writable)."""


class TrainingWarning(UserWarning):
    """Training finished, but not quite as asked (empty data, stopped early)."""


class BlockError(InputError):
    """A block of a Ray dataset holds a row that cannot be counted or encoded (the
    message names the row)."""


class ClusterError(RuntimeError):
    """A cluster task kept failing: its worker died on every attempt Ray allows."""
