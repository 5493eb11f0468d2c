"""bytebpe: train byte-level BPE tokenizers fast, and encode with them.

>>> from bytebpe import Tokenizer
>>> tok = Tokenizer.train_from_iterator(["hello world"] * 10, vocab_size=260, progress=False)
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from __future__ import annotations

from bytebpe._bytebpe import (
    CorruptTokenizerError,
    PatternError,
    UnknownTokenError,
    __version__,
)
from bytebpe.tokenizer import Merge, Tokenizer, TrainingWarning

__all__ = [
    "CorruptTokenizerError",
    "Merge",
    "PatternError",
    "Tokenizer",
    "TrainingWarning",
    "UnknownTokenError",
    "__version__",
]
